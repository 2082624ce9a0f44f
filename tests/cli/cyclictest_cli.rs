//! `rtlab cyclictest`: cyclictest's command lines run as pasted, print
//! cyclictest's layout line by line, store their runs, write a `--json` that
//! imports back as the run it came from, and refuse what cannot be honoured by
//! naming the option; `rtlab latency` takes the same short forms.

use crate::common::{expect, rtlab, shown};
use crate::cyclictest_layout::{check_layout, kind};
use serde_json::Value;
use std::path::Path;

/// The two lines of the field reports, with a short loop count.
const FIELD_LINES: [&str; 2] = [
    "-l1000 -m -n -a0 -t1 -p99 -i400 -h1000 -q",
    "-p 30 -t -n -l 1000 -H 1000 --histfile HIST",
];

fn words(line: &str, dir: &Path) -> Vec<String> {
    line.split_whitespace()
        .map(|w| {
            if w == "HIST" {
                dir.join("hist").display().to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn show_json(db: &Path, id: u32) -> Value {
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(db)
            .args(["results", "show", &id.to_string(), "--json"]),
        &[0],
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn the_field_reports_lines_run_as_pasted_in_cyclictests_layout_and_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (n, line) in FIELD_LINES.iter().enumerate() {
        let out = expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .arg("cyclictest")
                .args(words(line, dir.path())),
            &[0],
        );
        let stdout = text(&out);
        check_layout(&stdout);
        let kinds: Vec<String> = stdout.lines().filter_map(kind).collect();
        assert_eq!(kinds[0], "dma", "{stdout}");
        let run = show_json(&db, n as u32 + 1);
        assert_eq!(run["kind"], "latency");
        let cmd: Vec<&str> = run["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(cmd.contains(&"cyclictest"), "{cmd:?}");
        assert!(cmd.contains(&"-l1000") || cmd.contains(&"1000"));
        for s in run["series"].as_array().unwrap() {
            assert_eq!(
                s["counters"]["samples"], 1000,
                "every thread makes its loops"
            );
        }
        if n == 0 {
            // -h with -q: the histogram alone, one bucket line per µs.
            assert!(!kinds.iter().any(|k| k == "status"), "{stdout}");
            assert_eq!(kinds.iter().filter(|k| *k == "bucket×1").count(), 1000);
            assert_eq!(run["params"]["priority"], 99);
            assert_eq!(run["series"][0]["cpu"], 0);
        } else {
            // Not quiet, not a terminal: the last frame, the histogram in its file.
            assert_eq!(kinds[1], "policy", "{stdout}");
            let threads = run["series"].as_array().unwrap().len();
            assert_eq!(kinds.iter().filter(|k| *k == "status").count(), threads);
            let hist = std::fs::read_to_string(dir.path().join("hist")).unwrap();
            check_layout(&hist);
            let column = if threads > 1 { threads + 1 } else { threads };
            let buckets = hist
                .lines()
                .filter(|l| kind(l) == Some(format!("bucket×{column}")));
            assert_eq!(
                buckets.count(),
                1000,
                "-H: a column per thread and one of all"
            );
        }
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn the_field_reports_lines_run_as_pasted_after_rtlab_latency() {
    let dir = tempfile::tempdir().unwrap();
    for line in FIELD_LINES {
        let out = expect(
            rtlab()
                .arg("latency")
                .args(words(line, dir.path()))
                .arg("--no-save"),
            &[0],
        );
        let stdout = text(&out);
        assert!(stdout.starts_with("rtlab latency "), "{}", shown(&out));
        assert!(stdout.contains("samples"), "rtlab's own table: {stdout}");
    }
    let hist = std::fs::read_to_string(dir.path().join("hist")).unwrap();
    check_layout(&hist);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn every_output_of_cyclictest_is_in_its_layout() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        "-l 100 -q -t 2 -p 80 -i 500",
        "-l 100 -t 2 -p 80",
        "-l 50 -q -N -p 80",
        "-l 20 -v -a 0 -t 2 -p 80",
        "-l 20 -v -o 5 -p 80",
        "-l 100 -q -b 1 -p 80",
        "-l 100 -q --spike=1 --spike-nodes=3 -p 80 -t 2",
        "-l 100 -q -S -p 80 -d 0",
        "-l 100 -q -p 80 --priospread -t 2 -H 30",
        "-l 100 -q -p 80 -r -h 30",
        "-l 100 -q -p 80 -s",
        "-l 100 -q -p 80 -x -A 100 -t 2",
        "-l 100 -q -p 80 --policy=rr -c 1 --laptop",
        "-D 1 -q -p 80 -i 10000 --secaligned -R",
    ];
    for line in lines {
        let out = expect(
            rtlab()
                .args(["cyclictest", "--no-store"])
                .args(words(line, dir.path())),
            &[0],
        );
        check_layout(&text(&out));
    }
}

#[test]
fn the_default_sched_other_runs_unprivileged_with_one_note() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = expect(
        rtlab()
            .env("RTLAB_NO_STORE", "1")
            .arg("--db")
            .arg(&db)
            .args(["cyclictest", "-l", "50", "-q"]),
        &[0],
    );
    let stdout = text(&out);
    check_layout(&stdout);
    let status: Vec<&str> = stdout.lines().filter(|l| l.starts_with("T:")).collect();
    assert_eq!(status.len(), 1, "one thread by default: {stdout}");
    assert!(status[0].contains(" P: 0 I:1000 C:     50 "), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("SCHED_OTHER").count(), 1, "{stderr}");
    assert!(!db.exists(), "RTLAB_NO_STORE=1 stored the run: {stderr}");
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn json_imports_back_as_the_run_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let file = dir.path().join("ct.json");
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args([
                "cyclictest",
                "-l",
                "500",
                "-q",
                "-t",
                "2",
                "-p",
                "80",
                "-h",
                "40",
            ])
            .arg(format!("--json={}", file.display())),
        &[0],
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["num_threads"], 2);
    assert!(doc["cmdline:"].as_str().unwrap().contains("-h 40"));
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .arg("results")
            .arg("import")
            .arg(&file),
        &[0],
    );
    let (measured, imported) = (show_json(&db, 1), show_json(&db, 2));
    let series = |r: &Value| r["series"].as_array().unwrap().clone();
    assert_eq!(series(&measured).len(), series(&imported).len());
    for (m, i) in series(&measured).iter().zip(series(&imported).iter()) {
        assert_eq!(m["counters"]["samples"], i["counters"]["samples"]);
        assert_eq!(m["counters"]["overflows"], i["counters"]["overflows"]);
        assert_eq!(m["cpu"], i["cpu"]);
        let us = |v: &Value| v.as_u64().unwrap() / 1000;
        assert_eq!(us(&m["summary"]["min_ns"]), us(&i["summary"]["min_ns"]));
        assert_eq!(us(&m["summary"]["max_ns"]), us(&i["summary"]["max_ns"]));
        let mean = |v: &Value| v["summary"]["mean_ns"].as_f64().unwrap();
        assert!((mean(m) - mean(i)).abs() <= 5.0, "avg to 0.01 µs: {m} {i}");
        assert_eq!(m["us_histogram"]["buckets"], i["us_histogram"]["buckets"]);
        assert_eq!(i["us_histogram"]["max_us"], 40);
    }
}

#[test]
fn refusals_name_cyclictests_option_and_measure_nothing() {
    let cases: &[(&str, &str, i32)] = &[
        ("-i 0", "-i: ", 2),
        ("-i 200us", "-i: '200us'", 2),
        ("-p 120", "-p: 120", 2),
        ("-a 4095", "-a: ", 2),
        ("-t 2000", "-t: ", 2),
        ("--smi", "--smi: rtlab does not read the SMI count", 2),
        ("--dbg_cyclictest", "--dbg_cyclictest: ", 2),
        ("--bogus", "--bogus: cyclictest has no such option", 2),
        ("-w", "-w: cyclictest has no such option", 2),
        ("--hist=10", "--hist is ambiguous", 2),
        ("-D 10ms", "-D: '10ms'", 2),
        ("-c 3", "-c: 3 is not a clock", 2),
        ("-N -h 100", "-N with -h/-H", 2),
        ("-o 10", "-o: only meaningful with -v", 2),
        ("-p 2 -t 4 --priospread", "--priospread: ", 2),
        ("--policy=deadline", "--policy: 'deadline'", 2),
        ("-l 10 stray", "unexpected argument 'stray'", 2),
        ("--mainaffinity=4095", "--mainaffinity: ", 2),
        ("--json=/nonexistent/dir/x.json", "--json: ", 2),
        ("-q --no-store", "--no-store is rtlab's: give it first", 2),
    ];
    for (line, message, code) in cases {
        let out = expect(
            rtlab()
                .args(["cyclictest", "--no-store"])
                .args(line.split_whitespace()),
            &[*code],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{line}: {err}");
        assert!(out.stdout.is_empty(), "{line} printed {}", text(&out));
    }
}

#[test]
fn help_lists_the_options_and_latency_keeps_h_for_the_histogram() {
    let out = expect(rtlab().args(["cyclictest", "--help"]), &[0]);
    let help = text(&out);
    for opt in [
        "--affinity",
        "--histofall",
        "--json=FILE",
        "--spike",
        "--posix_timers",
    ] {
        assert!(help.contains(opt), "{opt}");
    }
    // -h400 measures with a 400 µs histogram instead of printing the help.
    let out = expect(
        rtlab()
            .args(["latency", "-h400", "-l", "20", "--policy", "other", "-t1"])
            .args(["-n", "-N", "--json", "--no-save"]),
        &[0],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["series"][0]["us_histogram"]["max_us"], 400);
    expect(rtlab().args(["latency", "--help"]), &[0]);
}

#[test]
fn latency_v_prints_every_wake_up_as_cyclictest_does() {
    let out = expect(
        rtlab()
            .args(["latency", "-v", "-l", "30", "--policy", "other", "-t", "2"])
            .args(["-q", "--no-save"]),
        &[0],
    );
    let stdout = text(&out);
    let samples: Vec<&str> = stdout
        .lines()
        .filter(|l| kind(l).as_deref() == Some("sample"))
        .collect();
    assert_eq!(samples.len(), 60, "{stdout}");
    assert!(
        stdout.contains("rtlab latency "),
        "then rtlab's table: {stdout}"
    );
}
