//! Clocks in integer nanoseconds, and the [`Clock`] trait the probes are generic over
//! so that tests can script time.

use serde::{Deserialize, Serialize};

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Why a sleep returned early or failed. Small and `Copy` so it can leave the hot path
/// without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepError {
    /// A signal interrupted the sleep (`EINTR`); check the stop flag and sleep again.
    Interrupted,
    /// The kernel refused the clock or the time value (`EINVAL`, `ENOTSUP`): use
    /// another `--clock`.
    Unsupported(i32),
}

/// A source of time and a way to sleep until an absolute time on it.
pub trait Clock {
    /// The current time in nanoseconds since the clock's epoch.
    fn now(&self) -> u64;
    /// Sleep until the clock reads at least `deadline` (absolute, in ns).
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError>;
    /// Sleep for `ns` from now (a relative timer).
    fn sleep_for(&self, ns: u64) -> Result<(), SleepError> {
        self.sleep_until(self.now().saturating_add(ns))
    }
}

/// Which POSIX clock a probe uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ClockId {
    /// `CLOCK_MONOTONIC`: never jumps; the right choice for latency.
    #[default]
    Monotonic,
    /// `CLOCK_REALTIME`: wall time; jumps when the time is set.
    Realtime,
}

impl ClockId {
    pub(crate) fn raw(self) -> libc::clockid_t {
        match self {
            ClockId::Monotonic => libc::CLOCK_MONOTONIC,
            ClockId::Realtime => libc::CLOCK_REALTIME,
        }
    }

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            ClockId::Monotonic => "monotonic",
            ClockId::Realtime => "realtime",
        }
    }
}

/// A kernel clock read with `clock_gettime(2)` and slept on with
/// `clock_nanosleep(2)`: until an absolute time (`TIMER_ABSTIME`), or for a
/// relative time.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    id: libc::clockid_t,
}

impl SystemClock {
    /// A handle on the given clock.
    pub fn new(id: ClockId) -> Self {
        SystemClock { id: id.raw() }
    }
}

/// Converts a timespec to nanoseconds. Clock values are non-negative and below
/// 2^64 ns (year 2554), so the conversion cannot overflow for real clocks.
fn ts_to_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(NS_PER_SEC)
        .wrapping_add(ts.tv_nsec as u64)
}

fn ns_to_ts(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / NS_PER_SEC) as libc::time_t,
        tv_nsec: (ns % NS_PER_SEC) as libc::c_long,
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime(2) writes one timespec through a valid pointer; the
        // clock ids we pass (MONOTONIC, REALTIME) exist on every Linux kernel, so
        // it cannot fail.
        unsafe { libc::clock_gettime(self.id, &mut ts) };
        ts_to_ns(&ts)
    }

    #[inline]
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
        let ts = ns_to_ts(deadline);
        // SAFETY: clock_nanosleep(2) with TIMER_ABSTIME reads one timespec and, with
        // a null `remain`, writes nothing. It returns the error number directly.
        let rc = unsafe {
            libc::clock_nanosleep(self.id, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
        };
        sleep_result(rc)
    }

    #[inline]
    fn sleep_for(&self, ns: u64) -> Result<(), SleepError> {
        let ts = ns_to_ts(ns);
        // SAFETY: clock_nanosleep(2) with flags 0 (a relative time) reads one
        // timespec and, with a null `remain`, writes nothing. It returns the
        // error number directly.
        let rc = unsafe { libc::clock_nanosleep(self.id, 0, &ts, std::ptr::null_mut()) };
        sleep_result(rc)
    }
}

fn sleep_result(rc: i32) -> Result<(), SleepError> {
    match rc {
        0 => Ok(()),
        libc::EINTR => Err(SleepError::Interrupted),
        e => Err(SleepError::Unsupported(e)),
    }
}

/// A kernel clock read with `clock_gettime(2)` whose relative sleeps are the
/// `nanosleep(2)` system call (cyclictest's `-s`); `nanosleep` always measures
/// its sleep on `CLOCK_MONOTONIC`.
#[derive(Debug, Clone, Copy)]
pub struct NanosleepClock(pub SystemClock);

impl Clock for NanosleepClock {
    #[inline]
    fn now(&self) -> u64 {
        self.0.now()
    }

    #[inline]
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
        self.sleep_for(deadline.saturating_sub(self.now()))
    }

    #[inline]
    fn sleep_for(&self, ns: u64) -> Result<(), SleepError> {
        let ts = ns_to_ts(ns);
        // SAFETY: nanosleep(2) reads one timespec and, with a null `rem`, writes
        // nothing; on failure it sets errno.
        if unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) } == 0 {
            return Ok(());
        }
        sleep_result(super::errno())
    }
}

/// The resolution the kernel reports for clock `id` (`clock_getres(2)`), in ns;
/// `None` when it refuses.
pub fn resolution_ns(id: ClockId) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres(2) writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_getres(id.raw(), &mut ts) };
    (rc == 0).then(|| ts_to_ns(&ts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_round_trip() {
        for ns in [0, 1, 999_999_999, 1_000_000_000, 1_700_000_000_123_456_789] {
            assert_eq!(ts_to_ns(&ns_to_ts(ns)), ns);
        }
    }

    #[test]
    fn monotonic_clock_advances_and_sleeps() {
        let c = SystemClock::new(ClockId::Monotonic);
        let a = c.now();
        c.sleep_until(a + 100_000).unwrap();
        let b = c.now();
        assert!(b >= a + 100_000, "woke before the deadline: {a} -> {b}");
        c.sleep_for(50_000).unwrap();
        assert!(c.now() >= b + 50_000);
        let n = NanosleepClock(c);
        let d = n.now();
        n.sleep_for(50_000).unwrap();
        assert!(n.now() >= d + 50_000);
        assert!(resolution_ns(ClockId::Monotonic).is_some_and(|r| r >= 1));
    }
}
