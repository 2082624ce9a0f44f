//! The options probes share, each checked once: `--policy` and
//! `--priority` of the measuring threads ([`SchedArgs`], flattened into the
//! probes whose threads take both) with the priority check that every probe
//! with RT threads makes ([`check_priority`]), `--interval`
//! ([`IntervalArgs`]), `--cpus` ([`CpusArgs`]),
//! `--mlock` ([`MlockArgs`]),
//! loads and counters ([`SharedArgs`]), `--trace` ([`TraceArgs`]), and the
//! options a step hands the shared step code to check before it measures
//! ([`Options`]).

use super::loads::LoadArgs;
use super::perf::PerfArgs;
use super::value::{opt_positive, Cpus, Dur, Us};
use crate::error::bad_flag;
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::sched::Policy;
use serde::{Deserialize, Serialize};

/// `--policy`: the scheduling policy of the measuring threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyArg {
    Fifo,
    Rr,
    Other,
    Batch,
    Idle,
    // SCHED_DEADLINE, with the reservation of --dl-runtime, --dl-deadline
    // and --dl-period (no doc comment: clap would list every value).
    Deadline,
}

impl PolicyArg {
    /// The policy with `priority`, or with its default: 90 for a real-time
    /// policy, 0 for the others.
    pub fn with_priority(self, priority: Option<i32>) -> (Policy, i32) {
        let policy = self.policy();
        let default = if policy.is_realtime() { 90 } else { 0 };
        (policy, priority.unwrap_or(default))
    }

    /// The engine's policy.
    pub fn policy(self) -> Policy {
        match self {
            PolicyArg::Fifo => Policy::Fifo,
            PolicyArg::Rr => Policy::Rr,
            PolicyArg::Other => Policy::Other,
            PolicyArg::Batch => Policy::Batch,
            PolicyArg::Idle => Policy::Idle,
            PolicyArg::Deadline => Policy::Deadline,
        }
    }
}

/// How the measuring threads are scheduled: `--priority` and `--policy`.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedArgs {
    /// Real-time priority of the measuring threads (1-99; 0 with --policy
    /// other, batch or idle) [default: 90; 0 with other, batch or idle].
    #[arg(short, long, value_name = "PRIO", allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_enum, default_value_t = PolicyArg::Fifo)]
    pub policy: PolicyArg,
}

impl Default for SchedArgs {
    fn default() -> Self {
        super::defaults()
    }
}

impl SchedArgs {
    /// The policy and priority: priority 90 unless given, 0 under a
    /// time-sharing policy.
    pub fn get(&self) -> (Policy, i32) {
        self.policy.with_priority(self.priority)
    }

    /// The policy and priority, the priority checked against the policy.
    pub fn checked(&self) -> Result<(Policy, i32)> {
        let (policy, priority) = self.get();
        check_priority("--priority", policy, priority)?;
        Ok((policy, priority))
    }

    /// The real-time scheduling it asks for, and the key that asks for it.
    pub fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        let (policy, priority) = self.get();
        (policy.is_realtime() && priority > 0).then_some((policy, priority, "priority"))
    }
}

/// Refuses a priority (given by `flag`) outside what `policy` takes: 1-99
/// for a real-time policy, 0 for the others.
pub fn check_priority(flag: &str, policy: Policy, priority: i32) -> Result<()> {
    let (lo, hi) = policy.priority_range();
    if (lo..=hi).contains(&priority) {
        return Ok(());
    }
    let name = policy.name().to_uppercase();
    Err(bad_flag(
        flag,
        if policy.is_realtime() {
            format!("{priority} is outside {lo}-{hi} for SCHED_{name}")
        } else {
            format!("SCHED_{name} takes priority 0, not {priority} (use --policy fifo for RT priorities)")
        },
    ))
}

/// `-i`, `--interval`: the period of a probe's threads, as cyclictest's and
/// pmqtest's -i (a bare number is µs).
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalArgs {
    /// Period of the measuring threads (e.g. 200us, 1ms; a bare number is µs).
    #[arg(
        short,
        long,
        default_value = "1ms",
        value_name = "DUR",
        allow_negative_numbers = true
    )]
    pub interval: Dur<Us>,
}

impl Default for IntervalArgs {
    fn default() -> Self {
        super::defaults()
    }
}

/// `-a`, `--cpus`: the CPUs a probe measures on, one pinned thread each;
/// `all` (`-a` alone) for every CPU.
#[derive(Debug, Clone, PartialEq, Default, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct CpusArgs {
    /// CPUs to measure on, one pinned thread each (e.g. 1-3 or 0,2) [default:
    /// all online CPUs, as -a alone].
    #[arg(
        short = 'a',
        long,
        value_name = "LIST",
        num_args = 0..=1,
        default_missing_value = "all"
    )]
    pub cpus: Option<Cpus>,
}

/// `--mlock`: memory locked before measuring.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct MlockArgs {
    /// Lock all memory (mlockall) before measuring; --mlock=false to skip.
    #[arg(short = 'm', long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub mlock: bool,
}

impl Default for MlockArgs {
    fn default() -> Self {
        super::defaults()
    }
}

/// `--trace` and `--trace-threshold`: the kernel traced while measuring, and
/// what it saw explained.
#[derive(Debug, Clone, PartialEq, Default, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceArgs {
    /// Trace the kernel's scheduler, IRQ, softirq, timer and idle events in
    /// a tracefs instance of rtlab's own and explain every spike (needs root).
    #[arg(long)]
    pub trace: bool,
    /// With --trace: the wake-ups this late or later are explained (a bare
    /// number is µs) [default: the deadline].
    #[arg(
        long,
        value_name = "DUR",
        requires = "trace",
        allow_negative_numbers = true
    )]
    pub trace_threshold: Option<Dur<Us>>,
}

impl TraceArgs {
    /// With --trace, the threshold of what is explained (ns): as given, else
    /// `default`. `None` without --trace, where --trace-threshold is refused.
    pub fn threshold(&self, default: impl FnOnce() -> u64) -> Result<Option<u64>> {
        match (self.trace, &self.trace_threshold) {
            (false, Some(_)) => Err(bad_flag("--trace-threshold", "needs --trace")),
            (false, None) => Ok(None),
            (true, t) => Ok(Some(
                opt_positive("--trace-threshold", t)?.unwrap_or_else(default),
            )),
        }
    }
}

/// What a probe with measuring threads of its own takes besides: loads
/// (`--load`, their placement) and performance counters (`--perf`).
#[derive(Debug, Clone, PartialEq, Default, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub perf: PerfArgs,
}

/// The options a step shares with other probes, handed to the step code
/// that checks them the same way for every probe.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// `--load` and its placement.
    pub load: Option<&'a LoadArgs>,
    /// `--perf`.
    pub perf: Option<&'a PerfArgs>,
    /// `--policy` and `--priority` (the plan checks them; the real-time
    /// need of a campaign comes from them).
    pub sched: Option<&'a SchedArgs>,
}

impl<'a> Options<'a> {
    /// The loads and `--perf` of `shared`, and the scheduling `sched`.
    pub fn of(shared: &'a SharedArgs, sched: Option<&'a SchedArgs>) -> Options<'a> {
        Options {
            load: Some(&shared.load),
            perf: Some(&shared.perf),
            sched,
        }
    }

    /// Refuses `--perf` when the machine opens no counter (exit 3), before
    /// anything is measured.
    pub fn check_perf(&self) -> Result<()> {
        self.perf.map_or(Ok(()), PerfArgs::check)
    }

    /// Every check of the shared options a step's plan does not make:
    /// `--perf`, and whether the machine can carry the loads.
    pub fn check(&self) -> Result<()> {
        self.check_perf()?;
        self.load.map_or(Ok(()), LoadArgs::check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_priority_check_for_every_policy() {
        assert!(check_priority("--priority", Policy::Fifo, 90).is_ok());
        assert!(check_priority("--priority", Policy::Other, 0).is_ok());
        let e = check_priority("--priority", Policy::Fifo, 120)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--priority: 120 is outside 1-99 for SCHED_FIFO");
        let e = check_priority("--priority", Policy::Batch, 5)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--priority: SCHED_BATCH takes priority 0, not 5"),
            "{e}"
        );
        let s = SchedArgs {
            priority: None,
            policy: PolicyArg::Other,
        };
        assert_eq!((s.get(), s.rt_need()), ((Policy::Other, 0), None));
        assert_eq!(
            SchedArgs::default().rt_need(),
            Some((Policy::Fifo, 90, "priority"))
        );
    }
}
