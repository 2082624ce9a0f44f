//! The cyclic timer-latency probe (`rtlab latency`, scenario probe `latency`).

mod idle;
mod measure;
mod plan;
mod trace;

pub use measure::measure;
pub use plan::Plan;

use super::deadline::DeadlineArgs;
use super::rt::{CpusArgs, IntervalArgs, MlockArgs, Options, SchedArgs, SharedArgs, TraceArgs};
use super::value::{Cpus, Dur, Sec, Us};
use super::{de, Kind, View};
use crate::record::{Better, RunParams};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The parameters of the cyclic timer-latency probe: `rtlab latency` flags and
/// the keys of a `latency` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    #[command(flatten)]
    #[serde(flatten)]
    pub period: IntervalArgs,
    /// Wake-ups per thread, then stop [default: no limit].
    #[arg(short, long, value_name = "N")]
    pub loops: Option<u64>,
    /// Run this long, then stop (e.g. 30s, 5m; a bare number is seconds)
    /// [default: until --loops or Ctrl-C].
    #[arg(short = 'D', long, value_name = "DUR", allow_negative_numbers = true)]
    pub duration: Option<Dur<Sec>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub measured: CpusArgs,
    /// Number of threads: unpinned, or spread over --cpus in round-robin order
    /// [default: one per CPU, as -t alone].
    #[arg(short, long, value_name = "N")]
    pub threads: Option<Option<usize>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub sched: SchedArgs,
    /// Thread N runs at priority − N (cyclictest's --priospread).
    #[arg(long)]
    pub priospread: bool,
    /// Thread N runs at interval + N×distance (cyclictest's -d; a bare number is µs).
    #[arg(short, long, default_value = "0", value_name = "DUR")]
    pub distance: Dur<Us>,
    /// Clock to sleep on and read.
    #[arg(long, value_enum, default_value_t = ClockArg::Monotonic)]
    pub clock: ClockArg,
    /// How the threads wait for their periods.
    #[arg(long, value_enum, default_value_t = TimerArg::Absolute)]
    pub timer: TimerArg,
    /// Thread N's first period begins N×offset after the common start
    /// (cyclictest's -A; a bare number is µs).
    #[arg(long, default_value = "0", value_name = "DUR")]
    pub offset: Dur<Us>,
    /// Start at the next full second of the clock, plus this offset
    /// (cyclictest's --secaligned; a bare number is µs) [default: off; given
    /// alone: offset 0].
    #[arg(
        long,
        value_name = "DUR",
        num_args = 0..=1,
        default_missing_value = "0"
    )]
    pub second_aligned: Option<Dur<Us>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub lock: MlockArgs,
    /// Hold /dev/cpu_dma_latency at this many µs for the whole run ("off": leave it).
    #[arg(
        long,
        default_value = "0",
        value_name = "US|off",
        allow_negative_numbers = true
    )]
    #[serde(deserialize_with = "de::word")]
    pub dma_latency: String,
    /// Disable the idle states deeper than N on the measured CPUs for the run
    /// (cyclictest's --deepest-idle-state) [default: leave idle states alone].
    #[arg(long, value_name = "N")]
    pub deepest_idle_state: Option<u32>,
    /// Pin rtlab's main thread (live view, output) to these CPUs for the run
    /// (cyclictest's --mainaffinity) [default: not pinned].
    #[arg(long, value_name = "LIST")]
    pub main_cpus: Option<Cpus>,
    /// Range of the 1-µs histogram (--histfile, overflow counts; a bare number
    /// is µs, 1us to 10s); -h as in cyclictest.
    #[arg(short = 'h', long, default_value = "10ms", value_name = "DUR")]
    pub histogram_max: Dur<Us>,
    /// Wake-up numbers of the first N histogram overflows kept per thread.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub overflow_cycles: usize,
    /// Stop all threads when a latency exceeds this (a bare number is µs)
    /// [default: never].
    #[arg(short, long, value_name = "DUR", allow_negative_numbers = true)]
    pub breaktrace: Option<Dur<Us>>,
    /// When --breaktrace stops the run, write an ftrace marker and stop tracing.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub tracemark: bool,
    /// A wake-up later than this is a deadline miss (a bare number is µs)
    /// [default: the interval].
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    pub deadline: Option<Dur<Us>>,
    /// Exit 1 if the maximum latency exceeds this (CI gate; a bare number is µs)
    /// [default: no gate].
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    pub max_latency: Option<Dur<Us>>,
    /// Points kept per thread in the latency-over-time series (block maxima;
    /// 2-1000000).
    #[arg(long, default_value_t = 2048, value_name = "N")]
    pub trace_points: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub tracing: TraceArgs,
    /// With --trace: also run the kernel's timerlat tracer on the measured
    /// CPUs at the probe's interval and report its timer IRQ versus thread
    /// latency (its own threads then share those CPUs with the probe).
    #[arg(long, requires = "trace")]
    pub timerlat: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub dl: DeadlineArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub shared: SharedArgs,
}

/// Latency runs: how a scenario reads their steps, how they are shown.
pub const KIND: Kind = Kind::probe::<Params>("latency", "duration")
    .with_shorthand(priority_zero_is_other)
    .view(View::Latency)
    .metrics(&[("dl_overruns", Better::Lower)])
    .why(
        "measure again with 'rtlab latency --trace' (as root, with tracefs), or \
         'rtlab run --trace' for a campaign",
    )
    .holds(super::kind::threads_samples_max);

/// In a scenario, `priority = 0` without a policy means SCHED_OTHER (as in
/// cyclictest), so that `matrix.priority = [0, 90]` compares the two.
fn priority_zero_is_other(values: &mut serde_json::Map<String, serde_json::Value>) {
    if values.get("priority") == Some(&json!(0)) && !values.contains_key("policy") {
        values.insert("policy".into(), json!("other"));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockArg {
    Monotonic,
    Realtime,
}

/// How the measuring threads wait for their periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerArg {
    /// clock_nanosleep until each period's absolute time.
    Absolute,
    /// clock_nanosleep for the interval from each wake-up (cyclictest's -r).
    Relative,
    /// nanosleep(2) for the interval from each wake-up (cyclictest's -s).
    Nanosleep,
    /// A POSIX interval timer signalling the thread (cyclictest's -x).
    Posix,
}

/// What a latency run was asked, for its headline and its gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// Policy name (`fifo`), `?` when not recorded.
    pub policy: String,
    /// Priority of the measuring threads.
    pub priority: i64,
    /// Period (ns), 0 when not recorded.
    pub interval_ns: u64,
    /// The --max-latency gate (ns).
    pub max_latency_ns: Option<u64>,
}

/// What a latency run was asked: from its step's parameters, or as recorded by
/// an import or by an rtlab from before runs recorded their step's parameters.
pub fn asked(params: &RunParams) -> Asked {
    if let Some(super::Params::Latency(p)) = params.step() {
        let (policy, priority) = p.sched.get();
        return Asked {
            policy: policy.name().to_string(),
            priority: i64::from(priority),
            interval_ns: p.period.interval.get().unwrap_or(0),
            max_latency_ns: p.max_latency.as_ref().and_then(Dur::get),
        };
    }
    Asked {
        policy: params
            .recorded("policy")
            .as_str()
            .unwrap_or("?")
            .to_string(),
        priority: params.recorded("priority").as_i64().unwrap_or(0),
        interval_ns: params.recorded("interval_ns").as_u64().unwrap_or(0),
        max_latency_ns: params.recorded("max_latency_ns").as_u64(),
    }
}

step! {
    fn options(&self) -> Options<'_> {
        Options::of(&self.shared, Some(&self.sched))
    }

    /// How long it is planned to run (ns): its --duration, else --loops
    /// periods.
    fn planned_ns(&self) -> Option<u64> {
        let period = || self.period.interval.get();
        let loops = || self.loops?.checked_mul(period()?);
        self.duration.as_ref().and_then(Dur::get).or_else(loops)
    }

    fn trace(&mut self) -> Option<&mut bool> {
        Some(&mut self.tracing.trace)
    }
}
