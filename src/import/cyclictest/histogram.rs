//! cyclictest's `-h N`/`-H N` histogram text (with or without `-q`, the status
//! lines are skipped), and rtlab's `--histfile`, which has the same layout.

use super::{check, fill, line_of, Column};
use crate::format::histfile::{self, ParseError};
use crate::import::{unknown_system, Skeleton, Source};
use crate::record::{Run, Warning};
use serde_json::json;

/// Whether the text is `-H` output: its histogram lines carry one count more
/// (the total over all threads) than there are threads in `# Min Latencies`.
fn is_histofall(text: &str) -> bool {
    let counts = text
        .lines()
        .skip_while(|l| l.trim_end() != "# Histogram")
        .skip(1)
        .find(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        })
        .map(|l| l.split_whitespace().count().saturating_sub(1));
    let threads = text
        .lines()
        .find_map(|l| l.strip_prefix("# Min Latencies:"))
        .map(|v| v.split_whitespace().count());
    matches!((counts, threads), (Some(c), Some(t)) if c == t + 1)
}

/// Parses `cyclictest -h N` / `-H N` output (or an rtlab `--histfile`), whose
/// dense columns may hold at most `max_cells` buckets in all.
pub fn from_histogram_text(text: &str, src: &Source, max_cells: usize) -> Result<Run, ParseError> {
    let histofall = is_histofall(text);
    let parsed = histfile::parse(text, histofall, max_cells)?;
    let last = text.lines().count().max(1);
    if !text
        .lines()
        .any(|l| l.starts_with("# Histogram Overflows:"))
    {
        return Err(ParseError {
            line: last,
            message: "the file ends before cyclictest's summary ('# Total:' to '# Histogram Overflows:'): it is incomplete".into(),
        });
    }
    if let Some(n) = text.lines().position(|l| l.starts_with("# Total:")) {
        let totals = text.lines().nth(n).unwrap_or("")["# Total:".len()..]
            .split_whitespace()
            .map(|w| w.parse::<u64>().ok());
        for (t, (total, col)) in totals.zip(&parsed).enumerate() {
            let Some(sum) = col.buckets.iter().try_fold(0u64, |a, &b| a.checked_add(b)) else {
                return Err(ParseError {
                    line: n + 1,
                    message: format!("thread {t}: its histogram lines add up to more than 64 bits can count: they cannot come from a measurement"),
                });
            };
            if total != Some(sum) {
                return Err(ParseError {
                    line: n + 1,
                    message: format!(
                        "'# Total:' gives {} for thread {t} but its histogram lines add up to {sum}",
                        total.map(|v| v.to_string()).unwrap_or("no number".into())
                    ),
                });
            }
        }
    }
    let cols: Vec<Column> = parsed
        .into_iter()
        .enumerate()
        .map(|(i, c)| Column {
            thread: Some(i),
            cpu: None,
            cycles: 0,
            buckets: Some(c.buckets),
            overflows: c.overflows,
            overflow_cycles: c.overflow_cycles,
            min: c.min_us,
            avg: c.avg_us as f64,
            max: c.max_us,
            ..Column::default()
        })
        .collect();
    let range = cols[0].buckets.as_ref().map_or(0, Vec::len);
    let summary_line = line_of(text, "# Min Latencies");
    check(&cols, |_| summary_line)?;
    let params = json!({
        "source": "cyclictest",
        "source_format": if histofall { "histogram -H" } else { "histogram -h" },
        "file": src.name,
        "histogram_max_us": range,
    });
    let warnings = vec![
        unknown_system(),
        Warning::new(
            "duration_unknown",
            "cyclictest's histogram does not record when or how long it ran: the times are the file's modification time and the duration is 0",
        ),
    ];
    let skel = Skeleton::of_file("latency", src, 0, params, warnings);
    fill(skel, &cols, line_of(text, "# Histogram"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Source {
        crate::import::test_source("c.json")
    }

    #[test]
    fn min_avg_max_out_of_order_are_refused() {
        let text = "# Histogram\n000001 000002\n# Total: 000000002\n# Min Latencies: 00009\n# Avg Latencies: 00001\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n";
        let e = from_histogram_text(text, &src(), 1 << 20).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("not in order"), "{}", e.message);
    }
}
