//! What every test module uses: the binary under test, and runs whose failed
//! checks show everything (the command, its exit code, stdout and stderr).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::process::Output;

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

/// A field of /proc/PID/status (SigCgt in hex, the rest decimal).
fn status_field(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let v = s.lines().find_map(|l| l.strip_prefix(key))?.trim();
    match key {
        "SigCgt:" => u64::from_str_radix(v, 16).ok(),
        _ => v.parse().ok(),
    }
}

/// Waits (at most 10 s: a busy machine may start rtlab slowly) until `pid`
/// catches SIGINT (bit 2 of SigCgt), so that a SIGINT interrupts it instead of
/// killing it.
pub fn wait_until_catching_sigint(pid: u32) {
    for _ in 0..1000 {
        if status_field(pid, "SigCgt:").is_some_and(|m| m & 2 != 0) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// As [`wait_until_catching_sigint`], and until it runs its probe threads, so
/// that a SIGINT interrupts a measurement under way.
pub fn wait_until_measuring(pid: u32) {
    wait_until_catching_sigint(pid);
    for _ in 0..1000 {
        if status_field(pid, "Threads:").is_some_and(|n| n > 1) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
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
