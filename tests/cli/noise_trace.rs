//! `rtlab noise --trace`: what took the spinning thread's CPU in each gap is
//! named (a higher-priority SCHED_FIFO thread with its pid and burst, a UDP
//! flood's NET_RX), every gap's parts add up to the gap, `why`, `report` and
//! `compare` show it, and without root the run is measured without it.

use crate::common::{expect, rtlab, shown};
use crate::why_trace::{assert_no_instance, check_sums, list, n, probe_cpu, spawn};
use serde_json::Value;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `rtlab noise ARGS --trace --json` on the probe's CPU, into `db`, while
/// `load` runs; stops the load, checks the sums, and returns the run.
fn traced(args: &str, db: &str, load: (Arc<AtomicBool>, std::thread::JoinHandle<()>)) -> Value {
    let cpu = probe_cpu().to_string();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["noise", "-a", &cpu, "--trace", "--json", "--db", db])
        .args(args.split_whitespace())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    load.0.store(true, Ordering::Relaxed);
    load.1.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_no_instance(pid);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = &doc["why"];
    assert_eq!(why["subject"], "gaps", "{why}");
    check_sums(why);
    // Every gap decomposed is one the run recorded on the probe's CPU.
    let max = n(&doc["total"]["summary"]["max_ns"]);
    for g in list(&why["spikes"]) {
        assert_eq!(n(&g["cpu"]), probe_cpu() as u64);
        assert!(n(&g["latency_ns"]) <= max + 1_000, "{g}");
    }
    doc
}

#[test]
#[ignore = "needs root: SCHED_FIFO threads and tracefs"]
fn a_higher_priority_fifo_thread_is_named_with_its_pid_and_burst() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let burst = Duration::from_millis(1);
    let (tid, hog) = spawn("rtlab-hog", probe_cpu(), Some(2), stop.clone(), move || {
        let t = Instant::now();
        while t.elapsed() < burst {}
        std::thread::sleep(Duration::from_millis(20));
    });
    // FIFO 1 for 0.8 s: below the RT throttling's 950 ms with the bursts.
    let doc = traced("-p 1 -D 800ms --trace-threshold 500us", db, (stop, hog));
    let why = &doc["why"];
    let hits: Vec<&Value> = list(&why["spikes"])
        .iter()
        .filter_map(|s| list(&s["threads"]).iter().find(|t| t["pid"] == tid))
        .collect();
    assert!(hits.len() >= 3, "the hog in {} gaps: {why}", hits.len());
    assert_eq!(
        (&hits[0]["comm"], &hits[0]["policy"], &hits[0]["priority"]),
        (
            &Value::from("rtlab-hog"),
            &Value::from("fifo"),
            &Value::from(2)
        )
    );
    assert_eq!(hits[0]["outranked"], true, "fifo 2 over the spinner's 1");
    let mut each: Vec<u64> = hits.iter().map(|t| n(&t["ns"])).collect();
    each.sort_unstable();
    let ns = each[each.len() / 2] as f64;
    let b = burst.as_nanos() as f64;
    assert!(
        (ns - b).abs() <= 0.2 * b,
        "hog ran {ns} ns of a {b} ns burst"
    );
    let name = format!("rtlab-hog (pid {tid}, fifo 2)");
    let cause = list(&why["causes"])
        .iter()
        .find(|c| c["name"] == name.as_str())
        .unwrap_or_else(|| panic!("hog not among the causes: {}", why["causes"]));
    assert_eq!(cause["kind"], "thread");

    // The stored run, again: `why`, the HTML report and compare's top cause.
    let id = doc["id"].to_string();
    let out = expect(
        rtlab().args(["why", &id, "--db", db, "--spikes", "2"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("gap 1: ") && text.contains("of noise time in "),
        "{text}"
    );
    assert!(
        text.contains(&format!("thread {name} on CPU {}", probe_cpu())),
        "{text}"
    );
    let html = dir.path().join("r.html");
    expect(
        rtlab().args(["report", &id, "--db", db, "--html", html.to_str().unwrap()]),
        &[0],
    );
    let html = std::fs::read_to_string(html).unwrap();
    for needle in [
        "<h3>Why: the gaps</h3>",
        "class=\"timeline\"",
        "share of noise time",
    ] {
        assert!(html.contains(needle), "no {needle} in the report");
    }
    let out = expect(rtlab().args(["compare", &id, &id, "--db", db]), &[0]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("top cause"), "{text}");
}

#[test]
#[ignore = "needs root: tracefs"]
fn a_udp_flood_on_the_cpu_is_named_as_net_rx() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let stop = Arc::new(AtomicBool::new(false));
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = sink.local_addr().unwrap();
    let (_, flood) = spawn("rtlab-flood", probe_cpu(), None, stop.clone(), move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..1000 {
            let _ = s.send_to(&[0u8; 64], to);
        }
    });
    // SCHED_OTHER: the flood shares the CPU, and its NET_RX runs there.
    let doc = traced(
        "--policy other -D 800ms --trace-threshold 100us",
        db.to_str().unwrap(),
        (stop, flood),
    );
    drop(sink);
    let why = &doc["why"];
    let net_rx = list(&why["causes"])
        .iter()
        .find(|c| c["kind"] == "softirq" && c["name"] == "NET_RX")
        .unwrap_or_else(|| panic!("NET_RX not named: {}", why["causes"]));
    assert_eq!(n(&net_rx["cpu"]), probe_cpu() as u64);
    assert!(n(&net_rx["spikes"]) > 0 && n(&net_rx["ns"]) > 0);
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user"]
fn without_root_the_noise_run_is_measured_without_the_analysis() {
    let cpu = probe_cpu().to_string();
    let out = crate::latency_cli::as_nobody(&[
        "noise",
        "--policy",
        "other",
        "-a",
        &cpu,
        "-D",
        "300ms",
        "--trace",
        "--json",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("why").is_none(), "{}", doc["why"]);
    assert!(doc["metrics"]["iterations"].as_f64().unwrap() > 0.0);
    let trace = list(&doc["warnings"])
        .iter()
        .find(|w| w["code"] == "trace")
        .unwrap_or_else(|| panic!("no trace warning: {}", doc["warnings"]));
    let msg = trace["message"].as_str().unwrap();
    assert!(msg.contains("--trace") && msg.contains("root"), "{msg}");
}

#[test]
fn noise_trace_options_are_checked_before_measuring() {
    for (args, needles) in [
        ("--trace-threshold 50us", &["--trace"][..]),
        (
            "--trace --trace-threshold 1us",
            &["--trace-threshold: ", "not above"],
        ),
        ("--trace --trace-threshold 0", &["--trace-threshold"]),
    ] {
        let out = expect(
            rtlab()
                .args(["noise", "-D", "10ms", "--no-save"])
                .args(args.split_whitespace()),
            &[2],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(needles.iter().all(|x| err.contains(x)), "{args}: {err}");
    }
}
