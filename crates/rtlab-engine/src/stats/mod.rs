//! Statistics kept while measuring and derived afterwards: exact moments
//! ([`Moments`]), HdrHistograms ([`hist::LatencyHistogram`]), cyclictest-style 1-µs
//! buckets ([`hist::UsBuckets`]), bounded time series ([`trace::MaxTrace`]), a run
//! cut into windows with coarse histograms ([`windows::Windows`]) and the
//! [`Summary`] every series reports.

pub mod hist;
pub mod loglin;
pub mod trace;
pub mod windows;

use serde::{Deserialize, Serialize};

/// Exact count, min, max, sum and sum of squares of nanosecond values.
///
/// Sums are `u128`: a value is below 2^64 ns, so its square is below 2^128, and
/// the sum of squares of latencies under 100 s (1e11 ns, square 1e22) overflows
/// only after 3e16 samples, centuries of measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moments {
    /// Number of values.
    pub count: u64,
    /// Smallest value (u64::MAX when empty).
    pub min: u64,
    /// Largest value (0 when empty).
    pub max: u64,
    /// Sum of values.
    pub sum: u128,
    /// Sum of squared values.
    pub sum_sq: u128,
}

impl Default for Moments {
    fn default() -> Self {
        Moments {
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
        }
    }
}

impl Moments {
    /// Adds one value. Integer arithmetic only; cannot allocate or fail.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
        self.sum_sq += (v as u128) * (v as u128);
    }

    /// Adds `n` copies of one value (used when rebuilding from histogram buckets,
    /// whose counts come from files). Checked: counts whose total passes 2^64, or
    /// values whose sums pass 2^128, cannot describe a real measurement and leave
    /// the moments unchanged.
    pub fn record_n(&mut self, v: u64, n: u64) -> Result<(), MomentsOverflow> {
        if n == 0 {
            return Ok(());
        }
        let (v, n) = (v as u128, n as u128);
        let count = self.count.checked_add(n as u64).ok_or(MomentsOverflow)?;
        // v·n and v² are below 2^128 (both factors are below 2^64); the products
        // with a third factor and the sums are what can overflow.
        let sum = self.sum.checked_add(v * n).ok_or(MomentsOverflow)?;
        let sum_sq = (v * v)
            .checked_mul(n)
            .and_then(|sq| self.sum_sq.checked_add(sq))
            .ok_or(MomentsOverflow)?;
        self.count = count;
        self.min = self.min.min(v as u64);
        self.max = self.max.max(v as u64);
        self.sum = sum;
        self.sum_sq = sum_sq;
        Ok(())
    }

    /// Folds another set of moments into this one.
    pub fn merge(&mut self, o: &Moments) {
        self.count += o.count;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    /// The arithmetic mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The population standard deviation (0 when empty).
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        let var = self.sum_sq as f64 / n - mean * mean;
        var.max(0.0).sqrt()
    }
}

/// [`Moments::record_n`] was asked to count more than fits: more than 2^64
/// values, or values whose sum of squares passes 2^128. No measurement produces
/// that; the counts come from a damaged or forged file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MomentsOverflow;

impl std::fmt::Display for MomentsOverflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the counts add up to more values than 64 bits can count (or their sum of squares passes 128 bits): they cannot come from a measurement")
    }
}

impl std::error::Error for MomentsOverflow {}

/// The order statistics and moments every series reports. All values in ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Summary {
    /// Number of values observed.
    pub samples: u64,
    /// Smallest value observed (exact).
    pub min_ns: u64,
    /// Arithmetic mean (exact).
    pub mean_ns: f64,
    /// Population standard deviation (exact).
    pub stddev_ns: f64,
    /// Median (within the histogram's 0.1% resolution).
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 95th percentile.
    pub p95_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// 99.99th percentile.
    pub p9999_ns: u64,
    /// Largest value observed (exact).
    pub max_ns: u64,
}

impl Summary {
    /// Combines exact moments with percentiles from the histogram. Percentiles are
    /// clamped into `[min, max]`: the histogram reports the top of a value's bucket,
    /// which may lie up to 0.1% above the exact maximum.
    pub fn new(m: &Moments, h: &hist::LatencyHistogram) -> Summary {
        if m.count == 0 {
            return Summary::default();
        }
        let q = |q: f64| h.value_at_quantile(q).clamp(m.min, m.max);
        Summary {
            samples: m.count,
            min_ns: m.min,
            mean_ns: m.mean(),
            stddev_ns: m.stddev(),
            p50_ns: q(0.50),
            p90_ns: q(0.90),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            p9999_ns: q(0.9999),
            max_ns: m.max,
        }
    }

    /// The order statistics by name, smallest first: min, the percentiles, max.
    /// In a consistent summary each is at most the next.
    pub fn ordered(&self) -> [(&'static str, u64); 8] {
        [
            ("min_ns", self.min_ns),
            ("p50_ns", self.p50_ns),
            ("p90_ns", self.p90_ns),
            ("p95_ns", self.p95_ns),
            ("p99_ns", self.p99_ns),
            ("p999_ns", self.p999_ns),
            ("p9999_ns", self.p9999_ns),
            ("max_ns", self.max_ns),
        ]
    }

    /// Stability spread max − min, as in the satellite report.
    pub fn spread_max_min(&self) -> u64 {
        self.max_ns.saturating_sub(self.min_ns)
    }

    /// Stability spread p95 − mean (can be negative for skewed-low data).
    pub fn spread_p95_mean(&self) -> f64 {
        self.p95_ns as f64 - self.mean_ns
    }
}

#[cfg(test)]
mod tests {
    use super::hist::LatencyHistogram;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn moments_of_known_values() {
        let mut m = Moments::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            m.record(v);
        }
        assert_eq!((m.count, m.min, m.max), (8, 2, 9));
        assert_eq!(m.mean(), 5.0);
        assert_eq!(m.stddev(), 2.0);
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = Summary::new(&Moments::default(), &LatencyHistogram::new());
        assert_eq!(s.samples, 0);
        assert_eq!(s.max_ns, 0);
    }

    #[test]
    fn counts_past_64_bits_are_refused_and_change_nothing() {
        let mut m = Moments::default();
        m.record_n(5, u64::MAX - 1).unwrap();
        let before = m;
        assert_eq!(m.record_n(5, 2), Err(MomentsOverflow));
        assert_eq!(m, before);
        // A sum of squares past 2^128: huge values, many times.
        let mut m = Moments::default();
        assert_eq!(m.record_n(u64::MAX, u64::MAX), Err(MomentsOverflow));
        assert_eq!(m, Moments::default());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn record_n_equals_recording_each_value(pairs in proptest::collection::vec((0u64..1u64<<40, 0u64..50), 0..40)) {
            let (mut by_n, mut each) = (Moments::default(), Moments::default());
            for &(v, n) in &pairs {
                by_n.record_n(v, n).unwrap();
                for _ in 0..n { each.record(v); }
            }
            prop_assert_eq!(by_n, each);
        }

        #[test]
        fn record_n_never_panics_and_fails_only_past_the_limits(pairs in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..8)) {
            let mut m = Moments::default();
            let (mut count, mut sq) = (Some(0u64), Some(0u128));
            for &(v, n) in &pairs {
                let r = m.record_n(v, n);
                if n > 0 {
                    count = count.and_then(|c| c.checked_add(n));
                    sq = sq.and_then(|s| (v as u128 * v as u128).checked_mul(n as u128).and_then(|x| s.checked_add(x)));
                }
                if r.is_err() {
                    prop_assert!(count.is_none() || sq.is_none());
                    return Ok(());
                }
            }
            prop_assert_eq!(Some(m.count), count);
        }
    }

    proptest! {
        #[test]
        fn percentiles_are_ordered_and_bounded(values in proptest::collection::vec(0u64..50_000_000_000, 1..400)) {
            let mut m = Moments::default();
            let mut h = LatencyHistogram::new();
            for &v in &values { m.record(v); h.record(v); }
            let s = Summary::new(&m, &h);
            prop_assert!(s.min_ns <= s.p50_ns);
            prop_assert!(s.p50_ns <= s.p90_ns);
            prop_assert!(s.p90_ns <= s.p95_ns);
            prop_assert!(s.p95_ns <= s.p99_ns);
            prop_assert!(s.p99_ns <= s.p999_ns);
            prop_assert!(s.p999_ns <= s.p9999_ns);
            prop_assert!(s.p9999_ns <= s.max_ns);
            prop_assert_eq!(s.max_ns, *values.iter().max().unwrap());
            prop_assert_eq!(s.min_ns, *values.iter().min().unwrap());
            prop_assert!(s.mean_ns <= s.max_ns as f64 && s.mean_ns >= s.min_ns as f64);
        }

        #[test]
        fn merged_moments_equal_recording_everything(a in proptest::collection::vec(0u64..1u64<<40, 0..100), b in proptest::collection::vec(0u64..1u64<<40, 0..100)) {
            let (mut ma, mut mb, mut all) = (Moments::default(), Moments::default(), Moments::default());
            for &v in &a { ma.record(v); all.record(v); }
            for &v in &b { mb.record(v); all.record(v); }
            ma.merge(&mb);
            prop_assert_eq!(ma, all);
        }
    }
}
