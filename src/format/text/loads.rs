//! The text of loads: the table of what each load and worker achieved, and the
//! live line of rates while they run.

use super::table::Table;
use crate::record::{LoadRecord, Run, Status};
use std::time::Duration;

/// The view of a load run: what each worker achieved, the counters, the
/// warnings, and why a failed run failed.
pub fn render(run: &Run) -> String {
    let mut s = loads_table(&run.loads);
    s.push_str(&super::perf::of_run(run));
    s.push_str(&super::run::own_warnings(run));
    if run.status == Status::Failed {
        s.push_str("every load worker ended before the run did: see the warnings\n");
    }
    s
}

/// The live line of running loads: seconds so far and each load's ops/s.
pub fn live_line(elapsed: Duration, rates: &[(&str, f64)]) -> String {
    let rates: Vec<String> = rates
        .iter()
        .map(|(kind, rate)| format!("{kind} {} ops/s", num(*rate)))
        .collect();
    format!("{:.0} s  {}", elapsed.as_secs_f64(), rates.join("  "))
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Rates every load has; the one other `_per_s` rate names the kind's op.
const COMMON_RATES: &[&str] = &[
    "ops_per_s",
    "ops_per_s_per_worker",
    "bytes_per_s",
    "mb_per_s",
    "minor_faults_per_s",
    "major_faults_per_s",
    "ctx_switches_per_s",
];

fn op_rate(r: &LoadRecord) -> Option<(&str, f64)> {
    r.achieved.iter().find_map(|(k, v)| {
        (k.ends_with("_per_s") && !COMMON_RATES.contains(&k.as_str()))
            .then(|| (k.as_str(), v.as_f64().unwrap_or(0.0)))
    })
}

/// ", restarts N, errors M" when there were any.
fn survived(r: &LoadRecord) -> String {
    ["restarts", "errors"]
        .iter()
        .filter_map(|k| {
            let n = r.totals.get(*k).copied().unwrap_or(0);
            (n > 0).then(|| format!(", {k} {n}"))
        })
        .collect()
}

fn achieved(r: &LoadRecord, key: &str) -> f64 {
    r.achieved.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0)
}

/// The table of loads and what each worker achieved.
pub fn loads_table(loads: &[LoadRecord]) -> String {
    if loads.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        "load", "worker", "pid", "ops/s", "MB/s", "CPU %", "minflt/s", "RSS MiB", "end",
    ]);
    for r in loads {
        for w in &r.per_worker {
            t.row(vec![
                format!("{} ({})", r.spec, r.kind),
                w.index.to_string(),
                w.pid.to_string(),
                num(w.ops_per_s),
                String::new(),
                num(w.cpu_pct),
                num(w.minor_faults_per_s),
                format!("{:.1}", w.max_rss_kib as f64 / 1024.0),
                w.end.clone(),
            ]);
        }
        t.row(vec![
            format!("{} ({})", r.spec, r.kind),
            "all".into(),
            String::new(),
            num(achieved(r, "ops_per_s")),
            num(achieved(r, "mb_per_s")),
            num(achieved(r, "cpu_pct_per_worker") * r.workers as f64),
            num(achieved(r, "minor_faults_per_s")),
            String::new(),
            op_rate(r)
                .map(|(k, v)| format!("{k} = {}{}", num(v), survived(r)))
                .unwrap_or_default(),
        ]);
    }
    let first = &loads[0];
    format!(
        "{}loads started in {:.0} ms, stopped in {:.0} ms; rates over {:.2} s\n",
        t.render(),
        first.start_ms,
        first.stop_ms,
        first.elapsed_ns as f64 / 1e9
    )
}
