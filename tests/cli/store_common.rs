//! Helpers shared by the store and import tests.
#![allow(dead_code)] // each test file uses a different subset

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// `rtlab --db <db>`, ignoring any RTLAB_DB of the environment.
pub fn rtlab(db: &Path) -> Command {
    let mut c = Command::cargo_bin("rtlab").unwrap();
    c.env_remove("RTLAB_DB").arg("--db").arg(db);
    c
}

/// Fails the test when an anchor tool is not installed. Tests that run one are
/// `#[ignore = "needs TOOL: …"]`; CI installs the tools and runs them.
pub fn need(tool: &str) {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{tool} is not installed (apt-get install rt-tests sysbench)"
    );
}

/// Runs a tool and returns its stdout; panics with its stderr when it fails.
pub fn run_tool(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(args[0])
        .args(&args[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Imports files and returns the new run ids, in order.
pub fn import(db: &Path, args: &[&str]) -> Vec<i64> {
    let out = rtlab(db)
        .args(["results", "import"])
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("run ")?.split(':').next()?.parse().ok())
        .collect()
}

/// A stored run as its JSON document.
pub fn export_json(db: &Path, id: i64) -> Value {
    let out = rtlab(db)
        .args(["results", "export", &id.to_string(), "--format", "json"])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// Ids of the stored runs, newest first.
pub fn list_ids(db: &Path) -> Vec<i64> {
    list_ids_with(db, &[])
}

/// Ids of the runs `rtlab results list ARGS` shows, newest first.
pub fn list_ids_with(db: &Path, args: &[&str]) -> Vec<i64> {
    let out = rtlab(db)
        .args(["results", "list", "--json"])
        .args(args)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// Each series of a run JSON document as (samples, min_ns, mean_ns, max_ns).
pub fn series_figures(run: &Value) -> Vec<(u64, u64, f64, u64)> {
    run["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let m = &s["summary"];
            (
                s["counters"]["samples"].as_u64().unwrap(),
                m["min_ns"].as_u64().unwrap(),
                m["mean_ns"].as_f64().unwrap(),
                m["max_ns"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Makes `db` an rtlab store without runs (reads never create one): a run
/// imported, then deleted.
pub fn empty_store(db: &Path) {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/cyclictest-summary.txt"
    );
    let ids = import(db, &[fixture]);
    rtlab(db)
        .args(["results", "delete", &ids[0].to_string()])
        .assert()
        .success();
}
