//! No TCP client can stall `rtlab net serve`: a client that sends and never reads
//! is dropped while the others are served, connections beyond `--max-clients` are
//! refused, idle ones are closed, memory stays bounded under a flood, and the
//! server ends soon after a signal or `--duration` whatever its clients do.
//!
//! Every loop here is bounded in count and in time; time limits are generous hang
//! checks, never speed assertions.

use crate::common::{read_until_closed, BOUND};
use crate::net_common::{assert_sound_run, counter, ping_run_in, PingRun, Server};
use rtlab_engine::proto::{write_header, Header, Kind, HEADER_LEN, MAX_PAYLOAD};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest any server may take to end after SIGTERM or its `--duration` before the
/// test calls it hung (the server is meant to end within a second).
const HANG: Duration = Duration::from_secs(10);

fn request(payload: usize) -> Vec<u8> {
    let mut b = vec![0x3Cu8; HEADER_LEN + payload];
    write_header(
        &mut b,
        &Header {
            kind: Kind::Request,
            leg: 0,
            legs: 1,
            session: 7,
            payload_len: payload as u16,
            seq: 0,
            client_ns: 0,
            server_ns: 0,
        },
    );
    b
}

/// How a flood of requests without reading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FloodEnd {
    /// The server closed or reset the connection.
    Dropped,
    /// The server stopped taking our bytes for a while (it is not reading us).
    Stalled,
    /// We sent all we meant to.
    AllSent,
    /// Time ran out.
    OutOfTime,
}

/// Sends the largest requests on `s`, never reading an answer, until the server
/// drops the connection, stops taking bytes for 1 s, `max_bytes` are sent or
/// `limit` passes. Messages are never cut: a write that times out is resumed
/// where it stopped, so the server only ever sees valid requests.
fn flood_without_reading(
    s: &mut TcpStream,
    max_bytes: usize,
    limit: Duration,
) -> (FloodEnd, usize) {
    let req = request(MAX_PAYLOAD);
    s.set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let t0 = Instant::now();
    let mut last_progress = Instant::now();
    let (mut sent, mut at) = (0usize, 0usize);
    loop {
        if sent >= max_bytes {
            return (FloodEnd::AllSent, sent);
        }
        if t0.elapsed() > limit {
            return (FloodEnd::OutOfTime, sent);
        }
        match s.write(&req[at..]) {
            Ok(0) => return (FloodEnd::Dropped, sent),
            Ok(n) => {
                sent += n;
                at = (at + n) % req.len();
                last_progress = Instant::now();
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if last_progress.elapsed() > Duration::from_secs(1) {
                    return (FloodEnd::Stalled, sent);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (FloodEnd::Dropped, sent),
        }
    }
}

/// Sends one request on `s` and reads its whole answer; false if the connection
/// is closed or nothing comes within 5 s.
fn round_trip(s: &mut TcpStream) -> bool {
    let req = request(16);
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if s.write_all(&req).is_err() {
        return false;
    }
    let mut back = vec![0u8; req.len()];
    s.read_exact(&mut back).is_ok()
}

fn tcp_ping(addr: &str, count: &str) -> PingRun {
    ping_run_in(
        &[],
        &[
            addr,
            "--tcp",
            "--period",
            "2ms",
            "--count",
            count,
            "--round-trips",
            "2",
            "--timeout",
            "1s",
        ],
    )
}

/// A connection that has sent half a header and then nothing (slowloris).
fn half_header(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&request(0)[..HEADER_LEN / 2]).unwrap();
    s
}

#[test]
fn clients_that_never_read_are_dropped_while_another_is_served() {
    let server = Server::start(&["--tcp"]);
    let addr = server.addr.clone();
    let done = Arc::new(AtomicBool::new(false));
    let until_done = done.clone();
    // Clients that send and never read, one after the other for as long as the
    // real client measures (at most 200 of them, 30 s).
    let stallers = std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut ends = Vec::new();
        while !until_done.load(Ordering::Relaxed)
            && ends.len() < 200
            && t0.elapsed() < Duration::from_secs(30)
        {
            let mut s = TcpStream::connect(&addr).unwrap();
            ends.push(flood_without_reading(
                &mut s,
                512 << 20,
                Duration::from_secs(10),
            ));
        }
        ends
    });
    let run = tcp_ping(&server.addr, "200");
    done.store(true, Ordering::Relaxed);
    let ends = stallers.join().unwrap();
    run.assert_code(0);
    assert_sound_run(&run.doc(), 200, 2);
    assert!(!ends.is_empty());
    for (i, (end, sent)) in ends.iter().enumerate() {
        assert_eq!(
            *end,
            FloodEnd::Dropped,
            "staller {i}, which never reads, was not dropped ({sent} bytes sent)"
        );
    }
    let most = ends.iter().map(|e| e.1).max().unwrap_or(0);
    eprintln!(
        "{} stallers dropped during the ping, each after at most {} KiB",
        ends.len(),
        most >> 10
    );
    // The server still serves after the drops.
    tcp_ping(&server.addr, "10").assert_code(0);
    let (summary, code) = server.stop();
    assert_eq!(code, Some(0), "{summary}");
    assert_eq!(
        counter(&summary, "slow_readers_dropped"),
        ends.len() as u64,
        "{summary}"
    );
    assert!(counter(&summary, "connections_peak") >= 2, "{summary}");
    assert_eq!(counter(&summary, "io_errors"), 0, "{summary}");
}

#[test]
fn connections_beyond_max_clients_are_refused_counted_and_slots_come_back() {
    let server = Server::start(&["--tcp", "--max-clients", "3"]);
    // Three clients fill the server; each is served.
    let mut held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    for (i, s) in held.iter_mut().enumerate() {
        assert!(round_trip(s), "held connection {i} was not served");
    }
    // Five more are refused: closed at once, never served.
    for i in 0..5 {
        let mut extra = TcpStream::connect(&server.addr).unwrap();
        assert!(
            read_until_closed(&mut extra, BOUND).is_empty(),
            "extra connection {i} beyond --max-clients 3 was served"
        );
    }
    // So is a real client while the server is full (exit 3: the server closed).
    tcp_ping(&server.addr, "5").assert_code(3);
    // The held ones are still served.
    for (i, s) in held.iter_mut().enumerate() {
        assert!(round_trip(s), "held connection {i} lost its service");
    }
    // Once they leave, a real client is served. Each leaves by closing its
    // side and reading until the server has closed its own: the server frees
    // a slot before it closes, so the slots are back before the client comes.
    for (i, mut s) in held.into_iter().enumerate() {
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(
            read_until_closed(&mut s, BOUND).is_empty(),
            "held connection {i} got bytes after it ended"
        );
    }
    let run = tcp_ping(&server.addr, "20");
    run.assert_code(0);
    assert_sound_run(&run.doc(), 20, 2);
    let (summary, code) = server.stop();
    assert_eq!(code, Some(0), "{summary}");
    assert!(counter(&summary, "connections_refused") >= 6, "{summary}");
    assert!(counter(&summary, "connections_peak") <= 3, "{summary}");
    assert!(counter(&summary, "connections") >= 4, "{summary}");
}

#[test]
fn idle_connections_are_closed_and_free_their_slots() {
    let server = Server::start(&["--tcp", "--max-clients", "4", "--idle-timeout", "300ms"]);
    // Fill every slot with clients that send nothing, or half a header.
    let mut idle: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    idle.push(half_header(&server.addr));
    for (i, s) in idle.iter_mut().enumerate() {
        assert!(
            read_until_closed(s, BOUND).is_empty(),
            "idle connection {i} got bytes"
        );
    }
    let run = tcp_ping(&server.addr, "20");
    run.assert_code(0);
    assert_sound_run(&run.doc(), 20, 2);
    let (summary, code) = server.stop();
    assert_eq!(code, Some(0), "{summary}");
    assert_eq!(counter(&summary, "idle_closed"), 4, "{summary}");
    assert_eq!(counter(&summary, "connections_refused"), 0, "{summary}");
}

/// Connects clients that would each have wedged a blocking server: one that
/// floods without reading, one that sent 128 KiB and reads nothing back, a slowloris
/// and idle ones. Returns them, to be held open while the server is stopped, once
/// the server has accepted them all.
fn hostile_clients(addr: &str) -> Vec<TcpStream> {
    let mut flood = TcpStream::connect(addr).unwrap();
    // Enough to fill the kernel's buffers both ways: it is dropped, or still
    // connected with answers pending when the server stops; both are fine.
    let (end, _) = flood_without_reading(&mut flood, 16 << 20, Duration::from_secs(5));
    assert_ne!(end, FloodEnd::OutOfTime);
    // Little enough to fit the kernel's buffers on most machines: usually still
    // connected, with answers it never reads, when the server stops.
    let mut unread = TcpStream::connect(addr).unwrap();
    let (end, sent) = flood_without_reading(&mut unread, 128 << 10, Duration::from_secs(5));
    assert!(
        matches!(end, FloodEnd::AllSent | FloodEnd::Dropped),
        "{end:?} after {sent} bytes"
    );
    let mut all = vec![flood, unread, half_header(addr)];
    all.extend((0..8).map(|_| TcpStream::connect(addr).unwrap()));
    // The server accepts in order: once the last one is served, all are in.
    let mut last = TcpStream::connect(addr).unwrap();
    assert!(round_trip(&mut last), "the last client was not served");
    all.push(last);
    all
}

#[test]
fn sigterm_ends_the_server_whatever_its_clients_do() {
    let server = Server::start(&["--tcp"]);
    let _clients = hostile_clients(&server.addr);
    let end = server.signal_and_wait(libc::SIGTERM, HANG);
    eprintln!("server ended {:?} after SIGTERM", end.took);
    assert_eq!(end.code, Some(0), "{}", end.doc);
    assert_eq!(end.doc["ended"], "stopped");
    assert_eq!(counter(&end.doc, "connections"), 12, "{}", end.doc);
}

#[test]
fn sigint_ends_the_server_whatever_its_clients_do() {
    let server = Server::start(&["--tcp"]);
    let _clients = hostile_clients(&server.addr);
    let end = server.signal_and_wait(libc::SIGINT, HANG);
    eprintln!("server ended {:?} after SIGINT", end.took);
    assert_eq!(end.code, Some(0), "{}", end.doc);
    assert_eq!(end.doc["ended"], "stopped");
}

#[test]
fn duration_ends_the_server_whatever_its_clients_do() {
    let started = Instant::now();
    // Long enough for the clients to connect on a busy machine first (they
    // take well under a second on a quiet one).
    let server = Server::start(&["--tcp", "--duration", "6s"]);
    let _clients = hostile_clients(&server.addr);
    let end = server.wait_end(HANG + Duration::from_secs(6));
    eprintln!(
        "server with --duration 6s ended {:?} after its start",
        started.elapsed()
    );
    assert_eq!(end.code, Some(0), "{}", end.doc);
    assert_eq!(end.doc["ended"], "duration done");
}

#[test]
fn floods_without_reading_keep_the_server_memory_bounded() {
    let server = Server::start(&["--tcp"]);
    tcp_ping(&server.addr, "10").assert_code(0);
    let before = server.rss_kib();
    // Four clients at once, each offering up to 64 MiB it never reads back: a
    // server that kept what it could not send would grow by about that much.
    let floods: Vec<_> = (0..4)
        .map(|_| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).unwrap();
                flood_without_reading(&mut s, 64 << 20, Duration::from_secs(30))
            })
        })
        .collect();
    for (i, f) in floods.into_iter().enumerate() {
        let (end, sent) = f.join().unwrap();
        assert_eq!(end, FloodEnd::Dropped, "flood {i}: {sent} bytes sent");
    }
    let after = server.rss_kib();
    eprintln!("server VmRSS {before} KiB before the floods, {after} KiB after");
    assert!(
        after < before + 32 * 1024,
        "the server grew from {before} KiB to {after} KiB under floods without reading"
    );
    tcp_ping(&server.addr, "10").assert_code(0);
    let (summary, code) = server.stop();
    assert_eq!(code, Some(0), "{summary}");
    assert!(counter(&summary, "slow_readers_dropped") >= 4, "{summary}");
}
