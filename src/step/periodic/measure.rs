//! A periodic step's run: one frequency, or a sweep per method and load.

use super::output::{self, Edges, Target};
use super::sweep::{self, Found};
use super::{method_name, Params, Plan};
use crate::error::{SystemError, UsageError};
use crate::record::perf::{Counter as PerfCounter, PerfRecord, PerfThread};
use crate::record::sweep::{Curve, Point, Sweep};
use crate::record::{self, Counters, Run, Series, Status, Warning};
use crate::step::{Machine, Observer};
use crate::system;
use anyhow::Result;
use rtlab_engine::probe::periodic::{self as probe, LoopEnd, Method, PeriodStats, PeriodicOutcome};
use rtlab_engine::rt::{mem, signals};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// The jitter series of one set of periods.
fn series_of(name: String, s: &PeriodStats, cpu: Option<usize>, tid: Option<i32>) -> Series {
    let counters = Counters {
        samples: s.periods.count,
        overruns: s.missed,
        deadline_misses: s.out_of_tolerance,
        overflows: 0,
    };
    let summary = rtlab_engine::stats::Summary::new(&s.jitter_moments, &s.jitter);
    Series {
        cpu,
        tid,
        interval_ns: Some(s.nominal_ns),
        max_at: (s.periods.count > 0).then_some(s.worst_at),
        windows: s.windows.to_data(),
        ..Series::new(name, counters, summary, s.jitter.to_data())
    }
}

fn point_of(hz: f64, s: &PeriodStats) -> Point {
    Point {
        requested_hz: hz,
        achieved_hz: s.achieved_hz(),
        worst_deviation: s.jitter_moments.max as f64 / s.nominal_ns.max(1) as f64,
        missed: s.missed,
        held: s.held(),
    }
}

/// One run of the probe at `hz` for `ns` with `method`.
fn once(
    p: &Plan,
    hz: f64,
    ns: u64,
    method: Method,
    target: &mut Target,
    stop: &AtomicBool,
) -> Result<PeriodicOutcome> {
    let period_ns = ((1e9 / hz).round() as u64).max(1);
    let tol_ns = (period_ns as f64 * p.tolerance) as u64;
    let sched = p.sched(period_ns)?;
    let r = probe::run(
        period_ns, tol_ns, method, p.spin_ns, ns, p.cpu, sched, target, stop, p.perf,
    );
    r.map_err(|e| {
        match (e, sched) {
            (probe::SetupError::Policy(err), probe::Sched::Deadline(dl)) => {
                crate::step::deadline::refusal(err, &dl, 1)
            }
            (probe::SetupError::Policy(err), _) if err.is_permission() => SystemError(format!(
                "cannot run the thread as SCHED_{} priority {}: {err} (run as root or with CAP_SYS_NICE, or --policy other)",
                p.policy.name().to_uppercase(),
                p.priority
            ))
            .into(),
            (probe::SetupError::Affinity(..), _) => UsageError(format!("--cpu: {e}")).into(),
            _ => SystemError(e.to_string()).into(),
        }
    })
}

/// Measures: one frequency, or the sweep; returns the run.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let p = a.plan(&Machine::this())?;
    let fp = system::fingerprint();
    let mut warnings = system::fingerprint_warnings(&fp);
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    a.shared.load.parse()?;
    let mut target = output::open(a)?;
    let edges = a.gpio_in.as_deref().map(Edges::open).transpose()?;
    if a.lock.mlock {
        if let Err(e) = mem::lock_all() {
            warnings.push(Warning::new(
                "mlock",
                format!(
                    "mlockall failed ({}): page faults may add jitter",
                    rtlab_engine::rt::errno_text(e)
                ),
            ));
        }
    }
    let spins = p
        .methods
        .iter()
        .any(|m| matches!(m, Method::Busy | Method::Hybrid));
    if spins && p.policy.is_realtime() {
        warnings.push(Warning::new(
            "busy_rt",
            format!(
                "busy and hybrid waits at SCHED_{} hold CPU {} for each run ({} at most): RT throttling would cut a longer one; the other CPUs stay free",
                p.policy.name().to_uppercase(),
                p.cpu.map_or("?".into(), |c| c.to_string()),
                crate::units::Human(if p.sweep.is_some() { p.point_ns } else { p.duration_ns }),
            ),
        ));
    }
    let mut run = crate::step::new_run(fp, started_at, a.clone());
    obs.start(&["periodic".into()]);
    let result = match p.sweep {
        Some(s) => sweep_all(&p, &s, a, &mut target, stop, &mut run),
        None => single(&p, &mut target, edges.as_ref(), a, stop, &mut run),
    };
    obs.end();
    if a.lock.mlock {
        mem::unlock_all();
    }
    result?;
    let by_signal = signals::received().is_some() || stop.load(Ordering::Relaxed);
    if by_signal {
        run.status = Status::Interrupted;
    }
    run.exit_code = run.status.exit_code(by_signal, false);
    run.warnings.splice(0..0, warnings);
    Ok(run)
}

fn single(
    p: &Plan,
    target: &mut Target,
    edges: Option<&Edges>,
    a: &Params,
    stop: &AtomicBool,
    run: &mut Run,
) -> Result<()> {
    let probe_cpus = vec![p.cpu];
    let loads = a.shared.load.start(&probe_cpus)?;
    run.warnings.extend(loads.warnings.iter().cloned());
    let method = p.methods[0];
    let period_ns = ((1e9 / p.frequency_hz).round() as u64).max(1);
    let edge_stop = AtomicBool::new(false);
    let mut edge_stats = PeriodStats::new(period_ns, (period_ns as f64 * p.tolerance) as u64);
    let (o, edge_errors) = std::thread::scope(|s| {
        let reader = edges.map(|e| s.spawn(|| e.read(&mut edge_stats, &edge_stop)));
        let o = once(p, p.frequency_hz, p.duration_ns, method, target, stop);
        edge_stop.store(true, Ordering::Relaxed);
        (o, reader.map(|r| r.join().unwrap_or(0)))
    });
    let (records, load_warnings) = loads.finish();
    run.loads = records;
    run.warnings.extend(load_warnings);
    let o = o?;
    let s = &o.stats;
    run.duration_ns = s.last_ns.saturating_sub(s.first_ns);
    run.status = match o.end {
        LoopEnd::Done => Status::Complete,
        LoopEnd::Stopped => Status::Interrupted,
        LoopEnd::ClockError(e) => {
            run.warnings.push(Warning::new(
                "clock",
                format!("the kernel refused to wait: {e:?}"),
            ));
            Status::Failed
        }
    };
    run.series = vec![series_of("period".into(), s, p.cpu, Some(o.tid))];
    run.perf = crate::step::perf::of_threads(
        run.duration_ns,
        std::iter::once(("period".to_string(), o.tid, o.perf.as_ref())),
    );
    if let Some(errors) = edge_errors {
        run.series
            .push(series_of("edges".into(), &edge_stats, None, None));
        run.metrics.insert("edge_read_errors".into(), errors as f64);
        run.metrics
            .insert("edges_achieved_hz".into(), edge_stats.achieved_hz());
    }
    run.metrics = metrics(p, &o, std::mem::take(&mut run.metrics));
    if s.write_errors > 0 {
        run.warnings.push(Warning::new(
            "output",
            format!(
                "{} of {} writes to the output failed",
                s.write_errors, s.toggles
            ),
        ));
    }
    Ok(())
}

fn metrics(p: &Plan, o: &PeriodicOutcome, mut m: BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    let s = &o.stats;
    for (k, v) in [
        ("requested_hz", p.frequency_hz),
        ("achieved_hz", s.achieved_hz()),
        ("toggles", s.toggles as f64),
        ("missed_periods", s.missed as f64),
        ("late_periods", s.late as f64),
        ("out_of_tolerance", s.out_of_tolerance as f64),
        (
            "period_min_ns",
            if s.periods.count > 0 {
                s.periods.min as f64
            } else {
                0.0
            },
        ),
        ("period_max_ns", s.periods.max as f64),
        ("period_mean_ns", s.periods.mean()),
        ("held", if s.held() { 1.0 } else { 0.0 }),
        ("write_errors", s.write_errors as f64),
    ] {
        m.insert(k.into(), v);
    }
    if matches!(p.policy, rtlab_engine::rt::sched::Policy::Deadline) {
        m.insert("dl_overruns".into(), o.dl_overruns as f64);
    }
    if let Some(n) = o.involuntary_switches {
        m.insert("involuntary_switches".into(), n as f64);
    }
    m
}

/// The sweep: for each load (idle, then the loads given), each method.
fn sweep_all(
    p: &Plan,
    s: &sweep::Search,
    a: &Params,
    target: &mut Target,
    stop: &AtomicBool,
    run: &mut Run,
) -> Result<()> {
    let clock = std::time::Instant::now();
    let mut curves = Vec::new();
    let mut loadsets = vec![("idle".to_string(), None)];
    if !a.shared.load.load.is_empty() {
        loadsets.push((a.shared.load.load.join("+"), Some(&a.shared.load)));
    }
    let mut first_error = None;
    let mut perf = Vec::new();
    // Each curve gets an equal share of --duration, so that a short budget
    // cuts every curve rather than leaving the last ones unmeasured.
    let share = p.duration_ns / (loadsets.len() * p.methods.len()) as u64;
    for (name, load) in loadsets {
        let running = load.map(|l| l.start(&[p.cpu])).transpose()?;
        for &method in &p.methods {
            let mut best: Option<PeriodStats> = None;
            let mut counted: Vec<Vec<PerfCounter>> = Vec::new();
            let curve_start = std::time::Instant::now();
            let mut tried = 0;
            let mut out_of_time = false;
            let found: Found = sweep::search(s, |hz| {
                let spent = curve_start.elapsed().as_nanos() as u64;
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                // The first point of a curve always runs.
                if tried > 0 && spent + p.point_ns > share {
                    out_of_time = true;
                    return None;
                }
                tried += 1;
                // A short rest between points, so that a spinning thread
                // never holds its CPU for long stretches.
                std::thread::sleep(std::time::Duration::from_millis(20));
                match once(p, hz, p.point_ns, method, target, stop) {
                    Ok(o) => {
                        if let Some((r, switches)) = &o.perf {
                            counted.push(record::perf::counters(r, *switches));
                        }
                        let pt = point_of(hz, &o.stats);
                        if pt.held {
                            best = Some(o.stats);
                        }
                        Some(pt)
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                        None
                    }
                }
            });
            if let Some(b) = &best {
                run.series.push(series_of(
                    format!("{}/{name}", method_name(method)),
                    b,
                    p.cpu,
                    None,
                ));
            }
            if !counted.is_empty() {
                let all: Vec<&[PerfCounter]> = counted.iter().map(Vec::as_slice).collect();
                // Each point has a thread of its own: the curve's are added.
                perf.push(PerfThread {
                    name: format!("{}/{name}", method_name(method)),
                    tid: None,
                    counters: record::perf::sum(&all),
                });
            }
            let key = format!("best_hz.{}.{name}", method_name(method));
            run.metrics.insert(key, found.best_hz.unwrap_or(0.0));
            curves.push(Curve {
                method: method_name(method).into(),
                load: name.clone(),
                best_hz: found.best_hz,
                truncated: found.truncated,
                out_of_time,
                repeats: s.repeats,
                points: found.points,
            });
        }
        if let Some(r) = running {
            let (records, w) = r.finish();
            run.loads.extend(records);
            run.warnings.extend(w);
        }
        if let Some(e) = first_error.take() {
            return Err(e);
        }
    }
    run.duration_ns = clock.elapsed().as_nanos() as u64;
    run.perf = (!perf.is_empty()).then(|| PerfRecord::of_threads(run.duration_ns, perf));
    if curves.iter().any(|c| c.truncated) {
        run.warnings.push(Warning::new(
            "sweep_truncated",
            format!("the sweep reached its --duration ({}) or was stopped before every search converged: those curves end early", crate::units::Human(p.duration_ns)),
        ));
    }
    run.status = Status::Complete;
    run.sweep = Some(Sweep {
        lo_hz: s.lo_hz,
        hi_hz: s.hi_hz,
        tolerance: p.tolerance,
        curves,
    });
    Ok(())
}
