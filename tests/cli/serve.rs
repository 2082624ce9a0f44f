//! `rtlab serve` over HTTP: every page's status and content, filters and
//! paging, the token, the refusal of a non-loopback address without one,
//! bounds on requests and connections, and a store left byte for byte as it
//! was. `/metrics` and the Grafana dashboard: `serve_metrics`.

use crate::common::{expect, rtlab};
use crate::serve_common::{store, until_closed, Server, BOUND};

#[test]
fn pages_show_the_fleet_runs_a_run_a_comparison_and_a_host() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &["--require", "gyro=1ms"]);
    let fleet = s.get("/");
    assert_eq!(fleet.status, 200);
    for text in [
        "board-a",
        "board-b",
        "6.1-rt",
        "gyro ≤ 1ms",
        "/host/board-a",
        "/runs?host=board-a",
    ] {
        assert!(fleet.body.contains(text), "{text}\n{}", fleet.body);
    }
    // Each host is judged on its monitor rows and latency runs: board-a's
    // rows stay within 1 ms in 2 of 3 (its worst 1250 us); board-b's one
    // row fails it (2000.1 us); board has no windows, its imported latency
    // run (the bench run is no latency evidence) holds.
    let row = |host: &str| -> &str {
        let at = fleet.body.find(&format!(">{host}</a>")).unwrap();
        &fleet.body[at..at + fleet.body[at..].find("</tr>").unwrap()]
    };
    for (host, texts) in [
        (
            "board-a",
            &[
                "3 monitor rows<",
                "UNDECIDED</span> 2 of 3 within",
                "1250.0",
            ][..],
        ),
        (
            "board-b",
            &["1 monitor row<", "class=\"FAIL\">FAIL</span><"],
        ),
        ("board", &[">1 run<", "class=\"PASS\">PASS</span><"]),
    ] {
        for t in texts {
            assert!(row(host).contains(t), "{host}: {t} in {}", row(host));
        }
    }
    let runs = s.get("/runs");
    assert_eq!(runs.status, 200);
    assert_eq!(
        runs.body.matches("name=\"run\" value=").count(),
        12,
        "{}",
        runs.body
    );
    assert!(runs.body.contains("action=\"/compare\""));
    let tagged = s.get("/runs?tag=served");
    assert_eq!(tagged.body.matches("name=\"run\" value=").count(), 1);
    assert!(tagged.body.contains("value=\"11\""));
    let stock = s.get("/runs?kind=latency&since=2000-01-01&until=2100-01-01&kernel=&host=");
    assert_eq!(stock.status, 200);
    assert!(s.get("/runs?host=nowhere").body.contains("No runs match"));
    assert_eq!(s.get("/runs?since=yesterdayish").status, 400);
    assert_eq!(s.get("/runs?page=0").status, 400);
    let run = s.get("/run/11");
    assert_eq!(run.status, 200);
    assert!(run.body.contains("rtlab report: live #11") && run.body.contains("<svg"));
    assert!(run.body.contains("<nav>"));
    let missing = s.get("/run/999");
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("no run with id 999"));
    assert_eq!(s.get("/run/x").status, 404);
    let cmp = s.get("/compare?run=1&run=2&run=1");
    assert_eq!(cmp.status, 200);
    assert!(cmp.body.contains("What differs") && cmp.body.contains("<svg"));
    assert_eq!(s.get("/compare").status, 400);
    assert_eq!(s.get("/compare?run=1&run=999").status, 404);
    let host = s.get("/host/board-a");
    assert_eq!(host.status, 200);
    assert!(
        host.body.contains("Windows (3 rows, last day)") && host.body.contains("<svg"),
        "{}",
        host.body
    );
    assert_eq!(s.get("/host/nowhere").status, 404);
    assert_eq!(s.get("/nothing").status, 404);
    let head = s.raw(b"HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty() && head.head.contains("Content-Length: "));
    // Every page is well-formed XML, as the report is.
    for page in [&fleet, &runs, &run, &cmp, &host] {
        roxmltree::Document::parse(page.body.trim_start_matches("<!DOCTYPE html>\n"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn runs_are_listed_fifty_a_page() {
    let (_dir, db) = store(45);
    let s = Server::start(&db, &[]);
    let first = s.get("/runs?kind=latency");
    assert_eq!(first.body.matches("name=\"run\" value=").count(), 50);
    assert!(first.body.contains("older runs") && !first.body.contains("newer runs"));
    assert!(first.body.contains("value=\"57\""), "newest first");
    let second = s.get("/runs?kind=latency&page=2");
    let n = second.body.matches("name=\"run\" value=").count();
    // 57 runs: 45 + 1 imported histograms, the cyclictest imports, the live run and the campaign's.
    assert!((1..50).contains(&n), "{n}");
    assert!(second.body.contains("newer runs") && !second.body.contains("older runs"));
    assert!(second.body.contains("kind=latency&amp;page=1"));
}

#[test]
fn a_token_is_needed_on_every_request_and_carried_in_links() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &["--token", "s3cret"]);
    assert_eq!(s.get("/").status, 401);
    assert_eq!(s.get("/metrics").status, 401);
    assert_eq!(s.get("/?token=s3creT").status, 401);
    assert_eq!(
        s.get_with("/", &["Authorization: Bearer wrong"]).status,
        401
    );
    assert_eq!(
        s.get_with("/metrics", &["Authorization: Bearer s3cret"])
            .status,
        200
    );
    let page = s.get("/runs?token=s3cret");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("/run/11?token=s3cret"));
    assert!(page.body.contains("name=\"token\" value=\"s3cret\""));
    drop(s);
    // Another address than loopback: only with a token.
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["serve", "--listen", "0.0.0.0:0"]),
        &[2],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--listen 0.0.0.0:0") && err.contains("--token"),
        "{err}"
    );
    let open = Server::start(&db, &["--listen", "0.0.0.0:0", "--token", "t"]);
    assert!(std::fs::read_to_string(&open.log)
        .unwrap()
        .contains("token required"));
    let out = expect(
        rtlab().arg("--db").arg(&db).args(["serve", "--token", ""]),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
    // No store: refused, and none is made.
    let none = db.with_file_name("none.db");
    let out = expect(rtlab().arg("--db").arg(&none).arg("serve"), &[2]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no results database"));
    assert!(!none.exists());
    for (flag, value) in [
        ("--read-timeout", "0"),
        ("--connection-time", "1x"),
        ("--max-connections", "0"),
    ] {
        let out = expect(
            rtlab().arg("--db").arg(&db).args(["serve", flag, value]),
            &[2],
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{flag}"
        );
    }
}

#[test]
fn oversized_requests_bodies_and_other_methods_are_refused() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let long = format!("/runs?tag={}", "x".repeat(9000));
    assert_eq!(
        s.raw(format!("GET {long} HTTP/1.1\r\n\r\n").as_bytes())
            .status,
        414
    );
    let headers: String = (0..400)
        .map(|i| format!("X-Filler-{i}: {}\r\n", "y".repeat(100)))
        .collect();
    assert_eq!(
        s.raw(format!("GET / HTTP/1.1\r\n{headers}\r\n").as_bytes())
            .status,
        431
    );
    let post = s.raw(b"POST /runs HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd");
    assert_eq!(post.status, 405);
    assert!(post.head.contains("Allow: GET, HEAD"));
    assert_eq!(
        s.raw(b"GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd")
            .status,
        413
    );
    assert_eq!(s.raw(b"DELETE /run/1 HTTP/1.1\r\n\r\n").status, 405);
    assert_eq!(s.raw(b"garbage\r\n\r\n").status, 400);
    assert_eq!(s.get("/").status, 200, "still serving");
}

#[test]
fn a_silent_client_holds_nothing_and_connections_are_bounded() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &["--read-timeout", "2s", "--max-connections", "2"]);
    // Connections are accepted in the order they were made: each one below
    // is accepted after the ones before it.
    let mut silent = s.connect();
    // One silent connection: others are served meanwhile.
    assert_eq!(s.get("/metrics").status, 200);
    // Two: the limit; a third is told at once, and told again.
    let mut second = s.connect();
    let busy = s.raw_within(b"GET / HTTP/1.1\r\n\r\n", BOUND);
    assert_eq!(busy.status, 503);
    assert!(busy.head.contains("Retry-After: 1"), "{}", busy.head);
    assert_eq!(s.get("/metrics").status, 503);
    // The silent clients are closed at the head's deadline, without an answer.
    assert_eq!(until_closed(&mut silent, BOUND), "");
    assert_eq!(until_closed(&mut second, BOUND), "");
    // Their slots are free before their sockets close.
    assert_eq!(s.get("/").status, 200, "the slots are free again");
    let log = s.log_text();
    assert_eq!(
        log.matches("no whole request head within 2s (--read-timeout)")
            .count(),
        2,
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.starts_with("GET / 503 ") && l.ends_with("busy (--max-connections)")),
        "{log}"
    );
}

#[test]
fn a_session_of_requests_leaves_the_store_unchanged_and_sigterm_stops_cleanly() {
    let (_dir, db) = store(0);
    let before = std::fs::read(&db).unwrap();
    let s = Server::start(&db, &["--token", "k"]);
    for target in [
        "/",
        "/runs",
        "/runs?page=2",
        "/run/1",
        "/run/11",
        "/compare?run=1&run=11",
        "/host/board-a",
        "/metrics",
        "/metrics",
        "/nothing",
        "/x%0AGET%20/forged%20200%200.1ms%0D%1B%5B2J",
    ] {
        let r = s.get_with(target, &["Authorization: Bearer k"]);
        assert!(r.status == 200 || r.status == 404, "{target}: {}", r.status);
    }
    let (status, log) = s.stop();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(
        log.contains("stopped") && log.contains("GET /metrics 200"),
        "{log}"
    );
    assert!(!log.contains("token=k"), "the token is not logged");
    // A path cannot write a line of its own, nor move the terminal's cursor.
    assert!(
        log.contains("GET /x\\x0aGET /forged 200 0.1ms\\x0d\\x1b[2J 404"),
        "{log}"
    );
    assert!(!log.lines().any(|l| l.starts_with("GET /forged")), "{log}");
    assert!(!log.contains('\x1b') && !log.contains('\r'), "{log}");
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the store file changed"
    );
}
