//! The comparison of runs: one column per run, one row per figure, the best value
//! of each row and every value's ratio to a baseline run. `format` renders one
//! [`Comparison`] as text, markdown, CSV, JSON or HTML.
//!
//! The figures of a run come from its primary series (see
//! [`series::primary`]); throughput and other scalars come from `run.metrics`,
//! one row per metric name found in any run.

use super::group::GroupInfo;
use super::metrics::metric_direction;
use super::series;
use crate::record::why::{Cause, Subject};
use crate::record::{Run, Series};
use serde::Serialize;
use std::borrow::Cow;

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

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Name (`p99`, `max-min`, `events_per_s`).
    pub name: String,
    /// What the values are.
    pub quantity: Quantity,
    /// Which way is better.
    pub better: Better,
    /// One value per run (ns for times), `None` where the run has no such figure.
    pub values: Vec<Option<f64>>,
    /// Indexes of the runs holding the best value (all of them on a tie). Empty
    /// when the row has no direction, when fewer than two runs have a value
    /// that can be best (for `Lower`, one of zero or more), or when those
    /// values are all the same: then no run is better.
    pub best: Vec<usize>,
    /// Each value divided by the baseline's (`None` for the baseline itself, for
    /// run ids, or where either value is missing, the baseline's is not above
    /// zero or the value is negative).
    pub ratios: Vec<Option<f64>>,
}

/// A compared run's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// Store id.
    pub id: Option<i64>,
    /// Label.
    pub label: String,
    /// Kind.
    pub kind: String,
    /// Status name.
    pub status: String,
    /// Start time.
    pub started_at: String,
    /// What its spike analysis found, when it has one (`--trace`).
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
    /// The runs, in column order.
    pub columns: Vec<Column>,
    /// Index of the baseline run.
    pub baseline: usize,
    /// The rows.
    pub rows: Vec<Row>,
}

type Getter = fn(&Series) -> f64;

/// The series rows: name, the summary fields it is made of (a run whose
/// source did not report one of them has no value in the row, never a 0),
/// quantity, direction, how to read the value.
type SeriesRow = (
    &'static str,
    &'static [&'static str],
    Quantity,
    Better,
    Getter,
);
const SERIES_ROWS: &[SeriesRow] = &[
    ("samples", &[], Quantity::Count, Better::Neither, |s| {
        s.counters.samples as f64
    }),
    ("min", &["min_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.min_ns as f64
    }),
    ("mean", &["mean_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.mean_ns
    }),
    ("p50", &["p50_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.p50_ns as f64
    }),
    ("p99", &["p99_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.p99_ns as f64
    }),
    ("p99.9", &["p999_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.p999_ns as f64
    }),
    (
        "p99.99",
        &["p9999_ns"],
        Quantity::Time,
        Better::Lower,
        |s| s.summary.p9999_ns as f64,
    ),
    ("max", &["max_ns"], Quantity::Time, Better::Lower, |s| {
        s.summary.max_ns as f64
    }),
    (
        "stddev",
        &["stddev_ns"],
        Quantity::Time,
        Better::Lower,
        |s| s.summary.stddev_ns,
    ),
    (
        "overruns",
        &["overruns"],
        Quantity::Count,
        Better::Lower,
        |s| s.counters.overruns as f64,
    ),
    (
        "misses",
        &["deadline_misses"],
        Quantity::Count,
        Better::Lower,
        |s| s.counters.deadline_misses as f64,
    ),
    (
        "max-min",
        &["min_ns", "max_ns"],
        Quantity::Time,
        Better::Lower,
        |s| s.summary.spread_max_min() as f64,
    ),
    (
        "p95-mean",
        &["p95_ns", "mean_ns"],
        Quantity::Time,
        Better::Lower,
        |s| s.summary.spread_p95_mean(),
    ),
];

impl Row {
    /// A row of `values`: the best of them marked (by `better`) and each one
    /// divided by `values[baseline]`.
    pub fn new(
        name: &str,
        quantity: Quantity,
        better: Better,
        values: Vec<Option<f64>>,
        baseline: usize,
    ) -> Row {
        let candidates: Vec<f64> = values
            .iter()
            .flatten()
            .copied()
            .filter(|v| better != Better::Lower || *v >= 0.0)
            .collect();
        let best_value = match better {
            Better::Lower => candidates.iter().copied().reduce(f64::min),
            Better::Higher => candidates.iter().copied().reduce(f64::max),
            Better::Neither => None,
        };
        let all_same = candidates.windows(2).all(|w| w[0] == w[1]);
        let best = match best_value {
            Some(b) if candidates.len() >= 2 && !all_same => values
                .iter()
                .enumerate()
                .filter(|(_, v)| **v == Some(b))
                .map(|(i, _)| i)
                .collect(),
            _ => Vec::new(),
        };
        let base = values.get(baseline).copied().flatten();
        let ratios = values
            .iter()
            .enumerate()
            .map(|(i, v)| match (i == baseline, base, v) {
                // A ratio of signed spreads (p95-mean) would mislead.
                (false, Some(b), Some(v)) if b > 0.0 && *v >= 0.0 && quantity != Quantity::Run => {
                    Some(v / b)
                }
                _ => None,
            })
            .collect();
        Row {
            name: name.into(),
            quantity,
            better,
            values,
            best,
            ratios,
        }
    }
}

impl Comparison {
    /// The value of row `name` in column `col`, with its row.
    pub fn value(&self, name: &str, col: usize) -> Option<(&Row, f64)> {
        let row = self.rows.iter().find(|r| r.name == name)?;
        Some((row, row.values.get(col).copied().flatten()?))
    }
}

/// Compares `runs` against `runs[baseline]`.
pub fn compare(runs: &[Run], baseline: usize) -> Comparison {
    let columns = runs
        .iter()
        .map(|r| Column {
            id: r.id,
            label: r.label.clone(),
            kind: r.kind.clone(),
            status: r.status.name().into(),
            started_at: r.started_at.clone(),
            why: r.why.as_ref().map(|w| WhyTop {
                spikes_total: w.spikes_total,
                top_cause: w.causes.first().cloned(),
                subject: w.subject,
            }),
            group: None,
        })
        .collect();
    let primary: Vec<Option<Cow<'_, Series>>> = runs.iter().map(series::primary).collect();
    let mut rows: Vec<Row> = SERIES_ROWS
        .iter()
        .filter_map(|&(name, fields, q, b, get)| {
            let values: Vec<Option<f64>> = primary
                .iter()
                .zip(runs)
                .map(|(s, run)| {
                    let known = fields.iter().all(|f| series::reported(run, f));
                    s.as_deref().filter(|_| known).map(get)
                })
                .collect();
            values
                .iter()
                .any(Option::is_some)
                .then(|| Row::new(name, q, b, values, baseline))
        })
        .collect();
    // Imported runs may not know how long they observed: 0 means unknown.
    let durations = runs
        .iter()
        .map(|r| (r.duration_ns > 0).then_some(r.duration_ns as f64))
        .collect();
    let duration = Row::new(
        "duration",
        Quantity::Duration,
        Better::Neither,
        durations,
        baseline,
    );
    // Right after `samples`: how much was observed comes first.
    rows.insert(usize::from(!rows.is_empty()), duration);
    let mut names: Vec<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let values = runs.iter().map(|r| r.metrics.get(name).copied()).collect();
        rows.push(Row::new(
            name,
            Quantity::Metric,
            metric_direction(name),
            values,
            baseline,
        ));
    }
    rows.extend(perf_rows(runs, baseline));
    Comparison {
        columns,
        baseline,
        rows,
    }
}

/// One row per performance counter that any run has (`perf.context-switches`),
/// in the order the runs list them: no value where a run has no counters or
/// the counter was not supported.
fn perf_rows(runs: &[Run], baseline: usize) -> Vec<Row> {
    let mut events: Vec<&str> = Vec::new();
    for c in runs
        .iter()
        .filter_map(|r| r.perf.as_ref())
        .flat_map(|p| &p.total)
    {
        if !events.contains(&c.event.as_str()) {
            events.push(&c.event);
        }
    }
    events
        .into_iter()
        .map(|e| {
            let values = runs
                .iter()
                .map(|r| r.perf.as_ref().and_then(|p| p.value(e)).map(|v| v as f64))
                .collect();
            Row::new(
                &format!("perf.{e}"),
                Quantity::Count,
                Better::Neither,
                values,
                baseline,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::two_compared_runs as two;

    fn row<'a>(c: &'a Comparison, name: &str) -> &'a Row {
        c.rows.iter().find(|r| r.name == name).unwrap()
    }

    #[test]
    fn values_best_and_ratios_by_hand() {
        let c = compare(&two(), 0);
        let min = row(&c, "min");
        assert_eq!(min.values, vec![Some(10_000.0), Some(5_000.0)]);
        assert_eq!(min.best, vec![1]);
        assert_eq!(min.ratios, vec![None, Some(0.5)]);
        let max = row(&c, "max");
        assert_eq!(max.values, vec![Some(40_000.0), Some(85_000.0)]);
        assert_eq!(max.best, vec![0]);
        assert_eq!(max.ratios[1], Some(85.0 / 40.0));
        let mean = row(&c, "mean");
        assert_eq!(mean.values, vec![Some(25_000.0), Some(25_000.0)]);
        assert!(mean.best.is_empty(), "equal values: neither is better");
        assert_eq!(row(&c, "max-min").values[1], Some(80_000.0));
        // Population stddev of a: sqrt(((15²+5²)·2)/4) µs = sqrt(125) µs.
        let sd = row(&c, "stddev").values[0].unwrap();
        assert!((sd - 125f64.sqrt() * 1000.0).abs() < 1e-6, "{sd}");
        assert_eq!(row(&c, "samples").best, Vec::<usize>::new());
        assert_eq!(row(&c, "duration").values[0], Some(4_000_000.0));
        // Throughput: higher is better; the time a run took has no direction.
        let ev = row(&c, "events_per_s");
        assert_eq!((ev.best.clone(), ev.ratios[1]), (vec![1], Some(1.5)));
        let t = row(&c, "total_time_s");
        assert_eq!(
            (t.values.clone(), t.better),
            (vec![None, Some(2.5)], Better::Neither)
        );
    }

    /// A figure the run's source did not report is no value, never a 0 that
    /// wins the row.
    #[test]
    fn unreported_figures_are_unknown_not_best() {
        let mut runs = two();
        runs[1].params = crate::record::RunParams::Recorded(
            serde_json::json!({"unreported": ["p99_ns", "stddev_ns", "p95_ns"]}),
        );
        let total = runs[1].total.as_mut().unwrap();
        (
            total.summary.p99_ns,
            total.summary.p95_ns,
            total.summary.stddev_ns,
        ) = (0, 0, 0.0);
        let c = compare(&runs, 0);
        for name in ["p99", "stddev", "p95-mean"] {
            let r = row(&c, name);
            assert_eq!(r.values[1], None, "{name}");
            assert!(r.best.is_empty(), "{name}: one known value has no best");
        }
        assert_eq!(
            row(&c, "max").values[1],
            Some(85_000.0),
            "reported figures stay"
        );
    }

    #[test]
    fn baseline_changes_the_ratios() {
        let c = compare(&two(), 1);
        assert_eq!(row(&c, "min").ratios, vec![Some(2.0), None]);
    }

    #[test]
    fn no_ratio_against_zero_or_negative_values() {
        let r = Row::new(
            "p95-mean",
            Quantity::Time,
            Better::Lower,
            vec![Some(-2.0), Some(3.0), Some(0.0)],
            0,
        );
        assert_eq!(r.ratios, vec![None, None, None]);
        assert_eq!(r.best, vec![2], "a negative spread is not the best");
        let r = Row::new(
            "x",
            Quantity::Count,
            Better::Lower,
            vec![Some(0.0), Some(3.0)],
            0,
        );
        assert_eq!(r.ratios, vec![None, None]);
    }

    #[test]
    fn best_needs_two_values_that_can_win_and_differ() {
        let best = |better, values: &[Option<f64>]| {
            Row::new("x", Quantity::Time, better, values.to_vec(), 0).best
        };
        let lower = Better::Lower;
        assert_eq!(best(lower, &[Some(-2.0), Some(3.0)]), Vec::<usize>::new());
        assert_eq!(best(lower, &[Some(0.0), Some(0.0)]), Vec::<usize>::new());
        assert_eq!(best(lower, &[None, Some(1.0)]), Vec::<usize>::new());
        assert_eq!(best(lower, &[Some(1.0), Some(1.0), Some(2.0)]), vec![0, 1]);
        assert_eq!(best(Better::Higher, &[Some(-1.0), Some(-2.0)]), vec![0]);
        assert_eq!(
            best(Better::Neither, &[Some(1.0), Some(2.0)]),
            Vec::<usize>::new()
        );
    }

    /// Counters a benchmark does not measure are no value, not a 0 that wins.
    #[test]
    fn a_benchmark_has_no_overruns() {
        let mut runs = two();
        runs[1].kind = "bench.cpu".into();
        let c = compare(&runs, 0);
        assert_eq!(row(&c, "overruns").values, vec![Some(0.0), None]);
        assert!(row(&c, "overruns").best.is_empty());
    }
}
