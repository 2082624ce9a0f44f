//! A POSIX mutex with default attributes, the lock sysbench's `threads` and
//! `mutex` tests use. Unlike `std::sync::Mutex` it does not spin before
//! sleeping, so contention behaves as in sysbench.

use std::cell::UnsafeCell;
use std::marker::PhantomData;

/// A `pthread_mutex_t` (default attributes) at a fixed heap address, alone on
/// its cache lines so that neighbouring mutexes do not slow each other down
/// (sysbench pads its mutexes too).
pub struct PthreadMutex {
    m: Box<Padded>,
}

#[repr(align(128))]
struct Padded(UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex exists to be shared between threads; it is only used
// through pthread_mutex_lock/unlock, which synchronise.
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
unsafe impl Sync for PthreadMutex {}

/// Holds the lock; unlocks when dropped. Not `Send`: a pthread mutex must be
/// unlocked by the thread that locked it.
pub struct PthreadGuard<'a>(&'a PthreadMutex, PhantomData<*const ()>);

impl Default for PthreadMutex {
    fn default() -> Self {
        Self::new()
    }
}

impl PthreadMutex {
    /// An unlocked mutex (`PTHREAD_MUTEX_INITIALIZER`). Boxed: a pthread mutex
    /// must not move once used.
    pub fn new() -> Self {
        PthreadMutex {
            m: Box::new(Padded(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER))),
        }
    }

    /// Locks, waiting as long as needed.
    #[inline]
    pub fn lock(&self) -> PthreadGuard<'_> {
        // SAFETY: pthread_mutex_lock(3) on an initialised mutex that never moves
        // (boxed). A default mutex only fails on EDEADLK-style misuse, which the
        // guard's scoping rules out.
        unsafe { libc::pthread_mutex_lock(self.m.0.get()) };
        PthreadGuard(self, PhantomData)
    }
}

impl Drop for PthreadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: pthread_mutex_unlock(3) of a mutex this guard locked, on the
        // thread that locked it (the guard is not Send).
        unsafe { libc::pthread_mutex_unlock(self.0.m.0.get()) };
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: pthread_mutex_destroy(3) on an unlocked mutex: no guard can
        // outlive the mutex it borrows.
        unsafe { libc::pthread_mutex_destroy(self.m.0.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn excludes_other_threads() {
        let m = PthreadMutex::new();
        let c = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        let _g = m.lock();
                        // A non-atomic read-modify-write: only exclusion keeps it exact.
                        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(c.load(Ordering::Relaxed), 40_000);
    }
}
