//! End-to-end tests of `rtlab latency`: the binary as a user runs it.
//!
//! Tests that need SCHED_FIFO (root in CI) skip with a printed reason otherwise.

use crate::common::{expect, rtlab, shown, wait_until_measuring};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// Runs `rtlab latency ARGS --json --no-save`, which must exit 0 (measured) or
/// 1 (a requirement failed), and returns the exit code and the document.
fn run_json(args: &[&str]) -> (i32, Value) {
    let out = expect(
        rtlab()
            .arg("latency")
            .args(args)
            .args(["--json", "--no-save"]),
        &[0, 1],
    );
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", shown(&out)));
    (out.status.code().unwrap(), doc)
}

fn online_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    text.trim()
        .split(',')
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks the invariants every series must hold.
fn check_series(s: &Value) {
    let c = &s["counters"];
    let m = &s["summary"];
    let samples = u(&c["samples"]);
    assert_eq!(u(&m["samples"]), samples);
    let order = [
        "min_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
    ];
    for w in order.windows(2) {
        assert!(u(&m[w[0]]) <= u(&m[w[1]]), "{} > {} in {s}", w[0], w[1]);
    }
    let mean = m["mean_ns"].as_f64().unwrap();
    assert!(mean >= u(&m["min_ns"]) as f64 && mean <= u(&m["max_ns"]) as f64);
    let hist: u64 = s["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| u(&b[1]))
        .sum();
    assert_eq!(hist, samples, "HdrHistogram holds every sample");
    let us = &s["us_histogram"];
    let in_range: u64 = us["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| u(&b[1]))
        .sum();
    assert_eq!(in_range + u(&us["overflow"]), samples);
    assert_eq!(u(&us["overflow"]), u(&c["overflows"]));
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn json_on_every_cpu_is_valid_and_consistent() {
    let (code, doc) = run_json(&["-i", "200us", "-l", "2000"]);
    assert_eq!(code, 0);
    assert_eq!(doc["format"], "rtlab/1");
    assert_eq!(doc["kind"], "latency");
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(doc["params"]["probe"], "latency");
    assert_eq!(doc["params"]["interval"], "200us");
    assert_eq!(doc["params"]["loops"], 2000);
    assert_eq!(doc["params"]["policy"], "fifo");
    assert_eq!(u(&doc["params"]["priority"]), 90);
    assert!(!doc["fingerprint"]["kernel_release"]
        .as_str()
        .unwrap()
        .is_empty());
    assert!(doc["command_line"].as_array().unwrap().len() > 2);
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), online_cpus(), "one thread per online CPU");
    for (i, s) in series.iter().enumerate() {
        check_series(s);
        assert_eq!(u(&s["counters"]["samples"]), 2000);
        assert_eq!(u(&s["cpu"]) as usize, i);
        assert_eq!(s["name"], format!("cpu{i}"));
        assert!(!s["trace"].as_array().unwrap().is_empty());
    }
    let total = &doc["total"];
    check_series(total);
    let sum: u64 = series.iter().map(|s| u(&s["counters"]["samples"])).sum();
    assert_eq!(u(&total["counters"]["samples"]), sum);
    let max = series
        .iter()
        .map(|s| u(&s["summary"]["max_ns"]))
        .max()
        .unwrap();
    let min = series
        .iter()
        .map(|s| u(&s["summary"]["min_ns"]))
        .min()
        .unwrap();
    assert_eq!(u(&total["summary"]["max_ns"]), max);
    assert_eq!(u(&total["summary"]["min_ns"]), min);
    let overruns: u64 = series.iter().map(|s| u(&s["counters"]["overruns"])).sum();
    assert_eq!(u(&total["counters"]["overruns"]), overruns);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn threads_without_cpus_are_unpinned() {
    let (code, doc) = run_json(&["-i", "500us", "-l", "50", "-t", "3", "--trace-points", "4"]);
    assert_eq!(code, 0);
    let series = doc["series"].as_array().unwrap();
    assert_eq!(series.len(), 3);
    for (i, s) in series.iter().enumerate() {
        assert_eq!(s["name"], format!("thread{i}"));
        assert!(s.get("cpu").is_none());
        assert!(s["trace"].as_array().unwrap().len() <= 4);
    }
}

#[test]
fn page_faults_over_the_measuring_window_are_recorded_and_warned_about() {
    // SCHED_OTHER, so that it runs anywhere; the count depends on the machine
    // (mlock may be refused here), so only its shape and the warning that goes
    // with a non-zero count are checked.
    let args = [
        "--policy", "other", "-i", "500us", "-l", "200", "--cpus", "0",
    ];
    let (code, doc) = run_json(&args);
    assert_eq!(code, 0);
    let f = &doc["page_faults"];
    let total = u(&f["minor"]) + u(&f["major"]);
    let warned = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "page_faults");
    assert_eq!(warned, total > 0, "{f} {}", doc["warnings"]);
    let out = expect(
        rtlab().arg("latency").args(args).args(["-q", "--no-save"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\npage faults while measuring: "), "{text}");
}

/// The shape of a cyclictest-layout histogram: one token per line, so two files
/// with the same layout have the same shape whatever their numbers.
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("# /dev/cpu_dma_latency"))
        .map(|l| {
            if let Some(rest) = l.strip_prefix("# ") {
                match rest.split_once(':') {
                    Some((k, v)) if !k.starts_with("Thread") => {
                        format!("{k}:{}", v.split_whitespace().count())
                    }
                    Some((k, _)) => k.to_string(),
                    None => rest.to_string(),
                }
            } else if l.is_empty() {
                String::new()
            } else {
                let (idx, counts) = l.split_once(' ').expect("bucket line");
                assert_eq!(idx.len(), 6, "bucket index is %06d: {l}");
                let cols: Vec<&str> = counts.split('\t').collect();
                assert!(
                    cols.iter()
                        .all(|c| c.len() >= 6 && c.parse::<u64>().is_ok()),
                    "{l}"
                );
                format!("bucket×{}", cols.len())
            }
        })
        .collect()
}

fn footer(text: &str, key: &str) -> Vec<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("# {key}:")))
        .unwrap_or_else(|| panic!("no '{key}' line"));
    line.split_once(':')
        .unwrap()
        .1
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn histfile_is_parsed_back_and_matches_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let hf = dir.path().join("hist.txt");
    let (code, doc) = run_json(&[
        "-i",
        "200us",
        "-l",
        "1000",
        "--cpus",
        "0",
        "--histogram-max",
        "50us",
        "--histfile",
        hf.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&hf).unwrap();
    let s = &doc["series"][0];
    let buckets: Vec<(usize, u64)> = text
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            let (i, c) = l.split_once(' ').unwrap();
            (i.parse().unwrap(), c.trim().parse().unwrap())
        })
        .collect();
    assert_eq!(buckets.len(), 50, "one line per µs up to --histogram-max");
    assert!(buckets.iter().enumerate().all(|(i, b)| b.0 == i));
    let in_range: u64 = buckets.iter().map(|b| b.1).sum();
    let overflows = u(&s["counters"]["overflows"]);
    assert_eq!(in_range + overflows, 1000);
    assert_eq!(footer(&text, "Total"), vec![in_range]);
    assert_eq!(footer(&text, "Histogram Overflows"), vec![overflows]);
    assert_eq!(
        footer(&text, "Min Latencies"),
        vec![u(&s["summary"]["min_ns"]) / 1000]
    );
    assert_eq!(
        footer(&text, "Max Latencies"),
        vec![u(&s["summary"]["max_ns"]) / 1000]
    );
    // Every JSON 1-µs bucket appears with the same count.
    for b in s["us_histogram"]["buckets"].as_array().unwrap() {
        assert_eq!(buckets[u(&b[0]) as usize].1, u(&b[1]));
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn side_by_side_with_cyclictest_same_layout_and_sane_results() {
    if !Path::new("/usr/bin/cyclictest").exists() {
        panic!("cyclictest not found: install rt-tests (CI does)");
    }
    let dir = tempfile::tempdir().unwrap();
    let ct = dir.path().join("ct.txt");
    let rt = dir.path().join("rt.txt");
    let status = std::process::Command::new("cyclictest")
        .args([
            "-q", "-m", "-p", "90", "-i", "200", "-l", "1000", "-t", "2", "-a", "0-1", "-h", "100",
        ])
        .arg(format!("--histfile={}", ct.display()))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let (code, doc) = run_json(&[
        "-i",
        "200us",
        "-l",
        "1000",
        "--cpus",
        "0-1",
        "-t",
        "2",
        "-p",
        "90",
        "--histogram-max",
        "100us",
        "--histfile",
        rt.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let ct_text = std::fs::read_to_string(&ct).unwrap();
    let rt_text = std::fs::read_to_string(&rt).unwrap();
    assert_eq!(
        shape(&rt_text),
        shape(&ct_text),
        "same layout as cyclictest -h"
    );
    // rtlab: every thread makes its 1000 wake-ups. cyclictest ends every thread
    // as soon as the first one has made them, so its other thread may have fewer.
    let per_thread = |text: &str| -> Vec<u64> {
        let (totals, overflows) = (footer(text, "Total"), footer(text, "Histogram Overflows"));
        totals.iter().zip(&overflows).map(|(t, o)| t + o).collect()
    };
    assert_eq!(per_thread(&rt_text), [1000, 1000], "{rt_text}");
    let ct_counts = per_thread(&ct_text);
    assert!(
        ct_counts.iter().max() == Some(&1000) && ct_counts.iter().all(|&n| n <= 1000),
        "cyclictest's threads: {ct_counts:?}"
    );
    for text in [&ct_text, &rt_text] {
        let (mins, avgs, maxs) = (
            footer(text, "Min Latencies"),
            footer(text, "Avg Latencies"),
            footer(text, "Max Latencies"),
        );
        // A cyclictest thread that took no sample before the run ended shows
        // its initial minimum (1000000) over an average of 0.
        for t in (0..2).filter(|&t| per_thread(text)[t] > 0) {
            assert!(mins[t] <= avgs[t] && avgs[t] <= maxs[t], "{text}");
        }
    }
    check_series(&doc["total"]);
}

#[test]
fn bad_values_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["-i", "0"], "--interval"),
        (&["-i", "-5"], "--interval"),
        (&["-i", "1parsec"], "--interval"),
        (&["-p", "100"], "--priority"),
        (&["-p", "0"], "--priority"),
        (&["--policy", "other", "-p", "5"], "--priority"),
        (&["--cpus", "9999"], "--cpus"),
        (&["--cpus", "x"], "--cpus"),
        (&["-l", "0"], "--loops"),
        (&["-D", "soon"], "--duration"),
        (&["--histogram-max", "0"], "--histogram-max"),
        (&["--dma-latency", "-3"], "--dma-latency"),
        (&["--max-latency", "5 parsecs"], "--max-latency"),
        (&["--policy", "sporadic"], "--policy"),
        (&["-t", "0"], "--threads"),
    ];
    for (args, flag) in cases {
        let out = expect(rtlab().arg("latency").args(*args).arg("--no-save"), &[2]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?} should name {flag}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a result");
    }
}

pub(crate) fn as_nobody(args: &[&str]) -> std::process::Output {
    std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(args)
        .env("HOME", "/nonexistent")
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user"]
fn policy_other_works_without_privileges() {
    let out = as_nobody(&[
        "latency",
        "--policy",
        "other",
        "-i",
        "500us",
        "-l",
        "200",
        "--json",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["params"]["policy"], "other");
    assert_eq!(u(&doc["params"]["priority"]), 0);
    let codes: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"not_realtime"), "{codes:?}");
    assert!(
        codes.contains(&"dma_latency"),
        "an unprivileged user cannot hold cpu_dma_latency: {codes:?}"
    );
    check_series(&doc["total"]);
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user"]
fn fifo_refused_exits_3_with_what_to_do() {
    let out = as_nobody(&["latency", "-l", "10", "--no-save"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{}", shown(&out));
    assert!(
        err.contains("CAP_SYS_NICE")
            && err.contains("LimitRTPRIO")
            && err.contains("--policy other"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn max_latency_is_a_ci_gate() {
    for (limit, code, verdict) in [("1ns", 1, "FAIL"), ("60s", 0, "PASS")] {
        let mut cmd = rtlab();
        cmd.args(["latency", "-i", "200us", "-l", "200", "--cpus", "0"])
            .args(["--no-save", "--max-latency", limit]);
        let out = expect(&mut cmd, &[code]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("max-latency {limit}: {verdict}")),
            "{text}"
        );
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn breaktrace_stops_every_thread_at_the_first_excess() {
    let (code, doc) = run_json(&["-i", "500us", "-l", "1000", "-b", "1ns"]);
    assert_eq!(code, 1);
    assert_eq!(doc["status"], "interrupted");
    let b = &doc["breaktrace"];
    assert_eq!(u(&b["cycle"]), 0, "any real wake-up is later than 1 ns");
    let t = u(&b["thread"]) as usize;
    assert_eq!(u(&doc["series"][t]["counters"]["samples"]), 1);
    for s in doc["series"].as_array().unwrap() {
        assert!(
            u(&s["counters"]["samples"]) < 1000,
            "the other threads stopped too"
        );
    }
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn priority_99_warns() {
    let (code, doc) = run_json(&["-i", "500us", "-l", "10", "-p", "99", "--cpus", "0"]);
    assert_eq!(code, 0);
    assert!(doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "priority99"));
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn sigint_keeps_what_was_gathered_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["latency", "-i", "1ms", "--json", "-q", "--dma-latency", "0"])
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_measuring(child.id());
    // SAFETY: kill(2) with the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "interrupted");
    assert_eq!(doc["exit_code"], 130);
    assert!(u(&doc["total"]["counters"]["samples"]) > 0);
    check_series(&doc["total"]);
    // Saved, as interrupted, with the same samples.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (status, samples): (String, i64) = conn
        .query_row(
            "SELECT status, samples FROM runs WHERE id = ?1",
            [u(&doc["id"])],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "interrupted");
    assert_eq!(samples as u64, u(&doc["total"]["counters"]["samples"]));
}
