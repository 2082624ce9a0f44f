//! `rtlab net serve` and `rtlab net ping` end to end on loopback.

use crate::net_common::{assert_sound_run, counter, metric, ping, rtlab, Server};

#[test]
fn udp_round_trips_are_all_answered_and_counted() {
    let server = Server::start(&[]);
    let (run, code) = ping(&[
        &server.addr,
        "--period",
        "2ms",
        "--count",
        "40",
        "--round-trips",
        "3",
        "--payload",
        "100",
    ]);
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 40, 3);
    // The step's parameters, as given and defaulted.
    assert_eq!(run["params"]["probe"], "net");
    assert_eq!(run["params"]["payload"], "100");
    assert_eq!(run["params"]["tcp"], false);
    assert_eq!(run["params"]["priority"], serde_json::Value::Null);
    assert_eq!(run["params"]["address"], server.addr.as_str());
    // Both ends' settings are in the record.
    assert_eq!(run["params"]["server"]["transport"], "udp");
    assert_eq!(run["params"]["server"]["policy"], "other");
    let (summary, code) = server.stop();
    assert_eq!(code, Some(0));
    assert_eq!(counter(&summary, "served"), 120);
    assert_eq!(counter(&summary, "info"), 1);
    assert_eq!(summary["rejected_total"], 0);
}

#[test]
fn tcp_round_trips_are_all_answered_and_counted() {
    let server = Server::start(&["--tcp"]);
    let (run, code) = ping(&[
        &server.addr,
        "--tcp",
        "--period",
        "2ms",
        "--count",
        "30",
        "--round-trips",
        "2",
    ]);
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 30, 2);
    assert_eq!(run["params"]["server"]["transport"], "tcp");
    let (summary, _) = server.stop();
    assert_eq!(counter(&summary, "served"), 60);
    assert_eq!(counter(&summary, "connections"), 1);
}

fn a_known_server_delay_shows_in_every_message_over(transport: &[&str]) {
    // 2 ms inside the server per request, 3 requests per message: no message can
    // take less than 6 ms, and each leg no less than 2 ms.
    let mut serve = vec!["--delay", "2ms"];
    serve.extend_from_slice(transport);
    let server = Server::start(&serve);
    let mut args = vec![
        server.addr.as_str(),
        "--period",
        "10ms",
        "--count",
        "6",
        "--round-trips",
        "3",
    ];
    args.extend_from_slice(transport);
    let (run, code) = ping(&args);
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 6, 3);
    for s in run["series"].as_array().unwrap() {
        let min = s["summary"]["min_ns"].as_u64().unwrap();
        let floor = if s["name"] == "server" {
            6_000_000
        } else {
            2_000_000
        };
        assert!(min >= floor, "{}: min {min} ns", s["name"]);
    }
    for p in run["total"]["trace"].as_array().unwrap() {
        assert!(p["max_ns"].as_u64().unwrap() >= 6_000_000, "{p}");
    }
    assert_eq!(run["params"]["server"]["delay_ns"], "2000000");
}

#[test]
fn a_known_server_delay_shows_in_every_message() {
    a_known_server_delay_shows_in_every_message_over(&[]);
}

#[test]
fn a_known_server_delay_shows_in_every_tcp_message() {
    a_known_server_delay_shows_in_every_message_over(&["--tcp"]);
}

#[test]
fn overrunning_messages_are_counted_and_the_gate_fails() {
    // Each message takes at least 3 × 2 ms but one starts every 1 ms: slots pass
    // while messages run, and a 1 ms max-latency gate fails.
    let server = Server::start(&["--delay", "2ms"]);
    let (run, code) = ping(&[
        &server.addr,
        "--period",
        "1ms",
        "--count",
        "5",
        "--round-trips",
        "3",
        "--max-latency",
        "1ms",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(run["exit_code"], 1);
    assert!(metric(&run, "overruns") >= 5.0 * 4.0, "{}", run["metrics"]);
    assert_eq!(metric(&run, "deadline_misses"), 5.0);
    assert_eq!(
        run["total"]["counters"]["overruns"].as_u64().unwrap() as f64,
        metric(&run, "overruns")
    );
}

#[test]
fn the_table_and_the_store_hold_the_run() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = rtlab()
        .args([
            "--db",
            db.to_str().unwrap(),
            "net",
            "ping",
            &server.addr,
            "--period",
            "1ms",
            "--count",
            "10",
            "--round-trips",
            "2",
            "--quiet",
            "--tag",
            "loop",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "rtlab net ping",
        "leg1",
        "leg2",
        "server",
        "message",
        "sent 10, answered 10, lost 0",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains("saved as run 1"));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let kind: String = conn
        .query_row("SELECT kind FROM runs WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kind, "net");
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn both_ends_can_run_with_rt_priority_and_pinning() {
    let server = Server::start(&["--priority", "80", "--cpus", "0"]);
    let (run, code) = ping(&[
        &server.addr,
        "--period",
        "2ms",
        "--count",
        "20",
        "--priority",
        "70",
        "--cpus",
        "0",
    ]);
    assert_eq!(code, Some(0), "{}", run["warnings"]);
    assert_sound_run(&run, 20, 4);
    let p = &run["params"];
    assert_eq!(p["priority"].as_i64(), Some(70));
    assert_eq!(p["server"]["policy"], "fifo");
    assert_eq!(p["server"]["priority"], "80");
    assert_eq!(p["server"]["cpus"], "0");
    let codes: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"not_realtime") && !codes.contains(&"server_not_realtime"));
}

#[test]
fn ctrl_c_keeps_what_was_measured() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let child = rtlab()
        .args([
            "--db",
            db.to_str().unwrap(),
            "net",
            "ping",
            &server.addr,
            "--period",
            "5ms",
            "--count",
            "100000",
            "--json",
            "--quiet",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once it measures, interrupt it as Ctrl-C does.
    crate::common::wait_until_measuring(child.id());
    // SAFETY: kill(2) with the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["status"], "interrupted");
    let sent = metric(&run, "messages_sent");
    assert!((1.0..100_000.0).contains(&sent));
    // Every message sent before the stop was answered or lost, none forgotten.
    assert_eq!(
        metric(&run, "messages_completed") + metric(&run, "messages_lost"),
        sent
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("saved as run 1"));
}
