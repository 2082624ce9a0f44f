//! A latency step's run: the system set up as asked (loads, memory lock,
//! `/dev/cpu_dma_latency`, idle states, the main thread's CPUs), the probe, and
//! the run it makes.

use super::idle::IdleLimit;
use super::{Params, Plan};
use crate::error::{SystemError, UsageError};
use crate::record::{self, BreakRecord, Counters, PageFaults, Run, Series, Status, Warning};
use crate::step::rt::{IntervalArgs, SchedArgs};
use crate::step::value::Dur;
use crate::step::{Machine, Observer};
use crate::system;
use crate::trace;
use anyhow::Result;
use rtlab_engine::probe::latency::{self as probe, LoopEnd, ThreadStats};
use rtlab_engine::probe::samples::Sample;
use rtlab_engine::rt::dma::DmaLatencyGuard;
use rtlab_engine::rt::sched::{self, Policy};
use rtlab_engine::rt::{mem, signals};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Samples a thread can hold for the main thread when an observer wants every
/// one (cyclictest keeps as many for `-v`).
const SAMPLE_RING: usize = 16_384;

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

/// A warning when the measuring threads took page faults while measuring: each
/// one stalls a thread for microseconds, so the memory the loop touches was not
/// all resident and locked before it started.
fn faults_warning(f: PageFaults) -> Option<Warning> {
    (f.total() > 0).then(|| {
        Warning::new(
            "page_faults",
            format!(
                "the measuring threads took {} page fault(s) ({} major) while measuring: each adds latency (memory not locked: --mlock=false, or 'ulimit -l' too low?)",
                f.total(),
                f.major
            ),
        )
    })
}

fn series_of(name: String, stats: &ThreadStats, t: Option<&probe::ThreadResult>) -> Series {
    let counters = Counters {
        samples: stats.moments.count,
        overruns: stats.overruns,
        deadline_misses: stats.misses,
        overflows: stats.overflows(),
    };
    Series {
        thread: t.map(|t| t.index),
        cpu: t.and_then(|t| t.cpu),
        tid: t.map(|t| t.tid),
        interval_ns: t.map(|t| t.interval_ns),
        max_at: (stats.moments.count > 0).then_some(stats.max_cycle),
        us_histogram: Some(stats.us.to_data()),
        trace: t.map(|_| stats.trace.points().to_vec()).unwrap_or_default(),
        windows: stats.windows.to_data(),
        ..Series::new(name, counters, stats.summary(), stats.hist.to_data())
    }
}

/// The probe's view for an [`Observer`].
struct Watcher<'a>(&'a mut dyn Observer);

impl probe::Watch for Watcher<'_> {
    fn live(&mut self, snaps: &[probe::LiveSnapshot]) {
        self.0.latency(snaps);
    }
    fn samples(&mut self, thread: usize, samples: &[Sample]) {
        self.0.samples(thread, samples);
    }
}

/// Holds /dev/cpu_dma_latency at `us` for as long as the guard lives, and
/// tells `obs`; a refusal is a warning.
fn hold_dma_latency(
    us: i32,
    obs: &mut dyn Observer,
    warnings: &mut Vec<Warning>,
) -> Option<DmaLatencyGuard> {
    match DmaLatencyGuard::request(us) {
        Ok(g) => {
            obs.dma_latency(Ok(us));
            Some(g)
        }
        Err(e) => {
            obs.dma_latency(Err(e.to_string()));
            warnings.push(Warning::new(
                "dma_latency",
                format!(
                    "cannot hold /dev/cpu_dma_latency ({e}): deep C-states may add exit latency"
                ),
            ));
            None
        }
    }
}

/// Measures: starts the loads, runs the probe threads until their loop count,
/// duration, a breaktrace or a signal, and returns the run.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let fp = system::fingerprint();
    let Plan {
        mut cfg,
        dma_latency_us,
        max_latency_ns,
        idle_limit,
        main_cpus,
        trace_threshold_ns,
        mut warnings,
    } = a.plan(&Machine::this())?;
    a.shared.perf.check()?;
    if obs.wants_samples() {
        cfg.sample_ring = SAMPLE_RING;
        // Taken before a quarter of the ring fills at the shortest period.
        let fill = Duration::from_nanos(SAMPLE_RING as u64 / 4 * cfg.interval_ns);
        cfg.poll_ns = obs.sample_poll().min(fill).as_nanos().max(1) as u64;
        cfg.thread_histograms = obs.thread_histograms();
    }
    warnings.extend(system::fingerprint_warnings(&fp));
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    // Loads start before memory is locked and before any probe thread exists.
    let loads = a.shared.load.start(&cfg.threads)?;
    warnings.extend(loads.warnings.iter().cloned());

    let dma = dma_latency_us.and_then(|us| hold_dma_latency(us, obs, &mut warnings));
    let idle = idle_limit
        .map(|(cpus, n)| IdleLimit::apply(&cpus, n))
        .transpose()?;
    mem::single_heap();
    mem::release_unused();
    if a.lock.mlock {
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
    let main_was = match &main_cpus {
        Some(cpus) => {
            let was = sched::thread_affinity(0).ok();
            sched::set_thread_affinity(0, cpus)
                .map_err(|e| SystemError(format!("--main-cpus: {e}")))?;
            was
        }
        None => None,
    };

    let names: Vec<String> = cfg
        .threads
        .iter()
        .enumerate()
        .map(|(i, c)| match c {
            Some(cpu) => format!("cpu{cpu}"),
            None => format!("thread{i}"),
        })
        .collect();
    let trace = trace_threshold_ns
        .and_then(|t| super::trace::start(t, a.timerlat, &mut cfg, &mut warnings));
    obs.start(&names);
    let overruns_before = sched::deadline::overruns();
    let result = probe::run(
        &cfg,
        stop,
        Duration::from_millis(250).max(Duration::from_nanos(cfg.poll_ns)),
        &mut Watcher(obs),
    );
    obs.end();
    let why = trace.map(trace::Session::finish);
    if let Some(was) = main_was {
        let _ = sched::set_thread_affinity(0, &was);
    }
    if a.lock.mlock {
        mem::unlock_all();
    }
    drop(idle);
    drop(dma);
    let (load_records, load_warnings) = loads.finish();
    warnings.extend(load_warnings);
    if let (Err(probe::SetupError::Policy { err, .. }), Some(dl)) = (&result, &cfg.dl) {
        return Err(crate::step::deadline::refusal(*err, dl, cfg.threads.len()));
    }
    let overruns = sched::deadline::overruns() - overruns_before;
    let mut outcome = match result {
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
        Err(e @ probe::SetupError::Timer { .. }) => {
            return Err(SystemError(format!("--timer posix: {e}")).into());
        }
        Err(e @ probe::SetupError::Marker { .. }) => {
            return Err(SystemError(format!("--trace: {e}")).into());
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
    if outcome.breaktrace.is_some() && cfg.trace_marker && !outcome.trace_marker_written {
        warnings.push(Warning::new(
            "tracefs",
            "breaktrace hit but tracefs is not mounted: no ftrace marker was written",
        ));
    }
    let dropped: u64 = outcome.threads.iter().map(|t| t.dropped_samples).sum();
    if dropped > 0 {
        warnings.push(Warning::new(
            "samples_dropped",
            format!("{dropped} wake-ups were not shown one by one: the output fell behind the measuring threads (the statistics hold them all)"),
        ));
    }

    let faults = outcome.faults();
    warnings.extend(faults_warning(faults));

    let perf = crate::step::perf::of_threads(
        outcome.elapsed_ns,
        outcome
            .threads
            .iter()
            .zip(&names)
            .map(|(t, n)| (n.clone(), t.tid, t.perf.as_ref())),
    );
    let series: Vec<Series> = outcome
        .threads
        .iter()
        .zip(names)
        .map(|(t, name)| series_of(name, &t.stats, Some(t)))
        .collect();
    // The total: the other threads folded into the first one's statistics, which
    // its series no longer needs, rather than into new ones as large as a thread's.
    let mut stats = outcome.threads.iter_mut().map(|t| &mut t.stats);
    let mut none;
    let all = match stats.next() {
        Some(first) => first,
        None => {
            none = ThreadStats::new(cfg.hist_max_us, 2);
            &mut none
        }
    };
    for s in stats {
        all.merge(s);
    }
    let total = series_of("all".into(), all, None);
    let max = total.summary.max_ns;
    let threshold_failed = max_latency_ns.is_some_and(|l| max > l) || outcome.breaktrace.is_some();

    // Recorded as run: durations exactly, with their units, and the priority
    // the threads had.
    let recorded = Params {
        period: IntervalArgs {
            interval: Dur::exact(cfg.interval_ns),
        },
        distance: Dur::exact(cfg.distance_ns),
        duration: (cfg.duration_ns > 0).then(|| Dur::exact(cfg.duration_ns)),
        threads: a.threads.flatten().map(Some),
        sched: SchedArgs {
            priority: Some(cfg.priority),
            ..a.sched.clone()
        },
        offset: Dur::exact(cfg.offset_ns),
        second_aligned: cfg.second_aligned.map(Dur::exact),
        histogram_max: Dur::exact(u64::from(cfg.hist_max_us) * 1_000),
        breaktrace: cfg.breaktrace_ns.map(Dur::exact),
        deadline: cfg.deadline_ns.map(Dur::exact),
        max_latency: max_latency_ns.map(Dur::exact),
        ..a.clone()
    };
    let mut run = crate::step::new_run(fp, started_at, recorded);
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
    run.page_faults = Some(faults);
    run.why = why.map(|mut w| {
        w.name_loads(&run.loads);
        w
    });
    run.perf = perf;
    run.warnings = warnings;
    if let Some(dl) = &cfg.dl {
        run.metrics.insert("dl_overruns".into(), overruns as f64);
        if overruns > 0 {
            run.warnings.push(Warning::new(
                "dl_overruns",
                format!(
                    "the kernel signalled {overruns} SCHED_DEADLINE runtime overrun(s): a thread used more than its {} ns runtime in a period and was throttled until its next one",
                    dl.runtime_ns
                ),
            ));
        }
    }
    // The threads' statistics are in the run now: give their pages, and those of
    // the code that measured, back before the run is written out.
    drop(outcome);
    mem::release_unused();

    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_faults_while_measuring_are_warned_about_and_none_is_silent() {
        assert_eq!(faults_warning(PageFaults::default()), None);
        let w = faults_warning(PageFaults { minor: 3, major: 1 }).unwrap();
        assert_eq!(w.code, "page_faults");
        assert!(
            w.message
                .starts_with("the measuring threads took 4 page fault(s) (1 major)"),
            "{}",
            w.message
        );
    }
}
