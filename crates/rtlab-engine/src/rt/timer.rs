//! POSIX per-thread interval timers (`timer_create(2)` signalling one thread,
//! `sigwait(2)` to wait for it): what cyclictest's `-x` sleeps on instead of
//! `clock_nanosleep`.

use super::clock::{Clock, ClockId, SleepError, SystemClock};

/// The signal the timer sends, blocked in the thread that waits for it.
const SIGNAL: i32 = libc::SIGALRM;

/// A periodic timer that signals the thread that made it. It lives and dies on
/// that thread (it is neither `Send` nor `Sync`).
#[derive(Debug)]
pub struct PosixTimer {
    id: libc::timer_t,
    clock: SystemClock,
    set: libc::sigset_t,
}

impl PosixTimer {
    /// A timer on `clock` that signals the calling thread, which blocks the
    /// signal first so that it only ever waits for it. The error is the errno.
    pub fn for_this_thread(clock: ClockId) -> Result<PosixTimer, i32> {
        // SAFETY: sigset_t is a plain C bitmask, valid when zeroed;
        // sigemptyset(3) and sigaddset(3) write only into it, and
        // pthread_sigmask(3) reads it and changes the calling thread's mask.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, SIGNAL);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(rc);
            }
            set
        };
        // SAFETY: sigevent is a plain C struct, valid when zeroed; timer_create(2)
        // reads it and writes the timer id through a valid pointer.
        let id = unsafe {
            let mut ev: libc::sigevent = std::mem::zeroed();
            ev.sigev_notify = libc::SIGEV_THREAD_ID;
            ev.sigev_signo = SIGNAL;
            ev.sigev_notify_thread_id = super::gettid();
            let mut id: libc::timer_t = std::ptr::null_mut();
            if libc::timer_create(clock.raw(), &mut ev, &mut id) != 0 {
                return Err(super::errno());
            }
            id
        };
        Ok(PosixTimer {
            id,
            clock: SystemClock::new(clock),
            set,
        })
    }

    /// Starts it: first expiry at `first_ns` (absolute, on its clock), then
    /// every `interval_ns`. The error is the errno.
    pub fn arm(&self, first_ns: u64, interval_ns: u64) -> Result<(), i32> {
        let ts = |ns: u64| libc::timespec {
            tv_sec: (ns / super::clock::NS_PER_SEC) as libc::time_t,
            tv_nsec: (ns % super::clock::NS_PER_SEC) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: ts(interval_ns),
            it_value: ts(first_ns),
        };
        // SAFETY: timer_settime(2) on a timer this struct owns reads one
        // itimerspec; a null `old_value` is allowed.
        let rc = unsafe {
            libc::timer_settime(self.id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(super::errno())
        }
    }
}

impl Clock for PosixTimer {
    #[inline]
    fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Waits for the timer's next expiry; the deadline is the timer's own
    /// period, which the caller's schedule follows.
    #[inline]
    fn sleep_until(&self, _deadline: u64) -> Result<(), SleepError> {
        let mut sig = 0;
        // SAFETY: sigwait(3) reads the signal set this struct owns and writes
        // the signal number through a valid pointer; it returns the error
        // number directly.
        match unsafe { libc::sigwait(&self.set, &mut sig) } {
            0 => Ok(()),
            libc::EINTR => Err(SleepError::Interrupted),
            e => Err(SleepError::Unsupported(e)),
        }
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: deletes the timer this struct created, once.
        unsafe { libc::timer_delete(self.id) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_periodic_timer_wakes_its_thread_once_a_period() {
        std::thread::spawn(|| {
            let t = PosixTimer::for_this_thread(ClockId::Monotonic).unwrap();
            let start = t.now();
            t.arm(start + 100_000, 100_000).unwrap();
            for k in 1..=5u64 {
                t.sleep_until(0).unwrap();
                assert!(t.now() >= start + k * 100_000);
            }
        })
        .join()
        .unwrap();
    }
}
