//! `rtlab serve` beside clients that hold connections: slow and idle ones
//! never keep a normal request waiting, a head that never ends and a body
//! that never comes are closed at their deadlines, and every connection at
//! `--connection-time`. The bounds here are functional: each request below
//! would otherwise wait for ever, or for the slow clients' 10 s.

use crate::serve_common::{store, until_closed, Server, Trickle, BOUND};
use std::io::Write;
use std::time::Duration;

/// Over the 32 connections that were once the most served at once: 64
/// clients sending a byte every 100 ms and 32 sending nothing.
#[test]
fn slow_and_idle_clients_never_keep_a_normal_request_waiting() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let _slow = Trickle::start((0..64).map(|_| s.connect()).collect());
    let _idle: Vec<_> = (0..32).map(|_| s.connect()).collect();
    for target in ["/metrics", "/", "/metrics", "/runs", "/metrics"] {
        let r = s.raw_within(
            format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
            Duration::from_secs(5),
        );
        assert_eq!(r.status, 200, "{target}: {}", r.head);
    }
}

#[test]
fn a_head_that_never_ends_and_a_body_that_never_comes_are_closed() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &["--read-timeout", "2s"]);
    // Byte by byte, a head that goes on: closed at its deadline.
    let mut trickling = s.connect();
    let _slow = Trickle::start(vec![trickling.try_clone().unwrap()]);
    assert_eq!(until_closed(&mut trickling, BOUND), "");
    // A body announced and never sent: answered at once (no body is taken)
    // and closed, whatever the client still means to send.
    for (head, status) in [
        (
            "POST /runs HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc",
            "405",
        ),
        ("GET / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc", "413"),
        (
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            "413",
        ),
    ] {
        let mut c = s.connect();
        c.write_all(head.as_bytes()).unwrap();
        let answer = until_closed(&mut c, BOUND);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status} ")),
            "{head:?}: {answer}"
        );
    }
    let log = s.log_text();
    assert!(
        log.contains("no whole request head within 2s (--read-timeout)"),
        "{log}"
    );
    assert!(log.contains("- 405 ") && log.contains("- 413 "), "{log}");
}

/// A connection is closed at `--connection-time` even while its head's
/// deadline (60 s here) is far.
#[test]
fn a_connection_is_closed_at_its_total_time() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &["--read-timeout", "60s", "--connection-time", "1s"]);
    let mut silent = s.connect();
    silent.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
    assert_eq!(until_closed(&mut silent, Duration::from_secs(30)), "");
    let log = s.log_text();
    assert!(log.contains("open for 1s (--connection-time)"), "{log}");
    assert_eq!(s.get("/metrics").status, 200);
}
