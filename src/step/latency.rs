//! The cyclic timer-latency probe (`rtlab latency`, scenario probe `latency`).

use super::loads::LoadArgs;
use super::{de, Machine, Observer};
use crate::error::{bad_flag, SystemError, UsageError};
use crate::limits;
use crate::record::{self, BreakRecord, Counters, Run, RunParams, Series, Status, Warning};
use crate::system;
use crate::units::{exact, parse_duration, parse_positive_duration, DefaultUnit};
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::latency::{self as probe, LatencyConfig, LoopEnd, ThreadStats};
use rtlab_engine::rt::clock::ClockId;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::dma::DmaLatencyGuard;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::{mem, signals};
use rtlab_engine::stats::hist::MAX_US_BUCKETS;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The parameters of the cyclic timer-latency probe: `rtlab latency` flags and
/// the keys of a `latency` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Period of the measuring threads (e.g. 200us, 1ms).
    #[arg(
        short,
        long,
        default_value = "1ms",
        value_name = "DUR",
        allow_negative_numbers = true
    )]
    #[serde(deserialize_with = "de::duration")]
    pub interval: String,
    /// Wake-ups per thread, then stop (default: no limit).
    #[arg(short, long, value_name = "N")]
    pub loops: Option<u64>,
    /// Run this long, then stop (e.g. 30s, 5m).
    #[arg(short = 'D', long, value_name = "DUR", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de::opt_duration")]
    pub duration: Option<String>,
    /// CPUs to measure on, one pinned thread each (default: all online CPUs).
    #[arg(long, value_name = "LIST")]
    #[serde(deserialize_with = "de::cpus")]
    pub cpus: Option<String>,
    /// Number of threads: unpinned, or spread over --cpus in round-robin order.
    #[arg(short, long, value_name = "N")]
    pub threads: Option<usize>,
    /// Real-time priority of the measuring threads (1-99; 0 with --policy other).
    #[arg(short, long, value_name = "PRIO", allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_enum, default_value_t = PolicyArg::Fifo)]
    pub policy: PolicyArg,
    /// Thread N runs at interval + N×distance (cyclictest's -d).
    #[arg(short, long, default_value = "0", value_name = "DUR")]
    #[serde(deserialize_with = "de::duration")]
    pub distance: String,
    /// Clock to sleep on and read.
    #[arg(long, value_enum, default_value_t = ClockArg::Monotonic)]
    pub clock: ClockArg,
    /// Lock all memory (mlockall) before measuring; --mlock=false to skip.
    #[arg(short = 'm', long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub mlock: bool,
    /// Hold /dev/cpu_dma_latency at this many µs for the whole run ("off": don't).
    #[arg(
        long,
        default_value = "0",
        value_name = "US|off",
        allow_negative_numbers = true
    )]
    #[serde(deserialize_with = "de::word")]
    pub dma_latency: String,
    /// Range of the 1-µs histogram (--histfile, overflow counts).
    #[arg(long, default_value = "10ms", value_name = "DUR")]
    #[serde(deserialize_with = "de::duration")]
    pub histogram_max: String,
    /// Stop all threads when a latency exceeds this; write an ftrace marker.
    #[arg(short, long, value_name = "DUR", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de::opt_duration")]
    pub breaktrace: Option<String>,
    /// A wake-up later than this is a deadline miss (default: the interval).
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de::opt_duration")]
    pub deadline: Option<String>,
    /// Exit 1 if the maximum latency exceeds this (CI gate).
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de::opt_duration")]
    pub max_latency: Option<String>,
    /// Points kept per thread in the latency-over-time series (block maxima;
    /// 2-1000000).
    #[arg(long, default_value_t = 2048, value_name = "N")]
    pub trace_points: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
}

impl Default for Params {
    fn default() -> Self {
        super::defaults()
    }
}

/// How a scenario reads `latency` steps.
pub const PROBE: super::Probe = super::Probe {
    name: "latency",
    duration_key: "duration",
    required: &[],
    defaults: || serde_json::to_value(Params::default()).unwrap_or_default(),
    shorthand: priority_zero_is_other,
};

/// In a scenario, `priority = 0` without a policy means SCHED_OTHER (as in
/// cyclictest), so that `matrix.priority = [0, 90]` compares the two.
fn priority_zero_is_other(values: &mut serde_json::Map<String, serde_json::Value>) {
    if values.get("priority") == Some(&json!(0)) && !values.contains_key("policy") {
        values.insert("policy".into(), json!("other"));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyArg {
    Fifo,
    Rr,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockArg {
    Monotonic,
    Realtime,
}

/// The probe configuration and everything else a run needs, validated.
pub struct Plan {
    cfg: LatencyConfig,
    dma_latency_us: Option<i32>,
    max_latency_ns: Option<u64>,
    warnings: Vec<Warning>,
}

fn us_or_unit(flag: &str, text: &str) -> Result<u64> {
    parse_positive_duration(text, DefaultUnit::Micros).map_err(|e| bad_flag(flag, e))
}

impl Params {
    /// The probe configuration and everything else a run needs, with every
    /// value checked on machine `m`; a [`BadValue`](crate::error::BadValue)
    /// names the flag of the first value that cannot be used.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let a = self;
        let mut warnings = Vec::new();
        let interval_ns = us_or_unit("--interval", &a.interval)?;
        let distance_ns = parse_duration(&a.distance, DefaultUnit::Micros)
            .map_err(|e| bad_flag("--distance", e))?;
        let duration_ns = match &a.duration {
            Some(d) => parse_positive_duration(d, DefaultUnit::Seconds)
                .map_err(|e| bad_flag("--duration", e))?,
            None => 0,
        };
        if a.loops == Some(0) {
            return Err(bad_flag(
            "--loops",
            "0 loops measures nothing; give a count above 0 or leave it out to run until Ctrl-C",
        ));
        }
        let hist_max = us_or_unit("--histogram-max", &a.histogram_max)?;
        let hist_max_us = u32::try_from(hist_max / 1000)
            .ok()
            .filter(|&us| (1..=MAX_US_BUCKETS).contains(&us))
            .ok_or_else(|| {
                bad_flag(
                    "--histogram-max",
                    format!("'{}' must be between 1us and 10s", a.histogram_max),
                )
            })?;
        let breaktrace_ns = a
            .breaktrace
            .as_deref()
            .map(|b| us_or_unit("--breaktrace", b))
            .transpose()?;
        let deadline_ns = a
            .deadline
            .as_deref()
            .map(|d| us_or_unit("--deadline", d))
            .transpose()?;
        let max_latency_ns = a
            .max_latency
            .as_deref()
            .map(|m| us_or_unit("--max-latency", m))
            .transpose()?;
        if !(2..=MAX_TRACE_POINTS).contains(&a.trace_points) {
            return Err(bad_flag(
            "--trace-points",
            format!(
                "{} is outside 2-{MAX_TRACE_POINTS}; beyond, points keep block maxima and no peak is lost (the store keeps at most {})",
                a.trace_points,
                record::MAX_STORED_TRACE_POINTS
            ),
        ));
        }

        let (policy, priority) = a.sched();
        let (lo, hi) = policy.priority_range();
        if !(lo..=hi).contains(&priority) {
            return Err(bad_flag(
                "--priority",
                if policy.is_realtime() {
                    format!(
                        "{priority} is outside {lo}-{hi} for SCHED_{}",
                        policy.name().to_uppercase()
                    )
                } else {
                    format!("SCHED_OTHER takes priority 0, not {priority} (use --policy fifo for RT priorities)")
                },
            ));
        }
        if priority == 99 {
            warnings.push(Warning::new(
            "priority99",
            "priority 99 is above the kernel's own RT threads (migration, watchdogs) and can starve them; 90-98 measures the same",
        ));
        }
        if !policy.is_realtime() {
            warnings.push(Warning::new(
            "not_realtime",
            "the measuring threads run SCHED_OTHER: the numbers show time-sharing wake-up latency, not what an RT thread gets",
        ));
        }

        let usable = m.cpus.clone();
        let threads: Vec<Option<usize>> = match (&a.cpus, a.threads) {
            (Some(list), n) => {
                let cpus = CpuList::parse(list).map_err(|e| bad_flag("--cpus", e))?;
                if cpus.is_empty() {
                    return Err(bad_flag("--cpus", "the list is empty"));
                }
                m.check_cpus("--cpus", &cpus)?;
                let n = n.unwrap_or(cpus.cpus().len());
                (0..n)
                    .map(|i| Some(cpus.cpus()[i % cpus.cpus().len()]))
                    .collect()
            }
            (None, Some(n)) => vec![None; n],
            (None, None) => usable.iter().map(|&c| Some(c)).collect(),
        };
        if threads.is_empty() {
            return Err(bad_flag(
                "--threads",
                "0 threads measures nothing; give 1 or more",
            ));
        }
        if threads.len() > 1024 {
            return Err(bad_flag(
                "--threads",
                format!("{} threads is more than 1024", threads.len()),
            ));
        }
        if let Some(w) = smt_sharing(&threads) {
            warnings.push(w);
        }
        let (bytes, what) = memory_need(threads.len(), hist_max_us, a.trace_points);
        let need = limits::Need {
            bytes,
            what: &what,
            fix: "give a smaller --histogram-max, fewer --trace-points or fewer threads",
        };
        limits::check_memory("--histogram-max", &need, limits::memory_budget())?;

        let dma_latency_us = match a.dma_latency.trim() {
            "off" | "none" => None,
            v => Some(v.parse::<i32>().ok().filter(|v| *v >= 0).ok_or_else(|| {
                bad_flag(
                    "--dma-latency",
                    format!("'{v}' is not a whole number of µs ≥ 0 or 'off'"),
                )
            })?),
        };
        Ok(Plan {
            cfg: LatencyConfig {
                threads,
                interval_ns,
                distance_ns,
                policy,
                priority,
                clock: match a.clock {
                    ClockArg::Monotonic => ClockId::Monotonic,
                    ClockArg::Realtime => ClockId::Realtime,
                },
                loops: a.loops.unwrap_or(0),
                duration_ns,
                deadline_ns,
                breaktrace_ns,
                hist_max_us,
                trace_points: a.trace_points,
            },
            dma_latency_us,
            max_latency_ns,
            warnings,
        })
    }

    /// The policy and priority of the measuring threads: priority 90 unless
    /// given, 0 under SCHED_OTHER.
    fn sched(&self) -> (Policy, i32) {
        let policy = self.policy.policy();
        let default = if policy.is_realtime() { 90 } else { 0 };
        (policy, self.priority.unwrap_or(default))
    }
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
        let (policy, priority) = p.sched();
        let us = |t: &str| parse_positive_duration(t, DefaultUnit::Micros).ok();
        return Asked {
            policy: policy.name().to_string(),
            priority: i64::from(priority),
            interval_ns: us(&p.interval).unwrap_or(0),
            max_latency_ns: p.max_latency.as_deref().and_then(us),
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

impl PolicyArg {
    fn policy(self) -> Policy {
        match self {
            PolicyArg::Fifo => Policy::Fifo,
            PolicyArg::Rr => Policy::Rr,
            PolicyArg::Other => Policy::Other,
        }
    }
}

/// The most points per thread in the latency-over-time series: 24 MB a thread.
const MAX_TRACE_POINTS: usize = 1_000_000;

/// What the probe allocates (and locks) before it starts, and how to say it:
/// per thread a 1-µs histogram of `hist_max_us` buckets, a trace of
/// `trace_points` points and an HdrHistogram (under 256 KiB), plus one more
/// of each for the merged total.
fn memory_need(threads: usize, hist_max_us: u32, trace_points: usize) -> (u64, String) {
    const HDR_BYTES: u64 = 256 << 10;
    let point = std::mem::size_of::<rtlab_engine::stats::trace::TracePoint>() as u64;
    let per_thread = u64::from(hist_max_us) * 8 + trace_points as u64 * point + HDR_BYTES;
    (
        per_thread.saturating_mul(threads as u64 + 1),
        format!(
            "{} thread(s) (and their total) × ({hist_max_us} histogram buckets + {trace_points} trace points)",
            threads
        ),
    )
}

/// A warning when two measuring threads sit on SMT siblings of one core.
fn smt_sharing(threads: &[Option<usize>]) -> Option<Warning> {
    let cpus: Vec<usize> = threads.iter().flatten().copied().collect();
    for &c in &cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        let Some(sib) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| CpuList::parse(&s).ok())
        else {
            continue;
        };
        if let Some(&other) = cpus.iter().find(|&&o| o != c && sib.contains(o)) {
            return Some(Warning::new(
                "smt_shared",
                format!("CPUs {c} and {other} are SMT siblings of one core: their threads disturb each other"),
            ));
        }
    }
    None
}

fn permission_help(policy: Policy, priority: i32, why: &str) -> String {
    format!(
        "cannot run the measuring threads as SCHED_{} priority {priority}: {why}.\n\
         To fix: run as root; or give the binary CAP_SYS_NICE (sudo setcap cap_sys_nice,cap_ipc_lock+ep $(command -v rtlab));\n\
         or raise the RT priority limit (ulimit -r 99, 'LimitRTPRIO=99' in a systemd unit, '@realtime - rtprio 99' in /etc/security/limits.conf);\n\
         in a container: --cap-add=SYS_NICE, and --cpu-rt-runtime=950000 where RT group scheduling is on.\n\
         To measure anyway without RT priority: --policy other (the numbers then show time-sharing latency).",
        policy.name().to_uppercase()
    )
}

fn series_of(name: String, stats: &ThreadStats, t: Option<&probe::ThreadResult>) -> Series {
    Series {
        name,
        thread: t.map(|t| t.index),
        cpu: t.and_then(|t| t.cpu),
        tid: t.map(|t| t.tid),
        interval_ns: t.map(|t| t.interval_ns),
        counters: Counters {
            samples: stats.moments.count,
            overruns: stats.overruns,
            deadline_misses: stats.misses,
            overflows: stats.overflows(),
        },
        summary: stats.summary(),
        max_at: (stats.moments.count > 0).then_some(stats.max_cycle),
        histogram: stats.hist.to_data(),
        us_histogram: Some(stats.us.to_data()),
        trace: t.map(|_| stats.trace.points().to_vec()).unwrap_or_default(),
    }
}

/// Measures: starts the loads, runs the probe threads until their loop count,
/// duration, a breaktrace or a signal, and returns the run.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let fp = system::fingerprint();
    let Plan {
        cfg,
        dma_latency_us,
        max_latency_ns,
        mut warnings,
    } = a.plan(&Machine::this())?;
    warnings.extend(system::fingerprint_warnings(&fp));
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    // Loads start before memory is locked and before any probe thread exists.
    let loads = a.load.start(&cfg.threads)?;
    warnings.extend(loads.warnings.iter().cloned());

    let dma = match dma_latency_us {
        Some(us) => match DmaLatencyGuard::request(us) {
            Ok(g) => Some(g),
            Err(e) => {
                warnings.push(Warning::new(
                    "dma_latency",
                    format!("cannot hold /dev/cpu_dma_latency ({e}): deep C-states may add exit latency"),
                ));
                None
            }
        },
        None => None,
    };
    if a.mlock {
        if let Err(errno) = mem::lock_all().map(|_| ()) {
            warnings.push(Warning::new(
                "mlock",
                format!(
                    "mlockall failed ({}): page faults may add latency (raise 'ulimit -l' or LimitMEMLOCK=)",
                    rtlab_engine::rt::errno_text(errno)
                ),
            ));
        }
    }

    let names: Vec<String> = cfg
        .threads
        .iter()
        .enumerate()
        .map(|(i, c)| match c {
            Some(cpu) => format!("cpu{cpu}"),
            None => format!("thread{i}"),
        })
        .collect();
    obs.start(&names);
    let result = probe::run(&cfg, stop, Duration::from_millis(250), &mut |snaps| {
        obs.latency(snaps)
    });
    obs.end();
    if a.mlock {
        mem::unlock_all();
    }
    drop(dma);
    let (load_records, load_warnings) = loads.finish();
    warnings.extend(load_warnings);
    let outcome = match result {
        Ok(o) => o,
        Err(e @ probe::SetupError::Policy { err, .. }) if err.is_permission() => {
            return Err(
                SystemError(permission_help(cfg.policy, cfg.priority, &e.to_string())).into(),
            );
        }
        Err(e @ probe::SetupError::Policy { .. }) => {
            return Err(SystemError(format!(
                "{e} (is RT group scheduling limiting this cgroup? see cpu.rt_runtime_us)"
            ))
            .into());
        }
        Err(e) => return Err(UsageError(format!("--cpus: {e}")).into()),
    };

    let by_signal = signals::received().is_some()
        || (stop.load(Ordering::Relaxed) && outcome.breaktrace.is_none());
    let clock_error = outcome.threads.iter().find_map(|t| match t.end {
        LoopEnd::ClockError(e) => Some(e),
        _ => None,
    });
    let all_done = outcome
        .threads
        .iter()
        .all(|t| matches!(t.end, LoopEnd::LoopsDone | LoopEnd::DurationDone));
    let status = if clock_error.is_some() {
        Status::Failed
    } else if all_done {
        Status::Complete
    } else {
        Status::Interrupted
    };
    if let Some(e) = clock_error {
        warnings.push(Warning::new(
            "clock",
            format!(
                "the kernel refused to sleep on the {} clock: {e:?}",
                cfg.clock.name()
            ),
        ));
    }
    if outcome.breaktrace.is_some() && !outcome.trace_marker_written {
        warnings.push(Warning::new(
            "tracefs",
            "breaktrace hit but tracefs is not mounted: no ftrace marker was written",
        ));
    }

    let series: Vec<Series> = outcome
        .threads
        .iter()
        .zip(names)
        .map(|(t, name)| series_of(name, &t.stats, Some(t)))
        .collect();
    let mut merged = ThreadStats::new(cfg.hist_max_us, 2);
    for t in &outcome.threads {
        merged.merge(&t.stats);
    }
    let total = series_of("all".into(), &merged, None);
    let max = total.summary.max_ns;
    let threshold_failed = max_latency_ns.is_some_and(|l| max > l) || outcome.breaktrace.is_some();

    // Recorded as run: durations exactly, with their units, and the priority
    // the threads had.
    let recorded = Params {
        interval: exact(cfg.interval_ns),
        distance: exact(cfg.distance_ns),
        duration: (cfg.duration_ns > 0).then(|| exact(cfg.duration_ns)),
        priority: Some(cfg.priority),
        histogram_max: exact(u64::from(cfg.hist_max_us) * 1_000),
        breaktrace: cfg.breaktrace_ns.map(exact),
        deadline: cfg.deadline_ns.map(exact),
        max_latency: max_latency_ns.map(exact),
        ..a.clone()
    };
    let mut run = super::new_run("latency", fp, started_at, super::Params::Latency(recorded));
    run.status = status;
    run.exit_code = status.exit_code(by_signal, threshold_failed);
    run.duration_ns = outcome.elapsed_ns;
    run.loads = load_records;
    run.series = series;
    run.total = Some(total);
    run.breaktrace = outcome.breaktrace.map(|b| BreakRecord {
        thread: b.thread,
        tid: b.tid,
        cycle: b.cycle,
        latency_ns: b.latency_ns,
        trace_marker: outcome.trace_marker_written,
    });
    run.warnings = warnings;

    Ok(run)
}

impl super::Step for Params {
    fn probe(&self) -> &'static super::Probe {
        &PROBE
    }

    /// Every check [`Params::plan`] makes, and whether the machine can carry
    /// the loads.
    fn check(&self, m: &Machine) -> Result<()> {
        self.plan(m)?;
        self.load.check()
    }

    fn planned_ns(&self) -> Option<u64> {
        super::seconds(self.duration.as_deref())
    }

    /// The real-time scheduling it needs, and the flag that asks for it.
    fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        let (policy, priority) = self.sched();
        (policy.is_realtime() && priority > 0).then_some((policy, priority, "priority"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_and_traces_of_every_thread_are_counted_against_memory() {
        // 1024 threads of 10 s histograms: 80 MB each, 82 GB with the total.
        let (bytes, what) = memory_need(1024, MAX_US_BUCKETS, 2048);
        assert!(bytes > 1025 * 80_000_000, "{bytes}");
        assert!(what.starts_with("1024 thread(s)"), "{what}");
        let need = limits::Need {
            bytes,
            what: &what,
            fix: "fewer",
        };
        let e = limits::check_memory("--histogram-max", &need, Some(8 << 30)).unwrap_err();
        assert!(
            e.to_string().starts_with("--histogram-max: 1024 thread(s)"),
            "{e}"
        );
        // The defaults on a few CPUs take a few MB.
        assert!(memory_need(4, 10_000, 2048).0 < 8 << 20);
    }
}
