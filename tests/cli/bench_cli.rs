//! End-to-end tests of `rtlab bench`: each bench runs briefly through the binary
//! and its record must be consistent (events, ordered percentiles, rates equal to
//! counts over the recorded time), fileio must leave nothing behind, bad input
//! must exit 2 naming the flag.

use crate::common::{json, rtlab};
use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// Runs `rtlab bench ARGS --no-save --json` (ARGS split at blanks) and returns
/// the record.
fn bench_json(args: &str) -> Value {
    json_of(
        rtlab()
            .arg("bench")
            .args(args.split_whitespace())
            .args(["--no-save", "--json"]),
    )
}

/// Runs a command that must succeed and print one JSON document.
fn json_of(cmd: &mut Command) -> Value {
    json(cmd, &[0])
}

/// Equal up to the last bit or two that a JSON round trip of an f64 may change.
fn same(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

fn assert_same(a: f64, b: f64, what: &str) {
    assert!(same(a, b), "{what}: {a} != {b}");
}

fn metric(run: &Value, name: &str) -> f64 {
    run["metrics"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("metric {name} missing in {}", run["metrics"]))
}

/// The invariants every bench record keeps.
fn check_consistent(run: &Value, kind: &str) {
    assert_eq!(run["format"], "rtlab/1");
    assert_eq!(run["kind"], kind);
    let total = &run["total"];
    let events = metric(run, "total_events");
    assert!(events > 0.0, "no events");
    assert_eq!(total["counters"]["samples"].as_f64().unwrap(), events);
    let per_thread: f64 = run["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["counters"]["samples"].as_f64().unwrap())
        .sum();
    assert_eq!(per_thread, events);
    assert_eq!(
        run["series"].as_array().unwrap().len() as u64,
        run["params"]["threads"].as_u64().unwrap()
    );
    for s in run["series"].as_array().unwrap().iter().chain([total]) {
        let m = &s["summary"];
        let keys = [
            "min_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
        ];
        let v: Vec<u64> = keys.iter().map(|k| m[k].as_u64().unwrap()).collect();
        if m["samples"].as_u64().unwrap() > 0 {
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "unordered {m}");
            let mean = m["mean_ns"].as_f64().unwrap();
            assert!(mean >= v[0] as f64 && mean <= v[7] as f64);
        }
        let hist: u64 = s["histogram"]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(hist, m["samples"].as_u64().unwrap());
    }
    // Rates are counts over the recorded time, exactly.
    let secs = metric(run, "total_time_s");
    assert_same(
        secs,
        run["duration_ns"].as_u64().unwrap() as f64 / 1e9,
        "time",
    );
    assert_same(metric(run, "events_per_s"), events / secs, "events/s");
    assert!(metric(run, "timing_overhead_ns") > 0.0);
    let s = &total["summary"];
    assert_eq!(
        metric(run, "spread_max_min_ns"),
        (s["max_ns"].as_u64().unwrap() - s["min_ns"].as_u64().unwrap()) as f64
    );
    assert_same(
        metric(run, "spread_p95_mean_ns"),
        s["p95_ns"].as_u64().unwrap() as f64 - s["mean_ns"].as_f64().unwrap(),
        "p95-mean",
    );
    assert_same(
        metric(run, "fairness_events_avg"),
        events / run["series"].as_array().unwrap().len() as f64,
        "fairness",
    );
}

#[test]
fn cpu_counts_the_primes_below_the_limit() {
    let run = bench_json("cpu --events 20 --threads 2");
    check_consistent(&run, "bench.cpu");
    assert_eq!(metric(&run, "total_events"), 20.0);
    assert_eq!(metric(&run, "primes"), 1229.0);
    assert_eq!(run["status"], "complete");
    let run = bench_json("cpu --max-prime 2000 --time 300ms");
    check_consistent(&run, "bench.cpu");
    assert_eq!(metric(&run, "primes"), 303.0);
    assert_eq!(run["params"]["probe"], "bench.cpu");
    assert_eq!(run["params"]["time"], "300ms");
}

#[test]
fn memory_moves_exactly_the_total_size() {
    let run = bench_json(
        "memory --block-size 4K --total-size 4M --threads 2 --scope local --oper read --access rnd",
    );
    check_consistent(&run, "bench.memory");
    assert_eq!(metric(&run, "total_events"), 1024.0);
    assert_eq!(metric(&run, "total_mib"), 4.0);
    assert_same(
        metric(&run, "mib_per_s"),
        4.0 / metric(&run, "total_time_s"),
        "MiB/s",
    );
    if Path::new("/sys/devices/system/cpu/cpu0/cache/index0/size").exists() {
        let codes: Vec<&str> = run["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"in_cache"), "{codes:?}");
    }
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

/// The read and write system calls of `pid`'s threads but its first
/// (/proc/PID/task/TID/io): the requests of a benchmark's workers.
fn worker_requests(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| t.file_name() != pid.to_string().as_str())
        .map(|t| {
            let io = std::fs::read_to_string(t.path().join("io")).unwrap_or_default();
            io.lines()
                .filter_map(|l| l.strip_prefix("syscr: ").or(l.strip_prefix("syscw: ")))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

#[test]
fn fileio_every_mode_counts_its_requests_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for mode in ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"] {
        let run = bench_json(&format!("fileio --dir {d} --total-size 2M --files 4 --mode {mode} --threads 2 --events 200 --fsync-freq 50"));
        check_consistent(&run, "bench.fileio");
        let (r, w, f) = (
            metric(&run, "total_reads"),
            metric(&run, "total_writes"),
            metric(&run, "total_fsyncs"),
        );
        // Events are requests and periodic fsyncs; each thread syncs the 4 files at
        // the end when the mode writes.
        let end_fsyncs = if mode.contains("rd") && mode != "rndrw" {
            0.0
        } else {
            8.0
        };
        assert_eq!(r + w + f, 200.0 + end_fsyncs, "{mode}");
        match mode {
            "seqrd" | "rndrd" => assert!(w == 0.0 && f == 0.0 && r == 200.0),
            "rndrw" => assert!(r > w && w > 0.0 && f > end_fsyncs, "{mode} {r} {w} {f}"),
            _ => assert!(r == 0.0 && f > end_fsyncs, "{mode} {r} {w} {f}"),
        }
        let secs = metric(&run, "total_time_s");
        assert_same(metric(&run, "reads_per_s"), r / secs, "reads/s");
        assert_same(metric(&run, "writes_per_s"), w / secs, "writes/s");
        assert_same(metric(&run, "fsyncs_per_s"), f / secs, "fsyncs/s");
        let block = 16.0 * 1024.0;
        assert_same(
            metric(&run, "read_mib_per_s"),
            r * block / (1024.0 * 1024.0) / secs,
            "read MiB/s",
        );
        assert_same(
            metric(&run, "written_mib_per_s"),
            w * block / (1024.0 * 1024.0) / secs,
            "written MiB/s",
        );
        assert!(empty(dir.path()), "{mode} left files in {d}");
    }
}

#[test]
fn fileio_refuses_what_does_not_fit_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    rtlab()
        .args("bench fileio --no-save --total-size 900T --dir".split(' '))
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--total-size: 900TiB does not fit in",
        ))
        .stderr(predicate::str::contains("available"));
    assert!(empty(dir.path()));
    rtlab()
        .args("bench fileio --no-save --dir /nonexistent/usb".split(' '))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--dir: /nonexistent/usb is not a directory",
        ));
}

/// A tmpfs mounted on a fresh directory (root only), unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(opts: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount -t tmpfs -o {opts} failed: this test needs root");
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
#[ignore = "needs root: mounting a tmpfs"]
fn fileio_on_a_read_only_file_system_exits_3() {
    let fs = Tmpfs::mount("ro,size=64m");
    rtlab()
        .args("bench fileio --no-save --total-size 1M".split(' '))
        .args(["--files", "4", "--dir"])
        .arg(fs.0.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("read-only file system"));
}

#[test]
#[ignore = "needs root: mounting a tmpfs"]
fn fileio_out_of_space_exits_3_and_removes_its_files() {
    // Room for the bytes but only a few inodes: creating file 5 hits ENOSPC.
    let fs = Tmpfs::mount("size=64m,nr_inodes=6");
    rtlab()
        .args("bench fileio --no-save --total-size 2M --files 16 --dir".split(' '))
        .arg(fs.0.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("No space left on device"))
        .stderr(predicate::str::contains("The test files were removed"));
    assert!(empty(fs.0.path()));
}

/// Starts a fileio run, waits until `now` holds of its pid and directory
/// (`what`, for the message if it never does), sends SIGINT, and returns the
/// exit code and stdout.
fn interrupt_fileio(
    dir: &Path,
    size: &str,
    (what, now): (&str, fn(u32, &Path) -> bool),
) -> (Option<i32>, String) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args("bench fileio --no-save --json --time 20s".split(' '))
        .args(["--files", "4", "--total-size", size, "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait_for(what, || now(child.id(), dir));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn fileio_interrupted_while_running_saves_what_it_measured_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    // Its workers have done some of their requests: it runs.
    let running = |pid: u32, _: &Path| worker_requests(pid) >= 100;
    let (code, stdout) = interrupt_fileio(dir.path(), "4M", ("the run", running));
    assert_eq!(code, Some(130));
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["status"], "interrupted");
    assert!(metric(&run, "total_events") > 0.0);
    assert!(empty(dir.path()), "files left after SIGINT");
}

#[test]
fn fileio_interrupted_while_preparing_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    // 1 GiB takes long enough to prepare that the signal lands in the middle
    // when it is sent as the first file appears.
    let preparing = |_: u32, dir: &Path| !empty(dir);
    let (code, stdout) = interrupt_fileio(dir.path(), "1G", ("the files", preparing));
    assert_eq!(code, Some(130));
    assert!(stdout.is_empty(), "nothing was measured: {stdout}");
    assert!(empty(dir.path()), "files left after SIGINT");
}

#[test]
fn threads_and_mutex_do_all_their_work() {
    let run = bench_json("threads --events 10 --yields 20 --locks 1 --threads 2");
    check_consistent(&run, "bench.threads");
    assert_eq!(metric(&run, "total_ops"), 200.0);
    let run = bench_json("mutex --threads 3 --locks 500 --loops 10 --mutexes 4");
    check_consistent(&run, "bench.mutex");
    // One event per thread, as in sysbench.
    assert_eq!(metric(&run, "total_events"), 3.0);
    assert_eq!(metric(&run, "total_ops"), 1500.0);
    assert_eq!(run["status"], "complete");
    // --time caps the mutex run; fewer locks were taken, and the run says so.
    let run = bench_json("mutex --threads 2 --locks 100000000 --time 300ms");
    check_consistent(&run, "bench.mutex");
    assert!(metric(&run, "total_ops") < 2e8);
    assert!(run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "cut_short"));
}

#[test]
fn runs_are_saved_and_intervals_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    rtlab()
        .arg("--db")
        .arg(&db)
        .args("bench cpu --time 1s --report-interval 200ms".split(' '))
        .args(["--max-prime", "2000", "--label", "k1", "--tag", "t"])
        .assert()
        .success()
        // Interval lines show the time they were taken, which on a busy machine
        // may be later than the 0.2 s asked for.
        .stdout(predicate::str::is_match(r"\[\s+\d+\.\ds\] events/s \d").unwrap())
        .stdout(predicate::str::contains("rtlab bench cpu  k1  [complete]"))
        .stdout(predicate::str::contains("p95-mean"))
        .stderr(predicate::str::contains("saved as run 1"));
    assert!(db.exists());
}

#[test]
fn suite_runs_the_five_as_one_campaign_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let db = dir.path().join("x.db");
    let doc = json_of(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args("bench suite --time 2s --fileio-size 8M --json --tag t".split(' '))
            .arg("--dir")
            .arg(&files),
    );
    assert_eq!(doc["name"], "suite");
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["exit_code"], 0);
    let campaign = doc["campaign"].as_i64().unwrap();
    let runs: Vec<&Value> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["run"])
        .collect();
    let kinds: Vec<&str> = runs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "bench.cpu",
            "bench.memory",
            "bench.fileio",
            "bench.threads",
            "bench.mutex"
        ]
    );
    for r in &runs {
        check_consistent(r, r["kind"].as_str().unwrap());
        assert!(r["id"].as_i64().is_some());
        assert_eq!(r["campaign"], campaign);
        let tags = r["tags"].as_array().unwrap();
        assert!(tags.contains(&"suite".into()) && tags.contains(&"t".into()));
        // A fifth of the budget each.
        assert_eq!(r["params"]["time"], "400ms");
    }
    assert_eq!(runs[0]["params"]["max_prime"], 2000);
    assert_eq!(runs[2]["params"]["threads"], 16);
    assert_eq!(runs[2]["params"]["total_size"], "8M");
    assert_eq!(runs[2]["params"]["dir"], files.to_str().unwrap());
    assert_eq!(runs[3]["params"]["locks"], 1);
    assert_eq!(runs[4]["params"]["threads"], 64);
    assert!(empty(&files));
    // Stored as one campaign of five runs, the same `rtlab run --preset suite` makes.
    let listed = rtlab()
        .arg("--db")
        .arg(&db)
        .args(["results", "campaigns"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    let rows: Vec<&str> = listed.lines().filter(|l| l.contains("suite")).collect();
    assert_eq!(rows.len(), 1, "{listed}");
    let stored = json_of(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "list", "--json"]),
    );
    assert_eq!(stored.as_array().unwrap().len(), 5, "{stored}");
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["cpu", "--threads", "0"], "--threads: 0 is outside 1-4096"),
        (&["cpu", "--time", "0"], "--time: '0' is zero"),
        (&["cpu", "--time", "5parsec"], "--time: unknown unit"),
        (&["cpu", "--events", "0"], "--events: 0 events"),
        (
            &["cpu", "--max-prime", "2"],
            "--max-prime: 2 leaves no number",
        ),
        (
            &["cpu", "--report-interval=-1s"],
            "--report-interval: '-1s' is negative",
        ),
        (
            &["memory", "--block-size", "12"],
            "--block-size: 12 is not a multiple",
        ),
        (
            &["memory", "--block-size", "lots"],
            "--block-size: 'lots' does not start",
        ),
        (
            &["memory", "--total-size", "0"],
            "--total-size: '0' is zero",
        ),
        (
            &["memory", "--oper", "copy"],
            "invalid value 'copy' for '--oper",
        ),
        (
            &["fileio", "--mode", "append"],
            "invalid value 'append' for '--mode",
        ),
        (&["fileio", "--files", "0"], "--files: 0 files"),
        (
            &["fileio", "--rw-ratio", "0"],
            "--rw-ratio: 0 must be a number above 0",
        ),
        (
            &["fileio", "--total-size", "1M", "--block-size", "1M"],
            "--total-size: 1M is less than --files 128",
        ),
        (
            &["fileio", "--direct", "--block-size", "1000"],
            "not a multiple of 512",
        ),
        (&["threads", "--yields", "0"], "--yields: 0 yields"),
        (&["mutex", "--locks", "0"], "--locks: 0 locks"),
        (
            &["suite", "--time", "soon"],
            "--time: 'soon' does not start",
        ),
        (
            &["suite", "--fileio-size", "900T"],
            "--fileio-size: 900TiB does not fit",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, msg) in cases {
        rtlab()
            .current_dir(dir.path())
            .arg("bench")
            .args(*args)
            .arg("--no-save")
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*msg));
        assert!(empty(dir.path()), "{args:?} left files");
    }
}
