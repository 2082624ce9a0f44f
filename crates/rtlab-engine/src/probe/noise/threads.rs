//! The probe's threads: one per CPU, pinned and scheduled as asked, started
//! together, each running [`spin`](super::spin) with its counters around it.

use super::{
    calibrate_tsc, spin, GapMarker, GapMarks, GapStats, Monotonic, NoiseClock, Scale, Tsc,
};
use crate::perf::{Counters, Reading, EVENTS};
use crate::rt::clock::{ClockId, SystemClock};
use crate::rt::sched::{self, Policy, SchedError};
use crate::rt::{gettid, mem};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Barrier, Mutex};

/// What the probe runs.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseConfig {
    /// One thread per entry, pinned to this CPU.
    pub cpus: Vec<usize>,
    /// Scheduling of the threads.
    pub policy: Policy,
    /// Their priority.
    pub priority: i32,
    /// How long each loop runs (ns).
    pub duration_ns: u64,
    /// Gaps above this are noise (ns).
    pub threshold_ns: u64,
    /// The clock the loops read.
    pub clock: NoiseClock,
    /// Open performance counters on every thread.
    pub perf: bool,
    /// Mark every gap at or above a threshold in a trace (`--trace`).
    pub gap_marks: Option<GapMarks>,
}

/// One thread's result.
#[derive(Debug, Clone)]
pub struct NoiseThread {
    /// The CPU it was pinned to.
    pub cpu: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// What it saw.
    pub stats: GapStats,
    /// Its counters over the loop, and its voluntary and involuntary context
    /// switches, when asked.
    pub perf: Option<([Reading; EVENTS.len()], (u64, u64))>,
}

/// A thread could not be set up as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseError {
    /// Pinning to the CPU failed.
    Affinity { cpu: usize, err: SchedError },
    /// Setting the policy and priority failed.
    Policy { cpu: usize, err: SchedError },
    /// The gap markers' `trace_marker` file could not be opened.
    Marker { cpu: usize, err: std::io::ErrorKind },
}

impl std::fmt::Display for NoiseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoiseError::Affinity { cpu, err } => {
                write!(f, "cannot pin a thread to CPU {cpu}: {err}")
            }
            NoiseError::Policy { cpu, err } => {
                write!(f, "cannot set the policy of the thread on CPU {cpu}: {err}")
            }
            NoiseError::Marker { cpu, err } => {
                write!(f, "cannot open the trace marker file for CPU {cpu}: {err}")
            }
        }
    }
}

/// Runs one loop per CPU of `cfg`, all starting together, and returns what
/// each saw and the ticks-to-ns scale used. `stop` ends them early.
pub fn run(cfg: &NoiseConfig, stop: &AtomicBool) -> Result<(Vec<NoiseThread>, Scale), NoiseError> {
    let scale = match cfg.clock {
        NoiseClock::Tsc => calibrate_tsc(50_000_000),
        NoiseClock::Monotonic => Scale::NS,
    };
    let n = cfg.cpus.len();
    let ready = Barrier::new(n + 1);
    let go = Barrier::new(n + 1);
    let abort = AtomicBool::new(false);
    let errors: Vec<Mutex<Option<NoiseError>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .cpus
            .iter()
            .zip(&errors)
            .enumerate()
            .map(|(i, (&cpu, slot))| {
                let (ready, go, abort) = (&ready, &go, &abort);
                std::thread::Builder::new()
                    .name(format!("rtlab-noise{cpu}"))
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        one_thread(cfg, (i, cpu), scale, slot, (ready, go, abort), stop)
                    })
                    .expect("spawning a noise thread")
            })
            .collect();
        ready.wait();
        let failed = errors
            .iter()
            .any(|e| e.lock().unwrap_or_else(|p| p.into_inner()).is_some());
        abort.store(failed, Relaxed);
        go.wait();
        handles
            .into_iter()
            .map(|h| h.join().expect("a noise thread panicked"))
            .collect::<Vec<_>>()
    });
    if let Some(e) = errors
        .iter()
        .find_map(|e| *e.lock().unwrap_or_else(|p| p.into_inner()))
    {
        return Err(e);
    }
    Ok((results, scale))
}

fn one_thread(
    cfg: &NoiseConfig,
    (index, cpu): (usize, usize),
    scale: Scale,
    slot: &Mutex<Option<NoiseError>>,
    (ready, go, abort): (&Barrier, &Barrier, &AtomicBool),
    stop: &AtomicBool,
) -> NoiseThread {
    let mut stats = GapStats::new();
    let failure = sched::set_thread_affinity(0, &[cpu])
        .map_err(|err| NoiseError::Affinity { cpu, err })
        .and_then(|_| {
            sched::set_thread_policy(0, cfg.policy, cfg.priority)
                .map_err(|err| NoiseError::Policy { cpu, err })
        })
        .err();
    let marker = cfg
        .gap_marks
        .as_ref()
        .map(|m| GapMarker::open(m, scale, cpu, index));
    let (marker, failure) = match marker {
        Some(Err(e)) => (
            None,
            failure.or(Some(NoiseError::Marker { cpu, err: e.kind() })),
        ),
        Some(Ok(m)) => (Some(m), failure),
        None => (None, failure),
    };
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = failure;
    mem::prefault_stack();
    let mut counters = cfg.perf.then(Counters::this_thread);
    ready.wait();
    go.wait();
    if let Some(c) = counters.as_mut() {
        c.enable();
    }
    if !abort.load(Relaxed) {
        let thr = scale.ticks_within(cfg.threshold_ns);
        let dur = scale.ticks(cfg.duration_ns);
        match cfg.clock {
            NoiseClock::Tsc => spin(&Tsc, scale, thr, dur, stop, &mut stats, marker.as_ref()),
            NoiseClock::Monotonic => spin(
                &Monotonic(SystemClock::new(ClockId::Monotonic)),
                scale,
                thr,
                dur,
                stop,
                &mut stats,
                marker.as_ref(),
            ),
        }
    }
    let perf = counters.map(|c| {
        c.disable();
        (c.read(), c.switches())
    });
    NoiseThread {
        cpu,
        tid: gettid(),
        stats,
        perf,
    }
}
