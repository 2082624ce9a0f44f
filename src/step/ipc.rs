//! Wake-up latency between two threads (`rtlab ipc`, scenario probe `ipc`):
//! pairs of a sender and a receiver joined by a message queue, a mutex, a
//! condition variable, a signal, a SysV semaphore, a pipe, an eventfd or a
//! futex; and the priority-inversion check (`--pi-check`).

mod measure;
mod plan;

pub use measure::measure;
pub use plan::{Plan, Work};

use super::rt::{IntervalArgs, MlockArgs, Options, PolicyArg, SharedArgs};
use super::value::{Cpus, Dur, Sec, Us};
use super::{Kind, View};
use crate::record::{Better, RunParams};
use clap::Args;
use rtlab_engine::rt::ipc::Mechanism;
use rtlab_engine::rt::sched::Policy;
use serde::{Deserialize, Serialize};

/// The parameters of the IPC wake-up probe: `rtlab ipc` flags and the keys of
/// an `ipc` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(mut_arg("interval", |a| a.help(
    "Time between wake-ups: the receiver sleeps until the next period, then asks its sender \
     for the next wake-up (a bare number is µs, as pmqtest's -i)"
)))]
pub struct Params {
    /// How the sender wakes the receiver (all: each in turn, one series each).
    #[arg(short = 'M', long, value_enum, default_value_t = MechanismArg::Mqueue)]
    pub mechanism: MechanismArg,
    /// Priority-inheriting mutexes (PTHREAD_PRIO_INHERIT) for mutex and condvar.
    #[arg(long)]
    pub pi: bool,
    /// Sender/receiver pairs, each with its own link (pmqtest's -t N).
    #[arg(short = 't', long, default_value_t = 1, value_name = "N")]
    pub pairs: usize,
    /// Where the two threads of a pair run: free (not pinned, as pmqtest
    /// without -a), same (one CPU per pair, pmqtest's -a), split (sender and
    /// receiver on different CPUs).
    #[arg(long, value_enum, default_value_t = PlacementArg::Free)]
    pub placement: PlacementArg,
    /// CPUs --placement uses, in order [default: every CPU rtlab may use].
    #[arg(short = 'a', long, value_name = "LIST")]
    pub cpus: Option<Cpus>,
    /// Pin pair N's sender to the Nth CPU of this list (round robin);
    /// overrides --placement for the senders [default: as --placement].
    #[arg(long, value_name = "LIST")]
    pub sender_cpus: Option<Cpus>,
    /// Pin pair N's receiver to the Nth CPU of this list (round robin)
    /// [default: as --placement].
    #[arg(long, value_name = "LIST")]
    pub receiver_cpus: Option<Cpus>,
    /// Real-time priority of pair 0's threads (1-99); pair N runs at priority −
    /// N, as in pmqtest [default: none, SCHED_OTHER, as pmqtest without -p].
    #[arg(short, long, value_name = "PRIO", allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Scheduling policy of the threads [default: fifo with --priority, else
    /// other].
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    #[command(flatten)]
    #[serde(flatten)]
    pub period: IntervalArgs,
    /// Pair N's interval is interval + N × distance (pmqtest's -d; a bare
    /// number is µs).
    #[arg(short, long, default_value = "500us", value_name = "DUR")]
    pub distance: Dur<Us>,
    /// Wake-ups per pair (and per mechanism), then stop [default: no limit].
    #[arg(short, long, value_name = "N")]
    pub loops: Option<u64>,
    /// Run this long (per mechanism with --mechanism all; a bare number is
    /// seconds) [default: until --loops, or Ctrl-C].
    #[arg(short = 'D', long, value_name = "DUR", allow_negative_numbers = true)]
    pub duration: Option<Dur<Sec>>,
    /// Exit 1 if a wake-up latency exceeds this (CI gate; a bare number is µs)
    /// [default: no gate].
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    pub max_latency: Option<Dur<Us>>,
    /// Instead: the priority-inversion check (low/medium/high threads around a
    /// mutex on one CPU, with and without priority inheritance).
    #[arg(long)]
    pub pi_check: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub lock: MlockArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub shared: SharedArgs,
}

/// Ipc runs: wake-up latency, per pair, with periods but no deadline.
pub const KIND: Kind = Kind::probe::<Params>("ipc", "duration")
    .quantity("wake-up latency")
    .periods(true, false)
    .view(View::Ipc)
    .metrics(&[
        ("latency_p*", Better::Lower),
        ("round_trip_*", Better::Neither),
    ]);

/// `--mechanism`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MechanismArg {
    /// POSIX message queue (pmqtest).
    Mqueue,
    /// pthread mutex handed over (ptsematest); --pi for PTHREAD_PRIO_INHERIT.
    Mutex,
    /// pthread condition variable.
    Condvar,
    /// pthread_kill and sigwait (sigwaittest).
    Signal,
    /// SysV semaphore (svsematest).
    Sem,
    /// A byte through a pipe.
    Pipe,
    /// eventfd write and read.
    Eventfd,
    /// FUTEX_WAKE and FUTEX_WAIT.
    Futex,
    /// Each of the above in turn.
    All,
}

impl MechanismArg {
    /// Every mechanism, in the order `all` runs them.
    pub const EACH: [MechanismArg; 8] = [
        MechanismArg::Mqueue,
        MechanismArg::Mutex,
        MechanismArg::Condvar,
        MechanismArg::Signal,
        MechanismArg::Sem,
        MechanismArg::Pipe,
        MechanismArg::Eventfd,
        MechanismArg::Futex,
    ];

    /// The name on the command line and in series names.
    pub fn name(self) -> &'static str {
        match self {
            MechanismArg::Mqueue => "mqueue",
            MechanismArg::Mutex => "mutex",
            MechanismArg::Condvar => "condvar",
            MechanismArg::Signal => "signal",
            MechanismArg::Sem => "sem",
            MechanismArg::Pipe => "pipe",
            MechanismArg::Eventfd => "eventfd",
            MechanismArg::Futex => "futex",
            MechanismArg::All => "all",
        }
    }

    /// The engine's mechanism (`None` for `all`).
    fn engine(self) -> Option<Mechanism> {
        Some(match self {
            MechanismArg::Mqueue => Mechanism::Mqueue,
            MechanismArg::Mutex => Mechanism::Mutex,
            MechanismArg::Condvar => Mechanism::Condvar,
            MechanismArg::Signal => Mechanism::Signal,
            MechanismArg::Sem => Mechanism::Sem,
            MechanismArg::Pipe => Mechanism::Pipe,
            MechanismArg::Eventfd => Mechanism::Eventfd,
            MechanismArg::Futex => Mechanism::Futex,
            MechanismArg::All => return None,
        })
    }

    /// Whether it locks a mutex (what --pi changes).
    fn uses_mutex(self) -> bool {
        matches!(
            self,
            MechanismArg::Mutex | MechanismArg::Condvar | MechanismArg::All
        )
    }
}

/// `--placement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlacementArg {
    /// Not pinned: the scheduler places both threads.
    Free,
    /// Both threads of pair N on the Nth CPU of --cpus.
    Same,
    /// Pair N's sender on CPU 2N, its receiver on CPU 2N+1 of --cpus.
    Split,
}

impl Params {
    /// The policy and priority of pair 0: SCHED_OTHER unless a priority or
    /// an RT policy is given (90 when only the policy is).
    fn sched(&self) -> (Policy, i32) {
        let policy = match (self.policy, self.priority) {
            (Some(p), _) => p.policy(),
            (None, Some(p)) if p > 0 => Policy::Fifo,
            _ => Policy::Other,
        };
        let default = if policy.is_realtime() { 90 } else { 0 };
        (policy, self.priority.unwrap_or(default))
    }
}

/// What an ipc run was asked, for its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// `mqueue`, ..., `all`; `pi-check` for the check.
    pub mechanism: String,
    /// Priority-inheriting mutexes.
    pub pi: bool,
    /// Pairs.
    pub pairs: usize,
    /// `free`, `same`, `split`, or `cpus` when the lists were given.
    pub placement: String,
    /// Policy name and pair 0's priority.
    pub policy: String,
    /// Pair 0's priority.
    pub priority: i32,
    /// Pair 0's interval (ns; 0 when unreadable).
    pub interval_ns: u64,
    /// The --max-latency gate (ns).
    pub max_latency_ns: Option<u64>,
}

/// What an ipc run was asked (`None` when it is not an ipc run's).
pub fn asked(params: &RunParams) -> Option<Asked> {
    let Some(super::Params::Ipc(p)) = params.step() else {
        return None;
    };
    let (policy, priority) = p.sched();
    let placement = if p.sender_cpus.is_some() || p.receiver_cpus.is_some() {
        "cpus".to_string()
    } else {
        format!("{:?}", p.placement).to_lowercase()
    };
    Some(Asked {
        mechanism: if p.pi_check {
            "pi-check".into()
        } else {
            p.mechanism.name().into()
        },
        pi: p.pi,
        pairs: p.pairs,
        placement,
        policy: policy.name().into(),
        priority,
        interval_ns: p.period.interval.get().unwrap_or(0),
        max_latency_ns: p.max_latency.as_ref().and_then(Dur::get),
    })
}

step! {
    fn options(&self) -> Options<'_> {
        Options::of(&self.shared, None)
    }

    fn planned_ns(&self) -> Option<u64> {
        let d = self.duration.as_ref()?.get()?;
        let runs = if self.mechanism == MechanismArg::All {
            MechanismArg::EACH.len() as u64
        } else {
            1
        };
        Some(d.saturating_mul(runs))
    }

    fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        if self.pi_check {
            return Some((Policy::Fifo, plan::PI_PRIORITIES[2], "pi_check"));
        }
        let (policy, priority) = self.sched();
        (policy.is_realtime() && priority > 0).then_some((policy, priority, "priority"))
    }
}
