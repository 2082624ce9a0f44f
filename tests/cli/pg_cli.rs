//! A PostgreSQL store named by `--db postgres://…` (or `RTLAB_DB`), on a
//! throw-away server per test: measuring, listing, comparing, reports, tags,
//! deletes, a campaign, monitor windows, push and pull in both directions
//! (once per run and window, resumed after the server went away), and every
//! refusal (no server, wrong password, no such database, another
//! application's database, a newer schema) with exit 2, nothing written and
//! the password never shown.

use crate::common::{expect, shown};
use crate::pg_cluster::{Cluster, PASSWORD};
use crate::store_common::{import, rtlab};
use std::path::Path;
use std::process::Output;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

/// Runs `cmd`, checks its exit code and that the password is nowhere in what
/// it printed; stdout and stderr.
fn said(cmd: &mut assert_cmd::Command, code: i32) -> (String, String) {
    let out: Output = expect(cmd, &[code]);
    let all = shown(&out);
    assert!(!all.contains(PASSWORD), "the password is shown: {all}");
    (
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn db(url: &str) -> &Path {
    Path::new(url)
}

/// A short latency run without RT priority, saved with `label`.
fn latency(url: &str, label: &str) -> i64 {
    let (out, _) = said(
        rtlab(db(url)).args([
            "latency", "--policy", "other", "-a", "0", "-i", "1ms", "-l", "100", "--json",
            "--label", label,
        ]),
        0,
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    doc["id"].as_i64().unwrap()
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn runs_are_measured_listed_compared_tagged_and_deleted_in_postgres() {
    let server = Cluster::start();
    let url = server.create_db("fleet");
    let a = latency(&url, "stock");
    let b = latency(&url, "rt");
    assert_eq!((a, b), (1, 2));
    let (list, _) = said(rtlab(db(&url)).args(["results", "list"]), 0);
    assert!(list.contains("stock") && list.contains("rt"), "{list}");
    let (show, _) = said(rtlab(db(&url)).args(["results", "show", "1"]), 0);
    assert!(show.contains("stock"), "{show}");
    let (cmp, _) = said(rtlab(db(&url)).args(["compare", "stock", "rt"]), 0);
    assert!(cmp.contains("stock") && cmp.contains("rt"), "{cmp}");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let html = html.to_str().unwrap();
    said(rtlab(db(&url)).args(["report", "rt", "--html", html]), 0);
    assert!(std::fs::read_to_string(html).unwrap().contains("<html"));
    // Tags and labels, then RTLAB_DB instead of --db.
    said(
        rtlab(db(&url)).args(["results", "tag", "1", "nightly", "x"]),
        0,
    );
    said(
        rtlab(db(&url)).args(["results", "tag", "1", "x", "--remove"]),
        0,
    );
    said(rtlab(db(&url)).args(["results", "label", "2", "rt 6.6"]), 0);
    let mut env = assert_cmd::Command::cargo_bin("rtlab").unwrap();
    env.env("RTLAB_DB", &url)
        .args(["results", "list", "--tag", "nightly", "--json"]);
    let (tagged, _) = said(&mut env, 0);
    let rows: serde_json::Value = serde_json::from_str(&tagged).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows[0]["tags"], serde_json::json!(["nightly"]));
    let (doc, _) = said(
        rtlab(db(&url)).args(["results", "export", "2", "--format", "json"]),
        0,
    );
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(doc["label"], "rt 6.6", "the record follows the label");
    let (_, err) = said(rtlab(db(&url)).args(["results", "delete", "2", "9"]), 2);
    assert!(
        err.contains("no run with id 9 in postgres://postgres:***@"),
        "{err}"
    );
    said(rtlab(db(&url)).args(["results", "delete", "2"]), 0);
    assert_eq!(server.count("fleet", "runs"), 1);
    assert_eq!(
        server.count("fleet", "series"),
        2,
        "one thread and the total"
    );
}

/// Two seconds of `rtlab monitor` (1 s windows, CPU 0, no RT priority).
fn monitor(store: &Path) {
    let args = ["monitor", "-a", "0", "--policy", "other", "--window", "1s"];
    said(rtlab(store).args(args).args(["--duration", "2s", "-q"]), 0);
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn a_campaign_and_monitor_windows_go_to_postgres() {
    let server = Cluster::start();
    let url = server.create_db("fleet");
    let dir = tempfile::tempdir().unwrap();
    let scn = dir.path().join("s.toml");
    std::fs::write(
        &scn,
        "name = \"two\"\n[defaults]\nduration = \"300ms\"\ninterval = \"1ms\"\npriority = 0\ncpus = \"0\"\n[[step]]\nname = \"a\"\nprobe = \"latency\"\n[[step]]\nname = \"b\"\nprobe = \"latency\"\n",
    )
    .unwrap();
    let mut run = rtlab(db(&url));
    run.env("XDG_DATA_HOME", dir.path()).arg("run").arg(&scn);
    let (out, _) = said(&mut run, 0);
    assert!(out.contains("report: "), "{out}");
    assert!(
        dir.path().join("rtlab/reports/campaign-1.html").is_file(),
        "{out}"
    );
    let (campaigns, _) = said(rtlab(db(&url)).args(["results", "campaigns"]), 0);
    assert!(campaigns.contains("complete"), "{campaigns}");
    assert_eq!(server.count("fleet", "campaign_runs"), 2);

    monitor(db(&url));
    let (rows, _) = said(rtlab(db(&url)).args(["monitor", "--show", "--json"]), 0);
    let rows: serde_json::Value = serde_json::from_str(&rows).unwrap();
    let n = rows.as_array().unwrap().len();
    assert!(n >= 2, "{rows}");
    assert_eq!(server.count("fleet", "windows"), n as i64);
}

/// A SQLite store with a campaign of two imported runs, one run alone, and
/// the windows of a short monitor.
fn board(path: &Path) -> i64 {
    let f = |name: &str| format!("{FIXTURES}/{name}");
    import(
        path,
        &[&f("cyclictest-summary.txt"), &f("cyclictest-verbose.txt")],
    );
    import(path, &[&f("cyclictest-summary-ns.txt"), "--tag", "lab"]);
    monitor(path);
    let (rows, _) = said(rtlab(path).args(["monitor", "--show", "--json"]), 0);
    let rows: serde_json::Value = serde_json::from_str(&rows).unwrap();
    rows.as_array().unwrap().len() as i64
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn push_twice_stores_once_resumes_after_the_server_went_away_and_pull_comes_back() {
    let mut server = Cluster::start();
    let url = server.create_db("fleet");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let windows = board(&a);
    let (out, _) = said(rtlab(&a).args(["results", "push", "--to", &url, "1"]), 0);
    assert!(
        out.ends_with(": 1 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    assert!(
        out.starts_with("postgres://postgres:***@127.0.0.1:"),
        "{out}"
    );
    // The server goes away: the push is refused whole, nothing half-written.
    server.stop();
    let (_, err) = said(rtlab(&a).args(["results", "push", "--to", &url]), 2);
    assert!(err.contains("check that the server runs"), "{err}");
    server.start_again();
    let (out, _) = said(rtlab(&a).args(["results", "push", "--to", &url]), 0);
    let expected = format!(
        ": 2 new, 1 already there, 0 refused\npostgres://postgres:***@127.0.0.1:{}/fleet: monitor windows: {windows} new, 0 already there, 0 refused\n",
        server.port
    );
    assert!(out.ends_with(&expected), "{out}");
    let (out, _) = said(rtlab(&a).args(["results", "push", "--to", &url]), 0);
    assert!(
        out.contains(": 0 new, 3 already there, 0 refused\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("monitor windows: 0 new, {windows} already there")),
        "{out}"
    );
    assert_eq!(server.count("fleet", "runs"), 3);
    assert_eq!(server.count("fleet", "windows"), windows);
    assert_eq!(
        server.count("fleet", "campaigns"),
        1,
        "found again by its UUID"
    );
    // Back into another board's file, and a bundle made from it.
    let (out, _) = said(
        rtlab(&b).args(["results", "pull", "--from", &url, "--tag", "lab"]),
        0,
    );
    assert!(
        out.ends_with(": 1 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    let (out, _) = said(rtlab(&b).args(["results", "pull", "--from", &url]), 0);
    assert!(
        out.contains(": 2 new, 1 already there, 0 refused\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("monitor windows: {windows} new")),
        "{out}"
    );
    let bundle = dir.path().join("b.rtlab");
    let (out, _) = said(
        rtlab(&b).args(["results", "export", "--bundle", bundle.to_str().unwrap()]),
        0,
    );
    assert!(
        out.ends_with(&format!(
            ": 3 run(s) and {windows} monitor window(s) written\n"
        )),
        "{out}"
    );
    let url2 = server.create_db("fleet2");
    let (out, _) = said(
        rtlab(db(&url2)).args(["results", "import", "--bundle", bundle.to_str().unwrap()]),
        0,
    );
    assert!(
        out.contains(": 3 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    assert_eq!(server.count("fleet2", "windows"), windows);
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn what_cannot_be_used_is_refused_with_exit_2_and_nothing_written() {
    let server = Cluster::start();
    server.create_db("fleet");
    server.create_db("other");
    server.sql("other", "CREATE TABLE invoices (id BIGINT)");
    let newer = server.create_db("newer");
    said(rtlab(db(&newer)).args(["results", "list"]), 0);
    server.sql(
        "newer",
        "UPDATE rtlab_meta SET value = '99' WHERE key = 'schema_version'",
    );
    let port = server.port;
    let wrong = format!("postgres://postgres:wrong-{PASSWORD}@127.0.0.1:{port}/fleet");
    let cases = [
        (wrong.clone(), "the password of role postgres was refused"),
        (
            server.url("missing"),
            "database missing does not exist: create it",
        ),
        (server.url("other"), "is a database of another application"),
        (
            newer.clone(),
            "has schema version 99: made by a newer rtlab",
        ),
        (
            format!("{}?sslmode=prefer", server.url("fleet")),
            "sslmode=prefer is not offered",
        ),
    ];
    for (url, says) in cases {
        let import_file = format!("{FIXTURES}/cyclictest-summary.txt");
        let (_, err) = said(rtlab(db(&url)).args(["results", "import", &import_file]), 2);
        assert!(err.contains(says), "{url}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let fleet = server.url("fleet");
    let board = dir.path().join("b.db");
    crate::store_common::empty_store(&board);
    let export = ["results", "export", "--bundle", &fleet];
    let (_, err) = said(rtlab(&board).args(export), 2);
    assert!(err.contains("a bundle is a file"), "{err}");
    assert_eq!(
        server.tables("fleet"),
        Vec::<String>::new(),
        "nothing written"
    );
    assert_eq!(server.tables("other"), vec!["invoices"]);
    assert_eq!(server.count("newer", "runs"), 0);
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn tls_as_the_url_asks_for_it() {
    let server = Cluster::start();
    server.create_db("fleet");
    let plain = format!("{}?sslmode=require", server.url("fleet"));
    let (_, err) = said(rtlab(db(&plain)).args(["results", "list"]), 2);
    assert!(err.contains("check sslmode"), "{err}");
    let ca = server.enable_tls();
    let ca = ca.to_str().unwrap();
    let url = |host: &str, q: &str| {
        format!(
            "postgres://postgres:{PASSWORD}@{host}:{}/fleet?{q}",
            server.port
        )
    };
    let full = format!("sslmode=verify-full&sslrootcert={ca}");
    for (host, q, code, says) in [
        ("127.0.0.1", "sslmode=require", 0, "no runs"),
        ("localhost", full.as_str(), 0, "no runs"),
        ("127.0.0.1", full.as_str(), 2, "not valid for name"),
        (
            "127.0.0.1",
            &format!("sslmode=verify-ca&sslrootcert={ca}"),
            0,
            "no runs",
        ),
        (
            "localhost",
            "sslmode=verify-full&sslrootcert=/nonexistent.pem",
            2,
            "sslrootcert /nonexistent.pem",
        ),
    ] {
        let (out, err) = said(rtlab(db(&url(host, q))).args(["results", "list"]), code);
        assert!(
            out.contains(says) || err.contains(says),
            "{host} {q}: {out}{err}"
        );
    }
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn a_push_cut_by_the_server_stopping_keeps_whole_runs_and_the_next_push_copies_the_rest() {
    const RUNS: usize = 300;
    let mut server = Cluster::start();
    let url = server.create_db("fleet");
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let file = format!("{FIXTURES}/cyclictest-summary.txt");
    assert_eq!(import(&a, &vec![file.as_str(); RUNS]).len(), RUNS);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .env_remove("RTLAB_DB")
        .arg("--db")
        .arg(&a)
        .args(["results", "push", "--to", &url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let copying = || {
        server.tables("fleet").contains(&"runs".to_string()) && server.count("fleet", "runs") > 0
    };
    while !copying() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    server.stop();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains(PASSWORD), "{err}");
    server.start_again();
    let first = server.count("fleet", "runs") as usize;
    match out.status.code() {
        Some(3) => {
            assert!(
                err.contains("lost the connection to postgres://postgres:***@"),
                "{err}"
            );
            assert!(first < RUNS, "{first}");
        }
        // The machine was quick: it had copied them all.
        Some(0) => assert_eq!(first, RUNS),
        other => panic!("exit {other:?}: {err}"),
    }
    // Whole runs only: every run has its two threads and the total.
    assert_eq!(server.count("fleet", "series"), 3 * first as i64);
    let (out, _) = said(rtlab(&a).args(["results", "push", "--to", &url]), 0);
    let expected = format!(": {} new, {first} already there, 0 refused\n", RUNS - first);
    assert!(out.ends_with(&expected), "{out}");
    assert_eq!(server.count("fleet", "runs"), RUNS as i64);
}

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn the_installed_monitor_reads_its_password_from_a_private_file_never_its_command_line() {
    use std::os::unix::fs::PermissionsExt;
    let server = Cluster::start();
    let url = server.create_db("fleet");
    let dir = tempfile::tempdir().unwrap();
    let args = ["monitor", "-a", "0", "--policy", "other", "--window", "1s"];
    said(
        rtlab(db(&url))
            .args(args)
            .args(["--install-unit", "--unit-dir"])
            .arg(dir.path()),
        0,
    );
    let unit = std::fs::read_to_string(dir.path().join("rtlab-monitor.service")).unwrap();
    assert!(!unit.contains(PASSWORD), "{unit}");
    let env = dir.path().join("rtlab-monitor.env");
    assert_eq!(env.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    let assignment = std::fs::read_to_string(&env).unwrap();
    let password = assignment
        .lines()
        .find_map(|l| l.strip_prefix("PGPASSWORD=\"")?.strip_suffix('"'))
        .unwrap()
        .to_string();
    // What systemd runs: ExecStart's words (plain here), with the file's
    // variable in the environment.
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let words: Vec<&str> = exec.split(' ').collect();
    let mut child = std::process::Command::new(words[0])
        .args(&words[1..])
        .args(["--duration", "3s", "-q"])
        .env_remove("RTLAB_DB")
        .env("PGPASSWORD", &password)
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains(PASSWORD));
    assert!(child.wait().unwrap().success());
    assert!(server.count("fleet", "windows") >= 2);

    // A password file of mode 0600 serves as well; one others may read is
    // ignored, as libpq ignores it.
    let pgpass = dir.path().join("pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:*:fleet:postgres:{PASSWORD}\n")).unwrap();
    let bare = url.replace(&format!(":{PASSWORD}@"), "@");
    for (mode, code) in [(0o600, 0), (0o644, 2)] {
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(mode)).unwrap();
        let (_, err) = said(
            rtlab(db(&bare))
                .env("PGPASSFILE", &pgpass)
                .env_remove("PGPASSWORD")
                .args(["results", "list"]),
            code,
        );
        assert_eq!(
            err.contains("group or world access"),
            mode == 0o644,
            "{err}"
        );
    }
    // The server checks and backs up its own storage.
    let copy = dir.path().join("copy.db");
    for (args, says) in [
        (vec!["results", "check"], "pg_amcheck"),
        (vec!["results", "backup", copy.to_str().unwrap()], "pg_dump"),
    ] {
        let (_, err) = said(rtlab(db(&url)).args(&args), 2);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!copy.exists());
}
