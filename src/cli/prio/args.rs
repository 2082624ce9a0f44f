//! The arguments of the `rtlab prio` subcommands, and what they ask of
//! [`crate::tune::prio`]: the threads to pick and the setting to give them.

use super::warn;
use crate::error::{bad_flag, UsageError};
use crate::tune::prio::select::{self, Selector};
use crate::tune::prio::target::{self, top_priority_warning, Target};
use anyhow::Result;
use clap::{Args, ValueEnum};
use rtlab_engine::rt::sched::Policy;
use std::path::PathBuf;

/// Policies that can be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum PolicyArg {
    /// SCHED_FIFO (real-time).
    Fifo,
    /// SCHED_RR (real-time, round robin).
    Rr,
    /// SCHED_OTHER (normal).
    Other,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
}

impl From<PolicyArg> for Policy {
    fn from(p: PolicyArg) -> Policy {
        match p {
            PolicyArg::Fifo => Policy::Fifo,
            PolicyArg::Rr => Policy::Rr,
            PolicyArg::Other => Policy::Other,
            PolicyArg::Batch => Policy::Batch,
            PolicyArg::Idle => Policy::Idle,
        }
    }
}

/// How processes are picked.
#[derive(Debug, Args)]
pub(super) struct MatchArgs {
    /// Match PATTERN against the whole command line, not the process name.
    #[arg(short, long)]
    pub(super) full: bool,
    /// Only threads whose name matches this regular expression [default: every
    /// thread].
    #[arg(long, value_name = "REGEX")]
    pub(super) threads: Option<String>,
    /// Include kernel threads (left alone otherwise).
    #[arg(long)]
    pub(super) kernel_threads: bool,
}

impl MatchArgs {
    /// The threads of the processes `pattern` matches, as these flags narrow them.
    pub(super) fn selector(&self, pattern: &str) -> Result<Selector> {
        select::refuse_empty(pattern).map_err(UsageError)?;
        let threads = self.threads.as_deref();
        let s = Selector::new(pattern, self.full, threads, self.kernel_threads);
        Ok(s.map_err(UsageError)?)
    }
}

/// What to set.
#[derive(Debug, Args)]
pub(super) struct SchedArgs {
    /// Scheduling policy [default: leave the policy and priority as they are].
    #[arg(long, value_enum)]
    pub(super) policy: Option<PolicyArg>,
    /// Priority: 1-99 for fifo/rr, 0 for the others [default: 0; fifo and rr
    /// need one].
    #[arg(short, long, value_name = "PRIO", allow_negative_numbers = true)]
    pub(super) priority: Option<i32>,
    /// CPUs to allow (e.g. 2-3) [default: leave the affinity as it is].
    #[arg(long, value_name = "LIST")]
    pub(super) affinity: Option<String>,
}

impl SchedArgs {
    /// The setting asked for; errors name the flag.
    pub(super) fn target(&self) -> Result<Target> {
        let policy = target::policy_of(self.policy.map(Policy::from), self.priority)
            .map_err(|e| bad_flag("--priority", e))?;
        let affinity = match &self.affinity {
            Some(a) => Some(target::affinity_of(a).map_err(|e| bad_flag("--affinity", e))?),
            None => None,
        };
        let target = Target::new(policy, affinity).map_err(UsageError)?;
        if let Some((p, prio)) = target.policy {
            if target::is_top(p, prio) {
                warn(&top_priority_warning("--priority 99"));
            }
        }
        Ok(target)
    }
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio list --rt-only
  rtlab prio list 'irq/' --json")]
pub(super) struct ListArgs {
    /// Regular expression on the process name [default: every process].
    pub(super) pattern: Option<String>,
    /// Only threads with a real-time policy (fifo, rr, deadline).
    #[arg(long)]
    pub(super) rt_only: bool,
    /// Match PATTERN against the whole command line.
    #[arg(short, long)]
    pub(super) full: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub(super) json: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio set 'irq/.*eth0' --policy fifo -p 85 --kernel-threads
  rtlab prio set myapp --policy fifo -p 80 --threads 'ctrl.*' --affinity 3
  rtlab prio set 1234 --policy other --dry-run")]
pub(super) struct SetArgs {
    /// Regular expression on the process name (pgrep-like), or a PID.
    pub(super) pattern: String,
    #[command(flatten)]
    pub(super) sched: SchedArgs,
    #[command(flatten)]
    pub(super) matching: MatchArgs,
    /// Show what would change, change nothing.
    #[arg(short = 'n', long)]
    pub(super) dry_run: bool,
    /// Also change PID 1 and the kernel's per-CPU threads (migration, ksoftirqd,
    /// rcu, idle_inject, cpuhp, watchdog), which are left alone otherwise.
    #[arg(long)]
    pub(super) force: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio run --policy fifo -p 80 --affinity 3 -- ./control-loop
  rtlab prio run --policy fifo -p 70 --mlock -- ./app --config app.toml")]
pub(super) struct RunArgs {
    #[command(flatten)]
    pub(super) sched: SchedArgs,
    /// Raise RLIMIT_MEMLOCK to unlimited (or at least to its hard limit) so the
    /// command can mlockall (Linux drops a lock across exec, so the command must
    /// lock its own memory).
    #[arg(long)]
    pub(super) mlock: bool,
    /// The command and its arguments (after --).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(super) command: Vec<String>,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio apply robot.toml
  rtlab prio apply robot.toml --check")]
pub(super) struct ApplyArgs {
    /// The profile (TOML).
    pub(super) profile: PathBuf,
    /// Report threads that differ from the profile and exit 1 if any; change nothing.
    #[arg(long)]
    pub(super) check: bool,
    /// Also change PID 1 and the kernel's per-CPU threads (see `prio set --force`).
    #[arg(long)]
    pub(super) force: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio save robot.toml
  rtlab prio save irqs.toml 'irq/' --kernel-threads --force")]
pub(super) struct SaveArgs {
    /// Where to write the profile.
    #[arg(value_parser = crate::cli::common::output_file)]
    pub(super) profile: PathBuf,
    /// Regular expression on the process name [default: every process with a
    /// real-time thread].
    pub(super) pattern: Option<String>,
    #[command(flatten)]
    pub(super) matching: MatchArgs,
    /// Overwrite an existing profile.
    #[arg(long)]
    pub(super) force: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio unit robot.toml
  rtlab prio unit robot.toml --dir /etc/systemd/system")]
pub(super) struct UnitArgs {
    /// The profile (TOML).
    pub(super) profile: PathBuf,
    /// Write the drop-ins below this directory (e.g. /etc/systemd/system) instead
    /// of printing them [default: print them].
    #[arg(long, value_name = "DIR", value_parser = crate::cli::common::output_dir)]
    pub(super) dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio restore --dry-run
  rtlab prio restore")]
pub(super) struct RestoreArgs {
    /// Show what would be restored, change nothing.
    #[arg(short = 'n', long)]
    pub(super) dry_run: bool,
}
