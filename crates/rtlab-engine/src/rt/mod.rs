//! Real-time primitives: clocks, scheduling policy and affinity, memory locking,
//! the `cpu_dma_latency` guard and the process-wide stop flag.
//!
//! Every `unsafe` libc call of the crate is wrapped once, here, with a `SAFETY` note
//! naming the man page it follows.

pub mod clock;
pub mod cpuset;
pub mod dma;
pub mod flock;
pub mod mem;
pub mod sched;
pub mod signals;

/// The calling thread's errno after a failed libc call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `strerror` text for an errno value, for messages built outside the hot path.
pub fn errno_text(errno: i32) -> String {
    std::io::Error::from_raw_os_error(errno).to_string()
}

/// The kernel thread id of the calling thread (`gettid(2)`).
pub fn gettid() -> i32 {
    // SAFETY: gettid(2) takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}
