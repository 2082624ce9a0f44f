//! The mutex bench: sysbench's `mutex` test, contention on randomly chosen locks.
//!
//! Each thread runs exactly one event: `locks` times it picks one of `mutexes`
//! mutexes at random, spins an empty loop of `loops` iterations (it holds an
//! empty volatile assembly block, a compiler barrier, so it can never be
//! optimised away), locks the mutex, increments the counter it guards, and
//! unlocks. The figure that matters
//! is the total time; the counters must add up to `threads × locks`. The event
//! checks the stop flag and the time limit every 16 locks, so Ctrl-C and `--time`
//! end it early (then fewer locks were taken: compare `ops_per_s`).

use super::pmutex::PthreadMutex;
use super::{EventCtl, EventError, Rng, Tally, Workload};
use std::sync::atomic::{AtomicU64, Ordering};

/// The mutex workload.
pub struct MutexBench {
    locks: u64,
    loops: u64,
    /// Each mutex and the counter it guards.
    mutexes: Vec<Slot>,
}

/// A mutex and the counter it guards, on cache lines of their own.
#[repr(align(128))]
struct Slot {
    m: PthreadMutex,
    count: AtomicU64,
}

/// A thread's state: its generator and whether its one event ran.
pub struct MutexThread {
    rng: Rng,
    done: bool,
}

impl MutexBench {
    /// `mutexes` mutexes (at least 1); each thread takes `locks` locks after
    /// spinning `loops` iterations before each.
    pub fn new(mutexes: usize, locks: u64, loops: u64) -> Self {
        MutexBench {
            locks,
            loops,
            mutexes: (0..mutexes.max(1))
                .map(|_| Slot {
                    m: PthreadMutex::new(),
                    count: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    /// The sum of the counters: the locks taken by all threads.
    pub fn increments(&self) -> u64 {
        self.mutexes
            .iter()
            .map(|s| {
                let _g = s.m.lock();
                s.count.load(Ordering::Relaxed)
            })
            .sum()
    }
}

impl Workload for MutexBench {
    type Thread = MutexThread;

    fn thread(&self, index: usize) -> MutexThread {
        MutexThread {
            rng: Rng::from_clock(index as u64),
            done: false,
        }
    }

    fn event(
        &self,
        t: &mut MutexThread,
        tally: &mut Tally,
        ctl: &EventCtl,
    ) -> Result<bool, EventError> {
        if t.done {
            return Ok(false);
        }
        t.done = true;
        let n = self.mutexes.len() as u64;
        for i in 0..self.locks {
            if i % 16 == 0 && i > 0 && ctl.should_stop() {
                break;
            }
            let Slot { m, count: c } = &self.mutexes[t.rng.below(n) as usize];
            for _ in 0..self.loops {
                // SAFETY: an empty assembly block runs no instruction and touches
                // nothing; being volatile, it keeps the optimiser from deleting
                // or shortening the loop.
                unsafe { std::arch::asm!("", options(nomem, nostack, preserves_flags)) };
            }
            let _g = m.lock();
            // A plain load and store (no atomic read-modify-write), like
            // sysbench's `global_var++`: the mutex alone keeps the count exact.
            c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            tally.ops += 1;
        }
        Ok(true)
    }
}

super::compiled_here!(MutexBench);

#[cfg(test)]
mod tests {
    use super::super::{test_run, ThreadStats};
    use super::*;

    #[test]
    fn one_event_per_thread_and_counters_add_up() {
        let w = MutexBench::new(16, 2000, 10);
        let out = test_run(&w, 4, 0, 0);
        let all = ThreadStats::total(&out.threads);
        assert_eq!(all.events(), 4);
        assert_eq!(all.tally.ops, 4 * 2000);
        assert_eq!(w.increments(), 4 * 2000);
    }
}
