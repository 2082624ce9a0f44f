//! The monitor's series: one line per window (or hourly or daily row), as a
//! table, JSON, or the long-term plot (maximum per window over time).

use super::table::Table;
use crate::store::{Level, Window};
use crate::units::TimeUnit;
use anyhow::Result;
use rtlab_engine::stats::trace::TracePoint;
use serde_json::{json, Value};

/// A Unix-ns time as RFC 3339 UTC to the millisecond.
pub fn time(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The series as a table, oldest first.
pub fn table(rows: &[Window], unit: TimeUnit) -> String {
    if rows.is_empty() {
        return "no monitor windows match (run rtlab monitor first, or widen --since/--cpu)\n"
            .to_string();
    }
    let mut t = Table::new(&[
        "start", "end", "level", "host", "cpu", "samples", "p99", "max", "max at", "overruns",
        "misses",
    ]);
    for c in 0..4 {
        t.align_left(c);
    }
    let at = |ns: i64| time(ns).get(11..23).unwrap_or_default().to_string();
    for w in rows {
        let level = match (w.level, w.partial) {
            (Level::Window, true) => "partial".to_string(),
            (Level::Window, false) => "window".to_string(),
            (l, _) => format!("{} ({})", l.name(), w.windows),
        };
        t.row(vec![
            time(w.start_ns)
                .get(..19)
                .unwrap_or_default()
                .replace('T', " "),
            at(w.end_ns),
            level,
            w.host.clone(),
            w.cpu.to_string(),
            w.samples.to_string(),
            unit.cell(w.p99_ns as f64),
            unit.cell(w.max_ns as f64),
            at(w.max_at_ns),
            w.overruns.to_string(),
            w.misses.to_string(),
        ]);
    }
    let worst = rows
        .iter()
        .max_by_key(|w| w.max_ns)
        .map(|w| w.max_ns)
        .unwrap_or(0);
    format!(
        "{}\n{} rows, worst maximum {} {}\n",
        t.render(),
        rows.len(),
        unit.cell(worst as f64),
        unit.symbol()
    )
}

/// The series as JSON: an array of rows, histograms included.
pub fn json(rows: &[Window]) -> Value {
    Value::Array(
        rows.iter()
            .map(|w| {
                json!({
                    "level": w.level.name(), "session": w.session, "host": w.host,
                    "kernel": w.kernel, "cpu": w.cpu, "start": time(w.start_ns),
                    "end": time(w.end_ns), "start_ns": w.start_ns, "end_ns": w.end_ns,
                    "partial": w.partial, "windows": w.windows, "samples": w.samples,
                    "overruns": w.overruns, "misses": w.misses, "min_ns": w.min_ns,
                    "p50_ns": w.p50_ns, "p99_ns": w.p99_ns, "p999_ns": w.p999_ns,
                    "max_ns": w.max_ns, "max_at": time(w.max_at_ns), "histogram": w.hist,
                })
            })
            .collect(),
    )
}

/// The long-term plot: each row's maximum at its time, one colour per host
/// and CPU; None when there are no rows.
pub fn plot(rows: &[Window]) -> Result<Option<String>> {
    let Some(t0) = rows.iter().map(|w| w.start_ns).min() else {
        return Ok(None);
    };
    let mut series: Vec<(String, Vec<TracePoint>)> = Vec::new();
    for w in rows {
        let name = format!("{} cpu{}", w.host, w.cpu);
        let point = TracePoint {
            first_sample: 0,
            offset_ns: (w.max_at_ns.max(w.start_ns) - t0) as u64,
            max_ns: w.max_ns as u64,
        };
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(point),
            None => series.push((name, vec![point])),
        }
    }
    let refs: Vec<(String, &[TracePoint])> = series
        .iter()
        .map(|(n, p)| (n.clone(), p.as_slice()))
        .collect();
    let title = format!("maximum latency per window since {}", time(t0));
    crate::format::svg::over_time(&title, "latency", &refs)
}
