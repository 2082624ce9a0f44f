//! The text of a periodic run: one frequency's periods, or a sweep's table of
//! the highest frequency each method held under each load.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::sweep::Sweep;
use crate::record::Run;
use crate::units::{hz, Human, TimeUnit};

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
                    let mut best = c.best_hz.map_or(format!("< {}", hz(s.lo_hz)), hz);
                    let at_best = c.tallies().into_iter().find(|t| Some(t.hz) == c.best_hz);
                    if let Some(t) = at_best.filter(|t| t.split()) {
                        best.push_str(&format!(" (held {} of {})", t.held, t.of));
                    }
                    best.push_str(c.cut());
                    best
                })
                .unwrap_or_default();
            row.push(cell);
        }
        t.row(row);
    }
    let mut out = t.render();
    out.push_str(&agreement(s));
    out
}

/// How far the repeated measurements of each frequency agreed ("" for a
/// sweep that measured each frequency once).
pub fn agreement(s: &Sweep) -> String {
    let Some(n) = s.curves.iter().map(|c| c.repeats).max().filter(|&n| n > 1) else {
        return String::new();
    };
    let mut split = Vec::new();
    for c in &s.curves {
        let at: Vec<String> = c
            .tallies()
            .iter()
            .filter(|t| t.split())
            .map(|t| format!("{} held {} of {}", hz(t.hz), t.held, t.of))
            .collect();
        if !at.is_empty() {
            split.push(format!("  {}, {}: {}\n", c.method, c.load, at.join(", ")));
        }
    }
    let head = format!(
        "each frequency measured until {} of {n} measurements agreed",
        n / 2 + 1
    );
    if split.is_empty() {
        format!("{head}; every frequency's measurements agreed\n")
    } else {
        format!("{head}; they disagreed at:\n{}", split.concat())
    }
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
        let freqs: usize = s.curves.iter().map(|c| c.tallies().len()).sum();
        out.push_str(&format!(
            "({points} measurements of {freqs} frequencies in {})\n",
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
    out.push_str(&super::run::own_warnings(run));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::sweep::Point;

    fn curve(
        method: &str,
        held: &[(f64, bool)],
        best_hz: Option<f64>,
    ) -> crate::record::sweep::Curve {
        crate::record::sweep::Curve {
            method: method.into(),
            load: "idle".into(),
            best_hz,
            truncated: false,
            out_of_time: false,
            repeats: 3,
            points: held
                .iter()
                .map(|&(hz, held)| Point {
                    requested_hz: hz,
                    achieved_hz: hz,
                    worst_deviation: 0.0,
                    missed: 0,
                    held,
                })
                .collect(),
        }
    }

    #[test]
    fn the_table_says_how_far_repeats_agree_and_where_a_sweep_was_cut() {
        // sleep: 1 kHz twice, 2 kHz held 2 of 3 (the best), 4 kHz failed
        // twice; busy: clean, then --duration ran out.
        let sleep = curve(
            "sleep",
            &[
                (1e3, true),
                (1e3, true),
                (2e3, false),
                (2e3, true),
                (2e3, true),
                (4e3, false),
                (4e3, false),
            ],
            Some(2e3),
        );
        let mut busy = curve("busy", &[(1e3, true), (1e3, true)], Some(1e3));
        busy.truncated = true;
        busy.out_of_time = true;
        let s = Sweep {
            lo_hz: 1e3,
            hi_hz: 1e4,
            tolerance: 0.1,
            curves: vec![sleep, busy],
        };
        let text = sweep_table(&s);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("2.000 kHz (held 2 of 3)"), "{text}");
        assert!(
            lines[2].contains("1.000 kHz (cut short by --duration)"),
            "{text}"
        );
        assert_eq!(
            lines[3..],
            [
                "each frequency measured until 2 of 3 measurements agreed; they disagreed at:",
                "  sleep, idle: 2.000 kHz held 2 of 3"
            ]
        );
        let mut stopped = s.curves[1].clone();
        stopped.out_of_time = false;
        assert_eq!(stopped.cut(), " (stopped)");
        // A sweep of an older rtlab measured each frequency once.
        let mut old = s.clone();
        for c in &mut old.curves {
            c.repeats = 1;
        }
        assert_eq!(agreement(&old), "");
    }
}
