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

/// Gives back what the process holds and does not need now: the free pages of
/// every heap (`malloc_trim(3)`, glibc), and the pages mapped from the read-only
/// parts of the program and its libraries (see [`unmap_read_only_segments`]).
/// What ran before (the loader's work, parsing the command line, reading the
/// kernel configuration for the fingerprint, a phase of the run) would otherwise
/// stay resident, and be locked by [`lock_all`] for the whole run; what runs next
/// maps again, from the page cache, only the pages it touches.
#[inline(never)]
pub fn release_unused() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim(3) takes a size and only returns free heap pages to the
    // kernel; live allocations are untouched.
    unsafe {
        libc::malloc_trim(0);
    }
    unmap_read_only_segments();
}

/// `DT_TEXTREL`, `DT_FLAGS` and its `DF_TEXTREL` bit (elf(5)); the libc crate
/// does not export them.
const DT_TEXTREL: isize = 22;
const DT_FLAGS: isize = 30;
const DF_TEXTREL: usize = 0x4;

/// Unmaps the pages of every loaded object's read-only `PT_LOAD` segments (code,
/// constants, symbol tables) from this process (`madvise(MADV_DONTNEED)`). These
/// are private mappings of files that were never written, so the next touch of
/// a page maps the same bytes again from the page cache: nothing is lost, only
/// the pages nobody touches any more stop counting. Left alone: pages a segment
/// may share with its neighbours (only the pages wholly inside a segment go),
/// objects with text relocations (whose read-only pages the loader wrote), and
/// the vDSO. Not with memory locked: the kernel refuses it then, which is
/// harmless (nothing is unmapped).
fn unmap_read_only_segments() {
    // SAFETY: getauxval(3) reads the auxiliary vector; 0 when absent.
    let vdso = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
    // SAFETY: sysconf(3) takes a name and returns a value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let mut ctx = (vdso, page);
    // SAFETY: dl_iterate_phdr(3) calls `each` once per loaded object with a valid
    // dl_phdr_info and the pointer given here, which outlives the call.
    unsafe {
        libc::dl_iterate_phdr(Some(each), (&mut ctx as *mut (usize, usize)).cast());
    }

    /// One object: its read-only segments are unmapped unless it is the vDSO or
    /// has text relocations.
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our `ctx`; the program
        // headers it points to are dlpi_phnum entries of the loaded object, and
        // its dynamic section (PT_DYNAMIC, at dlpi_addr + p_vaddr) is mapped and
        // ends with DT_NULL.
        unsafe {
            let (vdso, page) = *data.cast::<(usize, usize)>();
            let info = &*info;
            let phdrs = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
            let base = info.dlpi_addr as usize;
            let is_vdso = vdso != 0 && (info.dlpi_phdr as usize).wrapping_sub(vdso) < page;
            let textrel = phdrs
                .iter()
                .filter(|p| p.p_type == libc::PT_DYNAMIC)
                .any(|p| {
                    let mut d = (base + p.p_vaddr as usize) as *const [usize; 2];
                    loop {
                        let [tag, val] = *d;
                        match tag as isize {
                            0 => return false,
                            DT_TEXTREL => return true,
                            DT_FLAGS if val & DF_TEXTREL != 0 => return true,
                            _ => d = d.add(1),
                        }
                    }
                });
            if is_vdso || textrel {
                return 0;
            }
            // The pages of the program headers stay: every call reads them
            // (here), and would fault them back each time.
            let headers = info.dlpi_phdr as usize / page * page;
            let headers_end =
                (info.dlpi_phdr as usize + std::mem::size_of_val(phdrs)).next_multiple_of(page);
            for p in phdrs
                .iter()
                .filter(|p| p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_W == 0)
            {
                let mut start = (base + p.p_vaddr as usize).next_multiple_of(page);
                let end = (base + (p.p_vaddr + p.p_memsz) as usize) / page * page;
                if (start..end).contains(&headers) {
                    start = start.max(headers_end);
                }
                if end > start {
                    // A refusal (memory locked) leaves the pages mapped.
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
                }
            }
            0
        }
    }
}

/// Makes every thread allocate from the one heap (glibc's main arena,
/// `M_ARENA_MAX` 1; nothing elsewhere) rather than from a heap of its own: a
/// measuring thread allocates only while it is set up, and a heap of its own
/// would keep its pages (about 130 KB) after the thread is gone, where
/// [`release_unused`] does not reach them.
pub fn single_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt(3) sets an allocator parameter; no allocation is touched.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
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

    /// Whether the page holding `addr` is mapped in this process (bit 63 of its
    /// `/proc/self/pagemap` entry).
    fn mapped(addr: usize) -> bool {
        use std::os::unix::fs::FileExt;
        let mut entry = [0u8; 8];
        std::fs::File::open("/proc/self/pagemap")
            .unwrap()
            .read_exact_at(&mut entry, (addr / 4096 * 8) as u64)
            .unwrap();
        u64::from_ne_bytes(entry) >> 63 == 1
    }

    /// Constants that nothing else reads, 256 KiB: the kernel maps the pages
    /// within 64 KiB of a fault with it ("fault-around"), so a touch of other
    /// constants does not map the middle of these again.
    static CONSTANTS: [u8; 64 * 4096] = [7; 64 * 4096];

    #[test]
    fn read_only_pages_are_unmapped_and_come_back_on_the_next_touch() {
        let middle = CONSTANTS.as_ptr() as usize + 32 * 4096;
        // SAFETY: `middle + 8` is within CONSTANTS.
        let read = || unsafe { std::ptr::read_volatile((middle + 8) as *const u8) };
        assert_eq!(read(), 7);
        assert!(mapped(middle), "read, so mapped");
        release_unused();
        assert!(!mapped(middle), "unmapped");
        assert_eq!(read(), 7, "the same bytes again, from the file");
        assert!(mapped(middle));
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
