//! The mutex bench: sysbench's `mutex` test, contention on randomly chosen locks.
//!
//! Each thread runs exactly one event: `locks` times it picks one of `mutexes`
//! mutexes at random (a double from xoroshiro128+ scaled to the count, as
//! sysbench draws it), spins an empty loop of `loops` iterations (written out
//! so it can never be optimised away or unrolled, reading its count at every
//! turn as sysbench's does), locks the mutex, increments the one counter all
//! threads share (as
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
    /// Turns of the empty loop, a 32-bit count as sysbench's.
    loops: u32,
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
    /// spinning `loops` iterations before each (at most 2^32 - 1, sysbench's
    /// `unsigned int`; more is taken as that).
    pub fn new(mutexes: usize, locks: u64, loops: u64) -> Self {
        MutexBench {
            locks,
            loops: u32::try_from(loops).unwrap_or(u32::MAX),
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
            spin(&self.loops);
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

/// sysbench's empty loop of `*loops` turns, as its compiler wrote it: a 32-bit
/// count (sysbench's `unsigned int`) goes up by one and is compared with the
/// count read from memory again (sysbench's `ck_pr_barrier` is a compiler
/// barrier), one taken branch per turn, the loop on a 16-byte boundary. The
/// shape is the speed: on the machine of bench/RESULTS.md the same loop with
/// 64-bit registers runs its turns in half the time, and an unrolled one
/// faster still, which made rtlab's mutex events 1.5× sysbench's.
#[inline(always)]
fn spin(loops: &u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the block reads the 4 bytes of `*loops` (a valid, aligned
    // reference) and changes a scratch register and the flags; no stack.
    unsafe {
        std::arch::asm!(
            "cmp dword ptr [{n}], 0",
            "je 3f",
            ".p2align 4",
            "2:",
            "add {i:e}, 1",
            "cmp dword ptr [{n}], {i:e}",
            "ja 2b",
            "3:",
            n = in(reg) loops,
            i = inout(reg) 0u32 => _,
            options(nostack, readonly),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    for _ in 0..*loops {
        // SAFETY: an empty assembly block runs no instruction; it keeps the
        // optimiser from deleting the loop.
        unsafe { std::arch::asm!("", options(nomem, nostack, preserves_flags)) };
    }
}

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
