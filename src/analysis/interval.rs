//! How sure a figure is: every compared figure of an arm (one run, or a group
//! of runs) as an [`Estimate`] with a 95 % interval, and [`judge`], which calls
//! a difference between two arms real only when their intervals separate by
//! more than a noise threshold. docs/decisions.md gives the method in words.
//!
//! - **One run** ([`of_run`]): a block bootstrap over the run's time windows
//!   (`record::Series::windows`, kept by the probes: wake-ups close in time are
//!   alike, so whole windows are resampled, never single values). The point
//!   value is the exact figure the run stored (its HdrHistogram, its exact
//!   moments); the windows give only the spread: the interval is the value
//!   plus the 2.5 % and 97.5 % quantiles of the resampled figure's deviation
//!   from the same figure of all windows. A percentile is resampled through
//!   its rank (the share of a resample's values below the run's percentile,
//!   turned back into a value by the exact histogram), so the coarse buckets
//!   never decide a value; of 200 runs of a known distribution, 95 % of the
//!   intervals hold the true figure (`intervals_hold_the_truth_...` test).
//! - **Several runs** ([`of_runs`]: repeats, `--by` groups): the value is the
//!   figure of all their samples together; the interval comes from a two-level
//!   bootstrap (the runs resampled, and within each drawn run its windows; a
//!   run without windows counts as one window). A scalar metric (events/s) is
//!   the runs' mean with Student's t interval.
//! - Few units say little about their own spread: every bootstrap interval is
//!   widened by `t(n−1) / z · √(n / (n−1))` for its `n` resampled units (runs,
//!   else windows): ×9.2 with 2 runs, ×2.7 with 3, ×1.6 with 5, ×1.06 with 32
//!   windows.
//! - **Maxima and minima** are never bounded from one run ([`Basis::Observed`]):
//!   a bootstrap of an extreme only repeats the largest value seen. Over
//!   several runs they come with the range of the runs' own
//!   ([`Basis::Range`]): "max over 5 repeats: 63 µs – 110 ms".
//! - **Percentiles** need `10 / (1 − p)` samples ([`supported`]); with fewer,
//!   [`Basis::Unsupported`].
//!
//! Resampling uses a fixed seed ([`SEED`]): the same runs give the same
//! intervals.

use super::compare::Better;
use super::series;
use crate::record::{Run, Series};
use rtlab_engine::bench::Rng;
use rtlab_engine::stats::windows::{bucket, bucket_low, WindowsData, BUCKETS};
use serde::Serialize;
use std::borrow::Cow;

/// The noise threshold (`--noise 5%`): a difference smaller than this fraction
/// of the baseline's value is no real difference, however sure.
pub const DEFAULT_NOISE: f64 = 0.05;
/// Resamples per bootstrap interval.
pub const RESAMPLES: usize = 1_000;
/// The seed of every bootstrap, so that the same data gives the same intervals.
pub const SEED: u64 = 24;
/// Fewest windows a run must keep for an interval from its own samples.
pub const MIN_WINDOWS: usize = 4;

/// One figure of one arm (a run, or runs taken together).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The figure (ns for times). For [`Basis::Unsupported`] it is the figure
    /// as the histogram gives it, which at that sample count is a larger
    /// order statistic under another name: show `–`, not this.
    pub value: f64,
    /// The 95 % interval; for [`Basis::Range`] the lowest and highest of the
    /// runs' own figures. `None` when none can be given.
    pub ci: Option<(f64, f64)>,
    /// What the interval rests on (in JSON: `"basis": "windows", "windows": 25`).
    #[serde(flatten)]
    pub basis: Basis,
}

/// What an [`Estimate`]'s interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "basis", rename_all = "lowercase")]
pub enum Basis {
    /// One run: a block bootstrap over its time windows.
    Windows {
        /// Windows resampled.
        windows: usize,
    },
    /// Repeats or a `--by` group: across the runs (two-level bootstrap, or
    /// Student's t for a scalar metric).
    Runs {
        /// Runs.
        runs: usize,
    },
    /// A maximum, minimum or max−min of several runs: the interval is the
    /// range of the runs' own figures, not a confidence interval.
    Range {
        /// Runs.
        runs: usize,
    },
    /// A maximum, minimum or max−min of one run: no bound exists.
    Observed,
    /// The value alone: the run kept no windows (imported, or stored by an
    /// older rtlab), or the figure is a count or metric of one run that its
    /// windows do not hold.
    Point,
    /// A percentile from fewer samples than it needs (`10 / (1 − p)`).
    Unsupported {
        /// Samples it needs.
        needed: u64,
        /// Samples there are.
        have: u64,
    },
}

/// How one arm's figure compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Better, by more than the noise threshold, with separate intervals.
    Better,
    /// Worse, by more than the noise threshold, with separate intervals.
    Worse,
    /// No real difference: the intervals do not separate by more than the noise.
    Same,
    /// Cannot be told: a side has no interval or no value, the figure has no
    /// direction (sample counts, durations), or the ranges of too few runs'
    /// extremes lie apart.
    Unknown,
}

/// A [`Change`] and whether it is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Judged {
    /// The change.
    pub change: Change,
    /// `Better`/`Worse`: always. `Same`: the intervals are narrow enough that a
    /// difference larger than the noise would have been seen (an equivalence
    /// test). `Unknown`: never.
    pub decided: bool,
}

impl Estimate {
    /// The interval a comparison may use: none for an observed extreme, a
    /// value alone, or an unsupported percentile.
    pub fn interval(&self) -> Option<(f64, f64)> {
        match self.basis {
            Basis::Windows { .. } | Basis::Runs { .. } | Basis::Range { .. } => self.ci,
            _ => None,
        }
    }

    fn point(value: f64) -> Estimate {
        Estimate {
            value,
            ci: None,
            basis: Basis::Point,
        }
    }
}

/// Judges `other` against `base` for a figure that improves as `better` says:
/// `Better`/`Worse` only when the intervals separate by more than `noise` (a
/// fraction of the baseline's value); else `Same`, decided when each interval
/// lies within `noise` of every value of the other. Ranges of extremes (over
/// runs) count as separate only when that many runs make a complete separation
/// unlikely by chance (`2 / C(n+m, n) ≤ 5 %`: 4 runs a side, or 3 against 5);
/// with fewer runs, ranges apart are `Unknown`.
pub fn judge(base: &Estimate, other: &Estimate, better: Better, noise: f64) -> Judged {
    let unknown = Judged {
        change: Change::Unknown,
        decided: false,
    };
    let (Some((bl, bh)), Some((ol, oh))) = (base.interval(), other.interval()) else {
        return unknown;
    };
    if better == Better::Neither || ![bl, bh, ol, oh, base.value].iter().all(|v| v.is_finite()) {
        return unknown;
    }
    let t = noise * base.value.abs();
    let enough = match (base.basis, other.basis) {
        (Basis::Range { runs: n }, Basis::Range { runs: m }) => ranks_separate(n, m),
        _ => true,
    };
    let higher = ol - bh > t;
    let lower = bl - oh > t;
    if !enough && (higher || lower) {
        // Apart, but too few runs for that to mean anything.
        return unknown;
    }
    if higher || lower {
        let improved = higher == (better == Better::Higher);
        return Judged {
            change: if improved {
                Change::Better
            } else {
                Change::Worse
            },
            decided: true,
        };
    }
    Judged {
        change: Change::Same,
        decided: enough && oh - bl <= t && bh - ol <= t,
    }
}

/// Whether `n` runs against `m` runs, all of one side above all of the other,
/// is unlikely by chance: `2 / C(n+m, n) ≤ 5 %`.
fn ranks_separate(n: usize, m: usize) -> bool {
    let mut c = 1.0f64;
    for k in 1..=n.min(m) {
        c = c * (n + m + 1 - k) as f64 / k as f64;
    }
    2.0 / c <= 0.05
}

/// Samples a percentile `p` (0..1) needs: `10 / (1 − p)` (p99.99 → 100 000).
pub fn needed(p: f64) -> u64 {
    // The product shaves the float error of 1 − p (1 − 0.9999 is a hair
    // below 1e-4) so that round figures stay round.
    (10.0 / (1.0 - p) * (1.0 - 1e-9)).ceil() as u64
}

/// Whether `samples` support the percentile `p` (0..1): `samples >= 10/(1−p)`.
pub fn supported(p: f64, samples: u64) -> bool {
    p < 1.0 && samples >= needed(p)
}

/// A figure of a comparison row, as the statistics read it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Figure<'a> {
    /// The percentile `p` (0..1).
    Quantile(f64),
    Mean,
    Stddev,
    /// p95 − mean.
    P95Mean,
    Min,
    Max,
    MaxMin,
    /// A counter of the series (`overruns`, `misses`, `samples`).
    Count(&'a str),
    Duration,
    /// A scalar of `run.metrics`.
    Metric(&'a str),
    /// A performance counter (`perf.<event>`).
    Perf(&'a str),
}

impl<'a> Figure<'a> {
    fn of(metric: &'a str) -> Figure<'a> {
        let quantile = match metric {
            "p50" => Some(0.5),
            "p90" => Some(0.9),
            "p95" => Some(0.95),
            "p99" => Some(0.99),
            "p99.9" => Some(0.999),
            "p99.99" => Some(0.9999),
            _ => None,
        };
        if let Some(p) = quantile {
            return Figure::Quantile(p);
        }
        match metric {
            "mean" => Figure::Mean,
            "stddev" => Figure::Stddev,
            "p95-mean" => Figure::P95Mean,
            "min" => Figure::Min,
            "max" => Figure::Max,
            "max-min" => Figure::MaxMin,
            "samples" | "overruns" | "misses" => Figure::Count(metric),
            "duration" => Figure::Duration,
            _ => match metric.strip_prefix("perf.") {
                Some(event) => Figure::Perf(event),
                None => Figure::Metric(metric),
            },
        }
    }

    /// The summary fields the figure is made of (a run whose source did not
    /// report one has no such figure).
    fn fields(self) -> &'static [&'static str] {
        match self {
            Figure::Quantile(p) => match (p * 1e4).round() as u32 {
                5000 => &["p50_ns"],
                9000 => &["p90_ns"],
                9500 => &["p95_ns"],
                9900 => &["p99_ns"],
                9990 => &["p999_ns"],
                _ => &["p9999_ns"],
            },
            Figure::Mean => &["mean_ns"],
            Figure::Stddev => &["stddev_ns"],
            Figure::P95Mean => &["p95_ns", "mean_ns"],
            Figure::Min => &["min_ns"],
            Figure::Max => &["max_ns"],
            Figure::MaxMin => &["min_ns", "max_ns"],
            Figure::Count("overruns") => &["overruns"],
            Figure::Count("misses") => &["deadline_misses"],
            _ => &[],
        }
    }

    /// The figure of one series, as stored.
    fn of_series(self, s: &Series) -> Option<f64> {
        let m = &s.summary;
        Some(match self {
            Figure::Quantile(p) => {
                let v = match (p * 1e4).round() as u32 {
                    5000 => m.p50_ns,
                    9000 => m.p90_ns,
                    9500 => m.p95_ns,
                    9900 => m.p99_ns,
                    9990 => m.p999_ns,
                    _ => m.p9999_ns,
                };
                v as f64
            }
            Figure::Mean => m.mean_ns,
            Figure::Stddev => m.stddev_ns,
            Figure::P95Mean => m.spread_p95_mean(),
            Figure::Min => m.min_ns as f64,
            Figure::Max => m.max_ns as f64,
            Figure::MaxMin => m.spread_max_min() as f64,
            Figure::Count("overruns") => s.counters.overruns as f64,
            Figure::Count("misses") => s.counters.deadline_misses as f64,
            Figure::Count(_) => s.counters.samples as f64,
            _ => return None,
        })
    }

    /// The figure of one run: from its primary series, its metrics or its
    /// counters; `None` when the run does not have it.
    fn of_run(self, run: &Run) -> Option<f64> {
        match self {
            Figure::Duration => (run.duration_ns > 0).then_some(run.duration_ns as f64),
            Figure::Metric(name) => run.metrics.get(name).copied(),
            Figure::Perf(event) => run.perf.as_ref()?.value(event).map(|v| v as f64),
            _ => {
                if !self.fields().iter().all(|f| series::reported(run, f)) {
                    return None;
                }
                let s = series::primary(run)?;
                (s.counters.samples > 0 || matches!(self, Figure::Count(_)))
                    .then(|| self.of_series(&s))
                    .flatten()
            }
        }
    }

    /// The percentile the figure needs supported, if any.
    fn quantile(self) -> Option<f64> {
        match self {
            Figure::Quantile(p) => Some(p),
            Figure::P95Mean => Some(0.95),
            _ => None,
        }
    }

    /// What the bootstrap computes for this figure, if it can.
    fn statistic(self) -> Option<Statistic> {
        match self {
            Figure::Quantile(p) => Some(Statistic::Quantile(p)),
            Figure::Mean => Some(Statistic::Mean),
            Figure::Stddev => Some(Statistic::Stddev),
            Figure::P95Mean => Some(Statistic::P95Mean),
            // A bench's events run back to back on each thread: its rate is
            // the threads over the mean event time, and moves as 1 / mean.
            Figure::Metric("events_per_s") => Some(Statistic::Rate),
            _ => None,
        }
    }

    fn extreme(self) -> bool {
        matches!(self, Figure::Min | Figure::Max | Figure::MaxMin)
    }
}

/// The estimate of `metric` (a comparison row's name: `p99`, `max`,
/// `max-min`, `events_per_s`, ...) for one run; `None` when the run does not
/// have that figure.
pub fn of_run(run: &Run, metric: &str) -> Option<Estimate> {
    let fig = Figure::of(metric);
    let value = fig.of_run(run)?;
    if let Some(e) = unsupported(fig, value, samples(run)) {
        return Some(e);
    }
    if fig.extreme() {
        return Some(Estimate {
            value,
            ci: None,
            basis: Basis::Observed,
        });
    }
    let Some(stat) = fig.statistic() else {
        return Some(Estimate::point(value));
    };
    let Some(pool) = Pool::of(&[run]).filter(|p| p.runs[0].len() >= MIN_WINDOWS) else {
        return Some(Estimate::point(value));
    };
    let windows = pool.windows.len();
    let ci = pool.interval(stat, value, Level::Windows);
    Some(Estimate {
        value,
        ci: Some(ci),
        basis: Basis::Windows { windows },
    })
}

/// The estimate of `metric` for runs taken together (the repeats of a step,
/// a `--by` group): the figure of all their samples together (an extreme: the
/// worst run's; a scalar metric: the runs' mean), with an interval across the
/// runs. One run is [`of_run`]; `None` when no run has the figure.
pub fn of_runs(runs: &[&Run], metric: &str) -> Option<Estimate> {
    let fig = Figure::of(metric);
    let have: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| fig.of_run(r).is_some())
        .collect();
    match have.as_slice() {
        [] => return None,
        [one] => return of_run(one, metric),
        _ => {}
    }
    let per_run: Vec<f64> = have.iter().filter_map(|r| fig.of_run(r)).collect();
    let n = per_run.len();
    let range = |value: f64| Estimate {
        value,
        ci: Some(min_max(&per_run)),
        basis: Basis::Range { runs: n },
    };
    match fig {
        // The worst run's: a spread across runs would mix their levels.
        Figure::Max | Figure::MaxMin => Some(range(min_max(&per_run).1)),
        Figure::Min => Some(range(min_max(&per_run).0)),
        Figure::Count(_) | Figure::Duration => {
            // Counts add up over the runs; their interval is n times the mean's.
            let (mean, ci) = mean_t(&per_run);
            let k = n as f64;
            Some(Estimate {
                value: mean * k,
                ci: Some((ci.0 * k, ci.1 * k)),
                basis: Basis::Runs { runs: n },
            })
        }
        Figure::Metric(_) | Figure::Perf(_) => {
            let (mean, ci) = mean_t(&per_run);
            Some(Estimate {
                value: mean,
                ci: Some(ci),
                basis: Basis::Runs { runs: n },
            })
        }
        _ => {
            let primaries: Vec<Series> = have
                .iter()
                .filter_map(|r| series::primary(r).map(Cow::into_owned))
                .collect();
            let merged = series::merge(&primaries);
            let value = fig.of_series(&merged)?;
            if let Some(e) = unsupported(fig, value, merged.counters.samples) {
                return Some(e);
            }
            let stat = fig.statistic()?;
            let pool = Pool::of(&have)?;
            Some(Estimate {
                value,
                ci: Some(pool.interval(stat, value, Level::Runs)),
                basis: Basis::Runs { runs: n },
            })
        }
    }
}

/// The samples of a run's primary series (0 without one).
fn samples(run: &Run) -> u64 {
    series::primary(run).map_or(0, |s| s.counters.samples)
}

/// The estimate of a percentile figure that `samples` do not support.
fn unsupported(fig: Figure, value: f64, samples: u64) -> Option<Estimate> {
    let p = fig.quantile()?;
    (!supported(p, samples)).then(|| Estimate {
        value,
        ci: None,
        basis: Basis::Unsupported {
            needed: needed(p),
            have: samples,
        },
    })
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// The mean of `v` (at least 2 values) and its 95 % Student's t interval.
fn mean_t(v: &[f64]) -> (f64, (f64, f64)) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t975(v.len() - 1) * (var / n).sqrt();
    (mean, (mean - half, mean + half))
}

/// Student's t 97.5 % quantile with `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        // Within 0.002 of the exact quantile beyond 30.
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// How much wider a bootstrap interval from `n` units is made: a bootstrap
/// over few units underestimates their spread (by √((n−1)/n)) and takes normal
/// quantiles where Student's are due.
fn widening(n: usize) -> f64 {
    if n < 2 {
        return f64::INFINITY;
    }
    t975(n - 1) / 1.96 * (n as f64 / (n as f64 - 1.0)).sqrt()
}

/// What the bootstrap computes of a resample.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Statistic {
    Quantile(f64),
    Mean,
    Stddev,
    P95Mean,
    /// A rate proportional to 1 / mean.
    Rate,
}

/// Which units the bootstrap resamples at its top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// One run's windows.
    Windows,
    /// The runs, then each drawn run's windows.
    Runs,
}

/// One window as the bootstrap reads it.
struct Block {
    count: f64,
    sum: f64,
    sum_sq: f64,
    /// Cumulative bucket counts: `cum[b]` values in buckets below `b`.
    cum: Box<[u64]>,
}

impl Block {
    fn new(
        count: u64,
        sum: f64,
        sum_sq: f64,
        buckets: impl Iterator<Item = (usize, u64)>,
    ) -> Block {
        let mut counts = vec![0u64; BUCKETS];
        for (b, c) in buckets {
            counts[b.min(BUCKETS - 1)] += c;
        }
        let mut cum = vec![0u64; BUCKETS + 1];
        for b in 0..BUCKETS {
            cum[b + 1] = cum[b] + counts[b];
        }
        Block {
            count: count as f64,
            sum,
            sum_sq,
            cum: cum.into_boxed_slice(),
        }
    }
}

/// The exact histogram of every value of the pool (HdrHistogram buckets at
/// 0.1 %), for the point of each percentile and to turn ranks into values.
struct Exact {
    /// Bucket values, ascending.
    values: Vec<u64>,
    /// `cum[i]`: values in buckets up to and including `i`.
    cum: Vec<u64>,
}

impl Exact {
    fn of<'a>(histograms: impl Iterator<Item = &'a [(u64, u64)]>) -> Exact {
        let mut all: Vec<(u64, u64)> = histograms.flatten().copied().collect();
        all.sort_unstable_by_key(|b| b.0);
        let (mut values, mut cum) = (Vec::new(), Vec::new());
        let mut total = 0u64;
        for (v, c) in all {
            total = total.saturating_add(c);
            if values.last() == Some(&v) {
                *cum.last_mut().unwrap_or(&mut 0) = total;
            } else {
                values.push(v);
                cum.push(total);
            }
        }
        Exact { values, cum }
    }

    fn total(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    /// The value at quantile `p` as the HdrHistogram gives it: the first
    /// bucket whose running count reaches `⌈p · n⌉` (at least 1).
    fn quantile(&self, p: f64) -> f64 {
        let rank = ((p.clamp(0.0, 1.0) * self.total() as f64).ceil() as u64).max(1);
        let i = self.cum.partition_point(|&c| c < rank);
        self.values
            .get(i.min(self.values.len().saturating_sub(1)))
            .map_or(0.0, |&v| v as f64)
    }

    /// Values at or below `v`.
    fn count_le(&self, v: u64) -> u64 {
        match self.values.partition_point(|&x| x <= v) {
            0 => 0,
            i => self.cum[i - 1],
        }
    }
}

/// The windows of one or more runs, ready to resample.
struct Pool {
    windows: Vec<Block>,
    /// The windows of each run, as ranges of `windows`.
    runs: Vec<std::ops::Range<usize>>,
    exact: Exact,
}

/// Where a percentile lies among the coarse buckets: its bucket, and the
/// share of that bucket's values at or below it (from the exact histogram).
#[derive(Clone, Copy)]
struct Cut {
    p: f64,
    bucket: usize,
    share: f64,
}

impl Pool {
    /// The windows of each run's primary series; a run without windows (or
    /// with windows that do not add up to its samples) is one window made of
    /// its histogram and summary. `None` when a run has no values.
    fn of(runs: &[&Run]) -> Option<Pool> {
        let mut windows = Vec::new();
        let mut ranges = Vec::new();
        let mut primaries = Vec::new();
        for run in runs {
            let s = series::primary(run)?;
            if s.counters.samples == 0 {
                return None;
            }
            let start = windows.len();
            if usable(&s.windows, s.counters.samples) {
                for w in &s.windows.windows {
                    let buckets = w.counts.iter().enumerate();
                    windows.push(Block::new(
                        w.count,
                        w.sum_ns,
                        w.sum_sq,
                        buckets.map(|(k, &c)| (w.first as usize + k, c)),
                    ));
                }
            } else {
                let m = &s.summary;
                let n = m.samples as f64;
                let sum_sq = n * (m.stddev_ns * m.stddev_ns + m.mean_ns * m.mean_ns);
                let buckets = s.histogram.buckets.iter().map(|&(v, c)| (bucket(v), c));
                windows.push(Block::new(m.samples, n * m.mean_ns, sum_sq, buckets));
            }
            ranges.push(start..windows.len());
            primaries.push(s);
        }
        let exact = Exact::of(primaries.iter().map(|s| s.histogram.buckets.as_slice()));
        Some(Pool {
            windows,
            runs: ranges,
            exact,
        })
    }

    /// Where the pool's percentile `p` lies among the coarse buckets.
    fn cut(&self, p: f64) -> Cut {
        let v = self.exact.quantile(p) as u64;
        let b = bucket(v);
        let low = self.exact.count_le(bucket_low(b).saturating_sub(1));
        let high = self.exact.count_le(bucket_low(b + 1) - 1);
        let share = match high - low {
            0 => 0.5,
            n => (self.exact.count_le(v) - low) as f64 / n as f64,
        };
        Cut {
            p,
            bucket: b,
            share,
        }
    }

    /// The statistic of the windows taken `k` times each (`drawn`: window,
    /// k). A percentile is read through its rank: the share `F` of the drawn
    /// values at or below the pool's percentile `v`, turned into a value by
    /// the exact histogram at `2p − F` (a resample with more values below `v`
    /// has its percentile lower by as much, to first order), so that the
    /// coarse buckets never decide a value.
    ///
    /// The windows do not say how the values of the percentile's own bucket
    /// fall on either side of it; each is taken to split as the whole pool's
    /// do, and the binomial spread of that split is added back as `z` (a
    /// standard normal deviate, 0 for the figure of the pool itself) times
    /// its standard deviation.
    fn statistic(&self, stat: Statistic, cut: Option<Cut>, drawn: &[(usize, f64)], z: f64) -> f64 {
        let (mut n, mut sum, mut sum_sq, mut below, mut in_bucket) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(i, k) in drawn {
            let w = &self.windows[i];
            n += k * w.count;
            sum += k * w.sum;
            sum_sq += k * w.sum_sq;
            if let Some(c) = cut {
                let (a, b) = (w.cum[c.bucket] as f64, w.cum[c.bucket + 1] as f64);
                below += k * (a + c.share * (b - a));
                in_bucket += k * (b - a);
            }
        }
        let mean = sum / n;
        let percentile = || {
            let c = cut.expect("a percentile has its cut");
            let split = z * (c.share * (1.0 - c.share) * in_bucket).sqrt();
            self.exact.quantile(2.0 * c.p - (below + split) / n)
        };
        match stat {
            Statistic::Quantile(_) => percentile(),
            Statistic::Mean => mean,
            Statistic::Rate => 1.0 / mean,
            Statistic::Stddev => (sum_sq / n - mean * mean).max(0.0).sqrt(),
            Statistic::P95Mean => percentile() - mean,
        }
    }

    /// The 95 % interval of `stat` around `value` (the exact figure): the
    /// resampled figures' 2.5 % and 97.5 % quantiles, less the figure of all
    /// windows once, widened for the number of units, added to `value`. A
    /// percentile's lower end also allows for the histogram's 0.1 %
    /// resolution (it reports the top of a value's bucket).
    fn interval(&self, stat: Statistic, value: f64, level: Level) -> (f64, f64) {
        let cut = match stat {
            Statistic::Quantile(p) => Some(self.cut(p)),
            Statistic::P95Mean => Some(self.cut(0.95)),
            _ => None,
        };
        let all: Vec<(usize, f64)> = (0..self.windows.len()).map(|i| (i, 1.0)).collect();
        let center = self.statistic(stat, cut, &all, 0.0);
        let mut rng = Rng::new(SEED);
        let mut weights = vec![0.0f64; self.windows.len()];
        let mut drawn = Vec::with_capacity(self.windows.len());
        let mut figures = Vec::with_capacity(RESAMPLES);
        let units = match level {
            Level::Windows => self.windows.len(),
            Level::Runs => self.runs.len(),
        };
        for _ in 0..RESAMPLES {
            weights.iter_mut().for_each(|w| *w = 0.0);
            match level {
                Level::Windows => draw(&mut rng, 0..self.windows.len(), &mut weights),
                Level::Runs => {
                    for _ in 0..self.runs.len() {
                        let r = &self.runs[rng.below(self.runs.len() as u64) as usize];
                        draw(&mut rng, r.clone(), &mut weights);
                    }
                }
            }
            drawn.clear();
            drawn.extend(
                weights
                    .iter()
                    .enumerate()
                    .filter(|(_, &k)| k > 0.0)
                    .map(|(i, &k)| (i, k)),
            );
            // Box–Muller: a standard normal deviate from two uniform ones.
            let z = (-2.0 * (1.0 - rng.unit()).ln()).sqrt()
                * (std::f64::consts::TAU * rng.unit()).cos();
            figures.push(self.statistic(stat, cut, &drawn, z));
        }
        figures.sort_by(f64::total_cmp);
        let at = |q: f64| figures[((RESAMPLES - 1) as f64 * q).round() as usize];
        let f = widening(units);
        let (mut lo, mut hi) = (at(0.025) - center, at(0.975) - center);
        if stat == Statistic::Rate {
            // The rate moves as 1 / mean: relative to the figure of all windows.
            (lo, hi) = (lo / center * value, hi / center * value);
        }
        let resolution = match cut {
            Some(c) => self.exact.quantile(c.p) * 1e-3,
            None => 0.0,
        };
        let low = value + f * lo.min(0.0) - resolution;
        let high = value + f * hi.max(0.0);
        match stat {
            // Times and rates are never negative; a spread p95 − mean may be.
            Statistic::P95Mean => (low, high),
            _ => (low.max(0.0), high),
        }
    }
}

/// Draws as many windows of `range` as it holds, with replacement, adding one
/// to the weight of each drawn.
fn draw(rng: &mut Rng, range: std::ops::Range<usize>, weights: &mut [f64]) {
    let n = range.len() as u64;
    for _ in 0..n {
        weights[range.start + rng.below(n) as usize] += 1.0;
    }
}

/// Whether a series' windows can be read and hold exactly its samples.
fn usable(w: &WindowsData, samples: u64) -> bool {
    !w.is_empty() && w.readable() && w.count() == samples
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;
