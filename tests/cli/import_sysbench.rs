//! `rtlab results import` of real sysbench 1.0 output of the built-in tests,
//! generated here by running sysbench, and of malformed variants.

use crate::store_common::{export_json, import, list_ids, need, rtlab, run_tool};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// A value printed by sysbench after `key:` (the first number on the line).
fn printed(text: &str, key: &str) -> f64 {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .unwrap_or_else(|| panic!("no '{key}' in\n{text}"));
    line.trim_start_matches(':')
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('s')
        .parse()
        .unwrap()
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Runs `sysbench <args> run` into `file` and imports it.
fn bench(
    dir: &Path,
    db: &Path,
    file: &str,
    args: &[&str],
    import_args: &[&str],
) -> (String, Value) {
    let mut all = vec!["sysbench"];
    all.extend_from_slice(args);
    all.push("run");
    let text = run_tool(dir, &all);
    let path = dir.join(file);
    std::fs::write(&path, &text).unwrap();
    let mut a = vec![path.to_str().unwrap()];
    a.extend_from_slice(import_args);
    let id = import(db, &a)[0];
    (text, export_json(db, id))
}

/// What every imported sysbench run holds, checked against the text.
fn check_common(text: &str, run: &Value, kind: &str) {
    assert_eq!(run["kind"], kind);
    let m = &run["metrics"];
    assert_eq!(m["total_time_s"], printed(text, "total time"));
    assert_eq!(m["total_events"], printed(text, "total number of events"));
    assert!(m["events_per_s"].as_f64().unwrap() > 0.0);
    let s = &run["total"]["summary"];
    assert_eq!(
        s["samples"].as_f64().unwrap(),
        printed(text, "total number of events")
    );
    assert_eq!(s["min_ns"], ms_to_ns(printed(text, "min")));
    assert_eq!(s["max_ns"], ms_to_ns(printed(text, "max")));
    assert_eq!(
        s["mean_ns"].as_f64().unwrap(),
        ms_to_ns(printed(text, "avg")) as f64
    );
    let p95 = ms_to_ns(printed(text, "95th percentile"));
    assert_eq!(s["p95_ns"], p95.min(s["max_ns"].as_u64().unwrap()));
    assert!(run["warnings"]
        .to_string()
        .contains("does not report stddev_ns"));
    assert_eq!(
        run["params"]["unreported"],
        serde_json::json!([
            "stddev_ns",
            "p50_ns",
            "p90_ns",
            "p99_ns",
            "p999_ns",
            "p9999_ns"
        ])
    );
}

#[test]
#[ignore = "needs sysbench: apt-get install sysbench"]
fn cpu_memory_threads_and_mutex() {
    need("sysbench");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let d = dir.path();
    let (text, run) = bench(
        d,
        &db,
        "cpu.txt",
        &["cpu", "--cpu-max-prime=2000", "--events=300", "--time=0"],
        &[],
    );
    check_common(&text, &run, "bench.cpu");
    assert_eq!(
        run["metrics"]["events_per_s"],
        printed(&text, "events per second")
    );
    assert_eq!(run["params"]["cpu_max_prime"], 2000);

    let (text, run) = bench(
        d,
        &db,
        "mem.txt",
        &["memory", "--memory-total-size=16M"],
        &[],
    );
    check_common(&text, &run, "bench.memory");
    let mib = text
        .lines()
        .find(|l| l.contains("MiB transferred"))
        .unwrap();
    let rate: f64 = mib
        .split('(')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(run["metrics"]["mib_per_s"], rate);
    assert!(run["metrics"]["ops_per_s"].as_f64().unwrap() > 0.0);

    // threads and mutex print alike; mutex runs one event per thread, so a
    // threads report of more events is known without being told.
    let thr = run_tool(
        d,
        &[
            "sysbench",
            "threads",
            "--thread-locks=1",
            "--events=200",
            "--time=0",
            "run",
        ],
    );
    std::fs::write(d.join("thr.txt"), &thr).unwrap();
    let id = import(&db, &[d.join("thr.txt").to_str().unwrap()])[0];
    check_common(&thr, &export_json(&db, id), "bench.threads");

    let (text, run) = bench(
        d,
        &db,
        "mutex.txt",
        &[
            "mutex",
            "--threads=2",
            "--mutex-num=64",
            "--mutex-locks=2000",
            "--mutex-loops=100",
        ],
        &["--label", "rt kernel", "--tag", "seed2"],
    );
    check_common(&text, &run, "bench.mutex");
    assert_eq!(
        (run["label"].as_str(), run["tags"][0].as_str()),
        (Some("rt kernel"), Some("seed2"))
    );
    // A cpu report is not a mutex report.
    rtlab(&db)
        .args(["results", "import", "--sysbench-test", "mutex"])
        .arg(d.join("cpu.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cpu output, not mutex"));
    let bench_rows = rtlab(&db)
        .args(["results", "list", "--kind", "bench"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&bench_rows.get_output().stdout)
            .matches("bench.")
            .count(),
        4
    );
}

#[test]
#[ignore = "needs sysbench: apt-get install sysbench"]
fn fileio_on_a_small_file_set() {
    need("sysbench");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let d = dir.path();
    let set = ["--file-total-size=4M", "--file-num=2"];
    let mut prepare = vec!["sysbench", "fileio"];
    prepare.extend_from_slice(&set);
    prepare.push("prepare");
    run_tool(d, &prepare);
    let mut args = vec!["fileio"];
    args.extend_from_slice(&set);
    args.extend_from_slice(&["--file-test-mode=rndrw", "--events=400", "--time=0"]);
    let (text, run) = bench(d, &db, "fio.txt", &args, &[]);
    check_common(&text, &run, "bench.fileio");
    let m = &run["metrics"];
    assert_eq!(m["reads_per_s"], printed(&text, "reads/s"));
    assert_eq!(m["writes_per_s"], printed(&text, "writes/s"));
    assert_eq!(m["fsyncs_per_s"], printed(&text, "fsyncs/s"));
    assert_eq!(m["read_mib_per_s"], printed(&text, "read, MiB/s"));
    assert_eq!(m["written_mib_per_s"], printed(&text, "written, MiB/s"));
    assert_eq!(run["params"]["file_test_mode"], "random r/w");
}

#[test]
#[ignore = "needs sysbench: apt-get install sysbench"]
fn histogram_on_gives_the_other_percentiles() {
    need("sysbench");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let (text, run) = bench(
        dir.path(),
        &db,
        "h.txt",
        &[
            "cpu",
            "--cpu-max-prime=2000",
            "--events=300",
            "--time=0",
            "--histogram=on",
            "--percentile=99",
        ],
        &[],
    );
    assert!(text.contains("Latency histogram"));
    assert_eq!(run["params"]["unreported"], serde_json::json!([]));
    let s = &run["total"]["summary"];
    let field = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("no {k} in {s}"));
    // Every percentile comes from the histogram (1 µs steps). sysbench prints
    // its own 99th percentile of the same buckets to 10 µs: one step apart at
    // most (the summary also keeps it within min and max).
    let printed = ms_to_ns(printed(&text, "99th percentile"));
    let (min, max) = (field("min_ns"), field("max_ns"));
    assert!(
        field("p99_ns").abs_diff(printed.clamp(min, max)) <= 10_000,
        "p99 {} vs sysbench's {printed}\n{text}",
        field("p99_ns")
    );
    assert_eq!(run["metrics"]["latency_p99_s"], printed as f64 / 1e9);
    let counts: u64 = run["total"]["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(counts, 300);
    let order = [
        "min_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
    ];
    for pair in order.windows(2) {
        assert!(
            field(pair[0]) <= field(pair[1]),
            "{} > {} in {s}\n{text}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn malformed_sysbench_output_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let text = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nNumber of threads: 1\n\nCPU speed:\n    events per second:   10.5\n\nGeneral statistics:\n    total time:                          1.0s\n    total number of events:              10\n\nLatency (ms):\n         min:                                    0.03\n         avg:                                    0.06\n         max:                                   32.09\n         95th percentile:                        0.03\n";
    let cases = [
        (
            text.replace("10.5", "ten"),
            "line 6",
            "'ten' is not a number",
        ),
        (
            text.replace("0.06", "0,06"),
            "line 14",
            "'0,06' is not a latency",
        ),
        (
            text.lines().take(12).collect::<Vec<_>>().join("\n"),
            "line 12",
            "incomplete",
        ),
    ];
    for (i, (bad, line, what)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("s{i}.txt"));
        std::fs::write(&f, bad).unwrap();
        rtlab(&db)
            .args(["results", "import"])
            .arg(&f)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("s{i}.txt {line}")))
            .stderr(predicate::str::contains(*what));
    }
    assert!(list_ids(&db).is_empty());
    let ok = dir.path().join("ok.txt");
    std::fs::write(&ok, text).unwrap();
    let run = export_json(&db, import(&db, &[ok.to_str().unwrap()])[0]);
    assert_eq!(run["metrics"]["events_per_s"], 10.5);
}
