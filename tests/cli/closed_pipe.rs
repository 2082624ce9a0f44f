//! A reader that goes away (`rtlab … | head -1`) is not an error: rtlab keeps
//! what it measured, says nothing about the pipe and exits as it would have.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// Runs rtlab with `args` whose stdout is a pipe nobody reads (its read end
/// closed before rtlab starts, so the first write fails with EPIPE); the exit
/// code and stderr.
fn into_closed_pipe(args: &[&str], db: &std::path::Path) -> (Option<i32>, String) {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills both descriptors on success, checked below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here only.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    let out = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .env_remove("RTLAB_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn listings_into_a_closed_pipe_end_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    crate::store_common::empty_store(&db);
    for args in [
        &["presets", "list"][..],
        &["presets", "show", "quick"],
        &["load", "--list"],
        &["results", "list"],
        &["audit"],
    ] {
        let (code, err) = into_closed_pipe(args, &db);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?}: exit {code:?}\n{err}"
        );
    }
}

#[test]
fn a_measurement_into_a_closed_pipe_is_still_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, err) = into_closed_pipe(&["bench", "cpu", "--time", "200ms"], &db);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = crate::common::expect(
        crate::common::rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "list", "--json"]),
        &[0],
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "the run was saved");
}
