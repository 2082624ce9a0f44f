//! Memory locking and stack prefaulting, so that no page fault happens while
//! measuring, and the page-fault counters that show it.

use serde::{Deserialize, Serialize};

/// `MCL_ONFAULT` (Linux 4.4, asm-generic value; the libc crate does not export it
/// for glibc targets).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64"
))]
const MCL_ONFAULT: libc::c_int = 4;

/// How [`lock_all`] locked memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// `MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT`: every page is locked from its
    /// first touch on; the probe touches everything it uses before measuring.
    OnFault,
    /// `MCL_CURRENT | MCL_FUTURE`: every mapped page populated and locked (kernels
    /// before 4.4).
    Populate,
}

/// Locks the process's memory in RAM. Returns the errno on failure (`ENOMEM` when
/// over `RLIMIT_MEMLOCK`, `EPERM` without `CAP_IPC_LOCK`).
///
/// `MCL_ONFAULT` is used where the kernel has it: the rtlab binary also carries the
/// store, the plots and the HTML writer, and populating all of that would cost a
/// small board several megabytes that the probe never runs. Instead the probe
/// touches, before it measures, every page its loop uses (stack, statistics,
/// code, through a warm-up), so nothing faults while measuring.
pub fn lock_all() -> Result<LockMode, i32> {
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "riscv64"
    ))]
    {
        // SAFETY: mlockall(2) takes flags only and touches no memory of ours.
        let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | MCL_ONFAULT) };
        if rc == 0 {
            return Ok(LockMode::OnFault);
        }
        if super::errno() != libc::EINVAL {
            return Err(super::errno());
        }
    }
    // SAFETY: as above.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(LockMode::Populate)
    } else {
        Err(super::errno())
    }
}

/// Raises `RLIMIT_MEMLOCK` to unlimited for this process and what it executes;
/// when the hard limit cannot be raised (no `CAP_SYS_RESOURCE`), the soft limit
/// goes up to the hard one. Returns the limit reached (`None`: unlimited) or the
/// errno.
pub fn raise_memlock_limit() -> Result<Option<u64>, i32> {
    let mut lim = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit(2) reads one rlimit through a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &lim) } == 0 {
        return Ok(None);
    }
    // SAFETY: getrlimit(2) writes one rlimit through a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0 {
        return Err(super::errno());
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: setrlimit(2) as above.
    if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &lim) } != 0 {
        return Err(super::errno());
    }
    Ok((lim.rlim_max != libc::RLIM_INFINITY).then_some(lim.rlim_max))
}

/// Gives the free pages of every heap back to the kernel (`malloc_trim(3)`, glibc;
/// nothing elsewhere). What setting up a run allocated and freed (the parsed
/// command line, the kernel configuration read for the fingerprint) would
/// otherwise stay resident, and be locked by [`lock_all`], for the whole run; and
/// what the measuring threads held, for the rest of the process.
pub fn release_free_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim(3) takes a size and only returns free heap pages to the
    // kernel; live allocations are untouched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Makes every allocation of `bytes` or more a mapping of its own, given back
/// to the kernel when freed. (glibc raises that threshold after freeing such a
/// block, and its heap then keeps the largest blocks a long-running process
/// ever freed, locked with the rest under `mlockall`.)
pub fn map_large_allocations(bytes: usize) {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt(3) sets an allocator parameter; no allocation is touched.
    unsafe {
        libc::mallopt(
            libc::M_MMAP_THRESHOLD,
            i32::try_from(bytes).unwrap_or(i32::MAX),
        );
    }
    #[cfg(not(target_env = "gnu"))]
    let _ = bytes;
}

/// Undoes [`lock_all`] (`munlockall(2)`).
pub fn unlock_all() {
    // SAFETY: munlockall(2) takes no arguments; failure leaves memory locked, which
    // is harmless at the end of a run.
    unsafe { libc::munlockall() };
}

/// How much of a probe thread's stack is touched before it starts measuring.
pub const PREFAULT_STACK_BYTES: usize = 64 * 1024;

/// Touches `PREFAULT_STACK_BYTES` of the calling thread's stack so that the pages
/// are present (and, after `mlockall`, locked) before the measuring loop runs.
#[inline(never)]
pub fn prefault_stack() {
    let mut buf = [0u8; PREFAULT_STACK_BYTES];
    // Write one byte per page through a volatile pointer so the compiler cannot
    // elide the buffer.
    for i in (0..buf.len()).step_by(4096) {
        // SAFETY: `i` is within the buffer, which lives for the whole loop.
        unsafe { std::ptr::write_volatile(buf.as_mut_ptr().add(i), 1) };
    }
    std::hint::black_box(&buf);
}

/// Page faults the kernel counted (`getrusage(2)`: `ru_minflt`, `ru_majflt`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageFaults {
    /// Served without I/O: a first touch of a page, or a page that was resident
    /// but not yet mapped.
    pub minor: u64,
    /// Served with I/O: the page was read from a file or from swap.
    pub major: u64,
}

impl PageFaults {
    /// The faults counted since `earlier` (the kernel's counters only grow).
    pub fn since(self, earlier: PageFaults) -> PageFaults {
        PageFaults {
            minor: self.minor.saturating_sub(earlier.minor),
            major: self.major.saturating_sub(earlier.major),
        }
    }

    /// Minor and major together.
    pub fn total(self) -> u64 {
        self.minor + self.major
    }
}

impl std::ops::Add for PageFaults {
    type Output = PageFaults;
    fn add(self, o: PageFaults) -> PageFaults {
        PageFaults {
            minor: self.minor + o.minor,
            major: self.major + o.major,
        }
    }
}

/// The page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`): one
/// system call, no allocation, nothing touched but a small struct on the stack, so
/// a measuring thread reads it just before and just after its loop.
pub fn thread_faults() -> PageFaults {
    // SAFETY: a zeroed rusage is a valid value to be overwritten.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage(2) writes one rusage through a valid pointer; it cannot fail
    // for RUSAGE_THREAD and a valid pointer (the zeroed value stays on error).
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    PageFaults {
        minor: u.ru_minflt as u64,
        major: u.ru_majflt as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_fresh_pages_counts_minor_faults_of_this_thread() {
        // 64 MiB is above the allocator's largest mmap threshold, so these are
        // fresh pages of a new mapping, never resident ones reused: touching one
        // byte per MiB faults.
        let mut v = vec![0u8; 64 << 20];
        let before = thread_faults();
        for i in (0..v.len()).step_by(1 << 20) {
            // SAFETY: `i` is within the vector.
            unsafe { std::ptr::write_volatile(v.as_mut_ptr().add(i), 1) };
        }
        std::hint::black_box(&v);
        let f = thread_faults().since(before);
        assert!(f.minor > 0, "{f:?}");
        assert_eq!(f.total(), f.minor + f.major);
    }

    #[test]
    fn since_never_goes_below_zero_and_faults_add_up() {
        let a = PageFaults { minor: 5, major: 1 };
        let b = PageFaults { minor: 7, major: 1 };
        assert_eq!(b.since(a), PageFaults { minor: 2, major: 0 });
        assert_eq!(a.since(b), PageFaults::default());
        assert_eq!(
            a + b,
            PageFaults {
                minor: 12,
                major: 2
            }
        );
    }
}
