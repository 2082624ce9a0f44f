//! The mutex bench: sysbench's `mutex` test, contention on randomly chosen locks.
//!
//! Each thread runs exactly one event: `locks` times it picks one of `mutexes`
//! mutexes at random (a double from xoroshiro128+ scaled to the count, as
//! sysbench draws it), spins an empty loop of `loops` iterations (it holds an
//! empty assembly block, a compiler barrier, so it can never be optimised
//! away, and reads its count at every turn as sysbench's does), locks the mutex, increments the one counter all threads share (as
//! sysbench's `global_var`: each thread holds some mutex, not the same one, so
//! the cache line moves between CPUs and increments may be lost, exactly as
//! there), and unlocks. The figure that matters is the total time; the locks
//! each thread counted add up to `threads × locks`. The event checks the stop
//! flag (and a time limit, when one is set) every 16 locks, so Ctrl-C and
//! `--time` end it early (then fewer locks were taken: compare `ops_per_s`).

use super::pmutex::PthreadMutex;
use super::{EventCtl, EventError, Tally, Workload, Xoroshiro};
use std::sync::atomic::{AtomicU64, Ordering};

/// The mutex workload.
pub struct MutexBench {
    locks: u64,
    loops: u64,
    mutexes: Vec<PthreadMutex>,
    /// sysbench's `global_var`, on a cache line of its own.
    count: Padded,
}

#[repr(align(128))]
struct Padded(AtomicU64);

/// A thread's state: its generator and whether its one event ran.
pub struct MutexThread {
    rng: Xoroshiro,
    done: bool,
}

impl MutexBench {
    /// `mutexes` mutexes (at least 1); each thread takes `locks` locks after
    /// spinning `loops` iterations before each.
    pub fn new(mutexes: usize, locks: u64, loops: u64) -> Self {
        MutexBench {
            locks,
            loops,
            mutexes: (0..mutexes.max(1)).map(|_| PthreadMutex::new()).collect(),
            count: Padded(AtomicU64::new(0)),
        }
    }
}

impl Workload for MutexBench {
    type Thread = MutexThread;

    fn thread(&self, index: usize) -> MutexThread {
        MutexThread {
            rng: Xoroshiro::from_clock(index as u64),
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
        let n = self.mutexes.len() as f64;
        let c = &self.count.0;
        for i in 0..self.locks {
            if i % 16 == 0 && i > 0 && ctl.should_stop() {
                break;
            }
            // Truncated to 32 bits as sysbench's `unsigned int`: the product
            // is below the count of mutexes.
            let m = &self.mutexes[(t.rng.unit() * n) as u32 as usize];
            let mut i = 0;
            while i < self.loops {
                // SAFETY: an empty assembly block runs no instruction. The
                // optimiser must assume it touches memory (sysbench's
                // `ck_pr_barrier`), so the loop stays and reads its count
                // again at every turn, as sysbench's does.
                unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
                i += 1;
            }
            let _g = m.lock();
            // A plain load and store (no atomic read-modify-write), like
            // sysbench's `global_var++`.
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
    fn one_event_per_thread_and_the_locks_add_up() {
        let w = MutexBench::new(16, 2000, 10);
        let out = test_run(&w, 4, 0, 0);
        let all = ThreadStats::total(&out.threads);
        assert_eq!(all.events(), 4);
        assert_eq!(all.tally.ops, 4 * 2000);
        // Increments under different mutexes may be lost, as in sysbench.
        let counted = w.count.0.load(Ordering::Relaxed);
        assert!((1..=4 * 2000).contains(&counted), "{counted}");
        // One thread alone loses none.
        let w = MutexBench::new(16, 2000, 0);
        test_run(&w, 1, 0, 0);
        assert_eq!(w.count.0.load(Ordering::Relaxed), 2000);
    }
}
