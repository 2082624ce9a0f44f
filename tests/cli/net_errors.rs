//! Bad input and refusals give a clear message naming the problem, and exit 2
//! (input) or 3 (the system or the network refused).

use crate::net_common::rtlab;
use predicates::prelude::*;
use std::net::UdpSocket;

fn fails(args: &[&str], code: i32, says: &[&str]) {
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_rtlab"))
        .args(args)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(code)
        .stdout(predicate::str::is_empty());
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for s in says {
        assert!(err.contains(s), "{args:?}: {s:?} not in: {err}");
    }
}

#[test]
fn bad_client_input_exits_2_naming_the_flag() {
    fn ping<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["net", "ping", "127.0.0.1:9", "--no-save"];
        a.extend_from_slice(extra);
        a
    }
    fails(
        &ping(&["--period", "abc"]),
        2,
        &["--period", "does not start with a number"],
    );
    fails(&ping(&["--period", "0"]), 2, &["--period", "zero"]);
    fails(
        &ping(&["--period", "5parsecs"]),
        2,
        &["--period", "unknown unit"],
    );
    fails(
        &ping(&["--count", "0"]),
        2,
        &["--count", "measures nothing"],
    );
    fails(
        &ping(&["--round-trips", "0"]),
        2,
        &["--round-trips", "1-32"],
    );
    fails(
        &ping(&["--round-trips", "33"]),
        2,
        &["--round-trips", "1-32"],
    );
    fails(&ping(&["--payload", "1M"]), 2, &["--payload", "16384"]);
    fails(&ping(&["--timeout=-1s"]), 2, &["--timeout", "negative"]);
    fails(&ping(&["--priority", "100"]), 2, &["--priority", "1-99"]);
    fails(&ping(&["--cpus", "x"]), 2, &["--cpus"]);
    fails(
        &["net", "ping", "no-such-host.invalid:7700", "--no-save"],
        2,
        &["HOST:PORT", "cannot resolve 'no-such-host.invalid:7700'"],
    );
}

#[test]
fn bad_server_input_exits_2_naming_the_flag() {
    fails(
        &["net", "serve", "--bind", "localhost"],
        2,
        &["--bind", "not ADDR:PORT"],
    );
    fails(&["net", "serve", "--delay", "soon"], 2, &["--delay"]);
    fails(&["net", "serve", "--priority", "0"], 2, &["--priority"]);
    fails(
        &["net", "serve", "--max-clients", "0"],
        2,
        &["--max-clients"],
    );
}

#[test]
fn max_clients_beyond_the_open_file_limit_exits_2_naming_the_limit() {
    // The limit is set for the child alone, by a shell: `ulimit -n 64`.
    let cmd = format!(
        "ulimit -n 64 && exec '{}' net serve --tcp --bind 127.0.0.1:0 --max-clients 100",
        env!("CARGO_BIN_EXE_rtlab")
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let context = format!(
        "command: sh -c {cmd:?}\nexit code: {:?}\nstdout:\n{}\nstderr:\n{err}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(2), "{context}");
    assert!(out.stdout.is_empty(), "{context}");
    for s in ["--max-clients", "limit of 64", "ulimit -n"] {
        assert!(err.contains(s), "{s:?} missing\n{context}");
    }
}

#[test]
fn port_in_use_is_refused_with_exit_3() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    fails(
        &["net", "serve", "--bind", &addr],
        3,
        &["--bind", &addr, "in use"],
    );
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = tcp.local_addr().unwrap().to_string();
    fails(
        &["net", "serve", "--tcp", "--bind", &addr],
        3,
        &["--bind", "in use"],
    );
}

#[test]
fn nobody_listening_is_refused_with_exit_3() {
    // A port that was just free: loopback answers "port unreachable".
    let addr = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    fails(
        &["net", "ping", &addr, "--no-save"],
        3,
        &["nothing listens there", "rtlab net serve"],
    );
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    fails(
        &["net", "ping", &addr, "--tcp", "--no-save"],
        3,
        &[&addr, "cannot connect (tcp)"],
    );
}

#[test]
fn a_silent_host_is_reported_with_exit_3() {
    // A socket that receives but never answers stands for a host that drops
    // everything (firewall, wrong port, server down without ICMP).
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    fails(
        &["net", "ping", &addr, "--timeout", "50ms", "--no-save"],
        3,
        &[&addr, "no answer within 3 × 50ms"],
    );
    // Nothing is half-written: no store was created.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = rtlab()
        .args([
            "--db",
            db.to_str().unwrap(),
            "net",
            "ping",
            &addr,
            "--timeout",
            "50ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(!db.exists());
}
