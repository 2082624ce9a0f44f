//! The OS-noise probe: per CPU, a pinned thread reads a clock in a tight loop
//! for a fixed time and records every gap between two reads above a threshold
//! (what oslat and rtla osnoise call noise: time the CPU was taken from the
//! thread by interrupts, other threads, the hypervisor or RT throttling).
//!
//! The loop ([`spin`]) is generic over a [`Ticks`] source so that tests drive
//! it with a scripted clock; it compares raw ticks and converts to ns only for
//! a gap, so a quiet iteration costs one clock read, a subtraction and two
//! compares.

mod marker;
mod threads;

pub use marker::{GapMarker, GapMarks, GAP_PREFIX};
pub use threads::{run, NoiseConfig, NoiseError, NoiseThread};

use crate::rt::clock::{Clock, ClockId, SystemClock};
use crate::stats::hist::LatencyHistogram;
use crate::stats::Moments;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// A raw time source for the loop.
pub trait Ticks {
    /// The current count.
    fn ticks(&self) -> u64;
}

/// The CPU's time-stamp counter (x86_64 `rdtsc`), as oslat reads time.
#[derive(Debug, Clone, Copy)]
pub struct Tsc;

impl Ticks for Tsc {
    #[inline(always)]
    fn ticks(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: rdtsc reads a register; every x86_64 CPU has it.
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("the TSC is only offered on x86_64")
    }
}

/// `CLOCK_MONOTONIC` through the vDSO, in ns.
#[derive(Debug, Clone, Copy)]
pub struct Monotonic(pub SystemClock);

impl Ticks for Monotonic {
    #[inline(always)]
    fn ticks(&self) -> u64 {
        self.0.now()
    }
}

/// Which clock the loop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseClock {
    /// The TSC, calibrated against `CLOCK_MONOTONIC` before the run.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic,
}

/// Whether the TSC runs at a constant rate through idle and frequency changes
/// on this machine (`constant_tsc` and `nonstop_tsc` in /proc/cpuinfo), so that
/// its ticks are time.
pub fn tsc_usable() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let info = crate::sysinfo::read_text("/proc/cpuinfo").unwrap_or_default();
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// Ticks to ns: `ns = ticks × mult / 2³²`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    mult: u64,
}

impl Scale {
    /// One tick is one ns.
    pub const NS: Scale = Scale { mult: 1 << 32 };

    /// `ticks` ticks took `ns` ns.
    pub fn from_rate(ticks: u64, ns: u64) -> Scale {
        Scale {
            mult: ((u128::from(ns) << 32) / u128::from(ticks.max(1))) as u64,
        }
    }

    /// `t` ticks in ns.
    #[inline]
    pub fn ns(self, t: u64) -> u64 {
        ((u128::from(t) * u128::from(self.mult) + (1 << 31)) >> 32) as u64
    }

    /// The ticks of `ns` ns (rounded down).
    pub fn ticks(self, ns: u64) -> u64 {
        ((u128::from(ns) << 32) / u128::from(self.mult.max(1))) as u64
    }

    /// The most ticks that are at most `ns` ns long as [`Scale::ns`] converts
    /// them: a gap of more ticks is recorded as longer than `ns`, so that a
    /// threshold compared in ticks and the gaps recorded in ns agree (the ticks
    /// of `ns` rounded down may be one short, and one more tick still round to
    /// `ns`).
    pub fn ticks_within(self, ns: u64) -> u64 {
        let mut t = self.ticks(ns);
        while t > 0 && self.ns(t) > ns {
            t -= 1;
        }
        while self.ns(t + 1) <= ns {
            t += 1;
        }
        t
    }

    /// Ticks per µs, for the record (1000 for ns).
    pub fn ticks_per_us(self) -> f64 {
        1000.0 * (1u64 << 32) as f64 / self.mult as f64
    }
}

/// Measures the TSC's rate against `CLOCK_MONOTONIC` over about `window_ns`.
pub fn calibrate_tsc(window_ns: u64) -> Scale {
    let mono = SystemClock::new(ClockId::Monotonic);
    let (t0, n0) = (Tsc.ticks(), mono.now());
    let _ = mono.sleep_for(window_ns);
    let (t1, n1) = (Tsc.ticks(), mono.now());
    Scale::from_rate(t1.wrapping_sub(t0), n1 - n0)
}

/// What one thread saw.
#[derive(Debug, Clone)]
pub struct GapStats {
    /// Every gap above the threshold (ns).
    pub hist: LatencyHistogram,
    /// Count, sum, min and max of the gaps.
    pub moments: Moments,
    /// The largest gap's start, ns after the loop began.
    pub max_at_ns: u64,
    /// Loop iterations (clock reads after the first).
    pub iterations: u64,
    /// The smallest difference between two reads (ns): the loop's own cost.
    pub min_delta_ns: u64,
    /// From the first read to the last (ns).
    pub elapsed_ns: u64,
}

impl GapStats {
    /// Empty, with its histogram allocated and every page of it written.
    pub fn new() -> GapStats {
        let mut hist = LatencyHistogram::new();
        hist.reset();
        GapStats {
            hist,
            moments: Moments::default(),
            max_at_ns: 0,
            iterations: 0,
            min_delta_ns: 0,
            elapsed_ns: 0,
        }
    }

    /// Total time in gaps (ns).
    pub fn noise_ns(&self) -> u64 {
        self.moments.sum.min(u128::from(u64::MAX)) as u64
    }

    /// Adds `o`'s gaps and iterations (the total of several threads).
    pub fn merge(&mut self, o: &GapStats) {
        self.hist.merge(&o.hist);
        if o.moments.max > self.moments.max || self.moments.count == 0 {
            self.max_at_ns = o.max_at_ns;
        }
        self.moments.merge(&o.moments);
        self.iterations += o.iterations;
        self.elapsed_ns = self.elapsed_ns.max(o.elapsed_ns);
        self.min_delta_ns = match (self.min_delta_ns, o.min_delta_ns) {
            (0, m) | (m, 0) => m,
            (a, b) => a.min(b),
        };
    }
}

impl Default for GapStats {
    fn default() -> Self {
        GapStats::new()
    }
}

/// The loop: reads `t` until `duration_ticks` have passed (or `stop`, checked
/// every 65536 iterations and after every gap), recording each difference
/// between two reads above `threshold_ticks` into `st`, and marking those at
/// or above the `marker`'s threshold (the marker's write is the loop's own
/// time: the next gap is measured from after it).
#[inline(never)]
pub fn spin<T: Ticks>(
    t: &T,
    scale: Scale,
    threshold_ticks: u64,
    duration_ticks: u64,
    stop: &AtomicBool,
    st: &mut GapStats,
    marker: Option<&GapMarker>,
) {
    let start = t.ticks();
    let end = start.saturating_add(duration_ticks);
    let mut prev = start;
    let mut n: u64 = 0;
    let mut min = u64::MAX;
    loop {
        let mut now = t.ticks();
        let d = now.wrapping_sub(prev);
        n += 1;
        min = min.min(d);
        if d > threshold_ticks {
            let ns = scale.ns(d);
            if ns > st.moments.max {
                st.max_at_ns = scale.ns(prev.wrapping_sub(start));
            }
            st.moments.record(ns);
            st.hist.record(ns);
            if let Some(m) = marker.filter(|m| d >= m.threshold_ticks) {
                m.mark(t, scale, now, d, st.moments.count - 1);
                now = t.ticks();
            }
            if stop.load(Relaxed) {
                prev = now;
                break;
            }
        }
        prev = now;
        if now >= end || (n & 0xffff == 0 && stop.load(Relaxed)) {
            break;
        }
    }
    st.iterations = n;
    st.min_delta_ns = scale.ns(min);
    st.elapsed_ns = scale.ns(prev.wrapping_sub(start));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that advances by the next step of a script at every read.
    struct Script<'a> {
        at: Cell<u64>,
        steps: &'a [u64],
        i: Cell<usize>,
    }

    fn script(steps: &[u64]) -> Script<'_> {
        Script {
            at: Cell::new(0),
            steps,
            i: Cell::new(0),
        }
    }

    impl Ticks for Script<'_> {
        fn ticks(&self) -> u64 {
            let i = self.i.get();
            self.i.set(i + 1);
            let step = self.steps[i % self.steps.len()];
            self.at.set(self.at.get() + step);
            self.at.get()
        }
    }

    #[test]
    fn gaps_above_the_threshold_are_counted_with_their_time() {
        // Reads 20 ns apart, with a 5 µs and a 30 µs gap; the first read is
        // at 20, the loop ends at or after 20 + 50 µs.
        let mut steps = vec![20u64; 1000];
        steps[100] = 5_000;
        steps[500] = 30_000;
        let s = script(&steps);
        let mut st = GapStats::new();
        let stop = AtomicBool::new(false);
        spin(&s, Scale::NS, 1_000, 50_000, &stop, &mut st, None);
        assert_eq!(st.moments.count, 2);
        assert_eq!(st.hist.len(), 2);
        assert_eq!(st.moments.max, 30_000);
        assert_eq!(st.noise_ns(), 35_000);
        assert_eq!(st.min_delta_ns, 20);
        // The 30 µs gap starts after 499 reads: 99 of 20 ns, one of 5 µs,
        // 399 of 20 ns.
        assert_eq!(st.max_at_ns, 99 * 20 + 5_000 + 399 * 20);
        assert!(
            st.elapsed_ns >= 50_000 && st.elapsed_ns < 50_020,
            "{}",
            st.elapsed_ns
        );
        assert_eq!(st.iterations, 1 + (st.elapsed_ns - 35_000) / 20 + 1);
    }

    #[test]
    fn gaps_at_the_marking_threshold_are_marked_and_the_write_is_not_a_gap() {
        let path = std::env::temp_dir().join(format!("rtlab-spinmark-{}", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        let marks = GapMarks {
            path: path.clone(),
            threshold_ns: 10_000,
        };
        let marker = GapMarker::open(&marks, Scale::NS, 3, 0).unwrap();
        // A 5 µs gap (not marked), a 30 µs one (marked), and the marker's
        // write scripted as 40 µs: it is not seen as a gap.
        let mut steps = vec![20u64; 1000];
        steps[100] = 5_000;
        steps[500] = 30_000;
        steps[501] = 40_000;
        let s = script(&steps);
        let mut st = GapStats::new();
        let stop = AtomicBool::new(false);
        spin(&s, Scale::NS, 1_000, 90_000, &stop, &mut st, Some(&marker));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((st.moments.count, st.moments.max), (2, 30_000));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(lines[0].starts_with("rtlab-gap cpu=3 thread=0 gap=1 start="));
        let field = |k: &str| -> u64 {
            let v = lines[0]
                .split(' ')
                .find_map(|kv| kv.strip_prefix(k))
                .unwrap();
            v.parse().unwrap()
        };
        // In CLOCK_MONOTONIC: the gap's length, ending before the write.
        assert_eq!(field("end=") - field("start="), 30_000);
    }

    #[test]
    fn tsc_scale_round_trips() {
        // 3 GHz: 3 ticks per ns.
        let s = Scale::from_rate(3_000_000_000, 1_000_000_000);
        assert_eq!(s.ns(3_000), 1_000);
        assert!((s.ticks(1_000) as i64 - 3_000).abs() <= 1);
        assert!((s.ticks_per_us() - 3000.0).abs() < 0.01);
        assert_eq!(Scale::NS.ns(77), 77);
        assert_eq!(Scale::NS.ticks(77), 77);
    }

    #[test]
    fn a_gap_above_the_threshold_in_ticks_is_above_it_in_ns() {
        // TSC rates as calibrated (odd ones included), a coarse clock, and ns.
        for (ticks, ns) in [
            (2_994_372_117, 1_000_000_000),
            (3_000_000_000, 1_000_000_000),
            (2_500_000_001, 999_999_999),
            (19_200_000, 1_000_000_000),
            (1, 1),
        ] {
            let s = Scale::from_rate(ticks, ns);
            for threshold in [1, 999, 1_000, 1_001, 2_000, 1_000_000] {
                let t = s.ticks_within(threshold);
                assert!(s.ns(t) <= threshold, "{ticks}/{ns}: {t} ticks");
                assert!(s.ns(t + 1) > threshold, "{ticks}/{ns}: {t} + 1 ticks");
            }
        }
    }

    #[test]
    fn merged_threads_keep_the_largest_gap_and_its_time() {
        let mut a = GapStats::new();
        a.moments.record(5);
        a.max_at_ns = 1;
        let mut b = GapStats::new();
        b.moments.record(9);
        b.max_at_ns = 2;
        a.merge(&b);
        assert_eq!((a.moments.max, a.max_at_ns, a.moments.count), (9, 2, 2));
    }
}
