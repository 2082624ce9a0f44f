//! Traced runs as a user keeps them: `rtlab latency --trace` ends with the
//! analysis in short and stores it for `rtlab why`; `rtlab run --trace` stores
//! one in its latency steps; tracefs is mounted when it is not, and a mount
//! that fails leaves the run measured without the analysis.

use crate::common::{expect, json, rtlab, shown};
use crate::why_trace::{check_sums, probe_cpu};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// `rtlab --db DB ARGS`, exit 0, stdout as text.
fn text(db: &Path, args: &[&str]) -> String {
    let out = expect(rtlab().arg("--db").arg(db).args(args), &[0]);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs root: tracefs"]
fn a_stored_traced_run_ends_in_short_and_why_shows_each_spike() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let cpu = probe_cpu().to_string();
    let args = ["latency", "-a", &cpu, "-i", "1ms", "-D", "1s", "--trace"];
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(args)
            .args(["--trace-threshold", "1ns"]),
        &[0],
    );
    let end = String::from_utf8(out.stdout.clone()).unwrap();
    let at = end
        .find("\nwhy: ")
        .unwrap_or_else(|| panic!("{}", shown(&out)));
    assert!(
        end[at..].contains(" spike(s) at or above 1ns; 'rtlab why 1' shows each one\n"),
        "{end}"
    );
    assert!(
        end[at..].contains("\ncauses, by share of spike time ("),
        "{end}"
    );
    assert!(!end.contains("\nspike 1: "), "spikes in full: {end}");

    let why = text(&db, &["why", "1"]);
    assert!(why.starts_with("run "), "{why}");
    assert!(why.contains("\nspike 1: "), "{why}");
    let doc = json(
        rtlab().arg("--db").arg(&db).args(["why", "1", "--json"]),
        &[0],
    );
    assert_eq!(doc["kind"], "why");
    assert_eq!(doc["run"], 1);
    let w = &doc["why"];
    check_sums(w);
    let total = w["spikes_total"].as_u64().unwrap();
    assert!(total > 0, "{w}");
    assert!(why.contains(&format!("why: {total} spike(s) at or above 1ns")));
    // The same analysis as the stored run's document.
    let run = json(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "export", "1", "--format", "json"]),
        &[0],
    );
    assert_eq!(&run["why"], w);
    let page = dir.path().join("r.html");
    let html = text(&db, &["report", "1", "--html", page.to_str().unwrap()]);
    assert!(html.contains("'rtlab why 1' shows each one"), "{html}");
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("<h3>Why: the spikes</h3>"));
    assert!(page.contains("<figure class=\"timeline\"><svg"));
}

#[test]
#[ignore = "needs root: tracefs"]
fn run_trace_stores_the_analysis_of_its_latency_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let scn = dir.path().join("t.toml");
    let cpu = probe_cpu();
    std::fs::write(
        &scn,
        format!(
            "name = \"traced\"\n[[step]]\nprobe = \"latency\"\ninterval = \"1ms\"\n\
             duration = \"1s\"\ncpus = \"{cpu}\"\ntrace_threshold = \"1ns\"\n"
        ),
    )
    .unwrap();
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .arg("run")
            .arg(&scn)
            .arg("--trace")
            .arg("--html")
            .arg(dir.path().join("c.html")),
        &[0],
    );
    let end = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        end.contains(
            "\nwhy, in the traced steps ('rtlab why RUN' shows each spike):\n  latency, run 1: "
        ),
        "{}",
        shown(&out)
    );
    let doc = json(
        rtlab().arg("--db").arg(&db).args(["why", "1", "--json"]),
        &[0],
    );
    let w = &doc["why"];
    check_sums(w);
    assert!(w["spikes_total"].as_u64().unwrap() > 0, "{w}");
    assert!(
        w["spikes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cpu"] == cpu),
        "{w}"
    );
}

/// `rtlab latency --trace` in a mount namespace of its own where tracefs is
/// not mounted, with `PATH` as given (the host's mounts stay as they are).
fn unmounted(path: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let script = format!(
        "umount /sys/kernel/debug/tracing 2>/dev/null; umount /sys/kernel/tracing 2>/dev/null; \
         ! grep -q ' tracefs ' /proc/mounts || exit 97; \
         PATH={path} {} latency -a {} -i 1ms -D 300ms --trace --trace-threshold 1ns --json \
         --no-save",
        bin.display(),
        probe_cpu()
    );
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs root: a mount namespace (unshare -m) and tracefs"]
fn tracefs_is_mounted_when_it_is_not_and_a_failed_mount_is_said() {
    let path = std::env::var("PATH").unwrap();
    let out = unmounted(&path);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_sums(&doc["why"]);
    assert!(doc["why"]["spikes_total"].as_u64().unwrap() > 0);

    // A `mount` that fails: measured all the same, with the command to run.
    let fake = tempfile::tempdir().unwrap();
    let mount = fake.path().join("mount");
    std::fs::write(
        &mount,
        "#!/bin/sh\necho 'mount: permission denied' >&2\nexit 32\n",
    )
    .unwrap();
    std::fs::set_permissions(&mount, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = unmounted(&format!("{}:{path}", fake.path().display()));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("why").is_none(), "{}", doc["why"]);
    assert!(doc["total"]["counters"]["samples"].as_u64().unwrap() > 0);
    let warning = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "trace")
        .unwrap_or_else(|| panic!("no trace warning: {}", doc["warnings"]));
    let msg = warning["message"].as_str().unwrap();
    assert!(
        msg.contains("mounting it failed (mount: permission denied)")
            && msg.contains("run 'mount -t tracefs nodev /sys/kernel/tracing'"),
        "{msg}"
    );
}
