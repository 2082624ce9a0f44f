//! End-to-end tests of `rtlab ipc`: wake-up latency between thread pairs, and
//! the priority-inversion check.

use crate::common::{expect, json, rtlab, shown};
use serde_json::Value;

const MECHANISMS: [&str; 8] = [
    "mqueue", "mutex", "condvar", "signal", "sem", "pipe", "eventfd", "futex",
];

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks every series of an ipc run: `loops` wake-ups each, ordered
/// statistics, a histogram holding every sample, a round trip no shorter than
/// the wake-up; returns the series names.
fn check_run(doc: &Value, loops: u64) -> Vec<String> {
    assert_eq!(doc["kind"], "ipc");
    let series = doc["series"].as_array().expect("series");
    for s in series {
        let name = s["name"].as_str().unwrap();
        let m = &s["summary"];
        assert_eq!(u(&s["counters"]["samples"]), loops, "{name}");
        assert_eq!(u(&m["samples"]), loops, "{name}");
        let (min, max) = (u(&m["min_ns"]), u(&m["max_ns"]));
        let mean = m["mean_ns"].as_f64().unwrap();
        assert!(min as f64 <= mean && mean <= max as f64, "{name}: {m}");
        assert!(u(&m["p50_ns"]) <= u(&m["p99_ns"]) && u(&m["p99_ns"]) <= max);
        let hist: u64 = s["histogram"]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b[1]))
            .sum();
        assert_eq!(hist, loops, "{name}: the histogram holds every wake-up");
        let rt = |k: &str| doc["metrics"][format!("{name}.round_trip_{k}_ns")].as_f64();
        let (rmin, rmean, rmax) = (rt("min").unwrap(), rt("mean").unwrap(), rt("max").unwrap());
        assert!(rmin <= rmean && rmean <= rmax, "{name}");
        assert!(
            rmin >= min as f64,
            "{name}: there and back takes longer than there"
        );
    }
    let total = &doc["total"];
    assert_eq!(
        u(&total["counters"]["samples"]),
        loops * series.len() as u64
    );
    series
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_mechanism_counts_its_loops_without_rt_priority() {
    let doc = json(
        rtlab().args([
            "ipc",
            "-M",
            "all",
            "-l",
            "20",
            "-i",
            "200us",
            "--policy",
            "other",
            "--json",
            "--no-save",
        ]),
        &[0],
    );
    let names = check_run(&doc, 20);
    let want: Vec<String> = MECHANISMS.iter().map(|m| format!("{m}/0")).collect();
    assert_eq!(names, want);
    assert_eq!(doc["status"], "complete");
    let codes: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"not_realtime"), "{codes:?}");
}

#[test]
#[ignore = "needs root: SCHED_FIFO pairs"]
fn every_mechanism_runs_in_rt_pairs_on_one_and_on_two_cpus() {
    for placement in ["same", "split"] {
        let doc = json(
            rtlab().args([
                "ipc",
                "-M",
                "all",
                "--pi",
                "-t",
                "2",
                "-l",
                "30",
                "-i",
                "300us",
                "-p",
                "80",
                "--placement",
                placement,
                "--json",
                "--no-save",
            ]),
            &[0],
        );
        let names = check_run(&doc, 30);
        assert_eq!(names.len(), 16);
        assert!(names.contains(&"mutex+pi/1".to_string()), "{names:?}");
        for s in doc["series"].as_array().unwrap() {
            assert!(s["tid"].as_i64().unwrap() > 0);
            assert!(s["cpu"].is_u64(), "{placement}: pinned");
        }
        // Pair 1 wakes every interval + distance (pmqtest's -d).
        assert_eq!(doc["series"][1]["interval_ns"], 800_000);
    }
}

#[test]
fn text_output_lists_each_pair_and_its_round_trip() {
    let out = expect(
        rtlab().args([
            "ipc",
            "-M",
            "eventfd",
            "-t",
            "2",
            "-l",
            "10",
            "-i",
            "200us",
            "--policy",
            "other",
            "--no-save",
        ]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("rtlab ipc eventfd"), "{text}");
    for line in [
        "mechanism/pair",
        "eventfd/0",
        "eventfd/1",
        "round trip",
        "all ",
    ] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    // Every figure is known: a wake-up row and a round-trip row per pair.
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("eventfd/")).collect();
    assert_eq!(rows.len(), 4, "{text}");
    for row in rows {
        assert!(!row.contains('–'), "{row}");
        let cells = row.split_whitespace().count();
        assert!(cells == 4 || cells == 9, "{row}");
    }
}

#[test]
fn bad_input_is_refused_naming_the_flag() {
    for (args, flag) in [
        (&["-M", "carrier-pigeon"][..], "--mechanism"),
        (&["-t", "0", "-l", "5"], "--pairs"),
        (&["-i", "0", "-l", "5"], "--interval"),
        (&["-l", "0"], "--loops"),
        (&["-M", "all"], "--mechanism"),
        (&["-M", "pipe", "--pi", "-l", "5"], "--pi"),
        (&["-p", "100", "-l", "5"], "--priority"),
        (&["--policy", "other", "-p", "5", "-l", "5"], "--priority"),
        (
            &["--placement", "split", "-a", "0", "-l", "5"],
            "--placement",
        ),
        (&["--sender-cpus", "4096", "-l", "5"], "--sender-cpus"),
        (&["-D", "-1", "-l", "5"], "--duration"),
        (&["--pi-check", "-t", "2"], "--pairs"),
    ] {
        let out = expect(rtlab().arg("ipc").args(args).arg("--no-save"), &[2]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {}", shown(&out));
    }
}

#[test]
fn a_scenario_step_runs_the_probe_and_stores_an_ipc_run() {
    let dir = tempfile::tempdir().unwrap();
    let (db, scn) = (dir.path().join("x.db"), dir.path().join("s.toml"));
    std::fs::write(
        &scn,
        r#"
name = "ipc"
[[step]]
name = "futex pairs"
probe = "ipc"
mechanism = "futex"
pairs = 2
loops = 15
interval = "200us"
policy = "other"
"#,
    )
    .unwrap();
    let out = expect(
        rtlab().arg("--db").arg(&db).arg("run").arg(&scn).arg("-q"),
        &[0],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("futex pairs"),
        "{}",
        shown(&out)
    );
    let run = json(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "show", "1", "--json"]),
        &[0],
    );
    assert_eq!(run["params"]["probe"], "ipc");
    assert_eq!(run["campaign"], 1);
    assert_eq!(check_run(&run, 15), ["futex/0", "futex/1"]);
}

#[test]
fn stored_runs_show_compare_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    for m in ["pipe", "sem"] {
        expect(
            rtlab().arg("--db").arg(&db).args([
                "ipc", "-M", m, "-l", "10", "-i", "200us", "--policy", "other",
            ]),
            &[0],
        );
    }
    let out = expect(
        rtlab().arg("--db").arg(&db).args(["compare", "1", "2"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pipe/0.round_trip_max_ns"), "{text}");
    // A period kept (overruns), but no deadline to miss.
    assert!(
        text.contains("overruns") && !text.contains("misses"),
        "{text}"
    );
    let out = expect(rtlab().arg("--db").arg(&db).args(["report", "2"]), &[0]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("rtlab ipc sem") && text.contains("round trip"),
        "{text}"
    );
    let html = dir.path().join("r.html");
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["report", "1", "--html"])
            .arg(&html),
        &[0],
    );
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}

#[test]
#[ignore = "needs root: SCHED_FIFO threads on one CPU"]
fn the_pi_check_finds_inversions_only_without_inheritance() {
    let doc = json(
        rtlab().args(["ipc", "--pi-check", "-D", "1s", "--json", "--no-save"]),
        &[0],
    );
    let m = |k: &str| doc["metrics"][k].as_f64().unwrap() as u64;
    let rounds = m("pi_on_rounds");
    assert!(rounds > 0 && rounds == m("pi_off_rounds"));
    // The kernel's priority inheritance never lets the medium thread in.
    assert_eq!(m("pi_on_inversions"), 0);
    // On one CPU with FIFO priorities the medium thread preempts the low one
    // that holds the mutex whenever inheritance is off.
    let off = m("pi_off_inversions");
    assert!(off >= 1 && off <= rounds, "{off} of {rounds}");
    let names: Vec<&str> = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pi-off", "pi-on"]);
    let out = expect(
        rtlab().args(["ipc", "--pi-check", "-D", "300ms", "--no-save"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("PI off: high blocked behind medium in"),
        "{text}"
    );
    assert!(text.contains("; PI on: 0 of"), "{text}");
}
