//! The threads bench: sysbench's `threads` test, scheduler and mutex hand-over.
//!
//! Event number `n` (a 32-bit counter shared by all threads, as sysbench's)
//! takes mutex `n mod locks` and then `yields` times locks it, calls
//! `sched_yield(2)` while holding it, and unlocks it. With more threads than
//! mutexes, threads queue on the same mutex and the scheduler hands the CPU
//! around on every yield.

use super::pmutex::Bare;
use super::{EventCtl, EventError, Tally, Workload};
use std::sync::atomic::{AtomicU32, Ordering};

/// The threads workload.
pub struct Threads {
    yields: u32,
    locks: Bare,
    next: AtomicU32,
}

impl Threads {
    /// `locks` mutexes (at least 1, at most 2^32) and `yields`
    /// lock/yield/unlock rounds per event.
    pub fn new(yields: u32, locks: usize) -> Self {
        Threads {
            yields,
            locks: Bare::new(locks),
            next: AtomicU32::new(0),
        }
    }
}

impl Workload for Threads {
    type Thread = ();
    fn thread(&self, _: usize) {}

    fn event(&self, _: &mut (), tally: &mut Tally, _: &EventCtl) -> Result<bool, EventError> {
        // A wrapping 32-bit counter and a 32-bit remainder, as in sysbench.
        let n = self.next.fetch_add(1, Ordering::Relaxed) % self.locks.len() as u32;
        for _ in 0..self.yields {
            let guard = self.locks.lock(n as usize);
            // sched_yield(2) on Linux.
            std::thread::yield_now();
            drop(guard);
        }
        tally.ops += u64::from(self.yields);
        Ok(true)
    }
}

super::compiled_here!(Threads);

#[cfg(test)]
mod tests {
    use super::super::{test_run, ThreadStats};
    use super::*;

    #[test]
    fn every_event_does_its_yields() {
        let w = Threads::new(50, 2);
        let out = test_run(&w, 3, 0, 60);
        let all = ThreadStats::total(&out.threads);
        assert_eq!(all.events(), 60);
        assert_eq!(all.tally.ops, 60 * 50);
        assert_eq!(w.next.load(Ordering::Relaxed), 60);
    }
}
