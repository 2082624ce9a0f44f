//! CSV: one row per series (the threads, then `all`) of one or more runs, times
//! in ns, each run's metrics repeated on its rows, values the source did not
//! report empty; and a comparison in long form, one line per figure and run.

use super::{Exporter, Options};
use crate::analysis::outcome::Outcome;
use crate::analysis::series;
use crate::record::{Run, Series};
use anyhow::Result;
use std::collections::BTreeSet;

/// Runs as one table, one row per series.
pub struct Csv;

impl Exporter for Csv {
    fn serialize(&self, runs: &[Run], _: &Options) -> Result<String> {
        Ok(render(runs))
    }
}

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

/// A text field as a spreadsheet may open it: one that would start a formula
/// (`=`, `+`, `-`, `@`, a tab or a carriage return first) and is not a
/// number gets a `'` in front (OWASP's CSV injection advice), so that a label
/// `=cmd|' /C calc'!A0` stays text while `-5` stays a number; then quoted
/// when it holds a comma, quote or line break (RFC 4180). Every text cell of
/// every CSV rtlab writes goes through here.
pub fn field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(s);
    let s = if formula {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Whether `s` is a plain decimal number (`-5`, `+1.5e3`), which a spreadsheet
/// reads as a value, not a formula.
fn is_number(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.parse::<f64>().is_ok()
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
        for s in series::all(run) {
            out.push_str(&row(run, s, &metric_names));
        }
    }
    out
}

/// One series of a run as a CSV line.
fn row(run: &Run, s: &Series, metric_names: &BTreeSet<&String>) -> String {
    let m = &s.summary;
    let stat = |name: &str, v: String| {
        if series::reported(run, name) {
            v
        } else {
            String::new()
        }
    };
    let mut cells = vec![
        run.id.map(|i| i.to_string()).unwrap_or_default(),
        field(&run.kind),
        field(&run.label),
        run.status.name().to_string(),
        field(&s.name),
        s.counters.samples.to_string(),
        stat("overruns", s.counters.overruns.to_string()),
        stat("deadline_misses", s.counters.deadline_misses.to_string()),
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

/// The comparisons of an analysis in long form, one line per (comparison,
/// row, arm): raw values (ns for times), the interval, its basis and the
/// change against the baseline.
pub fn comparison(o: &Outcome) -> String {
    let mut out = String::from(
        "comparison,title,row,quantity,run_id,label,value,ci_low,ci_high,basis,change,decided,ratio_to_baseline\n",
    );
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for (n, p) in o.parts.iter().enumerate() {
        let c = &p.comparison;
        for row in &c.rows {
            for (col, cell) in c.columns.iter().zip(&row.cells) {
                let basis = cell
                    .basis
                    .and_then(|b| serde_json::to_value(b).ok())
                    .and_then(|v| v["basis"].as_str().map(str::to_string))
                    .unwrap_or_default();
                let change = serde_json::to_value(cell.change).expect("plain enum");
                let quantity = serde_json::to_value(row.quantity).expect("plain enum");
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{basis},{},{},{}\n",
                    n + 1,
                    field(&p.title),
                    field(&row.name),
                    quantity.as_str().unwrap_or_default(),
                    col.id.map(|i| i.to_string()).unwrap_or_default(),
                    field(&col.label),
                    num(cell.value),
                    num(cell.ci.map(|c| c.0)),
                    num(cell.ci.map(|c| c.1)),
                    change.as_str().unwrap_or_default(),
                    cell.decided,
                    num(cell.ratio),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::two_compared_runs;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::outcome::{analyse, of_runs};

    #[test]
    fn comparison_in_long_form() {
        let o = analyse(of_runs(two_compared_runs(), 0), &[], DEFAULT_NOISE);
        let csv = comparison(&o);
        assert!(
            csv.contains("\n1,latency,min,time,2,b,5000,,,observed,unknown,false,\n"),
            "{csv}"
        );
        assert!(
            csv.contains("\n1,latency,min,time,1,a,10000,,,observed,same,true,\n"),
            "{csv}"
        );
        assert!(
            csv.contains("\n1,latency,p99,time,1,a,,,,unsupported,unknown,false,\n"),
            "{csv}"
        );
    }

    #[test]
    fn formulas_are_neutralised_and_numbers_kept() {
        for (text, cell) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1+1", "'+1+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "\"'\r=1\""),
            ("=1,2", "\"'=1,2\""),
            ("-5", "-5"),
            ("-1.5e3", "-1.5e3"),
            ("+7", "+7"),
            ("-", "'-"),
            ("-inf", "'-inf"),
            ("rt 6.6", "rt 6.6"),
            ("a=b", "a=b"),
        ] {
            assert_eq!(field(text), cell, "{text:?}");
        }
    }

    #[test]
    fn fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
