//! What every test module uses: the binary under test, and runs whose failed
//! checks show everything (the command, its exit code, stdout and stderr).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::process::{Output, Stdio};

/// `rtlab`, with no database or state of the environment leaking in.
pub fn rtlab() -> Command {
    let mut c = Command::cargo_bin("rtlab").unwrap();
    c.env_remove("RTLAB_DB")
        .env_remove("RTLAB_LABEL")
        .env_remove("RTLAB_TAGS");
    c
}

/// Runs `cmd` and checks that it exits with one of `codes`; a mismatch panics
/// with the command, its exit code, stdout and stderr (assert_cmd's report).
pub fn expect(cmd: &mut Command, codes: &[i32]) -> Output {
    cmd.assert()
        .code(predicate::in_iter(codes.to_vec()))
        .get_output()
        .clone()
}

/// Runs `cmd`, checks its exit code as [`expect`] does, and parses its stdout
/// as one JSON document (panicking with everything it printed when it is not).
pub fn json(cmd: &mut Command, codes: &[i32]) -> Value {
    let out = expect(cmd, codes);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", shown(&out)))
}

/// An output as text for an assertion message: exit code, stdout and stderr.
pub fn shown(out: &Output) -> String {
    format!(
        "exit code: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` to its end under GNU time; returns its output and its peak
/// resident memory in KiB. `meanwhile` runs with its pid, while it runs.
///
/// Not wait4(2)'s `ru_maxrss` of a child of this process: the kernel counts in
/// it the memory the child held before it called exec, and this process starts
/// its children with vfork (posix_spawn), sharing its own memory, which grows
/// with the tests running beside. GNU time forks from its own small process.
pub fn output_and_peak_rss(
    cmd: &std::process::Command,
    meanwhile: impl FnOnce(u32),
) -> (Output, u64) {
    let dir = tempfile::tempdir().unwrap();
    let peak_file = dir.path().join("peak");
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed
        .args(["-q", "-f", "%M", "-o"])
        .arg(&peak_file)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        timed.current_dir(d);
    }
    let child = timed
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/time (apt-get install time)");
    let time_pid = child.id() as i32;
    wait_for("GNU time to start the command", || {
        !children_of(time_pid).is_empty() || !is_running(time_pid)
    });
    if let Some(&pid) = children_of(time_pid).first() {
        meanwhile(pid as u32);
    }
    let out = child.wait_with_output().unwrap();
    let peak = std::fs::read_to_string(&peak_file).unwrap_or_default();
    let peak = peak.trim().parse().unwrap_or_else(|_| {
        panic!("GNU time's peak RSS: {peak:?}\n{}", shown(&out));
    });
    (out, peak)
}

/// Whether `pid` is a live process (not ended, not a zombie).
fn is_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rfind(") ").is_some_and(|i| !s[i + 2..].starts_with('Z')))
}

/// A memory figure of `pid` now, in KiB, by its name in /proc/PID/status
/// (`VmRSS`, `RssAnon`); 0 once it has exited.
pub fn status_kib(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The signals `pid` catches (SigCgt of /proc/PID/status); panics when the
/// process has exited (a zombie has no signal handlers left to wait for).
fn caught_signals(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| s.lines().find_map(|l| l.strip_prefix(key)).map(str::trim);
    assert!(
        !field("State:").unwrap_or("Z").starts_with('Z'),
        "process {pid} has exited"
    );
    field("SigCgt:").map_or(0, |v| u64::from_str_radix(v, 16).unwrap_or(0))
}

/// How long a test waits for something that must come (an answer, a close, a
/// state): generous, a bound on waiting for ever, not a measure of speed.
pub const BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// Polls `done` every 10 ms until it holds; panics, naming `what`, if it still
/// does not after [`BOUND`] (a busy machine may start rtlab slowly).
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + BOUND;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "waited {BOUND:?} for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// What the peer sends on `s` until it closes it (a reset counts as closed);
/// panics when it is still open after `bound`.
pub fn read_until_closed(s: &mut std::net::TcpStream, bound: std::time::Duration) -> Vec<u8> {
    use std::io::{ErrorKind, Read};
    let t = std::time::Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = bound.saturating_sub(t.elapsed());
        assert!(
            !left.is_zero(),
            "the server kept the connection open over {bound:?}; got {:?}",
            String::from_utf8_lossy(&out)
        );
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    out
}

/// Waits until `pid` catches SIGINT (bit 2 of SigCgt), so that a SIGINT
/// interrupts it instead of killing it.
pub fn wait_until_catching_sigint(pid: u32) {
    wait_for(&format!("process {pid} to catch SIGINT"), || {
        caught_signals(pid) & 2 != 0
    });
}

/// As [`wait_until_catching_sigint`], and until it [`measuring`]: a signal
/// sent then interrupts a measurement that has samples.
pub fn wait_until_measuring(pid: u32) {
    wait_until_catching_sigint(pid);
    wait_for(&format!("process {pid} to measure"), || {
        caught_signals(pid);
        measuring(pid)
    });
}

/// Whether `pid`'s measurement is under way: a measuring thread (`rtlab-lat*`,
/// `rtlab-noise*`, `rtlab-ping`) has woken from 20 sleeps (a latency or ping
/// thread) or spun 20 ms on its CPU (a noise thread), which setting up does not
/// reach (a latency thread sleeps 3 times to warm up; every thread starts
/// measuring at once, after all are set up).
pub fn measuring(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let dir = t.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let comm = read("comm");
        if !["rtlab-lat", "rtlab-noise", "rtlab-ping"]
            .iter()
            .any(|p| comm.starts_with(p))
        {
            return false;
        }
        let woken = read("status")
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
        // schedstat: the time spent on a CPU (ns) first.
        let on_cpu_ns = read("schedstat")
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        woken >= 20 || on_cpu_ns >= 20_000_000
    })
}

/// The processes whose parent is `pid`.
pub fn children_of(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            let f: Vec<&str> = after.split_whitespace().collect();
            if f[1].parse::<i32>() == Ok(pid) && f[0] != "Z" {
                out.push(p);
            }
        }
    }
    out
}

/// The line of `text` that starts with `start`, its spaces squeezed: a row
/// of a table printed in aligned columns.
pub fn squeezed_line(text: &str, start: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
}
