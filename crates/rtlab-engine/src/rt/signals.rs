//! The process-wide stop flag, raised by SIGINT and SIGTERM.
//!
//! The handler only stores to atomics (async-signal-safe). A second signal while a
//! stop is already pending ends the process at once with status 130, so a wedged
//! run can always be killed from the keyboard.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit(2) is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handler (without `SA_RESTART`, so that sleeping
/// probe threads wake with `EINTR`) and returns the stop flag.
pub fn install() -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction(2) with a zeroed struct, an `extern "C"` handler that
        // only touches atomics, and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    &STOP
}

/// The stop flag (raised by a signal, or by code that wants every loop to end).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// The signal that raised the stop flag, if a signal did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
