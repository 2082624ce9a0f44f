//! An ipc run: the pairs through each mechanism asked (or the
//! priority-inversion check), under the step's loads, into a [`Run`].

use super::{Params, Plan, Work};
use crate::error::{SystemError, EXIT_SYSTEM};
use crate::record::{self, Counters, Run, Series, Status, Warning};
use crate::step::net::{lock_memory, series_from, setup_error};
use crate::step::{Machine, Observer};
use crate::system;
use anyhow::Result;
use rtlab_engine::probe::ipc::pi::{self, PiConfig, PiError, PiRound};
use rtlab_engine::probe::ipc::{
    self as engine, IpcConfig, IpcError, PairEnd, PairResult, ThreadCounts,
};
use rtlab_engine::probe::net::client::TimeStats;
use rtlab_engine::rt::{errno_text, mem, signals};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What the runs gathered before the loads stop.
#[derive(Default)]
struct Gathered {
    series: Vec<Series>,
    /// Every wake-up of every pair and mechanism.
    total: Option<Series>,
    metrics: BTreeMap<String, f64>,
    warnings: Vec<Warning>,
    failed: bool,
    interrupted: bool,
    elapsed_ns: u64,
    /// Each thread's counters (`--perf`), named after its series.
    perf: Vec<(String, i32, ThreadCounts)>,
}

/// Measures with `a`: every mechanism asked in turn (or the check), and
/// returns the run.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let plan = a.plan(&Machine::this())?;
    let fp = system::fingerprint();
    let mut warnings = system::fingerprint_warnings(&fp);
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    let running = a.shared.load.start(&probe_cpus(&plan))?;
    warnings.extend(running.warnings.iter().cloned());
    if a.lock.mlock {
        warnings.extend(lock_memory());
    }
    // The check's threads are the engine's own: counted as rtlab's process.
    let process = match &plan.work {
        Work::PiCheck(_) => a.shared.perf.start_process()?,
        Work::Pairs(_) => None,
    };
    let gathered = match &plan.work {
        Work::Pairs(runs) => pairs(runs, stop, obs),
        Work::PiCheck(cfgs) => pi_check(cfgs, stop),
    };
    let process = process.map(crate::step::perf::ProcessCounters::finish);
    if a.lock.mlock {
        mem::unlock_all();
    }
    let (loads, load_warnings) = running.finish();
    let g = gathered?;
    warnings.extend(load_warnings);
    warnings.extend(g.warnings);
    if a.sched().0 == rtlab_engine::rt::sched::Policy::Other && !a.pi_check {
        warnings.push(Warning::new(
            "not_realtime",
            "the pairs run SCHED_OTHER: the numbers show time-sharing wake-ups, not what RT threads get (use --priority)",
        ));
    }
    let by_signal = signals::received().is_some() || stop.load(Ordering::Relaxed);
    let status = if g.failed {
        Status::Failed
    } else if g.interrupted {
        Status::Interrupted
    } else {
        Status::Complete
    };
    let gate = match &plan.work {
        Work::Pairs(_) => plan
            .max_latency_ns
            .is_some_and(|l| g.series.iter().any(|s| s.summary.max_ns > l)),
        // With inheritance the kernel must never let the medium thread in.
        Work::PiCheck(_) => g.metrics.get("pi_on_inversions").is_some_and(|&n| n > 0.0),
    };
    let mut run = crate::step::new_run(fp, started_at, a.clone());
    run.status = status;
    run.exit_code = if status == Status::Failed {
        EXIT_SYSTEM
    } else {
        status.exit_code(by_signal, gate)
    };
    run.duration_ns = g.elapsed_ns;
    run.loads = loads;
    run.series = g.series;
    run.total = g.total;
    run.metrics = g.metrics;
    run.warnings = warnings;
    run.perf = process.or_else(|| {
        let threads = g.perf.iter().map(|(n, tid, c)| (n.clone(), *tid, Some(c)));
        crate::step::perf::of_threads(run.duration_ns, threads)
    });
    Ok(run)
}

/// The CPUs of the measuring threads, for the loads' placement.
fn probe_cpus(plan: &Plan) -> Vec<Option<usize>> {
    match &plan.work {
        Work::Pairs(runs) => runs
            .first()
            .map(|(_, c)| {
                c.pairs
                    .iter()
                    .flat_map(|p| [&p.sender, &p.receiver])
                    .map(|t| t.cpus.first().copied())
                    .collect()
            })
            .unwrap_or_default(),
        Work::PiCheck(c) => vec![Some(c[0].cpu)],
    }
}

/// Each mechanism in turn, its pairs in the live view; stops at the first
/// that cannot run.
fn pairs(
    runs: &[(String, IpcConfig)],
    stop: &std::sync::atomic::AtomicBool,
    obs: &mut dyn Observer,
) -> Result<Gathered> {
    let mut g = Gathered::default();
    let mut all = TimeStats::new();
    let mut overruns = 0;
    for (name, cfg) in runs {
        if stop.load(Ordering::Relaxed) {
            g.interrupted = true;
            break;
        }
        let names: Vec<String> = (0..cfg.pairs.len())
            .map(|n| format!("{name}/{n}"))
            .collect();
        obs.start(&names);
        let results = engine::run(cfg, stop, Duration::from_millis(250), &mut |s| {
            obs.latency(s)
        });
        obs.end();
        let results = results.map_err(|e| ipc_error(e, name, cfg))?;
        g.elapsed_ns += results.iter().map(|r| r.elapsed_ns).max().unwrap_or(0);
        for (n, r) in results.iter().enumerate() {
            all.moments.merge(&r.latency.moments);
            all.hist.merge(&r.latency.hist);
            overruns += r.overruns;
            let s = series_of(format!("{name}/{n}"), n, cfg, r);
            let rt = r.round_trip.summary();
            let l = &s.summary;
            for (k, v) in [
                ("round_trip_min", rt.min_ns as f64),
                ("round_trip_mean", rt.mean_ns),
                ("round_trip_max", rt.max_ns as f64),
                // The wake-up latency of each mechanism, side by side in compare.
                ("latency_p50", l.p50_ns as f64),
                ("latency_p99", l.p99_ns as f64),
                ("latency_max", l.max_ns as f64),
            ] {
                g.metrics.insert(format!("{}.{k}_ns", s.name), v);
            }
            match r.end {
                PairEnd::Done => {}
                PairEnd::Stopped => g.interrupted = true,
                PairEnd::Failed(call, errno) => {
                    g.failed = true;
                    g.warnings.push(Warning::new(
                        "ipc_failed",
                        format!(
                            "{}: the {call} of {name} failed: {}",
                            s.name,
                            errno_text(errno)
                        ),
                    ));
                }
                PairEnd::Clock(e) => {
                    g.failed = true;
                    g.warnings.push(Warning::new(
                        "clock",
                        format!(
                            "{}: the kernel refused to sleep on the monotonic clock: {e:?}",
                            s.name
                        ),
                    ));
                }
            }
            for (side, tid, p) in [
                ("sender", r.tids.0, &r.perf[0]),
                ("receiver", r.tids.1, &r.perf[1]),
            ] {
                if let Some(p) = p {
                    g.perf.push((format!("{}/{side}", s.name), tid, *p));
                }
            }
            g.series.push(s);
        }
    }
    let mut total = stats_series("all".into(), &all);
    total.max_at = None;
    total.counters.overruns = overruns;
    g.total = Some(total);
    Ok(g)
}

fn series_of(name: String, n: usize, cfg: &IpcConfig, r: &PairResult) -> Series {
    let spec = &cfg.pairs[n];
    let mut s = stats_series(name, &r.latency);
    s.thread = Some(n);
    s.cpu = spec.receiver.cpus.first().copied();
    s.tid = Some(r.tids.1);
    s.interval_ns = Some(spec.interval_ns);
    s.counters.overruns = r.overruns;
    s
}

/// A series of the values in `t`, nothing else known.
fn stats_series(name: String, t: &TimeStats) -> Series {
    let counters = Counters {
        samples: t.moments.count,
        ..Counters::default()
    };
    series_from(name, t, counters)
}

fn ipc_error(e: IpcError, name: &str, cfg: &IpcConfig) -> anyhow::Error {
    match e {
        IpcError::Link(errno) => SystemError(format!(
            "--mechanism {name}: the kernel refused to create it ({}){}",
            errno_text(errno),
            if name == "mqueue" {
                "; check /proc/sys/fs/mqueue and 'ulimit -q'"
            } else {
                ""
            }
        ))
        .into(),
        IpcError::Setup(n, side, err) => {
            let setup = match side {
                rtlab_engine::rt::ipc::Side::Sender => &cfg.pairs[n].sender,
                rtlab_engine::rt::ipc::Side::Receiver => &cfg.pairs[n].receiver,
            };
            setup_error(err, setup)
        }
        IpcError::Prepare(n, errno) => SystemError(format!(
            "--mechanism {name}: pair {n} could not set up its side ({})",
            errno_text(errno)
        ))
        .into(),
    }
}

/// The check without, then with, priority inheritance: one series each (the
/// high thread's wait for the mutex), and the inversion counts.
fn pi_check(cfgs: &[PiConfig; 2], stop: &std::sync::atomic::AtomicBool) -> Result<Gathered> {
    let mut g = Gathered::default();
    for (name, cfg) in [("pi-off", &cfgs[0]), ("pi-on", &cfgs[1])] {
        let started = std::time::Instant::now();
        let rounds = pi::run(cfg, stop).map_err(|e| pi_error(e, cfg))?;
        g.elapsed_ns += started.elapsed().as_nanos() as u64;
        g.interrupted |= rounds.len() < cfg.rounds as usize;
        let key = name.replace('-', "_");
        let inverted = rounds.iter().filter(|r| r.inverted).count();
        g.metrics
            .insert(format!("{key}_rounds"), rounds.len() as f64);
        g.metrics
            .insert(format!("{key}_inversions"), inverted as f64);
        g.series.push(wait_series(name, cfg.cpu, &rounds));
    }
    Ok(g)
}

fn wait_series(name: &str, cpu: usize, rounds: &[PiRound]) -> Series {
    let mut t = TimeStats::new();
    for (i, r) in rounds.iter().enumerate() {
        t.record(r.wait_ns, i as u64, u64::MAX);
    }
    let mut s = stats_series(name.into(), &t);
    s.cpu = Some(cpu);
    s
}

fn pi_error(e: PiError, cfg: &PiConfig) -> anyhow::Error {
    match e {
        PiError::Mutex(errno) => SystemError(format!(
            "--pi-check: the kernel refused a priority-inheriting mutex ({})",
            errno_text(errno)
        ))
        .into(),
        PiError::Setup(err) => SystemError(format!(
            "--pi-check: SCHED_FIFO threads on CPU {} refused ({err}); the check needs root or CAP_SYS_NICE",
            cfg.cpu
        ))
        .into(),
        PiError::Stalled(r) => SystemError(format!(
            "--pi-check: round {r} did not end within a second on CPU {}: other RT work starves it",
            cfg.cpu
        ))
        .into(),
    }
}
