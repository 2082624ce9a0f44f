//! Real-time primitives: clocks, scheduling policy and affinity, memory locking,
//! the `cpu_dma_latency` guard, the process-wide stop flag, and the control of
//! child processes.
//!
//! Every `unsafe` libc call of the crate is wrapped once, here, with a `SAFETY` note
//! naming the man page it follows. The rtlab binary makes no libc call of its own:
//! it uses these wrappers, and names errno values with the constants below.

pub mod clock;
pub mod cpuset;
pub mod dma;
pub mod fifo;
pub mod flock;
pub mod ipc;
pub mod mem;
pub mod process;
pub mod sched;
pub mod signals;
pub mod timer;
pub mod timerfd;

/// The errno values callers tell apart (`errno(3)`).
pub use libc::{EACCES, EAGAIN, EBUSY, EINVAL, ENOSPC, EPERM, EROFS, ESRCH};

/// The calling thread's errno after a failed libc call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `strerror` text for an errno value, for messages built outside the hot path.
pub fn errno_text(errno: i32) -> String {
    std::io::Error::from_raw_os_error(errno).to_string()
}

/// Opens `path` for reading with `O_NONBLOCK`, so that a read of an empty
/// pipe (a tracefs `trace_pipe_raw`) fails with `EAGAIN` rather than waits.
pub fn open_read_nonblocking(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// The kernel thread id of the calling thread (`gettid(2)`).
pub fn gettid() -> i32 {
    // SAFETY: gettid(2) takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}
