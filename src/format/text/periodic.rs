//! The text of a periodic run: one frequency's periods, or a sweep's table of
//! the highest frequency each method held under each load.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::sweep::Sweep;
use crate::record::Run;
use crate::units::{Human, TimeUnit};

/// A frequency in words (`50 kHz`, `1.25 MHz`).
pub fn hz(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} MHz", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.3} kHz", v / 1e3)
    } else {
        format!("{v:.1} Hz")
    }
}

/// The table of a sweep: methods down, loads across, the highest frequency held.
pub fn sweep_table(s: &Sweep) -> String {
    let mut loads: Vec<&str> = Vec::new();
    let mut methods: Vec<&str> = Vec::new();
    for c in &s.curves {
        if !loads.contains(&c.load.as_str()) {
            loads.push(&c.load);
        }
        if !methods.contains(&c.method.as_str()) {
            methods.push(&c.method);
        }
    }
    let head: Vec<&str> = std::iter::once("method")
        .chain(loads.iter().copied())
        .collect();
    let mut t = Table::new(&head);
    for m in &methods {
        let mut row = vec![m.to_string()];
        for l in &loads {
            let cell = s
                .curves
                .iter()
                .find(|c| c.method == *m && c.load == *l)
                .map(|c| {
                    if c.points.is_empty() {
                        return "not measured".to_string();
                    }
                    let best = c.best_hz.map_or(format!("< {}", hz(s.lo_hz)), hz);
                    if c.truncated {
                        format!("{best} (cut)")
                    } else {
                        best
                    }
                })
                .unwrap_or_default();
            row.push(cell);
        }
        t.row(row);
    }
    t.render()
}

/// The text report of a periodic run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0);
    let mut out = format!(
        "rtlab periodic  {}  [{}]\n",
        printable(&run.label),
        run.status.name()
    );
    if let Some(s) = &run.sweep {
        out.push_str(&format!(
            "sweep {}..{}: highest frequency whose achieved frequency and every period stayed within {:.0}% of nominal\n\n",
            hz(s.lo_hz),
            hz(s.hi_hz),
            s.tolerance * 100.0
        ));
        out.push_str(&sweep_table(s));
        let points: usize = s.curves.iter().map(|c| c.points.len()).sum();
        out.push_str(&format!(
            "({points} points in {})\n",
            Human(run.duration_ns)
        ));
    } else {
        out.push_str(&format!(
            "requested {}, achieved {}: {} toggles, {} missed periods, {} periods out of tolerance; period min {} mean {} max {}\n",
            hz(m("requested_hz")),
            hz(m("achieved_hz")),
            m("toggles"),
            m("missed_periods"),
            m("out_of_tolerance"),
            Human(m("period_min_ns") as u64),
            Human(m("period_mean_ns") as u64),
            Human(m("period_max_ns") as u64),
        ));
        out.push_str(if m("held") > 0.0 {
            "held: yes\n"
        } else {
            "held: no\n"
        });
    }
    if let Some(n) = run.metrics.get("dl_overruns") {
        out.push_str(&format!(
            "SCHED_DEADLINE runtime overruns signalled by the kernel: {n}\n"
        ));
    }
    if !run.series.is_empty() {
        out.push('\n');
        let cols = [
            Col::Count("periods"),
            Col::Min,
            Col::Mean,
            Col::P50,
            Col::P99,
            Col::Max,
            Col::Misses,
        ];
        out.push_str(&series::table(
            run.series.iter(),
            "jitter |period − nominal|",
            &cols,
            unit,
        ));
        out.push_str(&format!(
            "(times in {}; misses: periods out of tolerance)\n",
            unit.symbol()
        ));
    }
    out.push_str(&super::perf::of_run(run));
    if !run.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &run.warnings {
            out.push_str(&format!("  ! {}: {}\n", w.code, w.message));
        }
    }
    out
}
