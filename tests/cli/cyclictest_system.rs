//! `rtlab cyclictest` and the system around it: Ctrl-C ends a run as it ends
//! cyclictest's (results printed, exit 0, stored as interrupted), `-F` serves
//! the status lines on a named pipe, `--deepest-idle-state` limits the idle
//! states for the run and restores them.

use crate::common::{expect, rtlab, shown, wait_for, wait_until_measuring};
use crate::cyclictest_layout::{check_layout, kind};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn spawn(args: &[&str], db: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(db)
        .arg("cyclictest")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn ctrl_c_prints_the_results_exits_0_as_cyclictest_and_stores_an_interrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let child = spawn(&["-q", "-t", "2", "-i", "500"], &db);
    wait_until_measuring(child.id());
    // SAFETY: kill(2) with the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    check_layout(&stdout);
    assert_eq!(stdout.lines().filter(|l| l.starts_with("T:")).count(), 2);
    let run = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "show", "1", "--json"]),
        &[0],
    );
    let run: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(run["status"], "interrupted");
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn the_fifo_serves_the_status_lines_to_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ct.fifo");
    let child = spawn(
        &[
            "-q",
            "-p",
            "80",
            "-t",
            "2",
            "-D",
            "3",
            "-F",
            fifo.to_str().unwrap(),
        ],
        &dir.path().join("r.db"),
    );
    wait_for("the status pipe", || fifo.exists());
    // Opening for reading waits until rtlab opens the pipe to write.
    let served = std::fs::read_to_string(&fifo).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let lines: Vec<&str> = served.lines().collect();
    assert_eq!(lines.len(), 2, "{served}");
    assert!(
        lines.iter().all(|l| kind(l).as_deref() == Some("status")),
        "{served}"
    );
    assert!(!fifo.exists(), "the pipe is removed at the end");
}

#[test]
#[ignore = "needs root: cpuidle states can only be changed by root"]
fn the_deepest_idle_state_holds_for_the_run_and_is_restored() {
    let state1 = Path::new("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable");
    let dir = tempfile::tempdir().unwrap();
    if !state1.exists() {
        let out = expect(
            rtlab().args([
                "cyclictest",
                "--no-store",
                "-l",
                "10",
                "--deepest-idle-state=0",
            ]),
            &[3],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--deepest-idle-state: "), "{err}");
        return;
    }
    let before = std::fs::read_to_string(state1).unwrap();
    let child = spawn(
        &["-q", "-a", "0", "-D", "2", "--deepest-idle-state=0"],
        &dir.path().join("r.db"),
    );
    wait_until_measuring(child.id());
    let during = std::fs::read_to_string(state1).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(
        during.trim(),
        "1",
        "state 1 of CPU 0 disabled during the run"
    );
    assert_eq!(std::fs::read_to_string(state1).unwrap(), before, "restored");
}
