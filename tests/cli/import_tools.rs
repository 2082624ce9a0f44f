//! `rtlab results import` of what cyclictest, sysbench and stress-ng print when
//! run here (CI installs them): each layout imported without being told what it
//! is, its numbers checked against the text the tool wrote. Latencies are never
//! judged, only carried over.

use crate::store_common::{export_json, import, need, series_figures};
use serde_json::Value;
use std::path::Path;

/// Runs `command` (a shell line) in `dir`, stdout and stderr into `file`, and
/// imports it; returns the text and the run.
fn run_and_import(dir: &Path, file: &str, command: &str) -> (String, Value) {
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("{command} > {file} 2>&1")])
        .current_dir(dir)
        .status()
        .unwrap();
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    assert!(out.success(), "{command} failed:\n{text}");
    let db = dir.join("r.db");
    let id = import(&db, &[dir.join(file).to_str().unwrap()])[0];
    (text, export_json(&db, id))
}

/// The last `T:` line of each thread in a cyclictest output, as a terminal
/// shows it: (C, Min, Avg, Max).
fn last_thread_lines(text: &str) -> Vec<(u64, u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64, u64)> = Vec::new();
    for piece in text.split(['\n', '\r']) {
        let Some(at) = piece.find("T:") else { continue };
        let words: Vec<&str> = piece[at..].split_whitespace().collect();
        let value = |key: &str| -> u64 {
            let i = words.iter().position(|w| w.starts_with(key)).unwrap();
            let rest = &words[i][key.len()..];
            if rest.is_empty() { words[i + 1] } else { rest }
                .parse()
                .unwrap()
        };
        let thread: usize = words[1].parse().unwrap();
        let line = (value("C:"), value("Min:"), value("Avg:"), value("Max:"));
        out.resize(out.len().max(thread + 1), (0, 0, 0, 0));
        out[thread] = line;
    }
    out
}

/// (C, Min, Avg, Max) of each thread of a run, in whole µs as cyclictest
/// prints them.
fn thread_figures(run: &Value) -> Vec<(u64, u64, u64, u64)> {
    series_figures(run)
        .into_iter()
        .map(|(n, min, mean, max)| (n, min / 1000, mean as u64 / 1000, max / 1000))
        .collect()
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn cyclictest_summary_and_live_view_carry_their_last_lines() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    for (file, command, format) in [
        ("q.txt", "cyclictest -q -t 2 -i 1000 -l 300", "summary"),
        ("live.txt", "cyclictest -t 2 -i 1000 -l 300", "live view"),
    ] {
        let (text, run) = run_and_import(dir.path(), file, command);
        assert_eq!(run["kind"], "latency");
        assert_eq!(run["params"]["source_format"], format, "{text}");
        assert_eq!(thread_figures(&run), last_thread_lines(&text), "{text}");
    }
}

#[test]
#[ignore = "needs cyclictest: apt-get install rt-tests"]
fn cyclictest_verbose_samples_are_all_counted() {
    need("cyclictest");
    let dir = tempfile::tempdir().unwrap();
    let (text, run) = run_and_import(dir.path(), "v.txt", "cyclictest -v -t 2 -i 1000 -l 100");
    let samples = |t: &str| {
        text.lines()
            .filter(|l| {
                l.split(':').next().map(str::trim) == Some(t) && l.matches(':').count() == 2
            })
            .count() as u64
    };
    let counts: Vec<u64> = run["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["counters"]["samples"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [samples("0"), samples("1")], "{text}");
    // cyclictest ends the run when the first thread has its 100 wake-ups.
    assert_eq!(counts.iter().max(), Some(&100), "{text}");
    // With -q, the summary line says the unit: -N prints ns.
    let (text, run) = run_and_import(
        dir.path(),
        "vn.txt",
        "cyclictest -v -q -N -t 1 -i 1000 -l 50",
    );
    assert_eq!(run["params"]["unit"], "ns", "{text}");
    let (c, min_ns, _, max_ns) = last_thread_lines(&text)[0];
    assert_eq!(run["series"][0]["counters"]["samples"], c);
    assert_eq!(run["series"][0]["summary"]["min_ns"], min_ns / 1000 * 1000);
    assert_eq!(run["series"][0]["summary"]["max_ns"], max_ns / 1000 * 1000);
}

#[test]
#[ignore = "needs sysbench: apt-get install sysbench"]
fn sysbench_threads_and_mutex_are_known_without_being_told() {
    need("sysbench");
    let dir = tempfile::tempdir().unwrap();
    for (command, kind) in [
        (
            "sysbench mutex --threads=2 --mutex-locks=2000 run",
            "bench.mutex",
        ),
        (
            "sysbench threads --threads=2 --events=200 --time=0 run",
            "bench.threads",
        ),
        (
            "sysbench memory --time=1 --memory-total-size=64M run",
            "bench.memory",
        ),
    ] {
        let (text, run) = run_and_import(dir.path(), "s.txt", command);
        assert_eq!(run["kind"], kind, "{text}");
    }
}

#[test]
#[ignore = "needs stress-ng: apt-get install stress-ng"]
fn stress_ng_metrics_and_yaml_give_one_load_per_stressor() {
    need("stress-ng");
    let dir = tempfile::tempdir().unwrap();
    let (text, run) = run_and_import(
        dir.path(),
        "m.txt",
        "stress-ng --cpu 2 --matrix 1 -t 1s --metrics-brief --yaml sng.yaml",
    );
    assert_eq!(run["kind"], "load");
    let loads = run["loads"].as_array().unwrap();
    let specs: Vec<&str> = loads.iter().map(|l| l["spec"].as_str().unwrap()).collect();
    assert_eq!(specs, ["cpu:2", "matrix:1"], "{text}");
    // The rates are the table's, to its two decimals.
    for l in loads {
        let row = text
            .lines()
            .filter_map(|line| line.split_once("] "))
            .map(|(_, r)| r.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.first() == l["kind"].as_str().as_ref() && w.len() == 7)
            .unwrap();
        assert_eq!(
            l["achieved"]["bogo_ops_per_s"],
            row[5].parse::<f64>().unwrap()
        );
    }
    let db = dir.path().join("r.db");
    let id = import(&db, &[dir.path().join("sng.yaml").to_str().unwrap()])[0];
    let yaml = export_json(&db, id);
    let workers: Vec<u64> = yaml["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(yaml["params"]["source_format"], "yaml");
    assert_eq!(yaml["loads"].as_array().unwrap().len(), 2);
    assert!(workers.iter().all(|&w| w <= 2), "{workers:?}");
}
