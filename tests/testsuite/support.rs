//! What every test module uses: the binary under test, and runs whose failed
//! checks show everything (the command, its exit code, stdout and stderr).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::process::Output;

/// `rtlab`, with no database or state of the environment leaking in.
pub fn rtlab() -> Command {
    let mut c = Command::cargo_bin("rtlab").unwrap();
    c.env_remove("RTLAB_DB");
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
