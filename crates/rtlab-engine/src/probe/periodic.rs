//! The periodic output probe: a thread toggles an output once a period and
//! measures the real period of every toggle from its own timestamps.
//!
//! The schedule is absolute (period k is due at `start + k·period`). A thread
//! that wakes a whole period late keeps the phase: the slots it passed are not
//! toggled, and the long period that results counts them as missed
//! ([`PeriodStats::missed`]).

mod run;

pub use run::{run, PeriodicOutcome, Sched, SetupError};

use crate::rt::clock::{Clock, SleepError};
use crate::stats::hist::LatencyHistogram;
use crate::stats::windows::Windows;
use crate::stats::Moments;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// How the thread waits for each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `clock_nanosleep(TIMER_ABSTIME)` until the period's time.
    Sleep,
    /// Reads the clock in a loop until the period's time (the CPU stays busy).
    Busy,
    /// A timerfd armed at the period's absolute time, then read.
    Timerfd,
    /// Sleeps until `spin` before the period's time, then reads the clock in
    /// a loop.
    Hybrid,
}

/// What the thread toggles each period. `set` runs inside the measuring loop:
/// it must not allocate, lock or block beyond its one write.
pub trait Output: Send {
    /// Sets the output high or low; false when the write failed.
    fn set(&mut self, high: bool) -> bool;
}

/// No output: pure timing.
#[derive(Debug, Default)]
pub struct NoOutput;

impl Output for NoOutput {
    #[inline]
    fn set(&mut self, _high: bool) -> bool {
        true
    }
}

/// A file or sysfs attribute written "1" or "0" at offset 0 each period
/// (`pwrite(2)` on a descriptor opened before measuring).
#[derive(Debug)]
pub struct FileOutput(pub File);

impl Output for FileOutput {
    #[inline]
    fn set(&mut self, high: bool) -> bool {
        let byte: &[u8] = if high { b"1" } else { b"0" };
        self.0.write_at(byte, 0).is_ok()
    }
}

/// A clock whose waits spin on the clock itself (`busy`), or sleep until
/// `spin_ns` before the deadline and spin the rest (`hybrid`; `busy` is
/// `spin_ns` = `u64::MAX`).
#[derive(Debug, Clone, Copy)]
pub struct Spin<C> {
    /// The clock read and slept on.
    pub clock: C,
    /// Time spun before each deadline (ns).
    pub spin_ns: u64,
}

impl<C: Clock> Clock for Spin<C> {
    #[inline]
    fn now(&self) -> u64 {
        self.clock.now()
    }

    #[inline]
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
        let wake = deadline.saturating_sub(self.spin_ns);
        if self.spin_ns != u64::MAX && wake > self.clock.now() {
            self.clock.sleep_until(wake)?;
        }
        while self.clock.now() < deadline {
            std::hint::spin_loop();
        }
        Ok(())
    }
}

/// What one run of the loop gathered. All memory is allocated by
/// [`PeriodStats::new`]; [`PeriodStats::toggle`] never allocates.
#[derive(Debug, Clone)]
pub struct PeriodStats {
    /// Nominal period (ns).
    pub nominal_ns: u64,
    /// A period further than this from nominal is out of tolerance (ns).
    pub tolerance_ns: u64,
    /// The measured periods (ns).
    pub periods: Moments,
    /// |period − nominal| of every period (ns): the jitter histogram.
    pub jitter: LatencyHistogram,
    /// |period − nominal| moments (ns).
    pub jitter_moments: Moments,
    /// |period − nominal| in time windows, for the intervals of its figures.
    pub windows: Windows,
    /// Toggles done (one more than the periods measured).
    pub toggles: u64,
    /// Periods longer than 1.5 × nominal.
    pub late: u64,
    /// Nominal periods that passed without a toggle: for each late period,
    /// its length in nominal periods, rounded, minus one.
    pub missed: u64,
    /// Periods further than the tolerance from nominal.
    pub out_of_tolerance: u64,
    /// Writes to the output that failed.
    pub write_errors: u64,
    /// Clock at the first toggle (ns).
    pub first_ns: u64,
    /// Clock at the last toggle (ns).
    pub last_ns: u64,
    /// Toggle number (0-based) that ended the period furthest from nominal.
    pub worst_at: u64,
}

impl PeriodStats {
    /// Empty statistics for a nominal period and a tolerance (ns).
    pub fn new(nominal_ns: u64, tolerance_ns: u64) -> PeriodStats {
        PeriodStats {
            nominal_ns,
            tolerance_ns,
            periods: Moments::default(),
            jitter: LatencyHistogram::new(),
            jitter_moments: Moments::default(),
            windows: Windows::new(),
            toggles: 0,
            late: 0,
            missed: 0,
            out_of_tolerance: 0,
            write_errors: 0,
            first_ns: 0,
            last_ns: 0,
            worst_at: 0,
        }
    }

    /// Writes every page of the histograms, so that recording faults nothing in.
    pub fn warm_up(&mut self) {
        self.jitter.reset();
        self.windows.reset();
    }

    /// Records a toggle at `now` (ns).
    #[inline]
    pub fn toggle(&mut self, now: u64) {
        if self.toggles == 0 {
            self.first_ns = now;
        } else {
            self.record_period(now.saturating_sub(self.last_ns));
        }
        self.last_ns = now;
        self.toggles += 1;
    }

    /// Records one measured period (ns).
    #[inline]
    pub fn record_period(&mut self, period: u64) {
        let t = self.nominal_ns.max(1);
        let dev = period.abs_diff(t);
        if dev > self.jitter_moments.max || self.jitter_moments.count == 0 {
            self.worst_at = self.toggles;
        }
        self.periods.record(period);
        self.jitter.record(dev);
        self.jitter_moments.record(dev);
        self.windows.record(dev);
        if dev > self.tolerance_ns {
            self.out_of_tolerance += 1;
        }
        if period.saturating_mul(2) > t.saturating_mul(3) {
            self.late += 1;
            self.missed += (period + t / 2) / t - 1;
        }
    }

    /// Toggles per second between the first and the last toggle (0 with fewer
    /// than two toggles).
    pub fn achieved_hz(&self) -> f64 {
        let span = self.last_ns.saturating_sub(self.first_ns);
        if self.periods.count == 0 || span == 0 {
            return 0.0;
        }
        self.periods.count as f64 * 1e9 / span as f64
    }

    /// Whether the achieved frequency and every period stayed within the
    /// tolerance of nominal, with at least one period measured.
    pub fn held(&self) -> bool {
        let nominal_hz = 1e9 / self.nominal_ns.max(1) as f64;
        let tolerance = self.tolerance_ns as f64 / self.nominal_ns.max(1) as f64;
        self.periods.count > 0
            && self.out_of_tolerance == 0
            && (self.achieved_hz() - nominal_hz).abs() <= tolerance * nominal_hz
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopEnd {
    /// The duration has passed.
    Done,
    /// The stop flag was raised.
    Stopped,
    /// The kernel refused to wait on the clock.
    ClockError(SleepError),
}

/// The measuring loop: toggles `out` at `start + k·period` for k = 0, 1, ...
/// until the clock reads `end` or later (or `stop` is raised), waiting with
/// `clock`. A wake-up a whole period late skips the slots it passed.
pub fn run_loop<C: Clock, O: Output>(
    clock: &C,
    out: &mut O,
    start: u64,
    end: u64,
    stats: &mut PeriodStats,
    stop: &AtomicBool,
) -> LoopEnd {
    let period = stats.nominal_ns.max(1);
    let mut next = start;
    let mut level = true;
    loop {
        if stop.load(Relaxed) {
            return LoopEnd::Stopped;
        }
        match clock.sleep_until(next) {
            Ok(()) => {}
            Err(SleepError::Interrupted) => continue,
            Err(e) => return LoopEnd::ClockError(e),
        }
        let now = clock.now();
        if !out.set(level) {
            stats.write_errors += 1;
        }
        level = !level;
        stats.toggle(now);
        if now >= end {
            return LoopEnd::Done;
        }
        next += period;
        if now >= next {
            next += ((now - next) / period + 1) * period;
        }
    }
}

#[cfg(test)]
mod tests;
