//! The comparison of arms (one run each, the repeats of a campaign step, or a
//! `--by` group): one column per arm, one row per figure, each cell the arm's
//! [`Estimate`] of that figure and its [`Change`] against the baseline arm as
//! [`judge`] gives it with the noise threshold. A column is better or worse
//! than the baseline only when the intervals separate by more than the noise,
//! and only then does its cell carry a ratio. `format` renders one
//! [`Comparison`] as text, markdown, CSV, JSON or HTML and computes nothing.
//!
//! The figures of a run come from its primary series (see
//! `series::primary`); throughput and other scalars from `run.metrics`, one
//! row per metric name found in any run; performance counters from
//! `run.perf`. All arms of one comparison are of one kind
//! (`outcome::by_kind` splits runs of different kinds, which are never
//! compared).

use super::arms::Arm;
use super::group::{worst_index, GroupInfo};
use super::interval::{judge, Basis, Change, Estimate};
use super::metrics::metric_direction;
use crate::record::why::{Cause, Subject};
use crate::record::Status;
use serde::Serialize;

/// What a row's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    /// A latency in ns (shown in the chosen unit).
    Time,
    /// A length of time in ns (shown in human form).
    Duration,
    /// A count.
    Count,
    /// A scalar metric, unit in its name.
    Metric,
    /// A run's id (the worst run of a group).
    Run,
}

pub use crate::record::Better;

/// One compared figure of one arm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The figure (the row's name: `p99`, `events_per_s`).
    pub metric: String,
    /// The arm's run id when it is one run; `None` for several (see `runs`).
    pub run: Option<i64>,
    /// The arm's runs when it has several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<i64>,
    /// The figure (ns for times); `None` when the arm does not have it or too
    /// few samples support it (see `basis`).
    pub value: Option<f64>,
    /// Its 95 % interval (`[low, high]`; for `basis: range` the lowest and
    /// highest of the runs' own figures), `None` when none can be given.
    pub ci: Option<(f64, f64)>,
    /// What the interval rests on (`windows`, `runs`, `range`, `observed`,
    /// `point`, `unsupported`); absent without a value.
    #[serde(flatten)]
    pub basis: Option<Basis>,
    /// Against the baseline: `better` or `worse` (intervals apart by more
    /// than the noise), `same` (no real difference; the baseline's own cell),
    /// `unknown` (cannot be told).
    pub change: Change,
    /// Whether the change is decided (`same`: narrow enough that a difference
    /// larger than the noise would have been seen).
    pub decided: bool,
    /// The value over the baseline's, given only for a real change.
    pub ratio: Option<f64>,
}

impl Cell {
    /// Whether the cell is a percentile that its samples do not support.
    pub fn unsupported(&self) -> Option<(u64, u64)> {
        match self.basis {
            Some(Basis::Unsupported { needed, have }) => Some((needed, have)),
            _ => None,
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Name (`p99`, `max-min`, `events_per_s`).
    pub name: String,
    /// What the values are.
    pub quantity: Quantity,
    /// Which way is better.
    pub better: Better,
    /// One cell per arm, in column order.
    pub cells: Vec<Cell>,
}

impl Row {
    /// The value of column `col`, if it has one.
    pub fn value(&self, col: usize) -> Option<f64> {
        self.cells.get(col).and_then(|c| c.value)
    }
}

/// A compared arm's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// Store id, when the arm is one run.
    pub id: Option<i64>,
    /// Its runs' ids, when it has several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<i64>,
    /// The arm's name (a label, a step, a group).
    pub label: String,
    /// Kind.
    pub kind: String,
    /// Status name: `complete` when every run completed.
    pub status: String,
    /// Start time of its first run.
    pub started_at: String,
    /// What its spike analysis found, when it is one run with one (`--trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<WhyTop>,
    /// The runs it stands for, when it is a group of them (`--by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupInfo>,
}

/// A run's spike analysis in one figure: how many spikes, and the cause that
/// explains the largest share of their time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyTop {
    /// Samples at or above the analysis' threshold.
    pub spikes_total: u64,
    /// The first of its ranked causes (none without spikes).
    pub top_cause: Option<Cause>,
    /// Spikes of a latency run, or gaps of a noise run.
    #[serde(skip_serializing_if = "Subject::is_spikes")]
    pub subject: Subject,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The arms, in column order.
    pub columns: Vec<Column>,
    /// Index of the baseline arm.
    pub baseline: usize,
    /// The noise threshold the changes were judged with (a fraction: 0.05).
    pub noise: f64,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Comparison {
    /// The value of row `name` in column `col`, with its row.
    pub fn value(&self, name: &str, col: usize) -> Option<(&Row, f64)> {
        let row = self.rows.iter().find(|r| r.name == name)?;
        Some((row, row.value(col)?))
    }
}

/// The series rows: name, quantity, direction.
const SERIES_ROWS: &[(&str, Quantity, Better)] = &[
    ("samples", Quantity::Count, Better::Neither),
    ("duration", Quantity::Duration, Better::Neither),
    ("min", Quantity::Time, Better::Lower),
    ("mean", Quantity::Time, Better::Lower),
    ("p50", Quantity::Time, Better::Lower),
    ("p99", Quantity::Time, Better::Lower),
    ("p99.9", Quantity::Time, Better::Lower),
    ("p99.99", Quantity::Time, Better::Lower),
    ("max", Quantity::Time, Better::Lower),
    ("stddev", Quantity::Time, Better::Lower),
    ("overruns", Quantity::Count, Better::Lower),
    ("misses", Quantity::Count, Better::Lower),
    ("max-min", Quantity::Time, Better::Lower),
    ("p95-mean", Quantity::Time, Better::Lower),
];

/// Compares `arms` (all of one kind) against `arms[baseline]` with the noise
/// threshold `noise`.
pub fn compare(arms: &[Arm], baseline: usize, noise: f64) -> Comparison {
    let columns = arms.iter().map(column).collect();
    let mut figures: Vec<(String, Quantity, Better)> = SERIES_ROWS
        .iter()
        .map(|&(n, q, b)| (n.to_string(), q, b))
        .collect();
    let runs = || arms.iter().flat_map(|a| &a.runs);
    let mut names: Vec<&String> = runs().flat_map(|r| r.metrics.keys()).collect();
    names.sort();
    names.dedup();
    figures.extend(
        names
            .into_iter()
            .map(|n| (n.clone(), Quantity::Metric, metric_direction(n))),
    );
    let mut events: Vec<&str> = Vec::new();
    for c in runs()
        .filter_map(|r| r.perf.as_ref())
        .flat_map(|p| &p.total)
    {
        if !events.contains(&c.event.as_str()) {
            events.push(&c.event);
        }
    }
    figures.extend(
        events
            .into_iter()
            .map(|e| (format!("perf.{e}"), Quantity::Count, Better::Neither)),
    );
    let mut rows: Vec<Row> = figures
        .into_iter()
        .filter_map(|(name, q, b)| {
            let estimates: Vec<Option<Estimate>> = arms.iter().map(|a| a.estimate(&name)).collect();
            // A counter a run lists but the machine refused stays a row.
            let listed = name.starts_with("perf.");
            (listed || estimates.iter().any(Option::is_some))
                .then(|| row(arms, &name, q, b, &estimates, baseline, noise))
        })
        .collect();
    if arms.iter().any(Arm::repeated) {
        rows.splice(0..0, repeat_rows(arms, baseline, noise));
    }
    Comparison {
        columns,
        baseline,
        noise,
        rows,
    }
}

/// The rows that head a comparison of arms of several runs: how many runs,
/// and the run with the arm's maximum.
pub(super) fn repeat_rows(arms: &[Arm], baseline: usize, noise: f64) -> [Row; 2] {
    let point = |v: Option<f64>| {
        v.map(|value| Estimate {
            value,
            ci: None,
            basis: Basis::Point,
        })
    };
    let counts: Vec<_> = arms
        .iter()
        .map(|a| point(Some(a.runs.len() as f64)))
        .collect();
    let worst: Vec<_> = arms
        .iter()
        .map(|a| point(worst_run(a).map(|id| id as f64)))
        .collect();
    [
        row(
            arms,
            "runs",
            Quantity::Count,
            Better::Neither,
            &counts,
            baseline,
            noise,
        ),
        row(
            arms,
            "worst run",
            Quantity::Run,
            Better::Neither,
            &worst,
            baseline,
            noise,
        ),
    ]
}

/// The id of the arm's run with the largest maximum (the first on a tie).
pub fn worst_run(arm: &Arm) -> Option<i64> {
    arm.runs.get(worst_index(&arm.runs)).and_then(|r| r.id)
}

/// The row `name`: each arm's estimate judged against the baseline's.
fn row(
    arms: &[Arm],
    name: &str,
    quantity: Quantity,
    better: Better,
    estimates: &[Option<Estimate>],
    baseline: usize,
    noise: f64,
) -> Row {
    let base = estimates.get(baseline).copied().flatten();
    let cells = arms
        .iter()
        .zip(estimates)
        .enumerate()
        .map(|(i, (arm, e))| {
            let (run, runs) = ids(arm);
            let supported = e.filter(|e| !matches!(e.basis, Basis::Unsupported { .. }));
            // A negative spread (p95 below the mean: a few large values pull
            // the mean up) is no better than a small positive one: a signed
            // figure below zero is judged against nothing.
            let signed = |e: &Estimate| better == Better::Lower && e.value < 0.0;
            let (change, decided) = match (i == baseline, base, supported) {
                (true, _, Some(_)) => (Change::Same, true),
                (false, Some(b), Some(o))
                    if quantity != Quantity::Run && !signed(&b) && !signed(&o) =>
                {
                    let j = judge(&b, &o, better, noise);
                    (j.change, j.decided)
                }
                _ => (Change::Unknown, false),
            };
            let ratio = match (change, base, supported) {
                (Change::Better | Change::Worse, Some(b), Some(o)) if b.value > 0.0 => {
                    Some(o.value / b.value)
                }
                _ => None,
            };
            Cell {
                metric: name.to_string(),
                run,
                runs,
                value: supported.map(|e| e.value),
                ci: supported.and_then(|e| e.ci),
                basis: e.map(|e| e.basis),
                change,
                decided,
                ratio,
            }
        })
        .collect();
    Row {
        name: name.to_string(),
        quantity,
        better,
        cells,
    }
}

/// An arm's run id when it is one run, else its runs' ids.
fn ids(arm: &Arm) -> (Option<i64>, Vec<i64>) {
    match arm.runs.as_slice() {
        [one] => (one.id, Vec::new()),
        many => (None, many.iter().filter_map(|r| r.id).collect()),
    }
}

fn column(arm: &Arm) -> Column {
    let (id, runs) = ids(arm);
    let first = arm.runs.first();
    let why = match arm.runs.as_slice() {
        [one] => one.why.as_ref().map(|w| WhyTop {
            spikes_total: w.spikes_total,
            top_cause: w.causes.first().cloned(),
            subject: w.subject,
        }),
        _ => None,
    };
    let status = match arm.runs.as_slice() {
        [one] => one.status,
        many if many.iter().all(|r| r.status == Status::Complete) => Status::Complete,
        _ => Status::Interrupted,
    };
    Column {
        id,
        runs,
        label: arm.name.clone(),
        kind: arm.kind.clone(),
        status: status.name().into(),
        started_at: first.map(|r| r.started_at.clone()).unwrap_or_default(),
        why,
        group: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{same_and_shifted, two_compared_runs as two, windowed_run};
    use crate::analysis::interval::DEFAULT_NOISE;

    fn arms(runs: Vec<crate::record::Run>) -> Vec<Arm> {
        runs.into_iter().map(Arm::of_run).collect()
    }

    fn row<'a>(c: &'a Comparison, name: &str) -> &'a Row {
        c.rows.iter().find(|r| r.name == name).unwrap()
    }

    fn values(r: &Row) -> Vec<Option<f64>> {
        r.cells.iter().map(|c| c.value).collect()
    }

    #[test]
    fn values_of_runs_without_windows_are_points_of_unknown_change() {
        let c = compare(&arms(two()), 0, DEFAULT_NOISE);
        assert_eq!(values(row(&c, "min")), [Some(10_000.0), Some(5_000.0)]);
        assert_eq!(values(row(&c, "max")), [Some(40_000.0), Some(85_000.0)]);
        assert_eq!(values(row(&c, "mean")), [Some(25_000.0), Some(25_000.0)]);
        assert_eq!(row(&c, "duration").cells[0].value, Some(4_000_000.0));
        let max = &row(&c, "max").cells;
        assert_eq!((max[0].change, max[0].decided), (Change::Same, true));
        assert_eq!(max[1].basis, Some(Basis::Observed));
        assert_eq!((max[1].change, max[1].ratio), (Change::Unknown, None));
        assert_eq!((max[1].run, max[1].metric.as_str()), (Some(2), "max"));
        // Four samples support no percentile: the p99 is no value.
        let p99 = &row(&c, "p99").cells[1];
        assert_eq!(p99.value, None);
        assert_eq!(p99.unsupported(), Some((1_000, 4)));
        // Throughput: higher is better; the time a run took has no direction.
        let ev = row(&c, "events_per_s");
        assert_eq!(ev.better, Better::Higher);
        assert_eq!(
            ev.cells[1].change,
            Change::Unknown,
            "one value each: no interval"
        );
        let t = row(&c, "total_time_s");
        assert_eq!(
            (values(t), t.better),
            (vec![None, Some(2.5)], Better::Neither)
        );
    }

    /// Two runs of the same distribution are the same; one shifted by half
    /// again is worse, with a ratio; the baseline decides which is which.
    #[test]
    fn identical_are_same_shifted_are_worse() {
        let runs = same_and_shifted();
        let c = compare(&arms(runs.clone()), 0, DEFAULT_NOISE);
        let p50 = &row(&c, "p50").cells;
        assert!(p50[0].ci.is_some());
        assert_eq!(
            (p50[1].change, p50[1].decided, p50[1].ratio),
            (Change::Same, true, None)
        );
        assert_eq!(p50[2].change, Change::Worse);
        let r = p50[2].ratio.unwrap();
        assert!((r - 1.5).abs() < 0.01, "{r}");
        let c = compare(&arms(runs), 2, DEFAULT_NOISE);
        assert_eq!(row(&c, "p50").cells[0].change, Change::Better);
        assert_eq!(row(&c, "max").cells[0].change, Change::Unknown, "observed");
    }

    /// A negative spread (p95 below the mean) is never better than a positive
    /// one, nor given a ratio.
    #[test]
    fn a_negative_spread_is_judged_against_nothing() {
        let even: Vec<u64> = (0..2_000).map(|i| 10_000 + (i * 37) % 1_000).collect();
        let mut tail = vec![10_000; 1_900];
        tail.extend([10_000_000; 100]);
        let c = compare(
            &arms(vec![
                windowed_run("even", &even),
                windowed_run("tail", &tail),
            ]),
            0,
            DEFAULT_NOISE,
        );
        let spread = &row(&c, "p95-mean").cells;
        assert!(spread[1].value.unwrap() < 0.0, "{spread:?}");
        assert_eq!((spread[1].change, spread[1].ratio), (Change::Unknown, None));
    }

    /// Counters a benchmark does not measure are no value.
    #[test]
    fn a_benchmark_has_no_overruns() {
        let mut runs = two();
        runs[1].kind = "bench.cpu".into();
        let c = compare(&arms(runs)[1..], 0, DEFAULT_NOISE);
        assert!(c.rows.iter().all(|r| r.name != "overruns"));
    }

    #[test]
    fn repeats_are_counted_and_their_worst_run_named() {
        let mut runs = two();
        runs[1].kind = "latency".into();
        let arm = Arm::new("both", runs.clone());
        let c = compare(&[Arm::of_run(runs[0].clone()), arm], 0, DEFAULT_NOISE);
        assert_eq!(c.rows[0].name, "runs");
        assert_eq!(values(&c.rows[0]), [Some(1.0), Some(2.0)]);
        assert_eq!(values(&c.rows[1]), [Some(1.0), Some(2.0)]);
        assert_eq!(c.columns[1].runs, [1, 2]);
        assert_eq!(c.columns[1].id, None);
        let max = &row(&c, "max").cells[1];
        assert_eq!(max.basis, Some(Basis::Range { runs: 2 }));
        assert_eq!(max.ci, Some((40_000.0, 85_000.0)));
    }
}
