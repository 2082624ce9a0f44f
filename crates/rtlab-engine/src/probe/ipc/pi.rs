//! The priority-inversion check (what pi_stress provokes): a low, a medium and
//! a high priority thread on one CPU around one mutex.
//!
//! Each round the low thread takes the mutex and wakes the high one, which
//! preempts it and blocks on the mutex; the low thread then wakes the medium
//! one, which spins for a bounded time; the low thread works a little and lets
//! the mutex go. Without priority inheritance the medium thread preempts the
//! low one while the high one waits: the high thread is blocked behind a
//! thread of lower priority that does not even use the mutex. With
//! `PTHREAD_PRIO_INHERIT` the low thread runs at the high priority while it
//! holds the mutex, and the medium one only runs once the high one has it.

use super::super::net::client::{SetupError, ThreadSetup};
use crate::rt::clock::{Clock, ClockId, SystemClock};
use crate::rt::ipc::{Gate, RawMutex};
use crate::rt::mem;
use crate::rt::sched::Policy;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// One check: rounds of the three threads, with or without inheritance.
#[derive(Debug, Clone, Copy)]
pub struct PiConfig {
    /// The CPU all three threads run on.
    pub cpu: usize,
    /// Priority inheritance on the mutex.
    pub pi: bool,
    /// Rounds.
    pub rounds: u32,
    /// SCHED_FIFO priorities of the low, medium and high threads.
    pub priorities: [i32; 3],
    /// How long the low thread works while holding the mutex (ns).
    pub hold_ns: u64,
    /// How long the medium thread spins (ns): the most a round can be delayed.
    pub spin_ns: u64,
    /// Pause between rounds, when no thread of the check runs (ns).
    pub gap_ns: u64,
}

/// What one round saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PiRound {
    /// How long the high thread waited for the mutex (ns).
    pub wait_ns: u64,
    /// How long the low thread held the mutex (ns).
    pub held_ns: u64,
    /// The medium thread ran while the high one waited: an inversion.
    pub inverted: bool,
}

/// Why the check could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiError {
    /// The mutex could not be made (errno).
    Mutex(i32),
    /// A thread could not be pinned or scheduled.
    Setup(SetupError),
    /// A round did not end within a second (the threads were starved).
    Stalled(u32),
}

/// Stamps of the current round, each written by one thread.
#[derive(Default)]
struct Stamps {
    want: AtomicU64,
    got: AtomicU64,
    locked: AtomicU64,
    unlocked: AtomicU64,
    medium: AtomicU64,
}

struct Shared {
    mutex: Box<RawMutex>,
    gates: [Gate; 3],
    quit: AtomicBool,
    failed: AtomicBool,
    ended: AtomicU32,
    stamps: Stamps,
}

const LOW: usize = 0;
const MEDIUM: usize = 1;
const HIGH: usize = 2;

/// Runs the check; the rounds it completed, in order (fewer when `stop` was
/// raised).
pub fn run(cfg: &PiConfig, stop: &AtomicBool) -> Result<Vec<PiRound>, PiError> {
    let sh = Shared {
        mutex: RawMutex::new(cfg.pi).map_err(PiError::Mutex)?,
        gates: Default::default(),
        quit: AtomicBool::new(false),
        failed: AtomicBool::new(false),
        ended: AtomicU32::new(0),
        stamps: Stamps::default(),
    };
    let ready = AtomicU32::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|role| {
                let (sh, ready) = (&sh, &ready);
                std::thread::Builder::new()
                    .name(format!("rtlab-pi-{}", ["low", "medium", "high"][role]))
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        let setup = ThreadSetup {
                            cpus: vec![cfg.cpu],
                            policy: Policy::Fifo,
                            priority: cfg.priorities[role],
                        };
                        let r = setup.apply();
                        if r.is_err() {
                            sh.failed.store(true, Ordering::Release);
                        }
                        mem::prefault_stack();
                        ready.fetch_add(1, Ordering::AcqRel);
                        if r.is_ok() {
                            worker(role, cfg, sh);
                        }
                        r
                    })
                    .expect("spawning a pi-check thread")
            })
            .collect();
        while ready.load(Ordering::Acquire) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut out = Vec::with_capacity(cfg.rounds as usize);
        let mut err = None;
        if !sh.failed.load(Ordering::Acquire) {
            err = rounds(cfg, &sh, stop, &mut out).err();
        }
        sh.quit.store(true, Ordering::Release);
        for g in &sh.gates {
            g.open(u32::MAX);
        }
        for h in handles {
            if let Err(e) = h.join().expect("pi-check thread panicked") {
                err = err.or(Some(PiError::Setup(e)));
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Starts each round, waits for its three threads, and reads what they saw.
fn rounds(
    cfg: &PiConfig,
    sh: &Shared,
    stop: &AtomicBool,
    out: &mut Vec<PiRound>,
) -> Result<(), PiError> {
    for r in 1..=cfg.rounds {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(Duration::from_nanos(cfg.gap_ns));
        sh.gates[LOW].open(r);
        let mut waited = 0;
        while sh.ended.load(Ordering::Acquire) < 3 * r {
            if waited >= 1000 {
                return Err(PiError::Stalled(r));
            }
            std::thread::sleep(Duration::from_millis(1));
            waited += 1;
        }
        let st = &sh.stamps;
        let (want, got) = (
            st.want.load(Ordering::Acquire),
            st.got.load(Ordering::Acquire),
        );
        let medium = st.medium.load(Ordering::Acquire);
        out.push(PiRound {
            wait_ns: got.saturating_sub(want),
            held_ns: st
                .unlocked
                .load(Ordering::Acquire)
                .saturating_sub(st.locked.load(Ordering::Acquire)),
            inverted: medium >= want && medium < got,
        });
    }
    Ok(())
}

fn spin(clock: &SystemClock, ns: u64) {
    let end = clock.now() + ns;
    while clock.now() < end {
        std::hint::spin_loop();
    }
}

/// One thread's rounds, until the check ends.
fn worker(role: usize, cfg: &PiConfig, sh: &Shared) {
    let clock = SystemClock::new(ClockId::Monotonic);
    let st = &sh.stamps;
    let mut round = 1;
    loop {
        sh.gates[role].wait_for(round);
        if sh.quit.load(Ordering::Acquire) {
            return;
        }
        match role {
            LOW => {
                let _ = sh.mutex.lock();
                st.locked.store(clock.now(), Ordering::Release);
                // The high thread preempts here and blocks on the mutex.
                sh.gates[HIGH].open(round);
                // Without inheritance, the medium thread preempts here.
                sh.gates[MEDIUM].open(round);
                spin(&clock, cfg.hold_ns);
                st.unlocked.store(clock.now(), Ordering::Release);
                let _ = sh.mutex.unlock();
            }
            MEDIUM => {
                st.medium.store(clock.now(), Ordering::Release);
                spin(&clock, cfg.spin_ns);
            }
            _ => {
                st.want.store(clock.now(), Ordering::Release);
                let _ = sh.mutex.lock();
                st.got.store(clock.now(), Ordering::Release);
                let _ = sh.mutex.unlock();
            }
        }
        sh.ended.fetch_add(1, Ordering::AcqRel);
        round += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pi: bool) -> Vec<PiRound> {
        let cfg = PiConfig {
            cpu: 1 % std::thread::available_parallelism().map_or(1, |n| n.get()),
            pi,
            rounds: 5,
            priorities: [10, 20, 30],
            hold_ns: 100_000,
            spin_ns: 1_000_000,
            gap_ns: 10_000_000,
        };
        run(&cfg, &AtomicBool::new(false)).expect("the check runs")
    }

    #[test]
    #[ignore = "needs root: SCHED_FIFO threads"]
    fn inheritance_removes_every_inversion_and_its_absence_shows_them() {
        let on = check(true);
        assert_eq!(on.len(), 5);
        assert_eq!(on.iter().filter(|r| r.inverted).count(), 0, "{on:?}");
        let off = check(false);
        assert_eq!(off.len(), 5);
        // One CPU, FIFO priorities: the medium thread preempts the low one
        // whenever it is woken while the low one runs at its own priority.
        assert!(off.iter().any(|r| r.inverted), "{off:?}");
        for r in on.iter().chain(&off) {
            assert!(r.wait_ns > 0 && r.held_ns > 0, "{r:?}");
        }
    }
}
