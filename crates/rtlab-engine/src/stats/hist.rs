//! Fixed-bound histograms that never allocate while recording.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Lowest value the latency histogram distinguishes, in ns.
pub const HIST_LOWEST_NS: u64 = 1;
/// Highest value the latency histogram tracks, in ns (100 s). Larger values are
/// recorded as this value; exact maxima are kept by [`super::Moments`].
pub const HIST_HIGHEST_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept: 3, i.e. a value is known within 0.1%.
pub const HIST_SIGFIG: u8 = 3;

/// An HdrHistogram of nanosecond values from 1 ns to 100 s at 3 significant digits.
/// All memory is allocated by [`LatencyHistogram::new`]; recording never allocates
/// and never fails.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

/// A histogram in portable form: the non-empty buckets as `(value, count)` pairs,
/// where `value` is the highest value equivalent to the bucket. Recording each pair
/// into a new histogram with the same bounds gives back the same histogram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HistogramData {
    /// Lowest discernible value (ns).
    pub lowest_ns: u64,
    /// Highest trackable value (ns).
    pub highest_ns: u64,
    /// Significant digits.
    pub sigfig: u8,
    /// Non-empty buckets as `[value_ns, count]`, ascending.
    pub buckets: Vec<(u64, u64)>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// Allocates the whole histogram (about 200 KiB).
    pub fn new() -> Self {
        let h = Histogram::new_with_bounds(HIST_LOWEST_NS, HIST_HIGHEST_NS, HIST_SIGFIG)
            .expect("constant bounds are valid");
        LatencyHistogram { h }
    }

    /// Records one value; values above [`HIST_HIGHEST_NS`] count as it. (Clamping
    /// here rather than relying on the library's own, rounded-up limit keeps the
    /// top bucket identical through [`Self::to_data`] and [`Self::from_data`].)
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.h.saturating_record(ns.min(HIST_HIGHEST_NS));
    }

    /// Records `n` copies of one value, clamped as in [`Self::record`].
    pub fn record_n(&mut self, ns: u64, n: u64) {
        let v = ns.min(HIST_HIGHEST_NS);
        // Within bounds after the clamp, so this cannot fail.
        let _ = self.h.record_n(v, n);
    }

    /// Sets every count to zero (writing every page of the counts).
    pub fn reset(&mut self) {
        self.h.reset();
    }

    /// Adds every count of `other` (same bounds, so this cannot fail).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.h.add(&other.h).expect("histograms share their bounds");
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.h.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// The value at quantile `q` (0..=1): the top of the bucket that holds it.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q)
    }

    /// How many recorded values are `<= ns`, at histogram resolution.
    pub fn count_le(&self, ns: u64) -> u64 {
        self.h.count_between(0, ns.min(HIST_HIGHEST_NS))
    }

    /// The portable form, non-empty buckets only.
    pub fn to_data(&self) -> HistogramData {
        HistogramData {
            lowest_ns: HIST_LOWEST_NS,
            highest_ns: HIST_HIGHEST_NS,
            sigfig: HIST_SIGFIG,
            buckets: self
                .h
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        }
    }

    /// Rebuilds a histogram from its portable form.
    pub fn from_data(d: &HistogramData) -> Self {
        let mut h = Self::new();
        for &(v, c) in &d.buckets {
            h.record_n(v, c);
        }
        h
    }
}

/// The most 1-µs buckets a [`UsBuckets`] may have: 10 s of range, 80 MB per
/// thread. `--histogram-max` and the importers of cyclictest's histograms hold
/// to it, so a number in a file or on the command line cannot ask for terabytes.
pub const MAX_US_BUCKETS: u32 = 10_000_000;

/// Cyclictest's histogram: one bucket per microsecond from 0 to `max_us - 1`, and an
/// overflow count for everything at or above `max_us`. Allocated up front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsBuckets {
    buckets: Vec<u64>,
    overflow: u64,
    /// Room for the wake-up numbers of the first overflows.
    overflow_cycles: Box<[u64]>,
    cycles_kept: usize,
}

/// The portable form of [`UsBuckets`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UsBucketsData {
    /// Number of 1-µs buckets (values at or above this many µs overflow).
    pub max_us: u32,
    /// Non-empty buckets as `[µs, count]`, ascending.
    pub buckets: Vec<(u32, u64)>,
    /// Values at or above `max_us`.
    pub overflow: u64,
    /// Wake-up numbers of the first overflows (as many as the probe kept,
    /// [`OVERFLOW_CYCLES_KEPT`] unless asked otherwise), as cyclictest lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow_cycles: Vec<u64>,
}

/// How many overflow wake-up numbers a thread keeps unless asked otherwise.
pub const OVERFLOW_CYCLES_KEPT: usize = 16;

impl UsBuckets {
    /// `max_us` buckets of 1 µs, all zero, keeping the wake-up numbers of the
    /// first [`OVERFLOW_CYCLES_KEPT`] overflows.
    pub fn new(max_us: u32) -> Self {
        Self::keeping(max_us, OVERFLOW_CYCLES_KEPT)
    }

    /// `max_us` buckets of 1 µs, all zero, keeping the wake-up numbers of the
    /// first `cycles` overflows (cyclictest keeps as many as it has buckets).
    pub fn keeping(max_us: u32, cycles: usize) -> Self {
        UsBuckets {
            buckets: vec![0; max_us as usize],
            overflow: 0,
            overflow_cycles: vec![0; cycles].into_boxed_slice(),
            cycles_kept: 0,
        }
    }

    /// Records a value in ns seen at wake-up `cycle`; returns true when it
    /// overflowed.
    #[inline]
    pub fn record(&mut self, ns: u64, cycle: u64) -> bool {
        let us = ns / 1000;
        match self.buckets.get_mut(us as usize) {
            Some(b) => {
                *b += 1;
                false
            }
            None => {
                if let Some(slot) = self.overflow_cycles.get_mut(self.cycles_kept) {
                    *slot = cycle;
                    self.cycles_kept += 1;
                }
                self.overflow += 1;
                true
            }
        }
    }

    /// Wake-up numbers of the first overflows.
    pub fn overflow_cycles(&self) -> &[u64] {
        &self.overflow_cycles[..self.cycles_kept]
    }

    /// Sets every count to zero (writing every page of the buckets).
    pub fn reset(&mut self) {
        self.buckets.fill(0);
        self.overflow = 0;
        self.overflow_cycles.fill(0);
        self.cycles_kept = 0;
    }

    /// Number of 1-µs buckets.
    pub fn max_us(&self) -> u32 {
        self.buckets.len() as u32
    }

    /// Count in the bucket for `us`.
    pub fn count(&self, us: u32) -> u64 {
        self.buckets.get(us as usize).copied().unwrap_or(0)
    }

    /// Values at or above `max_us`.
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Adds another set of buckets of the same size. Overflow wake-up numbers are
    /// per thread and are not merged.
    pub fn merge(&mut self, o: &UsBuckets) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.overflow += o.overflow;
        self.cycles_kept = 0;
    }

    /// The portable form, non-empty buckets only.
    pub fn to_data(&self) -> UsBucketsData {
        UsBucketsData {
            max_us: self.max_us(),
            buckets: self
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (i as u32, c))
                .collect(),
            overflow: self.overflow,
            overflow_cycles: self.overflow_cycles().to_vec(),
        }
    }
}

impl UsBucketsData {
    /// Rebuilds the dense buckets.
    pub fn to_buckets(&self) -> UsBuckets {
        let kept = self.overflow_cycles.len().max(OVERFLOW_CYCLES_KEPT);
        let mut b = UsBuckets::keeping(self.max_us, kept);
        for &(us, c) in &self.buckets {
            if let Some(slot) = b.buckets.get_mut(us as usize) {
                *slot += c;
            } else {
                b.overflow += c;
            }
        }
        for (slot, &c) in b.overflow_cycles.iter_mut().zip(&self.overflow_cycles) {
            *slot = c;
            b.cycles_kept += 1;
        }
        b.overflow += self.overflow;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn as_many_overflow_cycles_are_kept_as_asked() {
        let mut b = UsBuckets::keeping(2, 3);
        for cycle in 0..5 {
            b.record(7_000, cycle);
        }
        assert_eq!((b.overflow(), b.overflow_cycles()), (5, &[0, 1, 2][..]));
        let back = b.to_data().to_buckets();
        assert_eq!(back.overflow_cycles(), &[0, 1, 2]);
        let mut many = UsBuckets::keeping(2, 40);
        for cycle in 0..30 {
            many.record(7_000, cycle);
        }
        assert_eq!(many.to_data().to_buckets().overflow_cycles().len(), 30);
    }

    #[test]
    fn us_buckets_count_overflow_like_cyclictest() {
        let mut b = UsBuckets::new(10);
        assert!(!b.record(0, 0));
        assert!(!b.record(9_999, 1));
        assert!(b.record(10_000, 2));
        assert!(b.record(u64::MAX, 3));
        assert_eq!((b.count(0), b.count(9), b.overflow()), (1, 1, 2));
        assert_eq!(b.overflow_cycles(), &[2, 3]);
        assert_eq!(b.to_data().to_buckets(), b);
    }

    #[test]
    fn huge_values_saturate_instead_of_failing() {
        let mut h = LatencyHistogram::new();
        h.record(u64::MAX);
        assert_eq!(h.len(), 1);
        assert!(h.value_at_quantile(1.0) >= HIST_HIGHEST_NS);
    }

    proptest! {
        #[test]
        fn merging_equals_recording_everything(
            a in proptest::collection::vec(0u64..200_000_000_000, 0..200),
            b in proptest::collection::vec(0u64..200_000_000_000, 0..200),
        ) {
            let (mut ha, mut hb, mut all) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
            for &v in &a { ha.record(v); all.record(v); }
            for &v in &b { hb.record(v); all.record(v); }
            ha.merge(&hb);
            prop_assert_eq!(ha.to_data(), all.to_data());
            let (mut ua, mut ub, mut uall) = (UsBuckets::new(1000), UsBuckets::new(1000), UsBuckets::new(1000));
            for &v in &a { ua.record(v, 0); uall.record(v, 0); }
            for &v in &b { ub.record(v, 0); uall.record(v, 0); }
            ua.merge(&ub);
            uall.cycles_kept = 0;
            prop_assert_eq!(ua, uall);
        }

        #[test]
        fn portable_form_round_trips(values in proptest::collection::vec(0u64..200_000_000_000, 0..300)) {
            let mut h = LatencyHistogram::new();
            for &v in &values { h.record(v); }
            let d = h.to_data();
            prop_assert_eq!(LatencyHistogram::from_data(&d).to_data(), d);
            prop_assert_eq!(h.len(), values.len() as u64);
        }
    }
}
