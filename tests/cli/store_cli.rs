//! The results store through the command line: a native run's round trip, the
//! results subcommands, refusal of other databases and unknown schemas (left
//! unchanged), concurrent creators and writers, and killed writers.

use crate::store_common::{empty_store, export_json, import, list_ids, list_ids_with, rtlab};
use predicates::prelude::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};

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
fn garbage_is_not_a_database_and_is_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    let text = "this is not sqlite, just text long enough to have a header......";
    std::fs::write(&junk, text).unwrap();
    rtlab(&junk)
        .args(["results", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an rtlab results database"));
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), text);
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

/// A command line as shown in failure messages.
fn shown(args: &[&OsStr]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `rtlab --db DB ARGS`, started behind a gate: a shell waits for a line on its
/// stdin, then becomes rtlab, so that several start at the same instant once
/// [`open_gates`] is called. Returns the command line (for messages) and the child.
fn spawn_gated(db: &Path, args: &[&OsStr]) -> (String, Child) {
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let mut line: Vec<&OsStr> = vec![bin.as_os_str(), OsStr::new("--db"), db.as_os_str()];
    line.extend_from_slice(args);
    let child = std::process::Command::new("sh")
        .args(["-c", "read -r _ && exec \"$@\"", "sh"])
        .args(&line)
        .env_remove("RTLAB_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (shown(&line), child)
}

/// Lets every gated child start (one line each, written back to back).
fn open_gates(children: &mut [(String, Child)]) {
    for (_, c) in children.iter_mut() {
        let mut stdin = c.stdin.take().unwrap();
        stdin.write_all(b"go\n").unwrap();
    }
}

/// Waits for a child; unless it exited 0, panics showing its command line, exit
/// code, stdout and stderr.
fn wait_ok((line, child): (String, Child)) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "command: {line}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `n` processes started at the same instant, each importing `copies` copies of
/// `file` into `db`; each must exit 0.
fn import_at_once(db: &Path, file: &Path, n: usize, copies: usize) {
    let mut args: Vec<&OsStr> = vec![OsStr::new("results"), OsStr::new("import")];
    args.extend(std::iter::repeat_n(file.as_os_str(), copies));
    let mut children: Vec<_> = (0..n).map(|_| spawn_gated(db, &args)).collect();
    open_gates(&mut children);
    children.into_iter().for_each(wait_ok);
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path());
    let db = dir.path().join("shared.db");
    import_at_once(&db, &file, 8, 3);
    assert_eq!(check_consistent(&db), 24);
    let out = rtlab(&db).args(["results", "campaigns"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_end().ends_with(" 3"))
            .count(),
        8,
        "{text}"
    );
}

/// Regression: 17 of 920 concurrent creations of one store failed with exit 2
/// ("not an rtlab results database (database is locked)").
#[test]
fn concurrent_creations_of_one_store_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path());
    for round in 0..5 {
        let fresh = tempfile::tempdir().unwrap();
        let db = fresh.path().join("new.db");
        import_at_once(&db, &file, 8, 1);
        assert_eq!(check_consistent(&db), 8, "round {round}");
    }
}

/// The bytes, modification time and neighbours of a file: what "left unchanged"
/// compares.
fn snapshot(file: &Path) -> (Vec<u8>, std::time::SystemTime, Vec<std::ffi::OsString>) {
    let mut names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let modified = std::fs::metadata(file).unwrap().modified().unwrap();
    (std::fs::read(file).unwrap(), modified, names)
}

#[test]
fn another_programs_database_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cpu.txt");
    std::fs::write(
        &file,
        "sysbench 1.0.20\nCPU speed:\n events per second: 10.5\nGeneral statistics:\n total time: 1.0s\n total number of events: 10\nLatency (ms):\n min: 0.03\n avg: 0.06\n max: 32.09\n 95th percentile: 0.03\n",
    )
    .unwrap();
    for (name, sql) in [
        (
            "notes",
            "CREATE TABLE notes (x); INSERT INTO notes VALUES ('mine');",
        ),
        ("other-app", "PRAGMA application_id = 1234;"),
    ] {
        let sub = tempfile::tempdir().unwrap();
        let db = sub.path().join(format!("{name}.db"));
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let before = snapshot(&db);
        for args in [
            vec!["results", "list"],
            vec!["results", "import", file.to_str().unwrap()],
        ] {
            rtlab(&db)
                .args(&args)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(format!(
                    "{} is not an rtlab results database",
                    db.display()
                )));
            assert!(snapshot(&db) == before, "{name}: {args:?} changed the file");
        }
    }
}

#[test]
fn unknown_schema_versions_are_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    empty_store(&db);
    for (version, expected) in [
        (
            99,
            "has schema version 99: made by a newer rtlab, upgrade or use another --db",
        ),
        (-1, "has schema version -1, which no rtlab writes"),
    ] {
        rusqlite::Connection::open(&db)
            .unwrap()
            .pragma_update(None, "user_version", version)
            .unwrap();
        let (bytes, modified, _) = snapshot(&db);
        rtlab(&db)
            .args(["results", "list"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
        let (after, modified_after, _) = snapshot(&db);
        assert!(after == bytes, "version {version}: the file changed");
        assert_eq!(modified_after, modified, "version {version}");
    }
}

#[test]
fn an_empty_file_is_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    std::fs::write(&db, b"").unwrap();
    latency_run(&db, &["-t", "1"]);
    assert_eq!(list_ids(&db).len(), 1);
    let id: i32 = rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    assert_eq!(&id.to_be_bytes(), b"RTLB");
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
    empty_store(&db);
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
    empty_store(&db);
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
