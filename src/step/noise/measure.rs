//! A noise step's run: loads, memory lock, the spinning threads, and the run
//! they make (per-CPU gap series, noise metrics, gates, RT throttling).

use super::{gates, Params, Plan};
use crate::error::{SystemError, UsageError};
use crate::record::why::{Subject, Why};
use crate::record::{self, Counters, Run, Series, Status, Warning};
use crate::step::rt::{CpusArgs, SchedArgs, TraceArgs};
use crate::step::value::{Cpus, Dur};
use crate::step::{Machine, Observer};
use crate::system;
use crate::trace;
use crate::units::Human;
use anyhow::Result;
use rtlab_engine::probe::noise::{self as probe, GapMarks, GapStats, NoiseClock, NoiseThread};
use rtlab_engine::rt::{mem, signals};
use rtlab_engine::stats::Summary;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// The kernel's RT throttling: SCHED_FIFO/RR may run `runtime` µs of every
/// `period` µs (`None`: unlimited or unreadable).
fn rt_throttle() -> Option<(u64, u64)> {
    let read = |f: &str| {
        rtlab_engine::sysinfo::read_text(format!("/proc/sys/kernel/{f}"))
            .ok()?
            .trim()
            .parse::<i64>()
            .ok()
    };
    let (runtime, period) = (read("sched_rt_runtime_us")?, read("sched_rt_period_us")?);
    (runtime >= 0 && runtime < period).then_some((runtime as u64, period as u64))
}

/// Why a gap of about `period − runtime` every period is RT throttling, when a
/// spinning RT thread runs longer than the runtime; `max_gap_ns` tells whether
/// this run saw such a gap.
fn throttling_warning(plan: &Plan, max_gap_ns: u64) -> Option<Warning> {
    let (runtime, period) = rt_throttle()?;
    let cfg = &plan.cfg;
    if !cfg.policy.is_realtime() || cfg.duration_ns <= runtime * 1_000 {
        return None;
    }
    let idle_ns = (period - runtime) * 1_000;
    // The throttled stretch ends with the kernel's period, not the thread's:
    // any gap of a millisecond or more up to the idle time is likely it.
    let seen = max_gap_ns >= 1_000_000 && max_gap_ns <= idle_ns * 12 / 10;
    Some(Warning::new(
        "rt_throttling",
        format!(
            "RT throttling: SCHED_{} threads may run {} of every {} (kernel.sched_rt_runtime_us), so a thread spinning longer is stopped for about {} each period{}; that is noise an RT task sees here, not an interrupt (measure ≤ {} per run, or with --policy other, to see the rest)",
            cfg.policy.name().to_uppercase(),
            Human(runtime * 1_000),
            Human(period * 1_000),
            Human(idle_ns),
            if seen {
                format!(": the largest gap here, {}, is likely that", Human(max_gap_ns))
            } else {
                String::new()
            },
            Human(runtime * 1_000),
        ),
    ))
}

/// The series of one CPU (or of all): every gap in its histogram.
fn series_of(name: String, st: &GapStats, t: Option<&NoiseThread>) -> Series {
    let counters = Counters {
        samples: st.moments.count,
        ..Counters::default()
    };
    let summary = Summary::new(&st.moments, &st.hist);
    Series {
        cpu: t.map(|t| t.cpu),
        tid: t.map(|t| t.tid),
        ..Series::new(name, counters, summary, st.hist.to_data())
    }
}

/// The noise figures of `st` as metrics, each name after `prefix`.
fn metrics_of(prefix: &str, st: &GapStats, cpu_ns: u64, m: &mut BTreeMap<String, f64>) {
    let share = st.noise_ns() as f64 / cpu_ns.max(1) as f64;
    let quiet = st.iterations.saturating_sub(st.moments.count).max(1);
    let mut put = |k: &str, v: f64| {
        m.insert(format!("{prefix}{k}"), v);
    };
    put("noise_ppm", share * 1e6);
    put("noise_ns_per_s", share * 1e9);
    put(
        "noise_gaps_per_s",
        st.moments.count as f64 * 1e9 / cpu_ns.max(1) as f64,
    );
    put("noise_max_gap_ns", st.moments.max as f64);
    put("max_gap_at_ns", st.max_at_ns as f64);
    put(
        "loop_ns",
        cpu_ns.saturating_sub(st.noise_ns()) as f64 / quiet as f64,
    );
    put("loop_min_ns", st.min_delta_ns as f64);
    put("iterations", st.iterations as f64);
}

/// Measures: starts the loads, spins on every CPU, and returns the run.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let fp = system::fingerprint();
    let mut plan = a.plan(&Machine::this())?;
    a.shared.perf.check()?;
    let mut warnings = system::fingerprint_warnings(&fp);
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    let probe_cpus: Vec<Option<usize>> = plan.cfg.cpus.iter().map(|&c| Some(c)).collect();
    let loads = a.shared.load.start(&probe_cpus)?;
    warnings.extend(loads.warnings.iter().cloned());
    if let Err(errno) = mem::lock_all() {
        warnings.push(Warning::new(
            "mlock",
            format!(
                "mlockall failed ({}): page faults may show as noise",
                rtlab_engine::rt::errno_text(errno)
            ),
        ));
    }
    // Has the spinning threads mark the gaps the kernel trace explains; when
    // the system cannot trace, a warning says why and the run goes on.
    let trace = plan.trace_threshold_ns.and_then(|threshold_ns| {
        let s = trace::Session::start_or_warn(threshold_ns, &plan.cfg.cpus, None, &mut warnings)?;
        let path = s.marker_path();
        plan.cfg.gap_marks = Some(GapMarks { path, threshold_ns });
        Some(s)
    });
    let cfg = &plan.cfg;
    let names: Vec<String> = cfg.cpus.iter().map(|c| format!("cpu{c}")).collect();
    obs.note(&format!(
        "spinning on {} for {} (gaps above {})",
        names.join(", "),
        Human(cfg.duration_ns),
        Human(cfg.threshold_ns)
    ));
    let result = probe::run(cfg, stop);
    mem::unlock_all();
    let why = trace.map(|t| Why {
        subject: Subject::Gaps,
        ..t.finish()
    });
    let (load_records, load_warnings) = loads.finish();
    warnings.extend(load_warnings);
    let (threads, scale) = match result {
        Ok(r) => r,
        Err(e @ probe::NoiseError::Policy { err, .. }) if err.is_permission() => {
            return Err(SystemError(format!(
                "{e}: run as root or with CAP_SYS_NICE, or measure with --policy other"
            ))
            .into())
        }
        Err(e @ probe::NoiseError::Policy { .. }) => return Err(SystemError(e.to_string()).into()),
        Err(e @ probe::NoiseError::Marker { .. }) => {
            return Err(SystemError(format!("--trace: {e}")).into())
        }
        Err(e) => return Err(UsageError(format!("--cpus: {e}")).into()),
    };
    let interrupted = stop.load(Ordering::Relaxed);

    let mut metrics = BTreeMap::new();
    let mut total = GapStats::new();
    let mut cpu_ns = 0;
    for (t, name) in threads.iter().zip(&names) {
        if threads.len() > 1 {
            metrics_of(
                &format!("{name}."),
                &t.stats,
                t.stats.elapsed_ns,
                &mut metrics,
            );
        }
        total.merge(&t.stats);
        cpu_ns += t.stats.elapsed_ns;
    }
    metrics_of("", &total, cpu_ns, &mut metrics);
    metrics.insert("threshold_ns".into(), cfg.threshold_ns as f64);
    metrics.insert("clock_ticks_per_us".into(), scale.ticks_per_us());
    let elapsed_ns = threads
        .iter()
        .map(|t| t.stats.elapsed_ns)
        .max()
        .unwrap_or(0);
    if let Some(w) = throttling_warning(&plan, total.moments.max) {
        warnings.push(w);
    }
    if !cfg.policy.is_realtime() {
        warnings.push(Warning::new(
            "not_realtime",
            format!(
                "the spinning threads run SCHED_{}: other threads of the CPU show as noise",
                cfg.policy.name().to_uppercase()
            ),
        ));
    }
    let perf = crate::step::perf::of_threads(
        elapsed_ns,
        threads
            .iter()
            .zip(&names)
            .map(|(t, n)| (n.clone(), t.tid, t.perf.as_ref())),
    );

    let recorded = Params {
        duration: Dur::exact(cfg.duration_ns),
        measured: CpusArgs {
            cpus: Some(Cpus::of(cfg.cpus.clone())),
        },
        sched: SchedArgs {
            priority: Some(cfg.priority),
            ..a.sched.clone()
        },
        threshold: Dur::exact(cfg.threshold_ns),
        clock: match cfg.clock {
            NoiseClock::Tsc => super::ClockArg::Tsc,
            NoiseClock::Monotonic => super::ClockArg::Monotonic,
        },
        max_gap: plan.max_gap_ns.map(Dur::exact),
        tracing: TraceArgs {
            trace_threshold: plan.trace_threshold_ns.map(Dur::exact),
            ..a.tracing.clone()
        },
        ..a.clone()
    };
    let mut run = crate::step::new_run(fp, started_at, recorded);
    run.series = threads
        .iter()
        .zip(names)
        .map(|(t, name)| series_of(name, &t.stats, Some(t)))
        .collect();
    run.total = Some(series_of("all".into(), &total, None));
    run.metrics = metrics;
    run.duration_ns = elapsed_ns;
    run.loads = load_records;
    run.perf = perf;
    run.why = why;
    run.warnings = warnings;
    run.status = if interrupted {
        Status::Interrupted
    } else {
        Status::Complete
    };
    let failed = gates(&run).iter().any(|g| !g.passed);
    run.exit_code = run.status.exit_code(interrupted, failed);
    Ok(run)
}
