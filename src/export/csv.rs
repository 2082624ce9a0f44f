//! CSV: one row per series (the threads, then `all`), times in ns, the run's
//! metrics repeated on each row. Values the source did not report are empty.

use crate::record::{Run, Series};

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
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The run as CSV with a header line.
pub fn render(run: &Run) -> String {
    let unreported = run.unreported();
    let metric_names: Vec<&String> = run.metrics.keys().collect();
    let mut header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(metric_names.iter().map(|m| field(m)));
    let mut out = header.join(",");
    out.push('\n');
    let row = |s: &Series| -> String {
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
        cells.extend(run.metrics.values().map(|v| v.to_string()));
        cells.join(",") + "\n"
    };
    for s in run.series.iter().chain(run.total.as_ref()) {
        out.push_str(&row(s));
    }
    out
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
