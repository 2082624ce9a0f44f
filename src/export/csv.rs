//! CSV: one row per series (the threads, then `all`) of one or more runs, times
//! in ns, each run's metrics repeated on its rows. Values the source did not
//! report are empty.

use crate::record::{Run, Series};
use std::collections::BTreeSet;

const COLUMNS: &[&str] = &[
    "run",
    "kind",
    "label",
    "status",
    "series",
    "samples",
    "overruns",
    "misses",
    "overflows",
    "min_ns",
    "mean_ns",
    "stddev_ns",
    "p50_ns",
    "p90_ns",
    "p95_ns",
    "p99_ns",
    "p999_ns",
    "p9999_ns",
    "max_ns",
];

/// A field quoted when it holds a comma, quote or line break (RFC 4180).
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Runs as one CSV table with a header line: the union of their metrics as
/// columns, empty where a run has no such metric.
pub fn render(runs: &[Run]) -> String {
    let metric_names: BTreeSet<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
    let mut header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(metric_names.iter().map(|m| field(m)));
    let mut out = header.join(",");
    out.push('\n');
    for run in runs {
        for s in run.series.iter().chain(run.total.as_ref()) {
            out.push_str(&row(run, s, &metric_names));
        }
    }
    out
}

/// One series of a run as a CSV line.
fn row(run: &Run, s: &Series, metric_names: &BTreeSet<&String>) -> String {
    let unreported = run.unreported();
    let m = &s.summary;
    let stat = |name: &str, v: String| {
        if unreported.contains(&name) {
            String::new()
        } else {
            v
        }
    };
    let mut cells = vec![
        run.id.map(|i| i.to_string()).unwrap_or_default(),
        field(&run.kind),
        field(&run.label),
        run.status.name().to_string(),
        field(&s.name),
        s.counters.samples.to_string(),
        s.counters.overruns.to_string(),
        s.counters.deadline_misses.to_string(),
        s.counters.overflows.to_string(),
        m.min_ns.to_string(),
        format!("{:.1}", m.mean_ns),
        stat("stddev_ns", format!("{:.1}", m.stddev_ns)),
        stat("p50_ns", m.p50_ns.to_string()),
        stat("p90_ns", m.p90_ns.to_string()),
        stat("p95_ns", m.p95_ns.to_string()),
        stat("p99_ns", m.p99_ns.to_string()),
        stat("p999_ns", m.p999_ns.to_string()),
        stat("p9999_ns", m.p9999_ns.to_string()),
        m.max_ns.to_string(),
    ];
    cells.extend(metric_names.iter().map(|k| {
        run.metrics
            .get(*k)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }));
    cells.join(",") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
