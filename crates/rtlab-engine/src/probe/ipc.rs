//! Wake-up latency between two threads (what pmqtest, ptsematest, sigwaittest
//! and svsematest measure), and the priority-inversion check ([`pi`]).
//!
//! Each pair is a sender and a receiver joined by a [`Link`]. As in the rt-tests
//! programs, the receiver keeps the period: it sleeps until the next one (an
//! absolute time), reads `CLOCK_MONOTONIC` and tells the sender it is ready
//! ([`Dir::Back`]), then waits. The sender, woken, reads the clock, publishes
//! the stamp and wakes the receiver ([`Dir::There`]); the receiver reads the
//! clock as soon as its wait returns and records the difference: the wake-up
//! latency. From its ready to its wake-up, on its own clock, is the round trip
//! (both hand-overs and the sender's turn between them). Nothing in either
//! loop allocates; the only system calls are the mechanism's, the clock and the
//! receiver's sleep.

pub mod pi;

use super::ended::Ended;
use super::latency::{LiveSnapshot, LiveStats};
use super::net::client::{SetupError, ThreadSetup, TimeStats};
use crate::perf::{Counters, Reading, EVENTS};
use crate::rt::clock::{Clock, ClockId, SleepError, SystemClock};
use crate::rt::ipc::{Dir, Link, Mechanism, Side};
use crate::rt::{gettid, mem};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// One pair's threads and period.
#[derive(Debug, Clone)]
pub struct PairSpec {
    /// The sender's CPUs and scheduling.
    pub sender: ThreadSetup,
    /// The receiver's CPUs and scheduling.
    pub receiver: ThreadSetup,
    /// Time between wake-ups (ns, > 0).
    pub interval_ns: u64,
}

/// What to run: every pair through one mechanism.
#[derive(Debug, Clone)]
pub struct IpcConfig {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Priority-inheriting mutexes (mutex, condvar).
    pub pi: bool,
    /// Wake-ups per pair (0: no limit).
    pub loops: u64,
    /// Stop after this long (ns; 0: no limit).
    pub duration_ns: u64,
    /// The pairs.
    pub pairs: Vec<PairSpec>,
    /// Each thread counts its own performance counters over its loop.
    pub perf: bool,
}

/// One thread's performance counters and its voluntary and involuntary
/// context switches.
pub type ThreadCounts = ([Reading; EVENTS.len()], (u64, u64));

/// How a pair's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairEnd {
    /// Its loops or its duration were done.
    Done,
    /// The stop flag was raised.
    Stopped,
    /// A call of the mechanism (named) failed with this errno.
    Failed(&'static str, i32),
    /// The kernel refused to sleep on the clock.
    Clock(SleepError),
}

/// What one pair measured.
#[derive(Debug, Clone)]
pub struct PairResult {
    /// Sender's stamp to the receiver's clock read after its wait.
    pub latency: TimeStats,
    /// The receiver's ready to its wake-up: there and back.
    pub round_trip: TimeStats,
    /// Periods that had passed before the receiver was ready for them (skipped).
    pub overruns: u64,
    /// Kernel thread ids of the sender and the receiver.
    pub tids: (i32, i32),
    /// How it ended.
    pub end: PairEnd,
    /// From the first period to the end (ns).
    pub elapsed_ns: u64,
    /// The sender's and the receiver's counters, when asked for.
    pub perf: [Option<ThreadCounts>; 2],
}

/// The set-up refused: the link could not be made (errno), or a thread could
/// not be placed or scheduled as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcError {
    /// Creating the mechanism failed with this errno.
    Link(i32),
    /// Pair `n`'s thread could not be set up.
    Setup(usize, Side, SetupError),
    /// Pair `n`'s thread could not prepare its side of the link (errno).
    Prepare(usize, i32),
}

/// What both threads of a pair share.
struct Shared {
    link: Link,
    /// The receiver's values so far, for the live view.
    live: LiveStats,
    stamp: AtomicU64,
    done: AtomicBool,
    failed: AtomicBool,
}

/// Runs every pair at once and returns their results in order; `observe`
/// sees the receivers' values about every `tick` (on the calling thread), and
/// once more when all have ended.
pub fn run(
    cfg: &IpcConfig,
    stop: &AtomicBool,
    tick: Duration,
    observe: &mut dyn FnMut(&[LiveSnapshot]),
) -> Result<Vec<PairResult>, IpcError> {
    let shared: Vec<Shared> = cfg
        .pairs
        .iter()
        .map(|_| {
            Ok(Shared {
                link: Link::new(cfg.mechanism, cfg.pi).map_err(IpcError::Link)?,
                live: LiveStats::default(),
                stamp: AtomicU64::new(0),
                done: AtomicBool::new(false),
                failed: AtomicBool::new(false),
            })
        })
        .collect::<Result<_, IpcError>>()?;
    let barrier = Barrier::new(2 * cfg.pairs.len());
    let clock = SystemClock::new(ClockId::Monotonic);
    let ended = Ended::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .pairs
            .iter()
            .zip(&shared)
            .enumerate()
            .map(|(n, (spec, sh))| {
                let (b, ended) = (&barrier, &ended);
                let recv = std::thread::Builder::new()
                    .name(format!("rtlab-ipc-r{n}"))
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        let _end = ended.guard();
                        let ready = ready(n, Side::Receiver, &spec.receiver, sh);
                        let mut counters = cfg.perf.then(Counters::this_thread);
                        b.wait();
                        let ok = ready.is_ok() && !sh.failed.load(Ordering::Acquire);
                        let r = ok.then(|| {
                            let tid = *ready.as_ref().unwrap_or(&0);
                            if let Some(c) = counters.as_mut() {
                                c.enable();
                            }
                            receiver(&clock, cfg, spec.interval_ns, tid, sh, stop)
                        });
                        let counts = counters.map(read);
                        sh.link.finish(Side::Receiver);
                        ready.map(|tid| (tid, r, counts))
                    })
                    .expect("spawning an ipc receiver");
                let send = std::thread::Builder::new()
                    .name(format!("rtlab-ipc-s{n}"))
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        let _end = ended.guard();
                        let ready = ready(n, Side::Sender, &spec.sender, sh);
                        let mut counters = cfg.perf.then(Counters::this_thread);
                        b.wait();
                        if ready.is_ok() && !sh.failed.load(Ordering::Acquire) {
                            if let Some(c) = counters.as_mut() {
                                c.enable();
                            }
                            sender(&clock, sh);
                        }
                        let counts = counters.map(read);
                        sh.link.finish(Side::Sender);
                        ready.map(|tid| (tid, counts))
                    })
                    .expect("spawning an ipc sender");
                (send, recv)
            })
            .collect();
        let snaps = || {
            shared
                .iter()
                .map(|sh| sh.live.snapshot())
                .collect::<Vec<_>>()
        };
        ended.wait_ticking(2 * handles.len(), tick, tick, |due| {
            if due {
                observe(&snaps());
            }
        });
        observe(&snaps());
        let mut out = Vec::new();
        let mut err = None;
        for (send, recv) in handles {
            let s = send.join().expect("ipc sender panicked");
            let r = recv.join().expect("ipc receiver panicked");
            match (s, r) {
                (Ok((stid, sp)), Ok((rtid, Some(mut res), rp))) => {
                    res.tids = (stid, rtid);
                    res.perf = [sp, rp];
                    out.push(res);
                }
                (Err(e), _) | (_, Err(e)) => err = err.or(Some(e)),
                _ => {}
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Stops a thread's counters and reads them.
fn read(c: Counters) -> ThreadCounts {
    c.disable();
    (c.read(), c.switches())
}

/// Sets up the calling thread as `side` of pair `n`; on failure, marks the
/// pair failed so that the other side does not start either.
fn ready(n: usize, side: Side, setup: &ThreadSetup, sh: &Shared) -> Result<i32, IpcError> {
    let r = setup
        .apply()
        .map_err(|e| IpcError::Setup(n, side, e))
        .and_then(|()| sh.link.prepare(side).map_err(|e| IpcError::Prepare(n, e)));
    if r.is_err() {
        sh.failed.store(true, Ordering::Release);
    }
    mem::prefault_stack();
    r.map(|()| gettid())
}

/// The sender's loop: wait until the receiver is ready, stamp, wake it; until
/// the receiver says it is done.
fn sender(clock: &SystemClock, sh: &Shared) {
    let mut round = 0u64;
    while sh.link.wait(Dir::Back, round).is_ok() && !sh.done.load(Ordering::Acquire) {
        sh.stamp.store(clock.now(), Ordering::Release);
        if sh.link.wake(Dir::There, round).is_err() {
            break;
        }
        round += 1;
    }
}

/// The receiver's loop: sleep to the next period, tell the sender it is
/// ready, wait to be woken, record; then tell the sender to end.
fn receiver(
    clock: &SystemClock,
    cfg: &IpcConfig,
    interval_ns: u64,
    tid: i32,
    sh: &Shared,
    stop: &AtomicBool,
) -> PairResult {
    let mut lat = TimeStats::new();
    let mut rtt = TimeStats::new();
    let (mut overruns, mut round, mut sum) = (0u64, 0u64, 0u64);
    sh.live.publish(tid, 0, &lat.moments, 0, 0);
    let first = clock.now() + interval_ns;
    let end_at = (cfg.duration_ns > 0).then(|| first + cfg.duration_ns);
    let mut next = first;
    let mut end = PairEnd::Done;
    loop {
        if stop.load(Ordering::Relaxed) {
            end = PairEnd::Stopped;
            break;
        }
        if (cfg.loops > 0 && round >= cfg.loops) || end_at.is_some_and(|e| next >= e) {
            break;
        }
        match clock.sleep_until(next) {
            Ok(()) => {}
            Err(SleepError::Interrupted) => continue,
            Err(e) => {
                end = PairEnd::Clock(e);
                break;
            }
        }
        let ready = clock.now();
        if let Err(e) = sh.link.wake(Dir::Back, round) {
            end = PairEnd::Failed("wake", e);
            break;
        }
        if let Err(e) = sh.link.wait(Dir::There, round) {
            end = PairEnd::Failed("wait", e);
            break;
        }
        let now = clock.now();
        let latency = now.saturating_sub(sh.stamp.load(Ordering::Acquire));
        lat.record(latency, round, u64::MAX);
        rtt.record(now.saturating_sub(ready), round, u64::MAX);
        round += 1;
        next += interval_ns;
        while next <= now {
            overruns += 1;
            next += interval_ns;
        }
        sum = sum.wrapping_add(latency);
        sh.live.publish(tid, latency, &lat.moments, sum, overruns);
    }
    sh.done.store(true, Ordering::Release);
    // The last hand-over only tells the sender to end.
    if let (Err(e), false) = (
        sh.link.wake(Dir::Back, round),
        matches!(end, PairEnd::Failed(..)),
    ) {
        end = PairEnd::Failed("wake", e);
    }
    PairResult {
        latency: lat,
        round_trip: rtt,
        overruns,
        tids: (0, 0),
        end,
        perf: [None, None],
        elapsed_ns: clock.now().saturating_sub(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rt::sched::Policy;

    const TICK: Duration = Duration::from_millis(250);

    fn other() -> ThreadSetup {
        ThreadSetup {
            cpus: Vec::new(),
            policy: Policy::Other,
            priority: 0,
        }
    }

    fn cfg(mechanism: Mechanism, pi: bool, pairs: usize) -> IpcConfig {
        IpcConfig {
            mechanism,
            pi,
            loops: 25,
            duration_ns: 0,
            perf: false,
            pairs: (0..pairs)
                .map(|_| PairSpec {
                    sender: other(),
                    receiver: other(),
                    interval_ns: 200_000,
                })
                .collect(),
        }
    }

    #[test]
    fn every_mechanism_counts_every_wake_up() {
        let stop = AtomicBool::new(false);
        for (m, pi) in [
            (Mechanism::Mqueue, false),
            (Mechanism::Mutex, false),
            (Mechanism::Mutex, true),
            (Mechanism::Condvar, false),
            (Mechanism::Signal, false),
            (Mechanism::Sem, false),
            (Mechanism::Pipe, false),
            (Mechanism::Eventfd, false),
            (Mechanism::Futex, false),
        ] {
            let out = run(&cfg(m, pi, 2), &stop, TICK, &mut |_| {})
                .unwrap_or_else(|e| panic!("{m:?}: {e:?}"));
            assert_eq!(out.len(), 2);
            for r in out {
                assert_eq!(r.end, PairEnd::Done, "{m:?}");
                assert_eq!(r.latency.moments.count, 25, "{m:?}");
                assert_eq!(r.round_trip.moments.count, 25, "{m:?}");
                let l = &r.latency.moments;
                assert!(l.min <= l.max && l.max <= r.round_trip.moments.max, "{m:?}");
                assert!(r.tids.0 > 0 && r.tids.1 > 0 && r.tids.0 != r.tids.1);
            }
        }
    }

    #[test]
    fn asked_for_both_threads_count_their_switches() {
        let stop = AtomicBool::new(false);
        let mut c = cfg(Mechanism::Pipe, false, 1);
        c.perf = true;
        let out = run(&c, &stop, TICK, &mut |_| {}).unwrap();
        let clock = EVENTS.iter().position(|e| e.name == "task-clock").unwrap();
        for (side, p) in out[0].perf.iter().enumerate() {
            let (readings, (voluntary, _)) = p.expect("counters asked for");
            // Both threads sleep between hand-overs.
            assert!(voluntary > 0, "side {side}");
            match readings[clock] {
                Reading::Counted { value, .. } => assert!(value > 0),
                r => eprintln!("perf_event_open refused here: {r:?}"),
            }
        }
        let out = run(&cfg(Mechanism::Pipe, false, 1), &stop, TICK, &mut |_| {}).unwrap();
        assert_eq!(out[0].perf, [None, None]);
    }

    #[test]
    fn a_raised_stop_flag_ends_before_the_first_wake_up() {
        let stop = AtomicBool::new(true);
        let out = run(&cfg(Mechanism::Futex, false, 1), &stop, TICK, &mut |_| {}).unwrap();
        assert_eq!(out[0].end, PairEnd::Stopped);
        assert_eq!(out[0].latency.moments.count, 0);
    }

    #[test]
    fn a_refused_cpu_is_a_setup_error() {
        let mut c = cfg(Mechanism::Pipe, false, 1);
        c.pairs[0].receiver.cpus = vec![100_000];
        let stop = AtomicBool::new(false);
        assert!(matches!(
            run(&c, &stop, TICK, &mut |_| {}),
            Err(IpcError::Setup(0, Side::Receiver, SetupError::Affinity(_)))
        ));
    }
}
