//! `rtlab compare` of two noise, ipc or periodic runs: each kind's own figures
//! side by side (noise ppm and largest gap, ipc latency per mechanism,
//! periodic achieved frequency and jitter, a sweep's best frequency per method
//! and load), the performance counters, and lines of at most 100 columns.

use crate::common::{expect, rtlab, shown};

/// Runs `probe args` twice into a new store and returns `rtlab compare 1 2`.
fn compared(probe: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    for label in ["one", "two"] {
        expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args([probe, "--policy", "other", "--perf", "-q", "--label", label])
                .args(args),
            &[0],
        );
    }
    let out = expect(
        rtlab().arg("--db").arg(&db).args(["compare", "1", "2"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("one #1 (baseline)") && l.contains("two #2")),
        "{}",
        shown(&out)
    );
    text
}

/// The row `name` of a comparison: its cells after the name.
fn cells<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name}\n{text}"));
    line.split_whitespace().skip(1).collect()
}

/// Both runs have a number in the row (the second may carry its ratio).
fn both_numbers(text: &str, name: &str) {
    let c = cells(text, name);
    assert!(c.len() >= 2, "{name}: {c:?}");
    for v in [c[0], c[1]] {
        v.trim_end_matches('*')
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{name}: {c:?}"));
    }
}

#[test]
fn two_noise_runs_side_by_side() {
    let text = compared("noise", &["-D", "150ms", "-a", "0"]);
    for row in [
        "noise_ppm",
        "noise_max_gap_ns",
        "noise_gaps_per_s",
        "perf.task-clock",
    ] {
        both_numbers(&text, row);
    }
}

#[test]
fn two_ipc_runs_side_by_side_per_mechanism() {
    let text = compared("ipc", &["--mechanism", "all", "-l", "20", "-i", "200us"]);
    for m in [
        "mqueue", "mutex", "condvar", "signal", "sem", "pipe", "eventfd", "futex",
    ] {
        for k in ["latency_p50_ns", "latency_max_ns", "round_trip_mean_ns"] {
            both_numbers(&text, &format!("{m}/0.{k}"));
        }
    }
    both_numbers(&text, "perf.context-switches");
}

#[test]
fn two_periodic_runs_and_two_sweeps_side_by_side() {
    let text = compared("periodic", &["-f", "1kHz", "-D", "200ms"]);
    for row in [
        "achieved_hz",
        "period_max_ns",
        "period_mean_ns",
        "perf.task-clock",
    ] {
        both_numbers(&text, row);
    }
    let text = compared(
        "periodic",
        &["--sweep", "1kHz..4kHz", "-D", "1s", "--method", "sleep"],
    );
    both_numbers(&text, "best_hz.sleep.idle");
    both_numbers(&text, "perf.task-clock");
    // A counter the machine lacks is no number in either run: never a 0.
    let c = cells(&text, "perf.cycles");
    let number = |v: &str| v.trim_end_matches('*').parse::<f64>().is_ok();
    assert!(
        (c[0] == "–" && c[1] == "–") || (number(c[0]) && number(c[1])),
        "{c:?}"
    );
}
