//! The cyclic timer-latency probe (what cyclictest measures).
//!
//! Each thread sleeps until an absolute time with `clock_nanosleep(TIMER_ABSTIME)`
//! (or, as asked, for a relative time, with `nanosleep(2)`, or on a POSIX
//! interval timer: [`TimerMode`]), reads the clock on wake-up, and records how
//! late it woke. If the thread woke so
//! late that later periods already expired, those periods are counted as
//! **overruns** and skipped, never silently dropped. A wake-up later than the
//! deadline is a **deadline miss**.
//!
//! The loop ([`run_loop`]) is generic over [`Clock`] so that tests can script time.
//! It does integer arithmetic only: no allocation, lock, I/O or formatting. Live
//! values leave through relaxed atomics ([`LiveStats`]), and every sample, when
//! asked, through a pre-allocated ring ([`SampleRing`]); the stop flag is an
//! `AtomicBool`.

use super::samples::{Sample, SampleRing};
use crate::rt::clock::{Clock, SleepError};
use crate::stats::hist::{LatencyHistogram, UsBuckets};
use crate::stats::trace::MaxTrace;
use crate::stats::windows::Windows;
use crate::stats::{Moments, Summary};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::Relaxed};

/// What one measuring thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSpec {
    /// The period, in ns (> 0).
    pub interval_ns: u64,
    /// Stop after this many wake-ups (0 = no limit).
    pub loops: u64,
    /// Stop at the first wake-up at or after this absolute time (ns).
    pub end_ns: Option<u64>,
    /// A wake-up later than this is a deadline miss (ns).
    pub deadline_ns: u64,
    /// Stop every thread when a latency exceeds this (ns).
    pub breaktrace_ns: Option<u64>,
    /// Sleep for the interval from each wake-up rather than until the next
    /// period: a wake-up is late against the time it slept from.
    pub relative: bool,
    /// Record every wake-up into the thread's histograms and time series;
    /// without, only its moments and counters (a consumer of the samples'
    /// ring keeps its own).
    pub histograms: bool,
}

/// Why a measuring loop ended. `Copy`, so it can leave the hot path freely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopEnd {
    /// The stop flag was raised (signal, or another thread's breaktrace).
    Stopped,
    /// The requested number of loops was done.
    LoopsDone,
    /// The requested duration has passed.
    DurationDone,
    /// This thread's latency exceeded the breaktrace threshold.
    Break {
        /// 0-based wake-up number.
        cycle: u64,
        /// The latency that exceeded the threshold (ns).
        latency_ns: u64,
    },
    /// The kernel refused to sleep on the clock.
    ClockError(SleepError),
}

/// Values published by a measuring thread for the live view. The owning thread is
/// the only writer, so plain relaxed stores suffice.
#[derive(Debug)]
pub struct LiveStats {
    tid: AtomicI32,
    cycles: AtomicU64,
    last: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    sum: AtomicU64,
    overruns: AtomicU64,
    misses: AtomicU64,
    /// Every wake-up, for the main thread, when asked.
    samples: Option<SampleRing>,
    /// Every spike, to an ftrace marker file, when asked.
    marker: Option<SpikeMarker>,
}

impl Default for LiveStats {
    fn default() -> Self {
        LiveStats {
            tid: AtomicI32::new(0),
            cycles: AtomicU64::new(0),
            last: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            samples: None,
            marker: None,
        }
    }
}

/// A copy of one thread's live values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveSnapshot {
    /// Kernel thread id of the measuring thread (0 before it started).
    pub tid: i32,
    /// Wake-ups so far.
    pub cycles: u64,
    /// The last latency (ns).
    pub last_ns: u64,
    /// Smallest latency so far (ns; 0 before the first wake-up).
    pub min_ns: u64,
    /// Largest latency so far (ns).
    pub max_ns: u64,
    /// Mean latency so far (ns).
    pub avg_ns: u64,
    /// Overruns so far.
    pub overruns: u64,
    /// Deadline misses so far.
    pub misses: u64,
}

impl LiveStats {
    /// Live values that also hand every sample to the main thread through a
    /// ring of `ring` samples (none when 0).
    pub fn with_samples(ring: usize) -> Self {
        LiveStats {
            samples: (ring > 0).then(|| SampleRing::new(ring)),
            ..LiveStats::default()
        }
    }

    /// The same, also writing a line to `marker` for every wake-up at or
    /// above its threshold.
    pub fn with_marker(self, marker: Option<SpikeMarker>) -> Self {
        LiveStats { marker, ..self }
    }

    /// The samples' ring, when there is one.
    pub fn samples(&self) -> Option<&SampleRing> {
        self.samples.as_ref()
    }

    /// Back to the state before the first wake-up.
    fn reset(&self) {
        for a in [
            &self.cycles,
            &self.last,
            &self.max,
            &self.sum,
            &self.overruns,
            &self.misses,
        ] {
            a.store(0, Relaxed);
        }
        self.min.store(u64::MAX, Relaxed);
        if let Some(r) = &self.samples {
            r.reset();
        }
    }

    /// Publishes a thread's values so far, for the probes outside this module
    /// that show in the same live view: its tid, its last value, the moments
    /// of all of them, their wrapping sum, and its overruns.
    #[inline]
    pub(crate) fn publish(&self, tid: i32, last: u64, m: &Moments, sum: u64, overruns: u64) {
        self.tid.store(tid, Relaxed);
        self.cycles.store(m.count, Relaxed);
        self.last.store(last, Relaxed);
        self.min.store(m.min, Relaxed);
        self.max.store(m.max, Relaxed);
        self.sum.store(sum, Relaxed);
        self.overruns.store(overruns, Relaxed);
    }

    /// Reads the current values.
    pub fn snapshot(&self) -> LiveSnapshot {
        let cycles = self.cycles.load(Relaxed);
        let min = self.min.load(Relaxed);
        LiveSnapshot {
            tid: self.tid.load(Relaxed),
            cycles,
            last_ns: self.last.load(Relaxed),
            min_ns: if min == u64::MAX { 0 } else { min },
            max_ns: self.max.load(Relaxed),
            avg_ns: self.sum.load(Relaxed).checked_div(cycles).unwrap_or(0),
            overruns: self.overruns.load(Relaxed),
            misses: self.misses.load(Relaxed),
        }
    }
}

/// Everything one thread gathers. Allocated before the start barrier; recording
/// into it never allocates.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    /// Exact count, min, max, mean and stddev.
    pub moments: Moments,
    /// Latency histogram, 1 ns to 100 s at 3 significant digits.
    pub hist: LatencyHistogram,
    /// 1-µs buckets up to the histogram maximum, as cyclictest keeps them.
    pub us: UsBuckets,
    /// Per-block maxima over time, for scatter plots.
    pub trace: MaxTrace,
    /// The run in time windows, for the intervals of its figures.
    pub windows: Windows,
    /// Periods that expired while the thread was late.
    pub overruns: u64,
    /// Wake-ups later than the deadline.
    pub misses: u64,
    /// Wake-up number (0-based) of the maximum.
    pub max_cycle: u64,
}

impl ThreadStats {
    /// Allocates all storage: `hist_max_us` 1-µs buckets and `trace_points` points.
    pub fn new(hist_max_us: u32, trace_points: usize) -> Self {
        Self::keeping(
            hist_max_us,
            trace_points,
            crate::stats::hist::OVERFLOW_CYCLES_KEPT,
        )
    }

    /// As [`ThreadStats::new`], keeping the wake-up numbers of the first
    /// `overflow_cycles` histogram overflows.
    pub fn keeping(hist_max_us: u32, trace_points: usize, overflow_cycles: usize) -> Self {
        ThreadStats {
            moments: Moments::default(),
            hist: LatencyHistogram::new(),
            us: UsBuckets::keeping(hist_max_us, overflow_cycles),
            trace: MaxTrace::new(trace_points),
            windows: Windows::new(),
            overruns: 0,
            misses: 0,
            max_cycle: 0,
        }
    }

    /// Back to empty, keeping (and writing to) every allocated page.
    pub fn reset(&mut self) {
        self.moments = Moments::default();
        self.hist.reset();
        self.us.reset();
        self.trace.reset();
        self.windows.reset();
        self.overruns = 0;
        self.misses = 0;
        self.max_cycle = 0;
    }

    /// Runs every recording path once (small and huge values, histogram overflow,
    /// a full trace and full windows that compact) and then resets. Afterwards every page of the
    /// statistics and of the code that records into them has been touched, so
    /// with `MCL_ONFAULT` it is locked, and nothing faults while measuring.
    pub fn warm_up(&mut self) {
        let windows = crate::stats::windows::WINDOWS as u64 * 4 + 1;
        let points = (self.trace.capacity() as u64 * 2 + 1).max(windows);
        for i in 0..points {
            let v = (i * 7_919) % 5_000_000_000;
            self.moments.record(v);
            self.hist.record(v);
            self.us.record(v, i);
            self.trace.record(i, v);
            self.windows.record(v);
        }
        self.reset();
    }

    /// Folds another thread's stats into these (for the all-threads series).
    /// The trace is not merged: it is per thread. The windows are added window
    /// by window (see [`Windows::merge`]).
    pub fn merge(&mut self, o: &ThreadStats) {
        if o.moments.count > 0 && (self.moments.count == 0 || o.moments.max > self.moments.max) {
            self.max_cycle = o.max_cycle;
        }
        self.moments.merge(&o.moments);
        self.hist.merge(&o.hist);
        self.us.merge(&o.us);
        self.windows.merge(&o.windows);
        self.overruns += o.overruns;
        self.misses += o.misses;
    }

    /// Values above the 1-µs histogram's range.
    pub fn overflows(&self) -> u64 {
        self.us.overflow()
    }

    /// The order statistics of what was recorded.
    pub fn summary(&self) -> Summary {
        Summary::new(&self.moments, &self.hist)
    }
}

/// The measuring loop of one thread. Sleeps until `first_wake`, then every
/// `spec.interval_ns`, recording each wake-up's latency into `stats` and publishing
/// it to `live`, until a stop condition holds.
///
/// Overruns: after a wake-up `latency` ns late, the periods
/// `next + k·interval` for `k = 1 ..= latency / interval` have already expired;
/// they are counted and the next wake-up is the first period still in the future.
pub fn run_loop<C: Clock>(
    clock: &C,
    spec: &LoopSpec,
    first_wake: u64,
    stats: &mut ThreadStats,
    live: &LiveStats,
    stop: &AtomicBool,
) -> LoopEnd {
    let interval = spec.interval_ns.max(1);
    let origin = first_wake.saturating_sub(interval);
    let mut next = first_wake;
    let mut cycle: u64 = 0;
    let mut live_sum: u64 = 0;
    loop {
        if stop.load(Relaxed) {
            return LoopEnd::Stopped;
        }
        let (slept, target) = if spec.relative {
            let from = clock.now();
            (clock.sleep_for(interval), from.saturating_add(interval))
        } else {
            (clock.sleep_until(next), next)
        };
        match slept {
            Ok(()) => {}
            Err(SleepError::Interrupted) => continue,
            Err(e) => return LoopEnd::ClockError(e),
        }
        let now = clock.now();
        // A clock that reads earlier than the requested wake-up would be a kernel
        // bug; count it as 0 rather than wrapping.
        let latency = now.saturating_sub(target);
        let expired = latency / interval;

        if latency > stats.moments.max || stats.moments.count == 0 {
            stats.max_cycle = cycle;
        }
        stats.moments.record(latency);
        if spec.histograms {
            stats.hist.record(latency);
            stats.us.record(latency, cycle);
            stats.trace.record(now.saturating_sub(origin), latency);
            stats.windows.record(latency);
        }
        stats.overruns += expired;
        if latency > spec.deadline_ns {
            stats.misses += 1;
        }

        live_sum = live_sum.wrapping_add(latency);
        live.cycles.store(cycle + 1, Relaxed);
        live.last.store(latency, Relaxed);
        live.min.store(stats.moments.min, Relaxed);
        live.max.store(stats.moments.max, Relaxed);
        live.sum.store(live_sum, Relaxed);
        live.overruns.store(stats.overruns, Relaxed);
        live.misses.store(stats.misses, Relaxed);
        if let Some(ring) = &live.samples {
            ring.push(Sample {
                cycle,
                latency_ns: latency,
                at_ns: now,
            });
        }
        if let Some(m) = &live.marker {
            m.mark(cycle, latency, target);
        }

        if let Some(limit) = spec.breaktrace_ns {
            if latency > limit {
                stop.store(true, Relaxed);
                return LoopEnd::Break {
                    cycle,
                    latency_ns: latency,
                };
            }
        }
        cycle += 1;
        if spec.loops != 0 && cycle >= spec.loops {
            return LoopEnd::LoopsDone;
        }
        if spec.end_ns.is_some_and(|end| now >= end) {
            return LoopEnd::DurationDone;
        }
        // Cannot overflow for real clocks: `expired + 1` periods past `next` is at
        // most one period past `now`.
        next = next.saturating_add((expired + 1).saturating_mul(interval));
    }
}

/// A few real wake-ups 50 µs apart through the real loop, discarded: they fault in
/// the loop's code, the vDSO clock and the sleep call before measuring starts, and
/// keep cold caches out of the first sample.
pub(crate) fn warm_up_loop<C: Clock>(clock: &C, stats: &mut ThreadStats) {
    let spec = LoopSpec {
        interval_ns: 50_000,
        loops: 3,
        end_ns: None,
        deadline_ns: u64::MAX,
        breaktrace_ns: None,
        relative: false,
        histograms: true,
    };
    let live = LiveStats::default();
    let never = AtomicBool::new(false);
    run_loop(
        clock,
        &spec,
        clock.now() + spec.interval_ns,
        stats,
        &live,
        &never,
    );
    live.reset();
    stats.reset();
}

mod config;
mod marker;
mod run;
pub use config::*;
pub use marker::*;
pub use run::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// A clock whose every wake-up is late by the next scripted amount.
    struct ScriptedClock {
        now: Cell<u64>,
        lateness: RefCell<std::vec::IntoIter<u64>>,
        sleeps: RefCell<Vec<u64>>,
    }

    impl ScriptedClock {
        fn new(lateness: Vec<u64>) -> Self {
            ScriptedClock {
                now: Cell::new(0),
                lateness: RefCell::new(lateness.into_iter()),
                sleeps: RefCell::new(Vec::new()),
            }
        }
    }

    impl Clock for ScriptedClock {
        fn now(&self) -> u64 {
            self.now.get()
        }
        fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
            self.sleeps.borrow_mut().push(deadline);
            let late = self.lateness.borrow_mut().next().unwrap_or(0);
            self.now.set(deadline.max(self.now.get()) + late);
            Ok(())
        }
    }

    fn spec(loops: u64) -> LoopSpec {
        LoopSpec {
            interval_ns: 1_000,
            loops,
            end_ns: None,
            deadline_ns: 1_000,
            breaktrace_ns: None,
            relative: false,
            histograms: true,
        }
    }

    fn run_scripted(spec: &LoopSpec, lateness: Vec<u64>) -> (ThreadStats, LoopEnd, Vec<u64>) {
        let clock = ScriptedClock::new(lateness);
        let mut stats = ThreadStats::new(10, 64);
        let live = LiveStats::default();
        let stop = AtomicBool::new(false);
        let end = run_loop(&clock, spec, 1_000, &mut stats, &live, &stop);
        let s = live.snapshot();
        assert_eq!(s.cycles, stats.moments.count);
        assert_eq!(s.max_ns, stats.moments.max);
        (stats, end, clock.sleeps.into_inner())
    }

    #[test]
    fn records_exact_latencies() {
        let (stats, end, sleeps) = run_scripted(&spec(4), vec![10, 250, 3, 999]);
        assert_eq!(end, LoopEnd::LoopsDone);
        assert_eq!(sleeps, vec![1_000, 2_000, 3_000, 4_000]);
        let s = stats.summary();
        assert_eq!((s.samples, s.min_ns, s.max_ns), (4, 3, 999));
        assert_eq!(stats.moments.sum, 10 + 250 + 3 + 999);
        assert_eq!((stats.overruns, stats.misses), (0, 0));
        assert_eq!(stats.max_cycle, 3);
    }

    #[test]
    fn a_stall_of_5_3_intervals_counts_5_overruns_and_skips_them() {
        let (stats, _, sleeps) = run_scripted(&spec(3), vec![0, 5_300, 0]);
        assert_eq!(stats.overruns, 5);
        assert_eq!(stats.misses, 1, "5.3 µs late against a 1 µs deadline");
        // Woke at 7_300 for the period due at 2_000; periods 3_000..=7_000 expired.
        assert_eq!(sleeps, vec![1_000, 2_000, 8_000]);
        assert_eq!(stats.moments.max, 5_300);
    }

    #[test]
    fn relative_sleeps_are_late_against_the_time_they_slept_from() {
        let mut sp = spec(3);
        sp.relative = true;
        let (stats, end, sleeps) = run_scripted(&sp, vec![10, 5_300, 20]);
        assert_eq!(end, LoopEnd::LoopsDone);
        // From 0 to 1_000 (woke at 1_010), to 2_010 (woke at 7_310), to 8_310.
        assert_eq!(sleeps, vec![1_000, 2_010, 8_310]);
        assert_eq!((stats.moments.min, stats.moments.max), (10, 5_300));
        assert_eq!(stats.overruns, 5);
    }

    #[test]
    fn deadline_misses_are_latencies_above_the_deadline() {
        let mut sp = spec(5);
        sp.deadline_ns = 100;
        let (stats, _, _) = run_scripted(&sp, vec![100, 101, 50, 900, 0]);
        assert_eq!(stats.misses, 2, "100 is on time, 101 and 900 are late");
        assert_eq!(stats.overruns, 0);
    }

    #[test]
    fn breaktrace_stops_at_the_first_cycle_over_the_threshold() {
        let mut sp = spec(100);
        sp.breaktrace_ns = Some(500);
        let clock = ScriptedClock::new(vec![10, 500, 20, 501, 7]);
        let mut stats = ThreadStats::new(10, 64);
        let stop = AtomicBool::new(false);
        let end = run_loop(&clock, &sp, 1_000, &mut stats, &LiveStats::default(), &stop);
        assert_eq!(
            end,
            LoopEnd::Break {
                cycle: 3,
                latency_ns: 501
            }
        );
        assert!(stop.load(Relaxed), "a break stops the other threads too");
        assert_eq!(stats.moments.count, 4);
    }

    #[test]
    fn histogram_overflows_are_counted() {
        // 10 one-µs buckets: 10_000 ns and above overflow.
        let mut sp = spec(4);
        sp.interval_ns = 100_000;
        let (stats, _, _) = run_scripted(&sp, vec![9_999, 10_000, 50_000, 1]);
        assert_eq!(stats.overflows(), 2);
        assert_eq!(stats.us.overflow_cycles(), &[1, 2]);
        assert_eq!(stats.us.count(9), 1);
        assert_eq!(stats.us.count(0), 1);
        assert_eq!(stats.hist.len(), 4, "the HdrHistogram keeps every value");
    }

    #[test]
    fn duration_ends_the_loop() {
        let mut sp = spec(0);
        sp.end_ns = Some(10_000);
        let (stats, end, _) = run_scripted(&sp, vec![]);
        assert_eq!(end, LoopEnd::DurationDone);
        assert_eq!(stats.moments.count, 10, "wake-ups at 1_000 ..= 10_000");
    }

    #[test]
    fn without_histograms_only_the_moments_and_counters_record() {
        let mut sp = spec(3);
        sp.histograms = false;
        let (stats, _, _) = run_scripted(&sp, vec![5, 2_500, 9]);
        assert_eq!((stats.moments.count, stats.moments.max), (3, 2_500));
        assert_eq!((stats.overruns, stats.misses), (2, 1));
        assert_eq!(stats.hist.len(), 0);
        assert_eq!(stats.us.count(0), 0);
    }

    #[test]
    fn stop_flag_ends_before_sleeping() {
        let clock = ScriptedClock::new(vec![]);
        let stop = AtomicBool::new(true);
        let mut stats = ThreadStats::new(10, 8);
        let end = run_loop(
            &clock,
            &spec(0),
            1_000,
            &mut stats,
            &LiveStats::default(),
            &stop,
        );
        assert_eq!(end, LoopEnd::Stopped);
        assert_eq!(stats.moments.count, 0);
    }

    #[test]
    fn merged_thread_stats_equal_all_values() {
        let (a, _, _) = run_scripted(&spec(3), vec![5, 700, 9]);
        let (b, _, _) = run_scripted(&spec(3), vec![1, 2, 3_000]);
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.moments.count, 6);
        assert_eq!((m.moments.min, m.moments.max), (1, 3_000));
        assert_eq!(m.overruns, 3, "3 µs late at a 1 µs period");
        assert_eq!(m.max_cycle, 2);
        assert_eq!(m.hist.len(), 6);
    }
}
