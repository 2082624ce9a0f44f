//! The results store through the command line: a native run's round trip, the
//! results subcommands, schema refusal, concurrent writers and killed writers.

mod store_common;

use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use store_common::{export_json, import, list_ids, list_ids_with, rtlab};

/// A short native latency run (SCHED_OTHER: no privileges needed), saved.
fn latency_run(db: &Path, extra: &[&str]) -> Value {
    let out = rtlab(db)
        .args([
            "latency", "--policy", "other", "-l", "100", "-i", "200us", "--json",
        ])
        .args(extra)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn a_saved_run_exports_exactly_what_was_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let printed = latency_run(&db, &["-t", "2", "--label", "a,\"b\"", "--tag", "t1"]);
    let id = printed["id"].as_i64().unwrap();
    assert_eq!(export_json(&db, id), printed);
    let show = rtlab(&db)
        .args(["results", "show", &id.to_string()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&show.get_output().stdout).to_string();
    let release = printed["fingerprint"]["kernel_release"].as_str().unwrap();
    assert!(text.contains(&format!("kernel_release  {release}")) || text.contains(release));
    assert!(text.contains("! not_realtime:"), "{text}");
    assert!(text.contains("cpu0") || text.contains("thread0"), "{text}");
    // CSV: a header, one row per thread and the total; the label is quoted.
    let csv = rtlab(&db)
        .args(["results", "export", &id.to_string(), "--format", "csv"])
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&csv.get_output().stdout).to_string();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("run,kind,label,status,series,samples"));
    assert!(
        lines[3].contains(",\"a,\"\"b\"\"\",complete,all,200,"),
        "{csv}"
    );
    // Several runs make one table; their metrics are the union of columns.
    let bench = dir.path().join("cpu.txt");
    std::fs::write(
        &bench,
        "sysbench 1.0.20\nCPU speed:\n events per second: 10.5\nGeneral statistics:\n total time: 1.0s\n total number of events: 10\nLatency (ms):\n min: 0.03\n avg: 0.06\n max: 32.09\n 95th percentile: 0.03\n",
    )
    .unwrap();
    let b = import(&db, &[bench.to_str().unwrap()])[0];
    let both = rtlab(&db)
        .args([
            "results",
            "export",
            &id.to_string(),
            &b.to_string(),
            "--format",
            "csv",
        ])
        .assert()
        .success();
    let both = String::from_utf8_lossy(&both.get_output().stdout).to_string();
    let rows: Vec<&str> = both.lines().collect();
    assert_eq!(rows.len(), 5, "{both}");
    assert!(
        rows[0].ends_with(",events_per_s,total_events,total_time_s"),
        "{both}"
    );
    assert!(
        rows[3].ends_with(",,,"),
        "latency rows have no metrics: {both}"
    );
    assert!(
        rows[4].contains(",bench.cpu,cpu,complete,all,10,") && rows[4].ends_with(",10.5,10,1"),
        "{both}"
    );
    rtlab(&db)
        .args(["results", "export", &id.to_string(), &b.to_string()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--format json: export one run at a time",
        ));
    // rtlab's JSON imports back as a new run with the same content.
    let file = dir.path().join("run.json");
    std::fs::write(&file, serde_json::to_string(&printed).unwrap()).unwrap();
    let again = import(&db, &[file.to_str().unwrap()])[0];
    let mut copy = export_json(&db, again);
    copy["id"] = printed["id"].clone();
    assert_eq!(copy, printed);
}

#[test]
fn list_filters_and_edits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let a = latency_run(&db, &["-t", "1", "--label", "vanilla"])["id"]
        .as_i64()
        .unwrap();
    let b = latency_run(&db, &["-t", "1", "--label", "preempt-rt"])["id"]
        .as_i64()
        .unwrap();
    let ids = |args: &[&str]| list_ids_with(&db, args);
    assert_eq!(ids(&[]), vec![b, a]);
    assert_eq!(ids(&["--label", "vanilla"]), vec![a]);
    assert_eq!(ids(&["--last", "1"]), vec![b]);
    assert_eq!(ids(&["--label", "pre%"]), vec![b]);
    assert_eq!(ids(&["--kind", "latency", "--since", "1h"]), vec![b, a]);
    assert_eq!(ids(&["--since", "2999-01-01"]), Vec::<i64>::new());
    assert_eq!(ids(&["--kind", "bench.cpu"]), Vec::<i64>::new());
    rtlab(&db)
        .args(["results", "list", "--since", "last tuesday"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--since"));

    rtlab(&db)
        .args(["results", "tag", &a.to_string(), "baseline", "hz1000"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tags baseline, hz1000"));
    assert_eq!(ids(&["--tag", "hz1000"]), vec![a]);
    rtlab(&db)
        .args(["results", "tag", "--remove", &a.to_string(), "hz1000"])
        .assert()
        .success();
    assert_eq!(ids(&["--tag", "hz1000"]), Vec::<i64>::new());
    rtlab(&db)
        .args(["results", "label", &b.to_string(), "4.19.127-rt55"])
        .assert()
        .success();
    assert_eq!(export_json(&db, b)["label"], "4.19.127-rt55");
    let table = rtlab(&db).args(["results", "list"]).assert().success();
    let table = String::from_utf8_lossy(&table.get_output().stdout).to_string();
    assert!(
        table.contains("4.19.127-rt55") && table.contains("baseline"),
        "{table}"
    );

    // Unknown ids change nothing and say so.
    for args in [
        vec!["results", "show", "999"],
        vec!["results", "label", "999", "x"],
        vec!["results", "tag", "999", "x"],
        vec!["results", "export", "999"],
    ] {
        rtlab(&db)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("no run with id 999"));
    }
    rtlab(&db)
        .args(["results", "delete", &a.to_string(), "999"])
        .assert()
        .code(2);
    assert_eq!(list_ids(&db), vec![b, a]);
    rtlab(&db)
        .args(["results", "delete", &a.to_string(), &b.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains("deleted 2 run(s)"));
    assert!(list_ids(&db).is_empty());
}

#[test]
fn a_database_from_a_newer_rtlab_is_refused_and_garbage_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    rtlab(&db).args(["results", "list"]).assert().success();
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    rtlab(&db)
        .args(["results", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "has schema version 99: made by a newer rtlab, upgrade or use another --db",
        ));
    let junk = dir.path().join("junk.db");
    std::fs::write(
        &junk,
        "this is not sqlite, just text long enough to have a header......",
    )
    .unwrap();
    rtlab(&junk)
        .args(["results", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an rtlab results database"));
}

/// A large rtlab run document (4 threads), written once, imported many times.
fn big_run_file(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("source.db");
    let run = latency_run(&db, &["-t", "4"]);
    let file = dir.join("run.json");
    std::fs::write(&file, serde_json::to_string(&run).unwrap()).unwrap();
    file
}

/// Every stored run loads whole: four threads and a total, the integrity check
/// passes, and every campaign entry names a stored run.
fn check_consistent(db: &Path) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let ids = list_ids(db);
    for &id in &ids {
        let run = export_json(db, id);
        assert_eq!(run["series"].as_array().unwrap().len(), 4, "run {id}");
        assert!(run["total"].is_object(), "run {id}");
    }
    let orphans: i64 = conn
        .query_row(
            "SELECT count(*) FROM campaign_runs WHERE run_id NOT IN (SELECT id FROM runs)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    ids.len()
}

/// `rtlab results import FILE×copies` in the background, output discarded
/// except stderr.
fn spawn_import(db: &Path, file: &Path, copies: usize) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(db)
        .args(["results", "import"])
        .args(std::iter::repeat_n(file, copies))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path());
    let db = dir.path().join("shared.db");
    let children: Vec<_> = (0..4).map(|_| spawn_import(&db, &file, 6)).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(check_consistent(&db), 24);
    let out = rtlab(&db).args(["results", "campaigns"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_end().ends_with(" 6"))
            .count(),
        4,
        "{text}"
    );
}

/// Runs stored in `db` (0 while another process holds it).
fn stored(watch: &rusqlite::Connection) -> i64 {
    watch
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap_or(0)
}

/// Waits (at most a minute) until `db` holds `target` runs.
fn wait_for_runs(watch: &rusqlite::Connection, target: i64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while stored(watch) < target && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

#[test]
fn a_killed_writer_leaves_only_whole_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path());
    let db = dir.path().join("killed.db");
    rtlab(&db).args(["results", "list"]).assert().success();
    let watch = rusqlite::Connection::open(&db).unwrap();
    // SIGKILL while runs are being written, after 1, 3 and 10 more are in.
    for more in [1i64, 3, 10] {
        let target = stored(&watch) + more;
        let mut child = spawn_import(&db, &file, 100);
        wait_for_runs(&watch, target);
        let still_running = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        let n = check_consistent(&db);
        assert!(still_running, "the import ended before it could be killed");
        assert!(
            n as i64 >= target,
            "{n} runs stored, expected at least {target}"
        );
    }
}

#[test]
fn sigterm_stops_an_import_between_runs_and_marks_its_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path());
    let db = dir.path().join("term.db");
    rtlab(&db).args(["results", "list"]).assert().success();
    let watch = rusqlite::Connection::open(&db).unwrap();
    let child = spawn_import(&db, &file, 100);
    wait_for_runs(&watch, 2);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted:"));
    let n = check_consistent(&db);
    assert!((2..100).contains(&n), "{n} runs");
    let out = rtlab(&db)
        .args(["results", "campaigns", "1"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("[interrupted]"), "{text}");
    assert_eq!(text.lines().count(), 2 + n, "{text}");
}
