//! The libc calls the load generators need, each wrapped once with a `SAFETY`
//! note naming the man page it follows.

use crate::rt::errno;
use crate::rt::process::{send_signal, SIGKILL, SIGTERM};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

/// The page size (`sysconf(_SC_PAGESIZE)`), 4096 if unknown.
pub fn page_size() -> usize {
    // SAFETY: sysconf(3) takes a constant and touches no memory.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// An anonymous private mapping, unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone; through a shared reference
// it is only read or written as atomic words (`atomic_words`), and plain
// writes (`touch`) need `&mut`.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of anonymous memory (`mmap(2)`); returns the errno.
    pub fn anonymous(len: usize) -> Result<Mapping, i32> {
        Self::map(len, libc::MAP_NORESERVE)
    }

    /// Maps `len` bytes (a multiple of the huge page size) from the HugeTLB
    /// pool (`MAP_HUGETLB`, pages of the default size): the pages are
    /// reserved now, so a pool with too few free fails here (ENOMEM) rather
    /// than at the first touch.
    pub fn huge(len: usize) -> Result<Mapping, i32> {
        Self::map(len, libc::MAP_HUGETLB)
    }

    fn map(len: usize, flags: i32) -> Result<Mapping, i32> {
        // SAFETY: mmap(2) with a null hint, an anonymous private mapping and no fd;
        // the result is checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(errno());
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The mapping as words, each read and written atomically.
    #[inline(always)]
    pub fn atomic_words(&self) -> &[AtomicUsize] {
        // SAFETY: the mapping is page-aligned, readable and writable, filled
        // with zeros by the kernel (a valid AtomicUsize) and lives as long as
        // `self`; every access through the slice is atomic.
        unsafe {
            std::slice::from_raw_parts(
                self.ptr.cast::<AtomicUsize>(),
                self.len / std::mem::size_of::<AtomicUsize>(),
            )
        }
    }

    /// Writes `value` to the first byte of page `page` (of size `page_size`).
    #[inline]
    pub fn touch(&mut self, page: usize, page_size: usize, value: u8) {
        let off = page * page_size;
        assert!(off < self.len, "page beyond the mapping");
        // SAFETY: `off` is inside the mapping (checked above), which is writable and
        // lives as long as `self`; volatile so the store is not optimised away.
        unsafe { std::ptr::write_volatile(self.ptr.add(off), value) };
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: munmap(2) of exactly the range mmap returned; nothing borrows it.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The result of [`fork`].
pub enum Forked {
    /// In the parent, with the child's pid.
    Parent(i32),
    /// In the child.
    Child,
}

/// `fork(2)`. Only call from a single-threaded process (a load worker), so that
/// the child may run ordinary code.
pub fn fork() -> Result<Forked, i32> {
    // SAFETY: fork(2); callers are single-threaded worker processes, so the child
    // inherits no lock held by another thread.
    match unsafe { libc::fork() } {
        -1 => Err(errno()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Ends the calling process at once (`_exit(2)`), without running destructors or
/// atexit handlers (what a forked child must do).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit(2) never returns.
    unsafe { libc::_exit(code) }
}

/// Waits for child `pid` (`waitpid(2)`); `Ok(None)` when `nohang` and it still
/// runs. Returns the raw status.
pub fn wait_child(pid: i32, nohang: bool) -> Result<Option<i32>, i32> {
    let mut status = 0;
    let flags = if nohang { libc::WNOHANG } else { 0 };
    // SAFETY: waitpid(2) writes one int through a valid pointer.
    match unsafe { libc::waitpid(pid, &mut status, flags) } {
        -1 => Err(errno()),
        0 => Ok(None),
        _ => Ok(Some(status)),
    }
}

/// Sends `SIGTERM` to `pids`, waits up to `grace` for them to exit, then
/// `SIGKILL`s and reaps the rest. Used by workers for the processes they forked.
pub fn end_children(pids: &[i32], grace: Duration) {
    for &p in pids {
        send_signal(p, SIGTERM);
    }
    let deadline = std::time::Instant::now() + grace;
    let mut left: Vec<i32> = pids.to_vec();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        left.retain(|&p| matches!(wait_child(p, true), Ok(None)));
        if !left.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    for &p in &left {
        send_signal(p, SIGKILL);
        let _ = wait_child(p, false);
    }
}

extern "C" fn wake(_: libc::c_int) {}

/// The signal used to wake a worker's own threads out of blocking calls.
pub const WAKE_SIGNAL: i32 = libc::SIGUSR1;

/// Installs a do-nothing handler for [`WAKE_SIGNAL`] without `SA_RESTART`, so that
/// a thread blocked in `read`/`write` returns `EINTR` when woken with
/// [`wake_thread`].
pub fn install_wake_handler() {
    // SAFETY: sigaction(2) with a zeroed struct, a handler that does nothing, and an
    // empty mask.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = wake as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
    }
}

/// Sends [`WAKE_SIGNAL`] to a thread of this process (`pthread_kill(3)`).
pub fn wake_thread(thread: libc::pthread_t) {
    // SAFETY: pthread_kill(3) on a thread that has not been joined yet (callers
    // hold its JoinHandle).
    unsafe { libc::pthread_kill(thread, WAKE_SIGNAL) };
}

/// A connected pair of descriptors: `(read end, write end)`, from `pipe2(2)` or
/// `socketpair(2)` (`AF_UNIX`, `SOCK_STREAM`).
pub fn channel(pipe: bool) -> Result<(OwnedFd, OwnedFd), i32> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2(2)/socketpair(2) write two descriptors into a valid array.
    let rc = unsafe {
        if pipe {
            libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
        } else {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        }
    };
    if rc != 0 {
        return Err(errno());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

/// Flushes every file system (`sync(2)`).
pub fn sync_all() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// A periodic `timerfd` on CLOCK_MONOTONIC (`timerfd_create(2)`,
/// `timerfd_settime(2)`), non-blocking.
pub fn periodic_timer(period_ns: u64, first_ns: u64) -> Result<OwnedFd, i32> {
    // SAFETY: timerfd_create(2) takes flags only.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a descriptor just created and owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let ts = |ns: u64| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let spec = libc::itimerspec {
        it_interval: ts(period_ns),
        it_value: ts(first_ns.max(1)),
    };
    // SAFETY: timerfd_settime(2) reads one itimerspec through a valid pointer.
    let rc = unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(errno());
    }
    Ok(owned)
}

/// An epoll instance watching `fds` for input (`epoll_create1(2)`, `epoll_ctl(2)`);
/// each event carries the index of its descriptor in `fds`.
pub fn epoll_of(fds: &[OwnedFd]) -> Result<OwnedFd, i32> {
    use std::os::fd::AsRawFd;
    // SAFETY: epoll_create1(2) takes flags only.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(errno());
    }
    // SAFETY: a descriptor just created and owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(ep) };
    for (i, fd) in fds.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: epoll_ctl(2) reads one epoll_event through a valid pointer.
        let rc = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) };
        if rc != 0 {
            return Err(errno());
        }
    }
    Ok(owned)
}

/// Waits up to `timeout_ms` for events (`epoll_wait(2)`); returns how many were
/// written to `events` (0 on timeout or EINTR).
pub fn epoll_wait(ep: &OwnedFd, events: &mut [libc::epoll_event], timeout_ms: i32) -> usize {
    use std::os::fd::AsRawFd;
    // SAFETY: epoll_wait(2) writes at most `events.len()` entries into the slice.
    let n = unsafe {
        libc::epoll_wait(
            ep.as_raw_fd(),
            events.as_mut_ptr(),
            events.len() as i32,
            timeout_ms,
        )
    };
    n.max(0) as usize
}
