//! The comparison table: one column per run, one row per figure, the best value of
//! each row marked and every value's ratio to a baseline run. Rendered as text,
//! markdown, CSV or JSON from one [`Comparison`].
//!
//! The figures of a run come from its `total` series (all threads together), or
//! from its only series when it has no total; throughput and other scalars come
//! from `run.metrics`, one row per metric name found in any run.

use super::table::Table;
use crate::export::csv::field;
use crate::record::{Counters, Run, Series};
use crate::units::{Human, TimeUnit};
use rtlab_engine::stats::hist::{HistogramData, LatencyHistogram};
use rtlab_engine::stats::{Moments, Summary};
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
}

/// Which way a row improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Smaller is better (latencies, misses, spreads).
    Lower,
    /// Larger is better (throughput).
    Higher,
    /// Neither (sample counts, observation time).
    Neither,
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
    /// One value per run (ns for times), `None` where the run has no such figure.
    pub values: Vec<Option<f64>>,
    /// Indexes of the runs holding the best value (all of them on a tie; empty when
    /// fewer than two runs have a value or the row has no direction).
    pub best: Vec<usize>,
    /// Each value divided by the baseline's (`None` for the baseline itself, or
    /// where either value is missing, the baseline's is not above zero or the
    /// value is negative).
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
}

impl Column {
    /// The column heading: label and id.
    pub fn heading(&self) -> String {
        name_with_id(&self.label, self.id)
    }
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

/// How a run is named in tables and plots: `label #id`.
pub fn name_with_id(label: &str, id: Option<i64>) -> String {
    match id {
        Some(id) => format!("{label} #{id}"),
        None => label.to_string(),
    }
}

/// The name of a run in tables and plots.
pub fn run_name(run: &Run) -> String {
    name_with_id(&run.label, run.id)
}

/// The series whose figures stand for a run: its total, else its only series,
/// else its series merged (runs imported without a total).
pub fn primary_series(run: &Run) -> Option<Cow<'_, Series>> {
    if let Some(t) = &run.total {
        return Some(Cow::Borrowed(t));
    }
    match run.series.as_slice() {
        [] => None,
        [only] => Some(Cow::Borrowed(only)),
        many => Some(Cow::Owned(merge_series(many))),
    }
}

/// The histogram of each run's primary series, named after the run.
pub fn primary_histograms(runs: &[Run]) -> Vec<(String, HistogramData)> {
    runs.iter()
        .filter_map(|r| primary_series(r).map(|s| (run_name(r), s.histogram.clone())))
        .collect()
}

/// All series as one: histograms and counters added; the exact mean and standard
/// deviation recombined from each series' own (to within a nanosecond).
pub fn merge_series(many: &[Series]) -> Series {
    let mut h = LatencyHistogram::new();
    let mut counters = Counters::default();
    let mut m = Moments::default();
    for s in many {
        h.merge(&LatencyHistogram::from_data(&s.histogram));
        counters.samples += s.counters.samples;
        counters.overruns += s.counters.overruns;
        counters.deadline_misses += s.counters.deadline_misses;
        counters.overflows += s.counters.overflows;
        let sm = &s.summary;
        if sm.samples == 0 {
            continue;
        }
        let n = sm.samples as f64;
        m.count += sm.samples;
        m.min = m.min.min(sm.min_ns);
        m.max = m.max.max(sm.max_ns);
        m.sum += (n * sm.mean_ns).round() as u128;
        m.sum_sq += (n * (sm.stddev_ns * sm.stddev_ns + sm.mean_ns * sm.mean_ns)).round() as u128;
    }
    Series {
        name: "all".into(),
        thread: None,
        cpu: None,
        tid: None,
        interval_ns: None,
        counters,
        summary: Summary::new(&m, &h),
        max_at: None,
        histogram: h.to_data(),
        us_histogram: None,
        trace: Vec::new(),
    }
}

/// Which way a metric improves, from its name.
fn metric_direction(name: &str) -> Better {
    let n = name.to_ascii_lowercase();
    if n.contains("per_s") || n.ends_with("_per_sec") {
        Better::Higher
    } else if ["lost", "error", "miss", "fail"]
        .iter()
        .any(|w| n.contains(w))
        || ["_s", "_ns", "_us", "_ms"].iter().any(|u| n.ends_with(u))
    {
        Better::Lower
    } else {
        Better::Neither
    }
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
    ("overruns", &[], Quantity::Count, Better::Lower, |s| {
        s.counters.overruns as f64
    }),
    ("misses", &[], Quantity::Count, Better::Lower, |s| {
        s.counters.deadline_misses as f64
    }),
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
    fn new(
        name: &str,
        quantity: Quantity,
        better: Better,
        values: Vec<Option<f64>>,
        baseline: usize,
    ) -> Row {
        let present = values.iter().flatten().copied();
        let best_value = match better {
            Better::Lower => present.reduce(f64::min),
            Better::Higher => present.reduce(f64::max),
            Better::Neither => None,
        };
        let best = match best_value {
            Some(b) if values.iter().flatten().count() >= 2 => values
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
                (false, Some(b), Some(v)) if b > 0.0 && *v >= 0.0 => Some(v / b),
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
        })
        .collect();
    let primary: Vec<Option<Cow<'_, Series>>> = runs.iter().map(primary_series).collect();
    let unreported: Vec<Vec<&str>> = runs.iter().map(Run::unreported).collect();
    let mut rows: Vec<Row> = SERIES_ROWS
        .iter()
        .filter_map(|&(name, fields, q, b, get)| {
            let values: Vec<Option<f64>> = primary
                .iter()
                .zip(&unreported)
                .map(|(s, unknown)| {
                    let known = !fields.iter().any(|f| unknown.contains(f));
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
    Comparison {
        columns,
        baseline,
        rows,
    }
}

/// A metric value: whole numbers as such, others with up to 3 decimals.
fn metric_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

impl Row {
    /// A value as shown in tables.
    pub fn value_text(&self, v: f64, unit: TimeUnit) -> String {
        match self.quantity {
            Quantity::Time => unit.cell(v),
            Quantity::Duration => Human(v.max(0.0) as u64).to_string(),
            Quantity::Count => format!("{v:.0}"),
            Quantity::Metric => metric_text(v),
        }
    }

    /// The row name with its unit, for table headers.
    pub fn label(&self, unit: TimeUnit) -> String {
        match self.quantity {
            Quantity::Time => format!("{} ({})", self.name, unit.symbol()),
            _ => self.name.clone(),
        }
    }

    /// One cell: the value, `mark` around it when it is the best, and the ratio to
    /// the baseline.
    fn cell(&self, i: usize, unit: TimeUnit, mark: (&str, &str)) -> String {
        let Some(v) = self.values[i] else {
            return "-".into();
        };
        let mut text = self.value_text(v, unit);
        if self.best.contains(&i) {
            text = format!("{}{text}{}", mark.0, mark.1);
        }
        if let Some(r) = self.ratios[i] {
            text.push_str(&format!(" ({r:.2}x)"));
        }
        text
    }
}

impl Comparison {
    fn headings(&self) -> Vec<String> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == self.baseline && self.columns.len() > 1 {
                    format!("{} (baseline)", c.heading())
                } else {
                    c.heading()
                }
            })
            .collect()
    }

    /// The text table; best values end in `*`.
    pub fn render_text(&self, unit: TimeUnit) -> String {
        let heads = self.headings();
        let mut header = vec![""];
        header.extend(heads.iter().map(String::as_str));
        let mut t = Table::new(&header);
        for row in &self.rows {
            let mut cells = vec![row.label(unit)];
            cells.extend((0..self.columns.len()).map(|i| row.cell(i, unit, ("", "*"))));
            t.row(cells);
        }
        let mut out = t.render();
        if self.columns.len() > 1 {
            out.push_str("* best of the row; (1.23x) = value / baseline value\n");
        }
        out
    }

    /// A GitHub-flavoured markdown table; best values in bold.
    pub fn render_markdown(&self, unit: TimeUnit) -> String {
        let mut header = vec![String::new()];
        header.extend(self.headings());
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![row.label(unit)];
                cells.extend((0..self.columns.len()).map(|i| row.cell(i, unit, ("**", "**"))));
                cells
            })
            .collect();
        markdown_table(&header, &rows)
    }

    /// CSV in long form, one line per (row, run): raw values (ns for times).
    pub fn render_csv(&self) -> String {
        let mut out = String::from("row,quantity,run_id,label,value,ratio_to_baseline,best\n");
        for row in &self.rows {
            for (i, c) in self.columns.iter().enumerate() {
                let value = row.values[i].map(|v| v.to_string()).unwrap_or_default();
                let ratio = row.ratios[i].map(|r| r.to_string()).unwrap_or_default();
                let id = c.id.map(|i| i.to_string()).unwrap_or_default();
                out.push_str(&format!(
                    "{},{},{id},{},{value},{ratio},{}\n",
                    field(&row.name),
                    serde_json::to_value(row.quantity)
                        .expect("plain enum")
                        .as_str()
                        .unwrap_or_default(),
                    field(&c.label),
                    row.best.contains(&i)
                ));
            }
        }
        out
    }
}

/// A markdown table: first column left-aligned, the others right-aligned.
pub fn markdown_table(header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(header);
    out.push_str("|---|");
    out.push_str(&"---:|".repeat(header.len().saturating_sub(1)));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::run_from_samples;

    fn row<'a>(c: &'a Comparison, name: &str) -> &'a Row {
        c.rows.iter().find(|r| r.name == name).unwrap()
    }

    /// Two runs whose figures are computed by hand:
    /// a = 10, 20, 30, 40 µs: min 10, mean 25, max 40, max-min 30
    /// b = 5, 5, 5, 85 µs:    min 5,  mean 25, max 85, max-min 80
    fn two() -> Vec<Run> {
        let mut a = run_from_samples("a", &[10_000, 20_000, 30_000, 40_000]);
        let mut b = run_from_samples("b", &[5_000, 5_000, 5_000, 85_000]);
        a.id = Some(1);
        b.id = Some(2);
        b.metrics.insert("events_per_s".into(), 300.0);
        a.metrics.insert("events_per_s".into(), 200.0);
        b.metrics.insert("total_time_s".into(), 2.5);
        vec![a, b]
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
        assert_eq!(mean.best, vec![0, 1], "a tie marks both");
        assert_eq!(row(&c, "max-min").values[1], Some(80_000.0));
        // Population stddev of a: sqrt(((15²+5²)·2)/4) µs = sqrt(125) µs.
        let sd = row(&c, "stddev").values[0].unwrap();
        assert!((sd - 125f64.sqrt() * 1000.0).abs() < 1e-6, "{sd}");
        assert_eq!(row(&c, "samples").best, Vec::<usize>::new());
        assert_eq!(row(&c, "duration").values[0], Some(4_000_000.0));
        // Throughput: higher is better; a time metric only one run has: no best.
        let ev = row(&c, "events_per_s");
        assert_eq!((ev.best.clone(), ev.ratios[1]), (vec![1], Some(1.5)));
        let t = row(&c, "total_time_s");
        assert_eq!((t.values.clone(), t.best.len()), (vec![None, Some(2.5)], 0));
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
        assert_eq!(r.best, vec![0]);
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
    fn text_markdown_csv() {
        let c = compare(&two(), 0);
        let text = c.render_text(TimeUnit::Us);
        assert!(text.contains("a #1 (baseline)"), "{text}");
        let min_line = text.lines().find(|l| l.starts_with("min (us)")).unwrap();
        assert!(min_line.contains("10.0") && min_line.contains("5.0* (0.50x)"));
        let md = c.render_markdown(TimeUnit::Ms);
        assert!(
            md.contains("| max (ms) | **0.040** | 0.085 (2.12x) |"),
            "{md}"
        );
        let csv = c.render_csv();
        assert!(csv.contains("\nmin,time,2,b,5000,0.5,true\n"), "{csv}");
        assert!(csv.contains("\nmin,time,1,a,10000,,false\n"), "{csv}");
    }

    #[test]
    fn runs_without_a_total_are_merged() {
        use crate::report::fixture::series_from_samples;
        let mut run = run_from_samples("x", &[]);
        run.total = None;
        run.series = vec![
            series_from_samples("cpu0", &[10_000, 20_000]),
            series_from_samples("cpu1", &[30_000, 40_000]),
        ];
        run.series[1].counters.overruns = 3;
        let all = primary_series(&run).unwrap().into_owned();
        let s = &all.summary;
        assert_eq!((s.samples, s.min_ns, s.max_ns), (4, 10_000, 40_000));
        assert_eq!(s.mean_ns, 25_000.0);
        // Population stddev of 10, 20, 30, 40 µs: sqrt(125) µs.
        assert!(
            (s.stddev_ns - 125f64.sqrt() * 1000.0).abs() < 1.0,
            "{}",
            s.stddev_ns
        );
        assert_eq!(all.counters.overruns, 3);
        assert_eq!(all.histogram.buckets.iter().map(|b| b.1).sum::<u64>(), 4);
    }

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(field("plain"), "plain");
    }

    #[test]
    fn metric_directions() {
        assert_eq!(metric_direction("read_mib_per_s"), Better::Higher);
        assert_eq!(metric_direction("total_time_s"), Better::Lower);
        assert_eq!(metric_direction("messages_lost"), Better::Lower);
        assert_eq!(metric_direction("threads"), Better::Neither);
    }
}
