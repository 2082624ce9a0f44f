//! `rtlab compare` end to end: selectors, the table against the runs' own figures,
//! verdicts and exit codes, output formats, SVG and HTML files.

use crate::common::{expect, wait_until_measuring};
use crate::compare_common::{
    changes, columns, first, measure, parse, polylines_per_colour, row, rtlab, values,
};
use predicates::prelude::*;
use serde_json::Value;

fn max_of(run: &Value) -> u64 {
    run["total"]["summary"]["max_ns"].as_u64().unwrap()
}

#[test]
#[ignore = "needs root: SCHED_FIFO latency runs"]
fn table_and_verdicts_match_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let a = measure(&db, "A", &[]);
    let b = measure(&db, "B", &["--cpus", "0"]);
    let (max_a, max_b) = (max_of(&a), max_of(&b));
    // The tightest budget A fails: one nanosecond below its maximum.
    let tight = format!("tight={}ns", max_a - 1);
    let out = expect(
        rtlab(&db)
            .args(["compare", "A", "B", "--json", "--require", "loose=10s"])
            .args(["--require", &tight]),
        &[1],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "rtlab/1");
    let ids: Vec<&Value> = columns(&doc).iter().map(|c| &c["id"]).collect();
    assert_eq!(ids, vec![&a["id"], &b["id"]]);
    let max = row(&doc, "max");
    assert_eq!(values(max), [Some(max_a as f64), Some(max_b as f64)]);
    // A maximum of one run is only observed: never better or worse.
    assert_eq!(changes(max), ["same", "unknown"]);
    assert_eq!(max["cells"][1]["basis"], "observed");
    assert!(max["cells"][1]["ratio"].is_null() && max["cells"][1]["ci"].is_null());
    assert_eq!(max["cells"][0]["run"], a["id"]);
    assert_eq!(
        values(row(&doc, "samples"))[1],
        b["total"]["counters"]["samples"].as_f64()
    );
    // The runs keep time windows: their means have intervals around them.
    let mean = &row(&doc, "mean")["cells"][0];
    let (lo, hi) = (
        mean["ci"][0].as_f64().unwrap(),
        mean["ci"][1].as_f64().unwrap(),
    );
    let v = mean["value"].as_f64().unwrap();
    assert!(lo <= v && v <= hi, "{mean}");
    let v = first(&doc)["verdicts"].as_array().unwrap();
    assert_eq!(v.len(), 4, "two requirements for each of two runs");
    assert_eq!(
        (v[0]["requirement"].as_str(), v[0]["result"].as_str()),
        (Some("loose"), Some("PASS"))
    );
    assert_eq!(
        v[0]["margin_ns"].as_i64(),
        Some(10_000_000_000 - max_a as i64)
    );
    assert_eq!(
        (v[1]["result"].as_str(), v[1]["decided"].as_bool()),
        (Some("FAIL"), Some(true))
    );
    assert_eq!(v[1]["margin_ns"].as_i64(), Some(-1));
    assert!(v[1]["misses"].as_u64().unwrap() >= 1);
    assert_eq!(v[1]["samples"], a["total"]["counters"]["samples"]);
    assert_eq!(v[1]["duration_ns"], a["duration_ns"]);
    // The differing parameter is shown.
    let diffs = first(&doc)["differences"].as_array().unwrap();
    assert!(
        diffs.iter().any(|d| d["field"] == "params.cpus"),
        "{diffs:?}"
    );

    // Without a failing requirement the exit code is 0 (4 when a maximum is
    // within the 5% noise of 1 ms); text names the baseline.
    let worst = max_a.max(max_b);
    rtlab(&db)
        .args(["compare", "A", "B", "--baseline", "B", "--require", "drone"])
        .assert()
        .code(match worst {
            0..=950_000 => 0,
            950_001..=1_000_000 => 4,
            _ => 1,
        })
        .stdout(predicate::str::contains("B #2 (baseline)"))
        .stdout(predicate::str::contains("what differs:"))
        .stdout(predicate::str::contains("gps"));
}

/// A cyclictest `-h 10` histogram of one thread: 100 values in 0-9 µs and two
/// overflows, the larger `max_us`.
fn cyclictest_histogram(max_us: u64) -> String {
    let mut t = String::from("# Histogram\n");
    for us in 0..10 {
        t += &format!("{us:06} {:06}\n", 10);
    }
    t += "# Total: 000000100\n# Min Latencies: 00001\n# Avg Latencies: 00010\n";
    t += &format!("# Max Latencies: {max_us:05}\n# Histogram Overflows: 00002\n");
    t += "# Histogram Overflow at cycle number:\n# Thread 0: 00050 00090\n";
    t
}

/// The gate judged on imported numbers, so the outcome does not depend on the
/// machine running the test: a maximum within every budget by more than the 5%
/// noise passes, one exactly on a budget is UNDECIDED (exit 4: the next run
/// may miss it), one above the 1 ms budgets fails those with exit 1.
#[test]
fn drone_gate_on_imported_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    for (label, max_us) in [("calm", 800), ("edge", 1000), ("spiky", 1500)] {
        let file = dir.path().join(format!("{label}.txt"));
        std::fs::write(&file, cyclictest_histogram(max_us)).unwrap();
        expect(
            rtlab(&db)
                .args(["results", "import", "--label", label])
                .arg(&file),
            &[0],
        );
    }
    let judge = |runs: &[&str], code: i32| -> Vec<(String, String, String, i64)> {
        let out = expect(
            rtlab(&db)
                .arg("compare")
                .args(runs)
                .args(["--require", "drone", "--json"]),
            &[code],
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        first(&doc)["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["label"].as_str().unwrap().to_string(),
                    v["requirement"].as_str().unwrap().to_string(),
                    v["result"].as_str().unwrap().to_string(),
                    v["margin_ns"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    // A maximum on the 1 ms budget holds it, by less than the noise: the
    // next run may miss it, so the verdict is undecided (exit 4).
    let v = judge(&["calm", "edge"], 4);
    assert_eq!(v.len(), 2 * 7, "seven drone requirements per run");
    let undecided: Vec<(&str, &str)> = v
        .iter()
        .filter(|v| v.2 != "PASS")
        .map(|v| (v.0.as_str(), v.1.as_str()))
        .collect();
    assert_eq!(undecided, [("edge", "gyro"), ("edge", "accel")], "{v:?}");
    assert!(
        v.iter().all(|v| v.2 == "PASS" || v.2 == "UNDECIDED"),
        "{v:?}"
    );
    assert_eq!(judge(&["calm"], 0).len(), 7);
    let gyro = |v: &[(String, String, String, i64)], label: &str| {
        v.iter()
            .find(|v| v.0 == label && v.1 == "gyro")
            .cloned()
            .unwrap()
    };
    assert_eq!(gyro(&v, "calm").3, 200_000);
    assert_eq!(gyro(&v, "edge").3, 0);
    let v = judge(&["calm", "spiky"], 1);
    let failed: Vec<(&str, &str)> = v
        .iter()
        .filter(|v| v.2 == "FAIL")
        .map(|v| (v.0.as_str(), v.1.as_str()))
        .collect();
    assert_eq!(failed, [("spiky", "gyro"), ("spiky", "accel")], "{v:?}");
    assert_eq!(gyro(&v, "spiky").3, -500_000);
    // report gates the same way.
    for (label, code) in [("calm", 0), ("edge", 4), ("spiky", 1)] {
        rtlab(&db)
            .args(["report", label, "--require", "gyro=1ms"])
            .assert()
            .code(code);
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO latency runs"]
fn formats_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    measure(&db, "stock <x>", &[]);
    measure(&db, "rt & co", &[]);
    let svg = dir.path().join("h.svg");
    let html = dir.path().join("r.html");
    let plots = dir.path().join("plots");
    let out = expect(
        rtlab(&db)
            .args(["compare", "1", "2", "--csv", "--svg"])
            .arg(&svg)
            .arg("--html")
            .arg(&html)
            .arg("--plots")
            .arg(&plots),
        &[0],
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "comparison,title,row,quantity,run_id,label,value,ci_low,ci_high,basis,change,decided,\
         ratio_to_baseline"
    );
    assert_eq!((lines.len() - 1) % 2, 0, "one line per row and run");
    assert!(lines
        .iter()
        .any(|l| l.starts_with("1,latency,max,time,2,rt & co,")));

    let svg = std::fs::read_to_string(&svg).unwrap();
    let doc = parse(&svg);
    // A step line and a legend sample per run, no third series.
    assert_eq!(polylines_per_colour(&doc, 3), vec![2, 2, 0]);
    assert!(svg.contains("stock &lt;x&gt; #1") && svg.contains("rt &amp; co #2"));

    let html = std::fs::read_to_string(&html).unwrap();
    let doc = parse(&html);
    let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
    // Overlay, percentiles, and per run: per-thread histograms (2 CPUs) or not,
    // and latency over time.
    assert!(svgs >= 4, "{svgs} plots");
    // The first plot overlays the runs: one step line (and legend sample) each.
    let overlay = doc.descendants().find(|n| n.has_tag_name("svg")).unwrap();
    let overlay = parse(&html[overlay.range()]);
    assert_eq!(polylines_per_colour(&overlay, 3), vec![2, 2, 0]);
    assert!(!html.contains("<script") && !html.contains(" src="));
    let mut names: Vec<String> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.starts_with(&["histograms.svg".to_string(), "percentiles.svg".to_string()]));
    assert!(names.contains(&"run-2-time.svg".to_string()), "{names:?}");
    for n in names {
        parse(&std::fs::read_to_string(plots.join(n)).unwrap());
    }

    let md = rtlab(&db)
        .args(["compare", "1", "2", "--markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.starts_with("|  | stock <x> #1 (baseline) | rt & co #2 |\n|---|---:|---:|\n"),
        "{md}"
    );
}

#[test]
#[ignore = "needs root: SCHED_FIFO latency runs"]
fn labels_resolve_to_the_newest_complete_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let first = measure(&db, "k", &[]);
    let second = measure(&db, "k", &[]);
    measure(&db, "4.19 rt", &[]);
    measure(&db, "4.19 stock", &[]);
    let ids = |args: &[&str]| -> Vec<Value> {
        let out = expect(rtlab(&db).arg("compare").args(args).arg("--json"), &[0]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        columns(&doc).iter().map(|c| c["id"].clone()).collect()
    };
    assert_eq!(ids(&["k"]), vec![second["id"].clone()]);
    assert_eq!(
        ids(&["k@2", "k"]),
        vec![first["id"].clone(), second["id"].clone()]
    );
    assert_eq!(
        ids(&["--label-like", "4.19%"]),
        vec![Value::from(3), Value::from(4)]
    );
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let html = dir.path().join("r.html");
    rtlab(&db)
        .args(["compare", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no results database at"));
    assert!(!db.exists(), "a read-only command created the database");
    // An empty file is an empty SQLite database: the store sets it up.
    std::fs::write(&db, "").unwrap();
    for (args, msg) in [
        (vec!["compare"], "nothing to compare"),
        (vec!["compare", "nope"], "no run with id or label 'nope'"),
        (vec!["compare", "7"], "no run with id 7"),
        (
            vec!["compare", "x", "--require", "plane"],
            "--require: 'plane' is neither name=budget (e.g. gyro=1ms) nor a preset: drone (",
        ),
        (vec!["compare", "x", "--require", "gyro=-1ms"], "negative"),
        (
            vec!["compare", "--label-like", "4.19%"],
            "--label-like: no label matches",
        ),
        (vec!["report", "3"], "no run with id 3"),
    ] {
        rtlab(&db)
            .args(&args)
            .arg("--html")
            .arg(&html)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
        assert!(!html.exists(), "{args:?} wrote a file");
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO latency runs"]
fn interrupted_runs_are_named_explicitly_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(&db)
        .args([
            "latency", "-i", "500us", "-D", "20s", "-q", "--label", "cut",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt it once it catches SIGINT (so the signal interrupts the
    // measurement instead of killing the process) and runs its probe threads,
    // so that the run has samples when it is cut.
    wait_until_measuring(child.id());
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    rtlab(&db)
        .args(["compare", "cut"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no complete run labelled 'cut'"))
        .stderr(predicate::str::contains("'cut@1'"));
    let out = rtlab(&db)
        .args(["compare", "cut@1", "--require", "loop=10s"])
        .assert()
        .success();
    // The verdict's note wraps in its column: read the words.
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("the run is interrupted"), "{stdout}");
    assert!(words.contains("judged on what was observed"), "{stdout}");
}
