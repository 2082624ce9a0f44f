//! A running server faced with every kind of malformed input keeps answering a
//! valid client, answers nothing malformed, never answers with more bytes than it
//! got, and counts each refusal by reason.

use crate::common::{read_until_closed, BOUND};
use crate::net_common::{assert_sound_run, counter, ping, Server};
use rtlab_engine::proto::{write_header, Header, Kind, HEADER_LEN, MAX_PAYLOAD};
use std::io::Write;
use std::net::{TcpStream, UdpSocket};
use std::time::Duration;

fn valid(kind: Kind, payload: u16) -> Vec<u8> {
    let mut b = vec![0x5Au8; HEADER_LEN + payload as usize];
    write_header(
        &mut b,
        &Header {
            kind,
            leg: 0,
            legs: 2,
            session: 99,
            payload_len: payload,
            seq: 1,
            client_ns: 0,
            server_ns: 0,
        },
    );
    b
}

/// Each malformed case, named by the counter it must land in.
fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let good = valid(Kind::Request, 32);
    let with = |at: usize, v: u8| {
        let mut b = good.clone();
        b[at] = v;
        b
    };
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"extra");
    let mut big_len = good.clone();
    big_len[12..14].copy_from_slice(&((MAX_PAYLOAD + 1) as u16).to_be_bytes());
    vec![
        ("short", good[..HEADER_LEN - 1].to_vec()),
        ("short", vec![]),
        ("oversized", vec![0u8; 20_000]),
        ("oversized", big_len),
        ("truncated", good[..HEADER_LEN + 10].to_vec()),
        ("trailing", trailing),
        ("bad_magic", with(0, b'X')),
        ("bad_version", with(4, 9)),
        ("bad_kind", with(5, 77)),
        ("bad_kind", valid(Kind::Reply, 8)),
        ("bad_leg", with(6, 2)),
        ("bad_leg", with(7, 0)),
        ("bad_flags", with(14, 0x80)),
    ]
}

/// Deterministic pseudo-random bytes (xorshift), so a failure can be replayed.
fn random_datagrams(n: usize) -> Vec<Vec<u8>> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let len = (next() % 1500) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Half of them start like a real message, to get past the magic.
            if next() % 2 == 0 && d.len() >= 5 {
                d[..4].copy_from_slice(b"RTLN");
                d[4] = 1;
            }
            d
        })
        .collect()
}

#[test]
fn udp_server_survives_every_malformed_case_and_keeps_answering() {
    let server = Server::start(&[]);
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.connect(&server.addr).unwrap();
    raw.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = vec![0u8; 70_000];

    let cases = cases();
    for (name, bytes) in &cases {
        raw.send(bytes).unwrap();
        // Nothing comes back for a malformed message.
        assert!(
            raw.recv(&mut buf).is_err(),
            "the server answered a {name} message"
        );
    }
    // A valid request is answered with exactly as many bytes.
    for payload in [0u16, 1, 500, MAX_PAYLOAD as u16] {
        let req = valid(Kind::Request, payload);
        raw.send(&req).unwrap();
        let n = raw.recv(&mut buf).expect("a valid request is answered");
        assert_eq!(n, req.len());
    }
    // An info request is answered with at most as many bytes.
    let info = valid(Kind::InfoRequest, 8);
    raw.send(&info).unwrap();
    assert_eq!(raw.recv(&mut buf).unwrap(), info.len());

    // Random bytes and a flood, while a valid client measures.
    let addr = server.addr.clone();
    let client = std::thread::spawn(move || {
        ping(&[
            &addr,
            "--period",
            "2ms",
            "--count",
            "100",
            "--round-trips",
            "2",
            "--timeout",
            "200ms",
        ])
    });
    let random = random_datagrams(2_000);
    let flood = valid(Kind::Request, 0)[..20].to_vec();
    for (i, d) in random.iter().enumerate() {
        let _ = raw.send(d);
        for _ in 0..10 {
            let _ = raw.send(&flood);
        }
        if i % 100 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let (run, code) = client.join().unwrap();
    assert_eq!(code, Some(0), "{}", run["warnings"]);
    assert_eq!(run["status"], "complete");
    assert!(
        run["metrics"]["messages_completed"].as_f64().unwrap() > 0.0,
        "the valid client got no answer during the flood"
    );
    // Once the flood is over, a valid client gets every answer.
    let (after, code) = ping(&[
        &server.addr,
        "--period",
        "1ms",
        "--count",
        "20",
        "--round-trips",
        "2",
    ]);
    assert_eq!(code, Some(0));
    assert_sound_run(&after, 20, 2);

    let (summary, code) = server.stop();
    assert_eq!(code, Some(0), "the server did not end cleanly: {summary}");
    for (name, _) in &cases {
        assert!(
            counter(&summary, name) >= 1,
            "{name} not counted: {summary}"
        );
    }
    // The flood datagrams are short; everything the server received it either
    // answered or counted.
    assert!(counter(&summary, "short") >= 2);
    let s = &summary["summary"];
    assert!(s["bytes_out"].as_u64().unwrap() <= s["bytes_in"].as_u64().unwrap());
    assert_eq!(s["io_errors"], 0);
}

#[test]
fn tcp_server_drops_bad_connections_and_keeps_serving() {
    // Stopped by the test, not by the clock, however slowly the machine runs it.
    let server = Server::start(&["--tcp", "--max-clients", "4", "--duration", "600s"]);
    for (name, bytes) in cases() {
        let mut c = TcpStream::connect(&server.addr).unwrap();
        c.write_all(&bytes).unwrap();
        if name == "trailing" || name == "truncated" || name == "short" {
            // On a stream these are a message cut short or followed by the
            // start of another: close our side so the server sees the end.
            c.shutdown(std::net::Shutdown::Write).unwrap();
        }
        // To the server's close (a reset when it left bytes unread), so that
        // its slot is free before the next connection.
        let back = read_until_closed(&mut c, BOUND);
        // Only a complete valid message may be answered, and only with its own
        // size ("trailing" is a valid message followed by 5 stray bytes).
        assert!(
            back.is_empty() || back.len() == HEADER_LEN + 32,
            "{name}: got {} bytes back",
            back.len()
        );
    }
    // More connections than allowed: the extra ones are closed, others served.
    // (The server accepts in the order of connecting: the fifth finds four open.)
    let held: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let mut extra = TcpStream::connect(&server.addr).unwrap();
    // Events, not time: each read below ends when the server closes its side.
    assert!(
        read_until_closed(&mut extra, BOUND).is_empty(),
        "the fifth connection was served"
    );
    // We end the four held connections; the server sees each end and closes its
    // side, which is the end of file read here. Its slots are then free, before
    // the next client connects.
    for (i, mut s) in held.into_iter().enumerate() {
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(
            read_until_closed(&mut s, BOUND).is_empty(),
            "held connection {i} got bytes"
        );
    }

    let (run, code) = ping(&[
        &server.addr,
        "--tcp",
        "--period",
        "1ms",
        "--count",
        "20",
        "--round-trips",
        "2",
    ]);
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 20, 2);
    let (summary, _) = server.stop();
    assert!(counter(&summary, "connections_refused") >= 1, "{summary}");
    for name in [
        "bad_magic",
        "bad_version",
        "bad_kind",
        "bad_leg",
        "bad_flags",
        "oversized",
        "truncated",
    ] {
        assert!(
            counter(&summary, name) >= 1,
            "{name} not counted: {summary}"
        );
    }
}
