//! `rtlab compare` of imported runs that do not have every figure: a cyclictest
//! summary has no percentiles or stddev, cyclictest counts no overruns, a
//! benchmark has no period. What a run does not have, and a percentile too few
//! samples support, is shown as `–` in every format (an empty field in CSV)
//! and never called better or worse; figures without intervals (imported runs
//! keep no time windows) are shown side by side and never judged; the header
//! stays within 100 columns.

use crate::common::{expect, json, rtlab};
use crate::compare_common::{changes, row};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

/// `rtlab --db <dir>/r.db ARGS`, checked to exit 0; its stdout.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = expect(rtlab().arg("--db").arg(dir.join("r.db")).args(args), &[0]);
    String::from_utf8(out.stdout).unwrap()
}

/// Imports `file` (a fixture, or a file of `dir`) under `label`.
fn import(dir: &Path, file: &str, label: &str) {
    let path: PathBuf = if dir.join(file).exists() {
        dir.join(file)
    } else {
        Path::new(FIXTURES).join(file)
    };
    run(
        dir,
        &[
            "results",
            "import",
            path.to_str().unwrap(),
            "--label",
            label,
        ],
    );
}

/// `-v` lines of one thread with these latencies (µs).
fn verbose(values: &[u64]) -> String {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:>8}:{i:>8}:{v:>8}\n", 0))
        .collect()
}

/// A store with a cyclictest summary (#1), `-v` samples (#2) and a sysbench
/// report (#3).
fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    import(dir.path(), "cyclictest-summary.txt", "summary");
    import(dir.path(), "cyclictest-verbose.txt", "verbose");
    import(dir.path(), "sysbench-1.0-cpu.txt", "sysbench");
    dir
}

/// The cells of the text table's row `name` (its label split off).
fn cells<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no row {name} in\n{text}"));
    line[name.len()..]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// Whether a text cell calls its run better or worse than the baseline, or
/// the same.
fn judged(cell: &str) -> bool {
    cell.contains("better") || cell.contains("worse") || cell.contains('≈')
}

#[test]
fn figures_a_run_does_not_have_are_dashes_and_never_judged() {
    let dir = store();
    let text = run(dir.path(), &["compare", "summary", "verbose"]);
    for name in ["p50 (us)", "p99 (us)", "stddev (us)", "p95-mean (us)"] {
        let c = cells(&text, name);
        assert_eq!(c[0], "–", "{name}\n{text}");
        assert!(!judged(c[1]), "one value is no change: {text}");
    }
    // Known to neither: cyclictest counts no overruns or deadline misses.
    assert!(!text.contains("\noverruns "), "{text}");
    assert!(text.contains("–: the run does not have it"), "{text}");
    // Figures both have, without intervals (imported runs keep no time
    // windows): shown side by side, never called better or worse.
    let min = cells(&text, "min (us)");
    assert_eq!(min.len(), 2, "{text}");
    assert!(!judged(min[1]), "{text}");
    assert!(text.contains("no change can be told"), "{text}");

    let doc = json(
        rtlab()
            .arg("--db")
            .arg(dir.path().join("r.db"))
            .args(["compare", "summary", "verbose", "--json"]),
        &[0],
    );
    let p99 = &row(&doc, "p99")["cells"][0];
    assert!(p99["value"].is_null() && p99["ci"].is_null(), "{p99}");
    assert_eq!(changes(row(&doc, "min")), ["same", "unknown"]);

    let csv = run(dir.path(), &["compare", "summary", "verbose", "--csv"]);
    assert!(
        csv.contains("\n1,latency,p99,time,1,summary,,,,,unknown,false,\n"),
        "{csv}"
    );
    let md = run(dir.path(), &["compare", "summary", "verbose", "--markdown"]);
    let p99 = md.lines().find(|l| l.starts_with("| p99 (us) |")).unwrap();
    assert!(p99.starts_with("| p99 (us) | – |"), "{md}");
    assert!(!md.contains("**–**"), "{md}");
}

#[test]
fn a_benchmark_has_no_overruns_and_times_asked_for_no_direction() {
    let dir = store();
    import(dir.path(), "sysbench-0.4-cpu.txt", "old-sysbench");
    let text = run(dir.path(), &["compare", "sysbench", "old-sysbench"]);
    assert!(!text.contains("\noverruns "), "{text}");
    for name in [
        "total_time_s",
        "latency_sum_s",
        "total_events",
        "events_per_s",
    ] {
        assert!(
            cells(&text, name).iter().all(|c| !judged(c)),
            "{name}: {text}"
        );
    }
    let doc = json(
        rtlab().arg("--db").arg(dir.path().join("r.db")).args([
            "compare",
            "sysbench",
            "old-sysbench",
            "--json",
        ]),
        &[0],
    );
    assert_eq!(row(&doc, "total_time_s")["better"], "neither");
    assert_eq!(row(&doc, "events_per_s")["better"], "higher");
}

/// p95 − mean needs the 200 samples a 95th percentile needs: of 20 values it
/// is no value, and the legend says why; never a 0 or the maximum.
#[test]
fn a_spread_too_few_samples_support_is_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    // p95 10 µs, mean 59.5 µs (one value of 1000 µs).
    let mut tail = vec![10; 19];
    tail.push(1000);
    std::fs::write(dir.path().join("tail.txt"), verbose(&tail)).unwrap();
    std::fs::write(dir.path().join("a.txt"), verbose(&[10, 10, 10, 20])).unwrap();
    for (f, l) in [("tail.txt", "tail"), ("a.txt", "a")] {
        import(dir.path(), f, l);
    }
    let doc = json(
        rtlab()
            .arg("--db")
            .arg(dir.path().join("r.db"))
            .args(["compare", "tail", "a", "--json"]),
        &[0],
    );
    let spread = &row(&doc, "p95-mean")["cells"][0];
    assert!(spread["value"].is_null(), "{spread}");
    assert_eq!(
        (&spread["basis"], &spread["needed"], &spread["have"]),
        (&"unsupported".into(), &200.into(), &20.into()),
        "{spread}"
    );
    let text = run(dir.path(), &["compare", "tail", "a"]);
    assert!(
        text.contains(
            "p95-mean –: not supported by the sample count (needs 200 samples, has 4–20)"
        ),
        "{text}"
    );
}

#[test]
fn long_labels_keep_the_header_within_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let labels = [
        "6.1.0-56-rt-amd64 PREEMPT_RT isolcpus=2-3 nohz_full=2-3",
        "6.1.0-56-amd64 PREEMPT_DYNAMIC(voluntary) stock",
        "6.1.0-56-amd64 PREEMPT_DYNAMIC(full) tuned irqaffinity=0",
    ];
    for (f, l) in [
        ("cyclictest-summary.txt", labels[0]),
        ("cyclictest-verbose.txt", labels[1]),
        ("cyclictest-live-tty.txt", labels[2]),
    ] {
        import(dir.path(), f, l);
    }
    let text = run(dir.path(), &["compare", "1", "2", "3"]);
    assert!(
        text.lines().all(|l| l.chars().count() <= 100),
        "a line is wider than 100 columns:\n{text}"
    );
    // The legend names the runs; the table is headed by their keys.
    assert!(text.starts_with("runs:\n"), "{text}");
    assert!(
        text.contains(&format!("\n  #1  {} (baseline)\n", labels[0])),
        "{text}"
    );
    assert!(text.contains(&format!("\n  #3  {}\n", labels[2])), "{text}");
    let header = text
        .lines()
        .find(|l| l.contains("#1") && l.contains("#3"))
        .unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["#1", "(baseline)", "#2", "#3"]
    );
}
