//! cyclictest's results, in every form it prints them: the `-h N`/`-H N`
//! histogram text ([`histogram`]), the `--json=FILE` document ([`json`]), the
//! per-thread summary lines of `-q` and of the live view ([`summary`]) and the
//! `-v` sample lines ([`verbose`]). Each reads its file into [`Column`]s, one per
//! thread, which [`fill`] turns into a run.
//!
//! cyclictest measures whole microseconds, so bucket `i` holds values of exactly
//! `i` µs; imported series record them as `i × 1000` ns. Values past the
//! histogram's range are known only by count (and the maximum): they are recorded
//! at the range, the largest at the reported maximum, so percentiles that fall
//! among them are lower bounds and a warning says so. A summary line gives the
//! minimum, average and maximum only: the rest is listed as not reported.

mod histogram;
mod json;
mod summary;
mod verbose;

pub use histogram::from_histogram_text;
pub use json::{from_json, json_with_nan};
pub use summary::{from_summary, is_summary};
pub use verbose::{from_verbose, is_verbose};

use super::Skeleton;
use crate::format::histfile::ParseError;
use crate::record::{Counters, Run, Series, Warning};
use rtlab_engine::stats::hist::{LatencyHistogram, UsBucketsData};
use rtlab_engine::stats::{Moments, MomentsOverflow, Summary};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// One thread's results, as cyclictest reports them.
#[derive(Debug, Clone, Default)]
struct Column {
    thread: Option<usize>,
    cpu: Option<usize>,
    /// The 1-µs buckets, dense over the histogram's range; `None` when cyclictest
    /// kept no histogram (`--json` without `-h`).
    buckets: Option<Vec<u64>>,
    overflows: u64,
    overflow_cycles: Vec<u64>,
    /// Wake-ups, when the histogram does not hold them all.
    cycles: u64,
    min: u64,
    avg: f64,
    max: u64,
    /// Whether min, avg and max are in ns (cyclictest -N), not µs.
    nanos: bool,
    /// Whether `avg` is the exact mean (to 0.01 µs, as `--json` writes it),
    /// more exact than the mean of whole-µs buckets.
    avg_exact: bool,
    /// The thread's id and period (µs), as a summary line gives them.
    tid: Option<i32>,
    interval_us: Option<u64>,
}

impl Column {
    /// Values in the column; `None` when the counts add up to more than 64
    /// bits hold (they cannot come from a measurement).
    fn checked_samples(&self) -> Option<u64> {
        match &self.buckets {
            Some(b) => b
                .iter()
                .try_fold(self.overflows, |acc, &n| acc.checked_add(n)),
            None => Some(self.cycles),
        }
    }

    /// Nanoseconds in one unit of its min, avg and max.
    fn unit_ns(&self) -> u64 {
        if self.nanos {
            1
        } else {
            1000
        }
    }

    /// Values in the column; [`check`] made sure they add up.
    fn samples(&self) -> u64 {
        self.checked_samples().unwrap_or(u64::MAX)
    }

    /// All threads together.
    fn total(cols: &[Column]) -> Column {
        let samples: u64 = cols.iter().map(Column::samples).sum();
        let buckets = cols.iter().try_fold(Vec::<u64>::new(), |mut acc, c| {
            let b = c.buckets.as_ref()?;
            acc.resize(acc.len().max(b.len()), 0);
            for (a, x) in acc.iter_mut().zip(b) {
                *a += x;
            }
            Some(acc)
        });
        let weighted: f64 = cols.iter().map(|c| c.avg * c.samples() as f64).sum();
        let live = cols.iter().filter(|c| c.samples() > 0);
        Column {
            thread: None,
            cpu: None,
            buckets,
            overflows: cols.iter().map(|c| c.overflows).sum(),
            overflow_cycles: Vec::new(),
            cycles: samples,
            min: live.clone().map(|c| c.min).min().unwrap_or(0),
            avg: if samples > 0 {
                weighted / samples as f64
            } else {
                0.0
            },
            max: live.map(|c| c.max).max().unwrap_or(0),
            nanos: cols.iter().any(|c| c.nanos),
            avg_exact: cols.iter().all(|c| c.avg_exact),
            tid: None,
            interval_us: None,
        }
    }

    /// The series, noting in `unreported` the summary fields it cannot give.
    /// The column passed [`check`]; its values in ns fit in 64 bits.
    fn series(
        &self,
        name: String,
        unreported: &mut BTreeSet<&'static str>,
    ) -> Result<Series, MomentsOverflow> {
        let mut m = Moments::default();
        let mut h = LatencyHistogram::new();
        let summary = match &self.buckets {
            Some(buckets) => {
                for (us, &n) in buckets.iter().enumerate() {
                    m.record_n(us as u64 * 1000, n)?;
                    h.record_n(us as u64 * 1000, n);
                }
                if self.overflows > 0 {
                    // An overflowed value is at least the range, and at least
                    // the reported minimum (which matters when all overflowed).
                    let floor = (buckets.len() as u64 * 1000).max(self.min * 1000);
                    let max = (self.max * 1000).max(floor);
                    m.record_n(floor, self.overflows - 1)?;
                    h.record_n(floor, self.overflows - 1);
                    m.record_n(max, 1)?;
                    h.record(max);
                }
                let mut s = Summary::new(&m, &h);
                // Every value is a whole µs; the histogram reports the top of a
                // value's bucket, up to 0.1% above it.
                for p in [
                    &mut s.p50_ns,
                    &mut s.p90_ns,
                    &mut s.p95_ns,
                    &mut s.p99_ns,
                    &mut s.p999_ns,
                    &mut s.p9999_ns,
                ] {
                    *p = (*p / 1000 * 1000).max(s.min_ns);
                }
                if self.overflows > 0 {
                    // Overflowed values are known only by count: cyclictest's own
                    // average covers them all, the spread is unknown.
                    s.mean_ns = self.avg * 1000.0;
                    s.stddev_ns = 0.0;
                    unreported.insert("stddev_ns");
                } else if self.avg_exact {
                    // Buckets floor every value to its µs; cyclictest's own
                    // average does not.
                    s.mean_ns = self.avg * self.unit_ns() as f64;
                }
                s
            }
            None => {
                if self.cycles > 0 {
                    unreported.extend(super::ESTIMATES);
                }
                let unit = self.unit_ns();
                Summary {
                    samples: self.cycles,
                    min_ns: self.min * unit,
                    mean_ns: self.avg * unit as f64,
                    max_ns: self.max * unit,
                    ..Summary::default()
                }
            }
        };
        Ok(Series {
            name,
            thread: self.thread,
            cpu: self.cpu,
            tid: self.tid,
            interval_ns: self.interval_us.map(|us| us.saturating_mul(1000)),
            counters: Counters {
                samples: summary.samples,
                overruns: 0,
                deadline_misses: 0,
                overflows: self.overflows,
            },
            summary,
            max_at: None,
            histogram: h.to_data(),
            us_histogram: self.buckets.as_ref().map(|b| UsBucketsData {
                max_us: b.len() as u32,
                buckets: b
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(us, &n)| (us as u32, n))
                    .collect(),
                overflow: self.overflows,
                overflow_cycles: self.overflow_cycles.clone(),
            }),
            windows: Default::default(),
            trace: Vec::new(),
        })
    }
}

/// Refuses columns whose numbers no measurement gives: counts that add up to
/// more than 64 bits hold (per thread or over all threads), latencies whose
/// nanoseconds do not fit in 64 bits, min/avg/max out of order. `line` says
/// where a thread's numbers are, by thread index.
fn check(cols: &[Column], line: impl Fn(usize) -> usize) -> Result<(), ParseError> {
    let mut all: u64 = 0;
    for (i, c) in cols.iter().enumerate() {
        let err = |message: String| ParseError {
            line: line(i),
            message: format!("thread {i}: {message}"),
        };
        let n = c.checked_samples().ok_or_else(|| {
            err("its histogram counts and overflows add up to more than 64 bits can count: they cannot come from a measurement".into())
        })?;
        all = all.checked_add(n).ok_or_else(|| {
            err("the counts of all threads add up to more than 64 bits can count: they cannot come from a measurement".into())
        })?;
        let largest = u64::MAX / c.unit_ns();
        let unit = if c.nanos { "ns" } else { "µs" };
        if c.min > largest || c.max > largest || !(c.avg.is_finite() && c.avg >= 0.0) {
            return Err(err(format!(
                "min {} {unit}, avg {} {unit} or max {} {unit} is not a latency (negative, or more than 64 bits of ns)",
                c.min, c.avg, c.max
            )));
        }
        if n > 0 && !(c.min as f64 <= c.avg && c.avg <= c.max as f64) {
            return Err(err(format!(
                "min {} {unit}, avg {} {unit} and max {} {unit} are not in order",
                c.min, c.avg, c.max
            )));
        }
    }
    Ok(())
}

/// Per-thread series, the total, and the warnings the columns justify. The
/// columns passed [`check`]; `line` is where a failure is reported.
fn fill(skel: Skeleton<'_>, cols: &[Column], line: usize) -> Result<Run, ParseError> {
    let too_large = |e: MomentsOverflow| ParseError {
        line,
        message: e.to_string(),
    };
    // cyclictest counts no missed periods and has no deadline.
    let mut unreported = BTreeSet::from(["overruns", "deadline_misses"]);
    let mut warnings = skel.warnings.clone();
    let mut params = skel.params.clone();
    let series: Vec<Series> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let name = match c.cpu {
                Some(cpu) => format!("cpu{cpu}"),
                None => format!("thread{i}"),
            };
            c.series(name, &mut unreported)
        })
        .collect::<Result<_, _>>()
        .map_err(too_large)?;
    let total = Column::total(cols)
        .series("all".into(), &mut unreported)
        .map_err(too_large)?;
    warnings.push(Warning::new(
        "imported_cyclictest",
        "imported from cyclictest: values are whole microseconds, and cyclictest counts no missed periods (overruns) or deadline misses: those are not reported",
    ));
    if total.counters.overflows > 0 {
        let range = cols
            .iter()
            .filter_map(|c| c.buckets.as_ref().map(Vec::len))
            .max()
            .unwrap_or(0);
        let share = total.counters.overflows as f64 / total.counters.samples.max(1) as f64;
        warnings.push(Warning::new(
            "overflow",
            format!(
                "{} of {} values ({:.3}%) were above the {range} µs histogram range and are known only by count: percentiles among them are lower bounds (rerun cyclictest with a larger -h)",
                total.counters.overflows,
                total.counters.samples,
                share * 100.0
            ),
        ));
    }
    if cols.iter().any(|c| c.buckets.is_none() && c.cycles > 0) {
        warnings.push(Warning::new(
            "no_histogram",
            "the file holds no histogram: only min, average and max are known; percentiles and stddev are not reported (cyclictest -h 1000 or more keeps one, -v prints every value)",
        ));
    }
    if let Value::Object(p) = &mut params {
        p.insert("threads".into(), json!(cols.len()));
        p.insert("unreported".into(), json!(unreported));
    }
    let mut run = Skeleton {
        params,
        warnings,
        ..skel
    }
    .into_run();
    run.series = series;
    run.total = Some(total);
    Ok(run)
}

/// `params` without the keys whose value the file did not give (null).
fn known(mut params: Value) -> Value {
    if let Value::Object(m) = &mut params {
        m.retain(|_, v| !v.is_null());
    }
    params
}

/// The first line (1-based) whose text contains `needle`, else the last line.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| text.lines().count().max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowed_values_are_lower_bounds_at_the_range_and_the_max_is_exact() {
        let c = Column {
            thread: Some(0),
            buckets: Some(vec![0, 2, 1, 0]),
            overflows: 3,
            min: 1,
            avg: 20.5,
            max: 50,
            ..Column::default()
        };
        let mut unreported = BTreeSet::new();
        let s = c.series("t".into(), &mut unreported).unwrap();
        assert_eq!(s.counters.samples, 6);
        assert_eq!(s.summary.min_ns, 1000);
        assert_eq!(s.summary.max_ns, 50_000);
        assert_eq!(s.summary.mean_ns, 20_500.0);
        assert_eq!(s.summary.p50_ns, 2000);
        assert_eq!(s.summary.p90_ns, 50_000.min(s.summary.p90_ns));
        assert!(s.summary.p90_ns >= 4000);
        assert!(unreported.contains("stddev_ns"));
        let us = s.us_histogram.unwrap();
        assert_eq!((us.max_us, us.overflow), (4, 3));
        assert_eq!(us.buckets, vec![(1, 2), (2, 1)]);
    }

    #[test]
    fn when_everything_overflowed_the_reported_minimum_bounds_the_percentiles() {
        let c = Column {
            buckets: Some(vec![0, 0]),
            overflows: 3,
            min: 10,
            avg: 15.0,
            max: 30,
            ..Column::default()
        };
        let s = c.series("t".into(), &mut BTreeSet::new()).unwrap().summary;
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns), (10_000, 10_000, 30_000));
    }

    #[test]
    fn exact_columns_give_exact_mean_and_stddev() {
        let c = Column {
            buckets: Some(vec![0, 0, 1, 0, 1]),
            min: 2,
            avg: 3.0,
            max: 4,
            ..Column::default()
        };
        let mut unreported = BTreeSet::new();
        let s = c.series("t".into(), &mut unreported).unwrap();
        assert_eq!(s.summary.mean_ns, 3000.0);
        assert_eq!(s.summary.stddev_ns, 1000.0);
        assert!(unreported.is_empty());
    }

    #[test]
    fn the_total_adds_buckets_and_weights_the_average() {
        let a = Column {
            buckets: Some(vec![1, 1]),
            avg: 0.5,
            max: 1,
            ..Column::default()
        };
        let b = Column {
            buckets: Some(vec![0, 0, 2]),
            avg: 2.0,
            min: 2,
            max: 2,
            ..Column::default()
        };
        let t = Column::total(&[a, b]);
        assert_eq!(t.buckets, Some(vec![1, 1, 2]));
        assert_eq!(t.avg, 1.25);
        assert_eq!((t.min, t.max), (0, 2));
    }
}
