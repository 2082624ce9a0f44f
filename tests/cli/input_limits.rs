//! Hostile input is refused with exit 2 and a message naming the flag or the
//! line, before anything is allocated, measured or stored: sizes past a limit
//! or past the memory available, counts that overflow, forged run records,
//! empty list entries and tags, output paths in directories that do not exist.
//!
//! Every test has its own temporary directory and database. A failing
//! assertion prints the command, its exit code, stdout and stderr (assert_cmd).

use crate::store_common::{export_json, import, list_ids, rtlab};
use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

/// MemAvailable of this machine, in bytes.
fn mem_available() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib * 1024
}

/// Writes `text` to `dir/name` and runs `results import` on it, expecting a
/// refusal (exit 2) whose message holds each of `parts`; nothing is stored.
fn import_refused(dir: &Path, name: &str, text: &str, parts: &[&str]) {
    let db = dir.join("x.db");
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    let mut a = rtlab(&db)
        .args(["results", "import"])
        .arg(&f)
        .assert()
        .code(2);
    for p in parts {
        a = a.stderr(contains(*p));
    }
    assert!(
        list_ids(&db).is_empty(),
        "nothing may be stored from {name}"
    );
}

/// cyclictest -h text around the given histogram lines, one thread.
fn histogram_text(lines: &str, total: &str) -> String {
    format!(
        "# Histogram\n{lines}# Total: {total}\n# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n"
    )
}

#[test]
fn huge_bucket_is_refused_not_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let text = histogram_text("000001 000001\n999999999999 000001\n", "000000002");
    import_refused(
        dir.path(),
        "h.txt",
        &text,
        &[
            "h.txt line 3",
            "bucket 999999999999 µs is beyond",
            "nothing was imported",
        ],
    );
    // The same in cyclictest's JSON: a -h size and a bucket key.
    let json = r#"{"cmdline:": "cyclictest -q -h 999999999999", "num_threads": 1,
        "thread": {"0": {"histogram": {"1": 1}, "cycles": 1, "min": 1, "avg": 1.0, "max": 1}}}"#;
    import_refused(dir.path(), "h.json", json, &["histogram size 999999999999"]);
    let json = json
        .replace("-h 999999999999", "")
        .replace("\"1\": 1}", "\"999999999999\": 1}");
    import_refused(
        dir.path(),
        "k.json",
        &json,
        &["bucket 999999999999 µs is beyond"],
    );
}

#[test]
fn import_counts_that_overflow_or_are_negative_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let max = u64::MAX;
    let text = histogram_text(&format!("000001 {max}\n000002 000001\n"), "1");
    import_refused(
        dir.path(),
        "wrap.txt",
        &text,
        &["wrap.txt line", "more than 64 bits"],
    );
    let text = histogram_text("000001 -5\n", "000000000");
    import_refused(
        dir.path(),
        "neg.txt",
        &text,
        &["neg.txt line 2", "'-5' is negative"],
    );
    let text = histogram_text("000001 18446744073709551616\n", "1");
    import_refused(
        dir.path(),
        "big.txt",
        &text,
        &["big.txt line 2", "more than 64 bits"],
    );
}

/// sysbench 1.0.20 cpu output with a histogram whose median bucket prints as
/// 0.021 ms while sysbench prints its 99th percentile (0.024 ms) as "0.02".
const SYSBENCH_HIST: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 1
Initializing random number generator from current time


Prime numbers limit: 2000

Initializing worker threads...

Threads started!

Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.020 |***                                      20
       0.021 |**************************************** 270
       0.024 |*                                        10
 
CPU speed:
    events per second: 37061.20

General statistics:
    total time:                          0.0074s
    total number of events:              300

Latency (ms):
         min:                                    0.02
         avg:                                    0.02
         max:                                    0.03
         99th percentile:                        0.02
         sum:                                    6.25

Threads fairness:
    events (avg/stddev):           300.0000/0.00
    execution time (avg/stddev):   0.0063/0.00
";

#[test]
fn sysbench_percentiles_are_stored_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let f = dir.path().join("h.txt");
    std::fs::write(&f, SYSBENCH_HIST).unwrap();
    let run = export_json(&db, import(&db, &[f.to_str().unwrap()])[0]);
    let s = &run["total"]["summary"];
    let order = [
        "min_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
    ];
    let v: Vec<u64> = order.iter().map(|k| s[*k].as_u64().unwrap()).collect();
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "{order:?} = {v:?}");
    assert_eq!((v[1], v[4]), (21_000, 24_000));
    assert_eq!(run["metrics"]["latency_p99_s"], 20e-6);
}

#[test]
fn sysbench_counts_that_do_not_fit_or_disagree_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let events = SYSBENCH_HIST.replace(
        "events:              300",
        "events:              99999999999999999999999",
    );
    import_refused(
        dir.path(),
        "ev.txt",
        &events,
        &[
            "ev.txt line 25",
            "total number of events",
            "more than 64 bits",
        ],
    );
    let other = SYSBENCH_HIST.replace("events:              300", "events:              301");
    import_refused(
        dir.path(),
        "mix.txt",
        &other,
        &[
            "mix.txt line 25",
            "is 301 but the latency histogram holds 300",
        ],
    );
}

/// A real run of this rtlab as its JSON document (bench cpu: fast, no root).
fn own_run(dir: &Path) -> Value {
    let out = rtlab(&dir.join("x.db"))
        .args(["bench", "cpu", "--events", "50", "--max-prime", "2000"])
        .args(["--json", "--no-save", "-q"])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn rtlab_json_whose_counts_disagree_with_its_histograms_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = own_run(dir.path());
    let write = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    let mut forged = good.clone();
    let n = forged["total"]["counters"]["samples"].as_u64().unwrap();
    forged["total"]["counters"]["samples"] = (n + 1).into();
    forged["total"]["summary"]["samples"] = (n + 1).into();
    import_refused(
        dir.path(),
        "more.json",
        &write(&forged),
        &["series 'all'", "histogram holds 50 values but it counts 51"],
    );
    let mut wrapped = good.clone();
    wrapped["total"]["histogram"]["buckets"][0][1] = u64::MAX.into();
    import_refused(
        dir.path(),
        "wrap.json",
        &write(&wrapped),
        &["more than 64 bits"],
    );
    let mut windows = good.clone();
    let w = &mut windows["total"]["windows"]["windows"][0]["count"];
    *w = (w.as_u64().unwrap() + 1).into();
    import_refused(
        dir.path(),
        "windows.json",
        &write(&windows),
        &[
            "series 'all'",
            "time windows hold 51 values but it counts 50",
        ],
    );
    // And the untouched document imports.
    let f = dir.path().join("good.json");
    std::fs::write(&f, write(&good)).unwrap();
    import(&dir.path().join("x.db"), &[f.to_str().unwrap()]);
}

#[test]
fn percentiles_out_of_order_are_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = own_run(dir.path());
    let s = &mut run["series"][0]["summary"];
    let p99 = s["p99_ns"].as_u64().unwrap();
    s["p50_ns"] = (p99 + 1).into();
    import_refused(
        dir.path(),
        "order.json",
        &serde_json::to_string_pretty(&run).unwrap(),
        &["p50_ns", "is above p90_ns", "out of order"],
    );
}

#[test]
fn trace_points_past_the_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    rtlab(&dir.path().join("x.db"))
        .args([
            "latency",
            "--trace-points",
            "99999999999",
            "-l",
            "1",
            "--no-save",
        ])
        .assert()
        .code(2)
        .stderr(contains("--trace-points: 99999999999 is outside 2-1000000"));
}

#[test]
fn memory_block_above_available_memory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    // Twice what this machine has available, whatever it has.
    let gib = mem_available() / (1 << 30) * 2 + 2;
    rtlab(&db)
        .args([
            "bench",
            "memory",
            "--block-size",
            &format!("{gib}G"),
            "--no-save",
        ])
        .assert()
        .code(2)
        .stderr(contains("--block-size: one"))
        .stderr(contains("more than 90% of MemAvailable"));
    // Per thread with --scope local: each block alone would fit.
    let third = (mem_available() / 3 / 1024 / 1024).max(1);
    rtlab(&db)
        .args(["bench", "memory", "--block-size", &format!("{third}M")])
        .args(["--scope", "local", "--threads", "4", "--no-save"])
        .assert()
        .code(2)
        .stderr(contains("4 thread(s) × one"));
    rtlab(&db)
        .args(["bench", "mutex", "--mutexes", "99999999999", "--no-save"])
        .assert()
        .code(2)
        .stderr(contains("--mutexes: 99999999999 mutexes is more than"));
    assert!(!db.exists() || list_ids(&db).is_empty());
}

#[test]
fn empty_cpu_list_entry_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    for flag in ["--cpus", "--load-cpus"] {
        rtlab(&db)
            .args(["latency", flag, "0,,1", "-l", "1", "--no-save"])
            .assert()
            .code(2)
            .stderr(contains(format!("{flag}: '0,,1' has an empty entry")));
    }
}

#[test]
fn empty_tag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let f = dir.path().join("h.txt");
    std::fs::write(&f, SYSBENCH_HIST).unwrap();
    let cases: [&[&str]; 4] = [
        &["latency", "-l", "1", "--tag", ""],
        &["bench", "cpu", "--events", "1", "--tag", " "],
        &["results", "import", f.to_str().unwrap(), "--tag", ""],
        &["results", "tag", "1", ""],
    ];
    for args in cases {
        rtlab(&db)
            .args(args)
            .assert()
            .code(2)
            .stderr(contains("a tag cannot be empty"));
    }
    rtlab(&db)
        .args(["latency", "-l", "1", "--label", ""])
        .assert()
        .code(2)
        .stderr(contains("a label cannot be empty"));
    assert!(!db.exists() || list_ids(&db).is_empty());
}

#[test]
fn output_path_in_a_missing_directory_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let missing = dir.path().join("nonexistent");
    let file = missing.join("dir/out");
    let file = file.to_str().unwrap();
    let cases: [(&str, &[&str]); 8] = [
        (
            "--histfile",
            &["latency", "-l", "1", "--no-save", "--histfile", file],
        ),
        ("--output", &["results", "export", "1", "--output", file]),
        ("--svg", &["compare", "1", "2", "--svg", file]),
        ("--html", &["compare", "1", "2", "--html", file]),
        ("--plots", &["compare", "1", "2", "--plots", file]),
        ("--html", &["report", "1", "--html", file]),
        ("--html", &["run", "--html", file]),
        ("<PROFILE>", &["prio", "save", file]),
    ];
    for (flag, args) in cases {
        rtlab(&db)
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(format!("for '{flag}")))
            .stderr(contains("does not exist; create it first"));
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
    rtlab(&db)
        .args(["prio", "unit", "p.toml", "--dir", file])
        .assert()
        .code(2)
        .stderr(contains("for '--dir"))
        .stderr(contains("does not exist; create it first"));
    assert!(!missing.exists());
    assert!(!db.exists() || list_ids(&db).is_empty());
}

#[test]
fn load_message_sizes_are_refused_before_any_worker_starts() {
    let dir = tempfile::tempdir().unwrap();
    rtlab(&dir.path().join("x.db"))
        .args(["latency", "-l", "1", "--no-save", "--load", "msg size=1G"])
        .assert()
        .code(2)
        .stderr(contains("size '1G' is outside 1-65536 bytes"))
        .stderr(predicate::str::contains("panicked").not());
}
