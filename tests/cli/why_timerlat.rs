//! `rtlab latency --trace --timerlat`: on a kernel with the timerlat tracer,
//! its IRQ and thread latency stored with the analysis and the osnoise
//! options put back; on one without, said (warning and `missing`) with the
//! run traced as without the flag, and the kernel's tracing left as it was.

use super::why_trace::{assert_no_instance, probe_cpu};
use crate::common::{expect, rtlab, shown};
use serde_json::Value;
use std::path::Path;

const TRACEFS: &str = "/sys/kernel/tracing";

/// The top level's tracer and the osnoise options, as text.
fn kernel_state() -> Vec<(String, String)> {
    let files = [
        "current_tracer",
        "osnoise/cpus",
        "osnoise/timerlat_period_us",
        "osnoise/stop_tracing_us",
        "osnoise/stop_tracing_total_us",
    ];
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(Path::new(TRACEFS).join(f));
            (f.to_string(), text.unwrap_or_else(|e| format!("({e})")))
        })
        .collect()
}

#[test]
#[ignore = "needs root: tracefs"]
fn timerlat_is_used_where_the_kernel_has_it_and_said_where_not() {
    let cpu = probe_cpu().to_string();
    // The traced run mounts tracefs; a first one makes sure it is.
    let _ = rtlab()
        .args(["latency", "-l", "1", "--trace", "--no-save", "--json"])
        .output();
    let has = std::fs::read_to_string(Path::new(TRACEFS).join("available_tracers"))
        .unwrap()
        .split_whitespace()
        .any(|t| t == "timerlat");
    let before = kernel_state();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["latency", "-a", &cpu, "-i", "1ms", "-D", "1s"])
        .args(["--trace", "--timerlat", "--json", "--no-save"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_no_instance(pid);
    assert_eq!(kernel_state(), before, "the kernel's tracing is as it was");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = &doc["why"];
    let missing: Vec<&str> = why["missing"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let warned = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "timerlat");
    if !has {
        assert!(why.get("timerlat").is_none(), "{why}");
        let said = "timerlat: the kernel has no timerlat tracer";
        assert!(missing.iter().any(|m| m.starts_with(said)), "{missing:?}");
        let msg = warned.expect("a timerlat warning")["message"]
            .as_str()
            .unwrap();
        assert!(
            msg.starts_with("--timerlat: the kernel has no timerlat tracer"),
            "{msg}"
        );
        return;
    }
    // Another user's timerlat or osnoise run is left alone, and said.
    if let Some(w) = warned {
        assert!(w["message"].as_str().unwrap().contains("runs the"), "{w}");
        return;
    }
    let t = &why["timerlat"];
    assert!(t["samples"].as_u64().unwrap() > 0, "{t}");
    let per_cpu = t["per_cpu"].as_array().unwrap();
    assert_eq!(per_cpu.len(), 1, "only the measured CPU: {t}");
    assert_eq!(per_cpu[0]["cpu"].as_u64(), Some(cpu.parse().unwrap()));
    assert!(
        t["irq_max_ns"].as_u64() <= t["thread_max_ns"].as_u64(),
        "{t}"
    );
    assert!(
        !missing.iter().any(|m| m.starts_with("timerlat:")),
        "{missing:?}"
    );
}

#[test]
fn timerlat_needs_trace() {
    let out = expect(
        rtlab().args(["latency", "-l", "1", "--no-save", "--timerlat"]),
        &[2],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--trace"), "{err}");
}
