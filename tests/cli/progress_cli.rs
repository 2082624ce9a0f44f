//! Progress on a terminal: a command that runs longer than two seconds shows what
//! it does, elapsed and time left on stderr when stderr is a terminal (run under
//! `script`, which gives it a pseudo-terminal), and nothing on a pipe or with
//! --quiet; stdout (JSON) never carries any of it.

use crate::common::{expect, rtlab, shown};
use std::path::Path;
use std::process::Command;

/// `rtlab ARGS > out.json` on a pseudo-terminal: what the terminal showed.
fn on_a_terminal(dir: &Path, args: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let out = dir.join("out.json");
    let line = format!("{} {args} > {}", bin.display(), out.display());
    let run = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("RTLAB_DB")
        .current_dir(dir)
        .output()
        .expect("script (util-linux) runs");
    assert!(run.status.success(), "{line}\n{run:?}");
    String::from_utf8_lossy(&run.stdout).into_owned()
}

const BENCH: &str = "bench cpu --time 3s --no-save --json";

#[test]
fn a_long_bench_shows_progress_on_a_terminal_and_keeps_stdout_clean() {
    let dir = tempfile::tempdir().unwrap();
    let terminal = on_a_terminal(dir.path(), BENCH);
    assert!(
        terminal.contains("bench cpu: 1 s of 3 s, time left 2 s"),
        "{terminal:?}"
    );
    let json = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).expect("stdout is one JSON document");
    assert_eq!(doc["kind"], "bench.cpu");
    assert!(!json.contains("time left"), "{json}");
}

#[test]
fn quiet_silences_the_progress() {
    let dir = tempfile::tempdir().unwrap();
    let terminal = on_a_terminal(dir.path(), &format!("{BENCH} --quiet"));
    assert!(!terminal.contains("time left"), "{terminal:?}");
}

#[test]
fn a_pipe_gets_no_progress() {
    let out = expect(rtlab().args(BENCH.split(' ')), &[0]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("time left") && !err.contains('\r'),
        "{}",
        shown(&out)
    );
}

#[test]
fn a_campaign_shows_the_step_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("cpu.toml");
    std::fs::write(
        &scenario,
        "name = \"cpu\"\n[[step]]\nname = \"primes\"\nprobe = \"bench.cpu\"\ntime = \"3s\"\n",
    )
    .unwrap();
    let db = dir.path().join("rtlab.db");
    let args = format!("--db {} run {} --json", db.display(), scenario.display());
    let terminal = on_a_terminal(dir.path(), &args);
    assert!(terminal.contains("step 1 of 1: primes"), "{terminal:?}");
    let json = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&json).expect("stdout is one JSON document");
}
