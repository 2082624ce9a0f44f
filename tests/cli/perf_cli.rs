//! End-to-end tests of `rtlab perf -- CMD` and of `--perf` on the steps:
//! counts a program is known to cause, counters the machine lacks, exit codes
//! and the `--` that ends rtlab's own options.

use crate::common::{expect, json, rtlab, shown};
use serde_json::Value;

/// The counter `event` of a run document's total.
fn counter<'a>(doc: &'a Value, event: &str) -> &'a Value {
    doc["perf"]["total"]
        .as_array()
        .unwrap_or_else(|| panic!("no counters in {doc}"))
        .iter()
        .find(|c| c["event"] == event)
        .unwrap_or_else(|| panic!("no {event} in {doc}"))
}

fn value(doc: &Value, event: &str) -> u64 {
    counter(doc, event)["value"]
        .as_u64()
        .unwrap_or_else(|| panic!("{event} has no value: {}", doc["perf"]))
}

#[test]
fn touched_pages_are_counted_as_minor_faults() {
    // Eight strings of 1 MiB, each in its own fresh mapping (too small for a
    // huge page): at least 8 × 256 pages written for the first time.
    let doc = json(
        rtlab().args([
            "perf",
            "--json",
            "--no-save",
            "--",
            "perl",
            "-e",
            "my @a; push @a, 'x' x (1 << 20) for 1 .. 8; print STDERR length(join '', @a), qq(\\n)",
        ]),
        &[0],
    );
    assert_eq!(doc["kind"], "perf");
    assert_eq!(doc["perf"]["scope"], "command");
    let minor = value(&doc, "minor-faults");
    assert!(minor >= 8 * 256, "{minor} minor faults");
    assert!(value(&doc, "page-faults") >= minor);
    assert!(value(&doc, "task-clock") > 0);
}

#[test]
fn every_counter_has_a_value_or_a_reason_never_both() {
    const SLEEPS: [&str; 3] = ["sh", "-c", "sleep 0.01; sleep 0.01; sleep 0.01"];
    let perf = |opts: &[&str]| {
        let mut c = rtlab();
        c.arg("perf")
            .args(opts)
            .args(["--no-save", "--"])
            .args(SLEEPS);
        c
    };
    let out = expect(&mut perf(&[]), &[0]);
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        text.contains("Performance counter stats for 'sh -c sleep 0.01; sleep 0.01; sleep 0.01':"),
        "{}",
        shown(&out)
    );
    let doc = json(&mut perf(&["--json"]), &[0]);
    // Each sleep waits: the shell and its three children switch away at
    // least once each.
    assert!(value(&doc, "context-switches") >= 3, "{}", doc["perf"]);
    assert!(value(&doc, "voluntary-switches") >= 3, "{}", doc["perf"]);
    for c in doc["perf"]["total"].as_array().unwrap() {
        let (v, not) = (&c["value"], &c["not"]);
        assert!(v.is_u64() != not.is_string(), "{c}");
        if let Some(why) = not.as_str() {
            // As perf stat shows it, in place of a number.
            let line = format!("<{why}>      {}", c["event"].as_str().unwrap());
            assert!(text.contains(&line), "{line} in\n{text}");
        }
    }
    let cycles = counter(&doc, "cycles");
    assert!(cycles["value"].as_u64() != Some(0) || cycles["not"].is_null());
}

#[test]
fn the_exit_code_is_the_commands() {
    for (script, code) in [("exit 0", 0), ("exit 7", 7), ("kill -9 $$", 137)] {
        let out = expect(
            rtlab().args(["perf", "--no-save", "--", "sh", "-c", script]),
            &[code],
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("seconds time elapsed"),
            "{}",
            shown(&out)
        );
    }
    let out = expect(
        rtlab().args(["perf", "--no-save", "--", "/no/such/program"]),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run '/no/such/program'"));
}

#[test]
fn everything_after_the_double_dash_is_the_command() {
    // rtlab's own --json before --, the command's after it.
    let out = expect(
        rtlab().args(["perf", "--no-save", "--", "echo", "--json", "--label", "x"]),
        &[0],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "--json --label x\n");
    // Without --, there is no command.
    let out = expect(rtlab().args(["perf", "--no-save", "echo", "hi"]), &[2]);
    assert!(out.stdout.is_empty(), "{}", shown(&out));
    expect(rtlab().args(["perf", "--no-save"]), &[2]);
}

#[test]
fn stored_counters_are_compared_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    for label in ["one", "two"] {
        expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["perf", "--label", label, "--", "true"]),
            &[0],
        );
    }
    let out = expect(
        rtlab().arg("--db").arg(&db).args(["compare", "1", "2"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("perf.page-faults"))
        .unwrap_or_else(|| panic!("{text}"));
    // Counters have no better or worse: two values, no ratio.
    assert_eq!(row.split_whitespace().count(), 3, "{row}");
    assert!(text.lines().any(|l| l.starts_with("perf.context-switches")));
    for cmd in [&["results", "show", "2"][..], &["report", "2"]] {
        let out = expect(rtlab().arg("--db").arg(&db).args(cmd), &[0]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(" Performance counter stats for 'true':"),
            "{cmd:?}: {text}"
        );
    }
}

#[test]
fn a_bench_and_a_load_record_their_processes_counters() {
    let doc = json(
        rtlab().args([
            "bench",
            "cpu",
            "--time",
            "200ms",
            "--perf",
            "--json",
            "--no-save",
        ]),
        &[0],
    );
    assert_eq!(doc["perf"]["scope"], "process");
    assert!(value(&doc, "task-clock") > 0);
    let doc = json(
        rtlab().args([
            "load",
            "cpu",
            "-D",
            "300ms",
            "--perf",
            "--json",
            "--no-save",
        ]),
        &[0],
    );
    assert_eq!(doc["perf"]["scope"], "process");
    // The worker's CPU time joined the total when it ended: the counters hold
    // at least what the kernel accounted to it.
    let worker_ns = doc["loads"][0]["totals"]["cpu_ns"].as_u64().unwrap();
    let counted = value(&doc, "task-clock");
    assert!(
        counted as f64 >= 0.8 * worker_ns as f64,
        "{counted} vs {worker_ns}"
    );
}
