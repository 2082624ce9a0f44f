//! `rtlab results import` of real cyclictest output, generated here by running
//! cyclictest, and of malformed variants.

use crate::store_common::{export_json, import, list_ids, need, rtlab, run_tool};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// cyclictest without -p/-m: SCHED_OTHER, no privileges needed, short.
fn cyclictest(dir: &Path, file: &str, extra: &[&str]) -> String {
    let mut args = vec!["cyclictest", "-l", "300", "-i", "200"];
    args.extend_from_slice(extra);
    let out = run_tool(dir, &args);
    std::fs::write(dir.join(file), &out).unwrap();
    out
}

/// The numbers of a `# Key: a b c` summary line.
fn summary_line(text: &str, key: &str) -> Vec<u64> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("# {key}:")))
        .unwrap_or_else(|| panic!("no '# {key}:' line in\n{text}"));
    line.split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect()
}

fn us_sum(series: &Value) -> u64 {
    series["us_histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum()
}

/// Invariants every imported latency series holds.
fn check_series(s: &Value, samples: u64) {
    let sum = s["summary"].clone();
    assert_eq!(s["counters"]["samples"], samples);
    assert_eq!(
        us_sum(s) + s["us_histogram"]["overflow"].as_u64().unwrap(),
        samples,
        "buckets + overflow = samples in {s}"
    );
    assert_eq!(s["counters"]["overflows"], s["us_histogram"]["overflow"]);
    let order = ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"];
    for w in order.windows(2) {
        assert!(
            sum[w[0]].as_u64() <= sum[w[1]].as_u64(),
            "{} > {} in {sum}",
            w[0],
            w[1]
        );
    }
    let hist_count: u64 = s["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(hist_count, samples);
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn quiet_histogram_of_one_thread_round_trips_byte_for_byte() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let text = cyclictest(dir.path(), "one.txt", &["-q", "-t", "1", "-h", "100"]);
    let ids = import(&db, &[dir.path().join("one.txt").to_str().unwrap()]);
    let run = export_json(&db, ids[0]);
    assert_eq!(run["kind"], "latency");
    assert_eq!(run["label"], "one");
    assert_eq!(run["series"].as_array().unwrap().len(), 1);
    check_series(&run["series"][0], 300);
    check_series(&run["total"], 300);
    assert_eq!(run["series"][0]["us_histogram"]["max_us"], 100);
    let max_us = summary_line(&text, "Max Latencies")[0];
    assert_eq!(run["total"]["summary"]["max_ns"], max_us * 1000);
    assert_eq!(
        run["total"]["counters"]["overflows"],
        summary_line(&text, "Histogram Overflows")[0]
    );
    // Exported in cyclictest's layout, it is cyclictest's own text again.
    let out = rtlab(&db)
        .args(["results", "export", &ids[0].to_string(), "--format", "hist"])
        .assert()
        .success();
    let from = text.find("# Histogram").unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        &text[from..]
    );
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn histofall_with_status_lines_and_many_threads() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    // No -q: status lines with terminal escapes are mixed into the output.
    let text = cyclictest(dir.path(), "all.txt", &["-t", "3", "-H", "40"]);
    assert!(text.contains("T: 0"), "expected status lines:\n{text}");
    let ids = import(
        &db,
        &[
            dir.path().join("all.txt").to_str().unwrap(),
            "--label",
            "stock",
        ],
    );
    let run = export_json(&db, ids[0]);
    assert_eq!(run["label"], "stock");
    assert_eq!(run["params"]["source_format"], "histogram -H");
    // cyclictest ends every thread once the first has made its 300 wake-ups, so
    // the others may have fewer: each series counts what its thread's column says.
    let totals = summary_line(&text, "Total");
    let overflows = summary_line(&text, "Histogram Overflows");
    assert_eq!((totals.len(), overflows.len()), (4, 4), "{text}");
    let series = run["series"].as_array().unwrap();
    assert_eq!(series.len(), 3);
    let counts: Vec<u64> = (0..3).map(|t| totals[t] + overflows[t]).collect();
    for (s, &n) in series.iter().zip(&counts) {
        check_series(s, n);
    }
    assert_eq!(counts.iter().max(), Some(&300), "{text}");
    // -H's last column is cyclictest's own total over the threads.
    check_series(&run["total"], totals[3] + overflows[3]);
    assert_eq!(us_sum(&run["total"]), totals[3]);
    assert_eq!(run["total"]["counters"]["overflows"], overflows[3]);
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn json_with_and_without_histogram() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    cyclictest(
        dir.path(),
        "h.out",
        &["-q", "-t", "2", "-h", "30", "--json=h.json"],
    );
    cyclictest(dir.path(), "n.out", &["-q", "-t", "1", "--json=n.json"]);
    let raw: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("h.json")).unwrap()).unwrap();
    assert!(raw.get("cmdline:").is_some(), "cyclictest's odd key: {raw}");
    let ids = import(
        &db,
        &[
            dir.path().join("h.json").to_str().unwrap(),
            dir.path().join("n.json").to_str().unwrap(),
        ],
    );
    let h = export_json(&db, ids[0]);
    let release = run_tool(dir.path(), &["uname", "-r"]);
    assert_eq!(h["fingerprint"]["kernel_release"], release.trim());
    assert!(h["label"].as_str().unwrap().starts_with(release.trim()));
    assert_eq!(h["params"]["histogram_max_us"], 30);
    for (t, s) in h["series"].as_array().unwrap().iter().enumerate() {
        let thread = &raw["thread"][t.to_string()];
        let cycles = thread["cycles"].as_u64().unwrap();
        check_series(s, cycles);
        assert_eq!(
            s["summary"]["max_ns"],
            thread["max"].as_u64().unwrap() * 1000
        );
        assert_eq!(s["cpu"], thread["cpu"]);
    }
    // Without -h only min/avg/max exist; the rest is marked unknown.
    let n = export_json(&db, ids[1]);
    let unreported = n["params"]["unreported"].to_string();
    assert!(unreported.contains("p99_ns") && unreported.contains("stddev_ns"));
    assert!(n["warnings"].to_string().contains("no_histogram"));
    let list = rtlab(&db).args(["results", "list"]).assert().success();
    let line = String::from_utf8_lossy(&list.get_output().stdout)
        .lines()
        .find(|l| l.starts_with(&ids[1].to_string()))
        .unwrap()
        .to_string();
    assert!(line.contains(" – "), "p99 shown as unknown: {line}");
    // Both files came in one invocation: one campaign.
    assert_eq!(h["campaign"], n["campaign"]);
    assert!(h["campaign"].is_i64());
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn exported_hist_imports_to_the_same_histogram() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    cyclictest(dir.path(), "a.txt", &["-q", "-t", "2", "-h", "20"]);
    let first = import(&db, &[dir.path().join("a.txt").to_str().unwrap()])[0];
    // A native run too: its 1-µs histograms survive the trip.
    rtlab(&db)
        .args([
            "latency", "--policy", "other", "-t", "2", "-l", "200", "-i", "200us",
        ])
        .args(["--histogram-max", "50us", "-q"])
        .assert()
        .success();
    let native = list_ids(&db)[0];
    for id in [first, native] {
        let hist = dir.path().join(format!("{id}.hist"));
        rtlab(&db)
            .args([
                "results",
                "export",
                &id.to_string(),
                "--format",
                "hist",
                "-o",
            ])
            .arg(&hist)
            .assert()
            .success();
        let again = import(&db, &[hist.to_str().unwrap()])[0];
        let (a, b) = (export_json(&db, id), export_json(&db, again));
        for t in 0..2 {
            assert_eq!(
                a["series"][t]["us_histogram"], b["series"][t]["us_histogram"],
                "run {id} thread {t}"
            );
        }
        if id == first {
            assert_eq!(a["series"], b["series"]);
            assert_eq!(a["total"], b["total"]);
        }
    }
}

#[test]
fn malformed_files_name_the_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let good = "# Histogram\n000000 000001\n000001 000002\n# Total: 000000003\n# Min Latencies: 00000\n# Avg Latencies: 00000\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n";
    let cases = [
        (good.replace("000001 000002", "000001 0x0002"), "line 3", "'0x0002'"),
        (good.replace("000000 000001\n", "000002 000001\n"), "line 3", "out of order"),
        (good.replace("# Total: 000000003", "# Total: 000000004"), "line 4", "add up to 3"),
        (good.lines().take(3).collect::<Vec<_>>().join("\n"), "line 3", "incomplete"),
        (
            "{\"cmdline:\": \"cyclictest -h 5\",\n \"thread\": {\n  \"0\": {\n   \"histogram\": {\"1\": \"x\"},\n   \"cycles\": 3, \"min\": 1, \"max\": 2, \"avg\": 1.5}}}\n".to_string(),
            "line 4",
            "histogram entry",
        ),
        (
            "{\"cmdline:\": \"cyclictest -h 5\",\n \"thread\": {\n  \"0\": {\n   \"histogram\": {\"9\": 1},\n   \"cycles\": 3, \"min\": 1, \"max\": 9, \"avg\": 1.5}}}\n".to_string(),
            "line 3",
            "outside the -h 5 range",
        ),
    ];
    let ok = dir.path().join("ok.txt");
    std::fs::write(&ok, good).unwrap();
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let bad = dir.path().join(format!("bad{i}.txt"));
        std::fs::write(&bad, text).unwrap();
        // A good file before a bad one is not imported either.
        rtlab(&db)
            .args(["results", "import"])
            .arg(&ok)
            .arg(&bad)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("bad{i}.txt {line}")))
            .stderr(predicate::str::contains(*what))
            .stderr(predicate::str::contains("nothing was imported"));
    }
    assert!(list_ids(&db).is_empty());
    import(&db, &[ok.to_str().unwrap()]);
    assert_eq!(list_ids(&db).len(), 1);
}
