//! `rtlab monitor`: windows stored as they close, counts that add up, kill -9
//! and restarts, retention on a live run, alerts, the systemd unit, bad input.

use crate::common::{expect, json, rtlab, shown, wait_until_catching_sigint};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A monitor on CPU 0 without RT priority, 1 s windows, into `db`.
fn monitor(db: &Path) -> assert_cmd::Command {
    let mut c = rtlab();
    c.arg("--db")
        .arg(db)
        .args(["monitor", "-a", "0", "--policy", "other", "--window", "1s"]);
    c
}

fn rows(db: &Path) -> Vec<Value> {
    let v = json(
        rtlab()
            .arg("--db")
            .arg(db)
            .args(["monitor", "--show", "--json"]),
        &[0],
    );
    v.as_array().unwrap().clone()
}

fn n(v: &Value, key: &str) -> i64 {
    v[key].as_i64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The count a stored histogram holds.
fn hist_count(w: &Value) -> i64 {
    w["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_i64().unwrap())
        .sum()
}

#[test]
fn a_window_per_second_and_the_counts_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let done = json(monitor(&db).args(["--duration", "3s", "--json"]), &[0]);
    let ws = rows(&db);
    assert!(ws.len() >= 3, "3 s crosses two boundaries: {ws:?}");
    assert_eq!(ws.len() as i64, n(&done, "rows"));
    let total: i64 = ws.iter().map(|w| n(w, "samples")).sum();
    assert_eq!(total, n(&done, "samples"));
    assert_eq!(
        total,
        n(&done, "probe_samples"),
        "every wake-up in a window"
    );
    assert!(total > 0);
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w["level"], "window");
        assert_eq!(w["session"], done["session"]);
        assert_eq!(n(w, "cpu"), 0);
        assert_eq!(hist_count(w), n(w, "samples"));
        assert!(n(w, "end_ns") > n(w, "start_ns"));
        assert!(n(w, "max_ns") >= n(w, "p99_ns") * 999 / 1000, "{w}");
        if let Some(next) = ws.get(i + 1) {
            assert_eq!(
                n(w, "end_ns"),
                n(next, "start_ns"),
                "windows follow each other"
            );
        }
    }
    aligned(&ws);
    // Which windows are partial depends on where the run's start and end fell
    // between boundaries; the table labels exactly those.
    let partial = ws.iter().filter(|w| w["partial"] == true).count();
    let table = expect(
        rtlab().arg("--db").arg(&db).args(["monitor", "--show"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&table.stdout).to_string();
    assert!(text.contains(&format!("{} rows", ws.len())), "{text}");
    assert_eq!(text.matches(" partial ").count(), partial, "{text}");
}

const SEC: i64 = 1_000_000_000;

/// Each session's windows: all but its first and last are whole seconds on
/// the clock's seconds; its first ends and its last begins on a second.
fn aligned(ws: &[Value]) {
    let mut sessions: Vec<&Value> = ws.iter().map(|w| &w["session"]).collect();
    sessions.dedup();
    for session in sessions {
        let s: Vec<&Value> = ws.iter().filter(|w| &w["session"] == session).collect();
        for (i, w) in s.iter().enumerate() {
            let (first, last) = (i == 0, i == s.len() - 1);
            if !first {
                assert_eq!(n(w, "start_ns") % SEC, 0, "{w}");
            }
            if !last {
                assert_eq!(n(w, "end_ns") % SEC, 0, "{w}");
            }
            if !first && !last {
                assert_eq!(n(w, "end_ns") - n(w, "start_ns"), SEC, "{w}");
                assert_eq!(w["partial"], false, "a middle window is whole: {w}");
            }
        }
    }
}

fn spawn(db: &Path, extra: &[&str]) -> Child {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
    c.env_remove("RTLAB_DB")
        .arg("--db")
        .arg(db)
        .args([
            "monitor", "-a", "0", "--policy", "other", "--window", "1s", "-q",
        ])
        .args(extra)
        .stdout(Stdio::null());
    c.spawn().unwrap()
}

/// Waits (at most 60 s: the machine may be busy) until `db` holds `count` rows.
fn wait_for_rows(db: &Path, count: usize) -> Vec<Value> {
    let t0 = Instant::now();
    loop {
        if db.exists() {
            let ws = rows(db);
            if ws.len() >= count || t0.elapsed() > Duration::from_secs(60) {
                return ws;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn kill_9_keeps_the_closed_windows_and_a_restart_continues_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let mut kept: Vec<Value> = Vec::new();
    // Killed at three moments between (or while) storing windows.
    for (round, wait_ms) in [0u64, 350, 700].into_iter().enumerate() {
        let mut child = spawn(&db, &[]);
        let before = wait_for_rows(&db, kept.len() + 1);
        std::thread::sleep(Duration::from_millis(wait_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(before.len() > kept.len(), "round {round}: {before:?}");
        let after = rows(&db);
        assert!(after.len() >= before.len());
        assert_eq!(&after[..kept.len()], &kept[..], "closed windows unchanged");
        assert_eq!(&after[..before.len()], &before[..]);
        assert!(after.iter().all(|w| hist_count(w) == n(w, "samples")));
        let new = &after[kept.len()..];
        assert!(new.iter().all(|w| w["session"] == new[0]["session"]));
        if let Some(last) = kept.last() {
            assert_ne!(new[0]["session"], last["session"], "a new session");
            assert_eq!(
                (&new[0]["host"], &new[0]["cpu"]),
                (&last["host"], &last["cpu"])
            );
            assert!(n(&new[0], "start_ns") >= n(last, "end_ns"));
        }
        kept = after;
    }
    // Killed sessions never stored their last window: every row is a closed
    // one, and each session's windows after its first are whole and aligned.
    aligned(&kept);
    let out = expect(monitor(&db).args(["--duration", "2s"]), &[0]);
    let again = rows(&db);
    assert!(again.len() > kept.len(), "{}", shown(&out));
    assert_eq!(&again[..kept.len()], &kept[..]);
    aligned(&again);
}

#[test]
fn sigterm_stores_the_window_under_way_as_partial() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let mut child = spawn(&db, &[]);
    wait_until_catching_sigint(child.id());
    let before = wait_for_rows(&db, 1);
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let after = rows(&db);
    assert!(after.len() > before.len(), "{after:?}");
    assert_eq!(after.last().unwrap()["partial"], true);
}

#[test]
fn old_windows_merge_into_their_hour_while_monitoring() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let done = json(
        monitor(&db).args(["--duration", "4s", "--keep-windows", "1s", "--json"]),
        &[0],
    );
    let ws = rows(&db);
    let hours: Vec<&Value> = ws.iter().filter(|w| w["level"] == "hour").collect();
    assert!(!hours.is_empty(), "{ws:?}");
    let total: i64 = ws.iter().map(|w| n(w, "samples")).sum();
    assert_eq!(total, n(&done, "samples"), "nothing lost in the merge");
    let windows: i64 = ws.iter().map(|w| n(w, "windows")).sum();
    assert_eq!(windows, n(&done, "rows"));
    for h in &hours {
        assert_eq!(hist_count(h), n(h, "samples"));
        assert_eq!(n(h, "start_ns") % 3_600_000_000_000, 0);
    }
    let hourly = rows_of(&db, &["--level", "hour"]);
    assert_eq!(hourly.len(), hours.len());
}

fn rows_of(db: &Path, args: &[&str]) -> Vec<Value> {
    let v = json(
        rtlab()
            .arg("--db")
            .arg(db)
            .args(["monitor", "--show", "--json"])
            .args(args),
        &[0],
    );
    v.as_array().unwrap().clone()
}

#[test]
fn an_alert_runs_the_command_with_the_window_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let file = dir.path().join("alerts");
    let cmd = format!("env | grep ^RTLAB_ >> {}; echo END >> {0}", file.display());
    expect(
        monitor(&db).args([
            "--duration",
            "2500ms",
            "--alert-max",
            "1ns",
            "--alert-cmd",
            &cmd,
        ]),
        &[0],
    );
    let text = std::fs::read_to_string(&file).unwrap();
    // Every window crosses 1 ns; the default --alert-quiet (15m) lets one through.
    assert_eq!(text.lines().filter(|l| *l == "END").count(), 1, "{text}");
    let first = &rows(&db)[0];
    for want in [
        format!("RTLAB_MAX_NS={}", n(first, "max_ns")),
        format!("RTLAB_SAMPLES={}", n(first, "samples")),
        format!("RTLAB_SESSION={}", first["session"].as_str().unwrap()),
        "RTLAB_CPU=0".to_string(),
        "RTLAB_THRESHOLD_NS=1".to_string(),
        "RTLAB_HELD_BACK=0".to_string(),
    ] {
        assert!(text.lines().any(|l| l == want), "{want} in {text}");
    }
}

#[test]
fn install_unit_writes_the_service_with_the_same_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args([
                "monitor",
                "-a",
                "0",
                "-i",
                "500us",
                "--window",
                "1m",
                "--install-unit",
                "--unit-dir",
            ])
            .arg(dir.path()),
        &[0],
    );
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        said.contains("systemctl enable --now rtlab-monitor.service"),
        "{said}"
    );
    let unit = std::fs::read_to_string(dir.path().join("rtlab-monitor.service")).unwrap();
    let exec = unit.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    assert!(
        exec.ends_with(&format!(
            "--db {} monitor -a 0 -i 500us --window 1m",
            db.display()
        )),
        "{exec}"
    );
    for line in [
        "LimitRTPRIO=99",
        "LimitMEMLOCK=infinity",
        "Restart=on-failure",
        "Nice=-5",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line} in {unit}");
    }
    // The housekeeping CPUs are every CPU but the measured one.
    if let Some(aff) = unit.lines().find_map(|l| l.strip_prefix("CPUAffinity=")) {
        assert!(!aff.split(' ').any(|c| c == "0"), "{aff}");
    }
    assert!(!db.exists(), "nothing measured");
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let missing = dir.path().join("nowhere");
    for (args, flag) in [
        (vec!["--window", "500ms"], "--window"),
        (vec!["--window", "abc"], "--window"),
        (vec!["--keep-hourly", "0d"], "--keep-hourly"),
        (vec!["--keep-daily", "soon"], "--keep-daily"),
        (vec!["--alert-max", "-5us"], "--alert-max"),
        (vec!["--loops", "10"], "--loops"),
        (vec!["--cpu", "1"], "--cpu"),
        (vec!["--alert-cmd", "true"], "--alert-max"),
        (
            vec!["--install-unit", "--unit-dir", missing.to_str().unwrap()],
            "--unit-dir",
        ),
    ] {
        let out = expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["monitor", "-a", "0", "--policy", "other"])
                .args(&args),
            &[2],
        );
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    assert!(!db.exists(), "nothing written");
    let out = expect(
        rtlab().arg("--db").arg(&db).args(["monitor", "--show"]),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no results database"));
    expect(monitor(&db).args(["--duration", "1s"]), &[0]);
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["monitor", "--show", "--since", "yesterday"]),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since"));
}

/// The unit's lines as systemd would read them: `systemd-analyze verify`
/// finds nothing to say (a newline that broke a setting would be an
/// unbalanced quote or an unknown key).
fn verified(unit: &Path) {
    let out = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(unit)
        .output()
        .expect("systemd-analyze (apt-get install systemd)");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !said.contains(unit.file_name().unwrap().to_str().unwrap()),
        "{said}"
    );
}

#[test]
fn the_unit_holds_no_password_and_quotes_control_characters() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let url = "postgres://rt:s3cr%24t%22pw@127.0.0.1:9/rtlab?sslmode=disable";
    let out = expect(
        rtlab()
            .args(["monitor", "-a", "0", "--policy", "other", "--window", "1m"])
            // A global option after the subcommand: not copied into the unit.
            .args(["--db", url, "--alert-max", "1ms", "--alert-cmd"])
            .arg("logger 'line one\nExecStartPre=/bin/false' \r\u{1b}[2J 50%")
            .args(["--install-unit", "--unit-dir"])
            .arg(dir.path()),
        &[0],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.contains("s3cr"), "{said}");
    let unit_path = dir.path().join("rtlab-monitor.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    assert!(!unit.contains("s3cr") && !unit.contains("%24"), "{unit}");
    let exec = unit.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
    assert!(
        exec.contains(" --db \"postgres://rt@127.0.0.1:9/rtlab?sslmode=disable\" monitor "),
        "{exec}"
    );
    assert_eq!(exec.matches("--db").count(), 1, "{exec}");
    assert!(
        exec.ends_with(
            "--alert-cmd \"logger 'line one\\x0aExecStartPre=/bin/false' \\x0d\\x1b[2J 50%%\""
        ),
        "{exec}"
    );
    assert!(
        !unit.lines().any(|l| l.starts_with("ExecStartPre")),
        "{unit}"
    );
    let env = dir.path().join("rtlab-monitor.env");
    assert!(
        unit.contains(&format!("\nEnvironmentFile={}\n", env.display())),
        "{unit}"
    );
    let meta = env.symlink_metadata().unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&env).unwrap();
    assert!(
        text.lines().any(|l| l == "PGPASSWORD=\"s3cr\\$t\\\"pw\""),
        "{text}"
    );
    verified(&unit_path);
}

#[test]
fn a_file_store_needs_no_password_file() {
    let dir = tempfile::tempdir().unwrap();
    expect(
        rtlab()
            .arg("--db")
            .arg(dir.path().join("m.db"))
            .args(["monitor", "-a", "0", "--policy", "other", "--install-unit"])
            .arg("--unit-dir")
            .arg(dir.path()),
        &[0],
    );
    let unit = std::fs::read_to_string(dir.path().join("rtlab-monitor.service")).unwrap();
    assert!(!unit.contains("EnvironmentFile="), "{unit}");
    assert!(!dir.path().join("rtlab-monitor.env").exists());
    // A password with a newline could not be written on one line: refused.
    let out = expect(
        rtlab()
            .args(["--db", "postgres://rt:a%0Ab@h/db", "monitor", "-a", "0"])
            .args(["--policy", "other", "--install-unit", "--unit-dir"])
            .arg(dir.path()),
        &[2],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--db") && err.contains("control characters"),
        "{err}"
    );
}
