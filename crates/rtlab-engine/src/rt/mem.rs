//! Memory locking and stack prefaulting, so that no page fault happens while
//! measuring.

/// Locks every current and future page of the process in RAM
/// (`mlockall(MCL_CURRENT | MCL_FUTURE)`). Returns the errno on failure
/// (`ENOMEM` when over `RLIMIT_MEMLOCK`, `EPERM` without `CAP_IPC_LOCK`).
pub fn lock_all() -> Result<(), i32> {
    // SAFETY: mlockall(2) takes flags only and touches no memory of ours.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(super::errno())
    }
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
