//! The probe's thread: pinned, scheduled as asked, stack prefaulted, then the
//! loop for a bounded time.

use super::{run_loop, LoopEnd, Method, Output, PeriodStats, Spin};
use crate::perf::{Counters, Reading, EVENTS};
use crate::rt::clock::{Clock, ClockId, SystemClock};
use crate::rt::sched::deadline::{self, DlParams};
use crate::rt::sched::{self, Policy, SchedError};
use crate::rt::timerfd::TimerFd;
use crate::rt::{gettid, mem};
use std::sync::atomic::AtomicBool;

/// How the thread is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sched {
    /// A policy and priority (`sched_setscheduler`).
    Fixed(Policy, i32),
    /// SCHED_DEADLINE with a reservation (`sched_setattr`).
    Deadline(DlParams),
}

/// The thread could not be set up as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// `sched_setaffinity` refused the CPU.
    Affinity(usize, SchedError),
    /// `sched_setscheduler` or `sched_setattr` refused.
    Policy(SchedError),
    /// `timerfd_create` refused (errno).
    Timer(i32),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Affinity(cpu, e) => write!(f, "cannot pin to CPU {cpu}: {e}"),
            SetupError::Policy(e) => write!(f, "cannot set the scheduling policy: {e}"),
            SetupError::Timer(e) => {
                write!(f, "cannot create a timerfd: {}", crate::rt::errno_text(*e))
            }
        }
    }
}

impl std::error::Error for SetupError {}

/// What a run hands back.
#[derive(Debug, Clone)]
pub struct PeriodicOutcome {
    /// The periods measured.
    pub stats: PeriodStats,
    /// Why the loop ended.
    pub end: LoopEnd,
    /// The thread's kernel id.
    pub tid: i32,
    /// SCHED_DEADLINE runtime overruns the kernel signalled during the run.
    pub dl_overruns: u64,
    /// Involuntary context switches of the thread during the run (None: not shown).
    pub involuntary_switches: Option<u64>,
    /// The thread's performance counters over the loop, when asked for, with
    /// its voluntary and involuntary context switches.
    pub perf: Option<([Reading; EVENTS.len()], (u64, u64))>,
}

/// Runs the loop on a new thread for `duration_ns`: `cpu` pins it, `sched`
/// schedules it, `method` paces it (`spin_ns` for hybrid), toggling `out`
/// every `period_ns`; a period further than `tolerance_ns` from nominal is out
/// of tolerance. The first period starts one period after set-up. With `perf`,
/// the thread counts its own performance counters over the loop.
#[allow(clippy::too_many_arguments)]
pub fn run<O: Output>(
    period_ns: u64,
    tolerance_ns: u64,
    method: Method,
    spin_ns: u64,
    duration_ns: u64,
    cpu: Option<usize>,
    sched: Sched,
    out: &mut O,
    stop: &AtomicBool,
    perf: bool,
) -> Result<PeriodicOutcome, SetupError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let tid = gettid();
            let mut stats = PeriodStats::new(period_ns, tolerance_ns);
            stats.warm_up();
            if let Some(c) = cpu {
                sched::set_thread_affinity(0, &[c]).map_err(|e| SetupError::Affinity(c, e))?;
            }
            match sched {
                Sched::Fixed(p, prio) => sched::set_thread_policy(0, p, prio),
                Sched::Deadline(dl) => deadline::set_thread_deadline(0, &dl),
            }
            .map_err(SetupError::Policy)?;
            let clock = SystemClock::new(ClockId::Monotonic);
            let timer = match method {
                Method::Timerfd => {
                    Some(TimerFd::new(ClockId::Monotonic).map_err(SetupError::Timer)?)
                }
                _ => None,
            };
            mem::prefault_stack();
            let overruns = deadline::overruns();
            let switches = deadline::involuntary_switches(tid);
            let mut counters = perf.then(Counters::this_thread);
            if let Some(c) = counters.as_mut() {
                c.enable();
            }
            let start = clock.now() + period_ns;
            let end_at = start + duration_ns;
            let end = match (method, &timer) {
                (Method::Timerfd, Some(t)) => run_loop(t, out, start, end_at, &mut stats, stop),
                (Method::Busy, _) => {
                    let c = Spin {
                        clock,
                        spin_ns: u64::MAX,
                    };
                    run_loop(&c, out, start, end_at, &mut stats, stop)
                }
                (Method::Hybrid, _) => {
                    let c = Spin { clock, spin_ns };
                    run_loop(&c, out, start, end_at, &mut stats, stop)
                }
                _ => run_loop(&clock, out, start, end_at, &mut stats, stop),
            };
            let perf = counters.map(|c| {
                c.disable();
                (c.read(), c.switches())
            });
            let involuntary_switches = deadline::involuntary_switches(tid)
                .zip(switches)
                .map(|(b, a)| b.saturating_sub(a));
            // Back to SCHED_OTHER before the thread ends, so that nothing of
            // it runs with a reservation once measuring is over.
            let _ = sched::set_thread_policy(0, Policy::Other, 0);
            Ok(PeriodicOutcome {
                stats,
                end,
                tid,
                dl_overruns: deadline::overruns() - overruns,
                involuntary_switches,
                perf,
            })
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::periodic::NoOutput;

    /// A 1 kHz run at SCHED_OTHER, unpinned, 10% tolerance, 200 µs of spin.
    fn at_1khz(method: Method, duration_ns: u64, stop: bool, perf: bool) -> PeriodicOutcome {
        run(
            1_000_000,
            100_000,
            method,
            200_000,
            duration_ns,
            None,
            Sched::Fixed(Policy::Other, 0),
            &mut NoOutput,
            &AtomicBool::new(stop),
            perf,
        )
        .unwrap()
    }

    #[test]
    fn a_short_run_at_sched_other_toggles_and_measures() {
        for method in [Method::Sleep, Method::Busy, Method::Timerfd, Method::Hybrid] {
            let o = at_1khz(method, 20_000_000, false, false);
            assert_eq!(o.end, LoopEnd::Done, "{method:?}");
            let s = &o.stats;
            // However late the thread runs on a busy machine, the first toggle
            // is at the start and every later one closes a period.
            assert!(s.toggles >= 1, "{method:?}: {}", s.toggles);
            assert_eq!(s.periods.count, s.toggles - 1);
            assert_eq!(s.jitter.len(), s.periods.count);
            assert!(s.last_ns >= s.first_ns);
            assert!(s.out_of_tolerance <= s.periods.count);
        }
    }

    #[test]
    fn asked_for_the_thread_counts_its_own_task_clock() {
        let o = at_1khz(Method::Busy, 20_000_000, false, true);
        let (readings, _) = o.perf.expect("counters asked for");
        let clock = EVENTS.iter().position(|e| e.name == "task-clock").unwrap();
        match readings[clock] {
            // A busy wait of 20 ms runs: its clock is never zero.
            Reading::Counted { value, .. } => assert!(value > 0),
            r => eprintln!("perf_event_open refused here: {r:?}"),
        }
        let none = at_1khz(Method::Sleep, 5_000_000, false, false);
        assert!(none.perf.is_none());
    }

    #[test]
    fn a_stop_raised_before_the_start_ends_the_run_at_once() {
        let o = at_1khz(Method::Sleep, 10_000_000_000, true, false);
        assert_eq!(o.end, LoopEnd::Stopped);
        assert_eq!(o.stats.toggles, 0);
    }
}
