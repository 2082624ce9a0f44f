//! `rtlab load` and `--load`: every kind starts, works, stops and leaves nothing
//! behind; bad specs are refused naming the bad part; the memory guard; loads
//! recorded in latency runs; Ctrl-C, a crashed worker and a killed parent leave
//! no process and no file.

use crate::common::{expect, rtlab, wait_for, wait_until_measuring};
use predicates::prelude::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `(pid, ppid, pgrp)` of every process, from /proc/<pid>/stat.
fn processes() -> Vec<(i32, i32, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 3 && f[0] != "Z" {
            out.push((pid, f[1].parse().unwrap_or(0), f[2].parse().unwrap_or(0)));
        }
    }
    out
}

/// Waits (for the reaper) until no live process is one of `pids` or in one of
/// their process groups; panics naming what is left after a minute.
fn assert_gone(pids: &[i32]) {
    let left = || -> Vec<(i32, i32, i32)> {
        processes()
            .into_iter()
            .filter(|(p, _, g)| pids.contains(p) || pids.contains(g))
            .collect()
    };
    wait_for("the workers to be gone", || left().is_empty());
}

fn worker_pids(run: &Value) -> Vec<i32> {
    run["loads"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["per_worker"].as_array().unwrap().iter())
        .map(|w| w["pid"].as_i64().unwrap() as i32)
        .collect()
}

fn warning_codes(run: &Value) -> Vec<&str> {
    run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

fn load_json(args: &[&str]) -> Value {
    let out = expect(
        rtlab()
            .args(["load", "--json", "--no-save", "-D", "1s"])
            .args(args),
        &[0],
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_kind_works_stops_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let io_dir = format!("dir={}", dir.path().display());
    let walk = format!("root={}", env!("CARGO_MANIFEST_DIR"));
    let cases: Vec<Vec<&str>> = vec![
        vec!["cpu:2"],
        vec!["cpu method=prime load=50%"],
        vec!["vm:1:16M"],
        vec!["vm:1:16M keep"],
        vec!["memcopy bytes=16M"],
        vec!["io", &io_dir],
        vec!["io sync", &io_dir],
        vec!["fswalk", &walk],
        vec!["procfs"],
        vec!["msg fds=4"],
        vec!["msg fds=4 threads pipe"],
        vec!["fork"],
        vec!["timer timers=8"],
        vec!["net"],
        vec!["exec:sleep 0.1"],
    ];
    for case in cases {
        let spec = case.join(" ");
        let run = load_json(&[&spec]);
        assert_eq!(run["format"], "rtlab/1");
        assert_eq!(run["kind"], "load");
        assert_eq!(run["status"], "complete", "{spec}");
        let load = &run["loads"][0];
        assert!(
            load["totals"]["ops"].as_u64().unwrap() > 0,
            "{spec}: no work: {load}"
        );
        assert!(
            load["achieved"]["ops_per_s"].as_f64().unwrap() > 0.0,
            "{spec}"
        );
        for w in load["per_worker"].as_array().unwrap() {
            assert_eq!(w["end"], "stopped", "{spec}: {w}");
            assert!(w["max_rss_kib"].as_u64().unwrap() > 0);
        }
        assert!(load["stop_ms"].as_f64().unwrap() >= 0.0);
        assert_gone(&worker_pids(&run));
        if spec.starts_with("exec") {
            assert!(load["totals"]["restarts"].as_u64().unwrap() > 0, "{load}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "io left files: {left:?}");
}

#[test]
fn cpu_workers_are_counted_separately() {
    let run = load_json(&["cpu", "--workers", "3", "--method", "int"]);
    let load = &run["loads"][0];
    assert_eq!(load["workers"], 3);
    assert_eq!(load["params"]["method"], "int");
    assert_eq!(load["params"]["policy"], "other");
    let per: Vec<u64> = load["per_worker"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["ops"].as_u64().unwrap())
        .collect();
    assert_eq!(per.len(), 3);
    assert!(per.iter().all(|&o| o > 0));
    assert_eq!(
        per.iter().sum::<u64>(),
        load["totals"]["ops"].as_u64().unwrap()
    );
}

#[test]
fn dohell_runs_its_parts_and_lists_them() {
    rtlab()
        .args(["load", "--list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("dohell").and(predicate::str::contains("part: fswalk")));
    // The io part writes to /var/tmp; check nothing of ours stays there.
    let run = load_json(&["dohell"]);
    let kinds: Vec<&str> = run["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["procfs", "msg", "memcopy", "fswalk", "io"]);
    for l in run["loads"].as_array().unwrap() {
        assert_eq!(l["params"]["mix"], "dohell");
        assert!(l["totals"]["ops"].as_u64().unwrap() > 0, "{l}");
    }
    let pids = worker_pids(&run);
    assert_gone(&pids);
    for e in std::fs::read_dir("/var/tmp").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            !pids
                .iter()
                .any(|p| name.starts_with(&format!("rtlab-io-{p}-"))),
            "left {name}"
        );
    }
}

#[test]
fn bad_specs_are_refused_naming_the_part() {
    for (args, part) in [
        (vec!["load", "cpux"], "cpux"),
        (vec!["load", "vm:1:12Q"], "12Q"),
        (vec!["load", "cpu", "--method", "fast"], "method 'fast'"),
        (vec!["load", "fswalk colour=red"], "colour"),
        (vec!["load", "cpu", "--load-cpus", "99999"], "--load-cpus"),
        (
            vec!["load", "cpu", "--load-policy", "fifo"],
            "--load-policy",
        ),
        (vec!["load", "cpu", "-D", "soon"], "--duration"),
        (vec!["latency", "-D", "1", "--load", "cpu:0"], "--load"),
    ] {
        rtlab()
            .args(&args)
            .arg("--no-save")
            .assert()
            .code(2)
            .stderr(predicate::str::contains(part));
    }
}

#[test]
fn io_in_a_missing_directory_and_a_command_that_cannot_start_are_errors() {
    rtlab()
        .args(["load", "io dir=/nonexistent/rtlab", "-D", "1", "--no-save"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/rtlab"));
    rtlab()
        .args([
            "load",
            "exec:/nonexistent/rtlab-cmd --flag",
            "-D",
            "1",
            "--no-save",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to start"));
}

#[test]
fn vm_refuses_most_of_the_available_memory_without_force() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let avail_kib: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    // Two workers of 0.5 × MemAvailable each: 100% > 90%.
    let each = format!("{}K", avail_kib / 2);
    rtlab()
        .args(["load", &format!("vm:2:{each}"), "-D", "1", "--no-save"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("MemAvailable").and(predicate::str::contains("--force")));
    rtlab()
        .args([
            "latency",
            "-D",
            "1",
            "--no-save",
            "--load",
            &format!("vm:2:{each}"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("MemAvailable"));
    // A small block passes the same guard.
    let run = load_json(&["vm:1:8M"]);
    assert_eq!(run["loads"][0]["params"]["bytes"], 8 << 20);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn latency_under_load_records_the_load_and_its_rate() {
    let out = expect(
        rtlab()
            .args(["latency", "-D", "1", "-i", "1ms", "--json", "--no-save"])
            .args(["--load", "cpu:2", "--load-nice", "5"]),
        &[0],
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["kind"], "latency");
    let loads = run["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[0]["spec"], "cpu:2");
    assert_eq!(loads[0]["workers"], 2);
    assert_eq!(loads[0]["params"]["nice"], 5);
    assert!(loads[0]["achieved"]["ops_per_s"].as_f64().unwrap() > 0.0);
    assert!(loads[0]["achieved"]["cpu_pct_per_worker"].as_f64().unwrap() > 0.0);
    let codes = warning_codes(&run);
    assert!(codes.contains(&"load_cpu_shared"), "{codes:?}");
    assert_gone(&worker_pids(&run));
}

/// Whether process `pid` runs as a load worker: it has been placed (policy,
/// nice, CPUs, set between fork and exec) and has run the worker command.
fn is_worker(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"__load-worker"))
}

/// Starts rtlab with `args` and waits until it has `n` load workers (placed and
/// started, not yet ready: each caller waits for what shows its workers at
/// work); returns the child (which every caller waits for) and the worker pids.
#[allow(clippy::zombie_processes)]
fn spawn_with_workers(args: &[&str], n: usize) -> (std::process::Child, Vec<i32>) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id() as i32;
    let t0 = Instant::now();
    loop {
        let workers: Vec<i32> = processes()
            .into_iter()
            .filter(|&(p, pp, g)| pp == me && g == p && is_worker(p))
            .map(|(p, _, _)| p)
            .collect();
        if workers.len() >= n {
            return (child, workers);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "workers never appeared: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) takes integers only.
    unsafe { libc::kill(pid, sig) };
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn interrupting_a_loaded_latency_run_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let io = format!("io dir={}", dir.path().display());
    let (child, workers) = spawn_with_workers(
        &[
            "latency",
            "-D",
            "60",
            "--json",
            "--no-save",
            "--load",
            "cpu:2",
            "--load",
            &io,
            "--load",
            "msg fds=2",
        ],
        4,
    );
    // The loads are ready before the probe starts: interrupt it measuring.
    wait_until_measuring(child.id());
    signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["loads"].as_array().unwrap().len(), 3);
    assert!(run["loads"][0]["totals"]["ops"].as_u64().unwrap() > 0);
    assert_gone(&workers);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_crashed_worker_is_reported_and_the_rest_stop() {
    // io workers write 64 MiB files: the killed one dies with a file half
    // written, which rtlab must remove.
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("io:2 bytes=64M dir={}", dir.path().display());
    let (child, workers) =
        spawn_with_workers(&["load", &spec, "-D", "3", "--json", "--no-save"], 2);
    // Killed at work: each has said ready, then made its first file.
    wait_for("both io workers to write", || {
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        workers.iter().all(|w| {
            names
                .iter()
                .any(|n| n.starts_with(&format!("rtlab-io-{w}-")))
        })
    });
    signal(workers[0], libc::SIGKILL);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ends: Vec<&str> = run["loads"][0]["per_worker"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["end"].as_str().unwrap())
        .collect();
    assert!(ends.contains(&"crashed: signal 9"), "{ends:?}");
    assert!(ends.contains(&"stopped"), "{ends:?}");
    assert!(warning_codes(&run).contains(&"load_worker"));
    assert_gone(&workers);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn killing_rtlab_takes_its_workers_with_it() {
    let (mut child, workers) = spawn_with_workers(
        &["load", "msg fds=2", "-D", "60", "--no-save", "-w", "2"],
        2,
    );
    // Workers and what they forked (the msg senders and receivers).
    let members = || {
        processes()
            .into_iter()
            .filter(|(_, _, g)| workers.contains(g))
            .count()
    };
    wait_for("the msg workers to fork", || members() > workers.len());
    signal(child.id() as i32, libc::SIGKILL);
    let _ = child.wait();
    assert_gone(&workers);
}

#[test]
fn the_worker_entry_point_refuses_to_run_by_hand() {
    rtlab()
        .args([
            "__load-worker",
            "--fd",
            "99",
            "--slots",
            "1",
            "--slot",
            "0",
            "--load",
            r#"{"kind":"fork"}"#,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("started by rtlab itself"));
}

#[test]
#[ignore = "needs root: mounting a tmpfs"]
fn io_survives_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1M", "tmpfs", &d])
        .status()
        .is_ok_and(|s| s.success());
    assert!(mounted, "mount -t tmpfs failed: this test needs root");
    /// Unmounts even when an assertion fails.
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let mount = Unmount(d.clone());
    let spec = format!("io bytes=4M dir={d}");
    let refused = expect(rtlab().args(["load", &spec, "-D", "1", "--no-save"]), &[2]);
    let run = load_json(&[&format!("{spec} force")]);
    let left = std::fs::read_dir(dir.path()).unwrap().count();
    drop(mount);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("free"));
    let load = &run["loads"][0];
    assert_eq!(load["per_worker"][0]["end"], "stopped", "{load}");
    assert!(load["totals"]["errors"].as_u64().unwrap() > 0, "{load}");
    assert!(load["totals"]["bytes"].as_u64().unwrap() > 0, "{load}");
    let codes = warning_codes(&run);
    assert!(codes.contains(&"load_io_tmpfs"), "{codes:?}");
    assert_eq!(left, 0, "files left on the full file system");
}

#[test]
fn workers_are_placed_niced_and_time_shared() {
    let (child, workers) = spawn_with_workers(
        &[
            "load",
            "cpu:2",
            "-D",
            "2",
            "--no-save",
            "--load-cpus",
            "0",
            "--load-nice",
            "7",
        ],
        2,
    );
    for &w in &workers {
        let status = std::fs::read_to_string(format!("/proc/{w}/status")).unwrap();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        let stat = std::fs::read_to_string(format!("/proc/{w}/stat")).unwrap();
        let f: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // Fields after the command: state(0) ... nice(16) ... policy(38).
        let (nice, policy) = (f[16], f[38]);
        assert_eq!(allowed, "0");
        assert_eq!(nice, "7");
        assert_eq!(policy, "0", "SCHED_OTHER");
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_gone(&workers);
}
