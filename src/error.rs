//! Exit codes and the two error kinds that choose them.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | success |
//! | 1 | measured fine, but a requirement or threshold failed (CI gate) |
//! | 2 | usage or input error |
//! | 3 | the system refused (permissions, missing kernel feature, a results database another process holds too long) |
//! | 4 | measured fine, nothing failed, but a verdict or comparison is undecided (repeats disagree, or a margin within the noise): repeat the runs |
//! | 130 | interrupted; what was gathered was still printed and saved |

use std::fmt;

/// Success.
pub const EXIT_OK: i32 = 0;
/// A requirement or threshold failed.
pub const EXIT_FAILED: i32 = 1;
/// Bad usage or input.
pub const EXIT_USAGE: i32 = 2;
/// The system refused.
pub const EXIT_SYSTEM: i32 = 3;
/// Nothing failed, but a verdict or comparison is undecided: the repeats
/// disagree, or a margin or difference lies within the noise threshold.
/// More repeats (`--repeat`, `--until-decided`) may decide it.
pub const EXIT_UNDECIDED: i32 = 4;
/// Interrupted by SIGINT/SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Bad usage or input: exit 2 (as is every error that is not a [`SystemError`]).
/// The message names what is wrong and how to fix it.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The system refused something rtlab needs: exit 3. The message says what to do.
#[derive(Debug)]
pub struct SystemError(pub String);

impl fmt::Display for SystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SystemError {}

/// A value of one parameter that cannot be used: exit 2. It names the flag
/// (`--interval: '0' is zero; ...`); a scenario names the key the flag stands for
/// (`interval`) and the line that gave it.
#[derive(Debug)]
pub struct BadValue {
    /// The flag, as the command line spells it (`--histogram-max`).
    pub flag: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl BadValue {
    /// The scenario key of the flag: `--histogram-max` → `histogram_max`; a
    /// positional argument (`HOST:PORT`) is the step's `target`.
    pub fn key(&self) -> String {
        match self.flag.strip_prefix("--") {
            Some(long) => long.replace('-', "_"),
            None => "target".into(),
        }
    }
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.flag, self.message)
    }
}

impl std::error::Error for BadValue {}

/// A usage error naming the flag: `--interval: '0' is zero; ...`.
pub fn bad_flag(flag: &str, msg: impl fmt::Display) -> anyhow::Error {
    BadValue {
        flag: flag.to_string(),
        message: msg.to_string(),
    }
    .into()
}

/// The exit code an error maps to.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    // Anything that is not the system refusing is an input problem (a file that
    // cannot be read, a database that cannot be opened): exit 1 stays reserved for
    // "measured, and a requirement failed", so a CI gate never mistakes a crash
    // for a verdict.
    if err.chain().any(|e| e.is::<SystemError>()) {
        EXIT_SYSTEM
    } else {
        EXIT_USAGE
    }
}
