//! A `timerfd` (`timerfd_create(2)`) as a [`Clock`]: each wait arms it once at
//! an absolute time and reads it.

use super::clock::{Clock, ClockId, SleepError, SystemClock, NS_PER_SEC};

/// A timerfd on one clock, owned and closed on drop.
#[derive(Debug)]
pub struct TimerFd {
    fd: i32,
    clock: SystemClock,
}

impl TimerFd {
    /// A new timerfd on `clock`; the errno when the kernel refuses.
    pub fn new(clock: ClockId) -> Result<TimerFd, i32> {
        // SAFETY: timerfd_create(2) takes a clock id and flags; it returns a
        // new descriptor this struct then owns, or -1.
        let fd = unsafe { libc::timerfd_create(clock.raw(), libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(super::errno());
        }
        Ok(TimerFd {
            fd,
            clock: SystemClock::new(clock),
        })
    }
}

impl Clock for TimerFd {
    #[inline]
    fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Arms the timer once at `deadline` and blocks until it expires.
    #[inline]
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (deadline / NS_PER_SEC) as libc::time_t,
                tv_nsec: (deadline % NS_PER_SEC).max(1) as libc::c_long,
            },
        };
        // SAFETY: timerfd_settime(2) on the descriptor this struct owns reads
        // one itimerspec; a null `old_value` is allowed.
        let rc = unsafe {
            libc::timerfd_settime(
                self.fd,
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(SleepError::Unsupported(super::errno()));
        }
        let mut expirations = 0u64;
        // SAFETY: read(2) of 8 bytes into a u64 owned by this frame, from the
        // descriptor this struct owns.
        let n = unsafe {
            libc::read(
                self.fd,
                (&mut expirations as *mut u64).cast::<libc::c_void>(),
                8,
            )
        };
        match n {
            8 => Ok(()),
            _ => match super::errno() {
                libc::EINTR => Err(SleepError::Interrupted),
                e => Err(SleepError::Unsupported(e)),
            },
        }
    }
}

impl Drop for TimerFd {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this struct owns, once.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_waits_until_each_absolute_time() {
        let t = TimerFd::new(ClockId::Monotonic).unwrap();
        let start = t.now();
        for k in 1..=3u64 {
            t.sleep_until(start + k * 200_000).unwrap();
            assert!(t.now() >= start + k * 200_000);
        }
    }
}
