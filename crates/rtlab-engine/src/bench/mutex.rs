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

use super::pmutex::Spaced;
use super::{EventCtl, EventError, Tally, Workload, Xoroshiro};
use std::cell::Cell;
use std::sync::atomic::AtomicU32;

/// The mutex workload.
pub struct MutexBench {
    locks: u64,
    /// Turns of the empty loop, a 32-bit count as sysbench's.
    loops: u32,
    mutexes: Spaced,
    /// sysbench's `global_var`, on a cache line of its own.
    count: Padded,
}

#[repr(align(128))]
struct Padded(AtomicU32);

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
            // sysbench's count is an `unsigned int`, as the loop's.
            mutexes: Spaced::new(mutexes.min(u32::MAX as usize)),
            count: Padded(AtomicU32::new(0)),
        }
    }

    /// What the loop reads from memory, with `left` locks to take.
    fn turn(&self, left: u32) -> Turn {
        Turn {
            left,
            loops: self.loops,
            mutexes: self.mutexes.len() as u32,
            _gap: 0,
            first: self.mutexes.first(),
            count: &self.count.0,
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
        let mut turn = self.turn(0);
        DRAWS.with(|d| d.set(t.rng.clone()));
        let mut left = self.locks;
        while left > 0 {
            let n = left.min(16);
            turn.left = n as u32;
            // SAFETY: `turn` holds this bench's mutexes (`first`, `mutexes`
            // of them, one slot of `Spaced` apart) and its counter.
            unsafe {
                #[cfg(target_arch = "x86_64")]
                x86_64::take(&mut turn);
                #[cfg(not(target_arch = "x86_64"))]
                portable::take(&mut turn);
            }
            tally.ops += n;
            left -= n;
            if left > 0 && ctl.should_stop() {
                break;
            }
        }
        t.rng = DRAWS.with(|d| d.replace(Xoroshiro::ZERO));
        Ok(true)
    }
}

super::compiled_here!(MutexBench);

/// What sysbench's loop reads from memory at every lock: the locks left (its
/// request's `nlocks`, counted down in memory), the turns of the empty loop,
/// the count of mutexes, where they start and the shared counter.
#[repr(C)]
struct Turn {
    left: u32,
    loops: u32,
    mutexes: u32,
    _gap: u32,
    first: *mut u8,
    count: *const AtomicU32,
}

thread_local! {
    /// The generator the draws take their numbers from, in thread-local
    /// memory as sysbench's.
    static DRAWS: Cell<Xoroshiro> = const { Cell::new(Xoroshiro::ZERO) };
}

/// sysbench's `sb_rand_uniform(a, b)`: a number in `a..=b` from a double
/// drawn with the thread's generator (its state loaded from and stored to
/// thread-local memory), out of line as sysbench's is: a call per lock.
#[inline(never)]
extern "C" fn uniform(a: u32, b: u32) -> u32 {
    // SAFETY: the thread's own generator; nothing else refers to it.
    let u = DRAWS.with(|d| unsafe { (*d.as_ptr()).unit_in_memory() });
    let x = f64::from(a) + u * f64::from(b.wrapping_sub(a).wrapping_add(1));
    // SAFETY: `x` is finite and in `[a, b + 1)`, below 2^32: exact as i64.
    unsafe { x.to_int_unchecked::<i64>() as u32 }
}

/// The locks as sysbench's compiled loop takes them on x86-64, instruction
/// for instruction (gcc 12 at -O2, sysbench 1.0.20): the draw is a call, the
/// mutex functions are called through the procedure linkage table, the counts
/// live in memory, and the empty loop reads its count at every turn (the
/// shape is the speed: on the machine of bench/RESULTS.md the same loop with
/// 64-bit registers runs its turns in half the time, and an unrolled one
/// faster still, which made rtlab's mutex events 1.5× sysbench's).
#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use super::{uniform, Turn};
    use std::mem::{offset_of, size_of};

    // The loop finds mutex `i` at `first + 37 * 8 * i`, sysbench's stride.
    const _: () = assert!(size_of::<super::super::pmutex::SpacedSlot>() == 296);

    /// Takes `turn.left` locks (at least one): each time draws a mutex, spins
    /// the empty loop, locks the mutex, adds one to the counter with a plain
    /// read-modify-write, no `lock` prefix (as sysbench's `global_var++`: its
    /// load and its store are each atomic on x86-64, the pair is not, and
    /// increments may be lost between threads) and unlocks it.
    ///
    /// # Safety
    /// `turn.first` starts `turn.mutexes` initialised mutexes 296 bytes apart
    /// that outlive the call, and `turn.count` is a valid counter.
    #[inline(always)]
    pub(super) unsafe fn take(turn: &mut Turn) {
        // SAFETY: the loop reads and writes `*turn`, calls `uniform` and the
        // pthread functions on the mutexes the caller vouches for, and adds
        // to the counter; it keeps its own values in callee-saved registers.
        unsafe {
            std::arch::asm!(
                // The loop on a 64-byte boundary and the empty loop 32 bytes
                // past one, as in sysbench's binary (see the cpu bench).
                "jmp 2f",
                ".p2align 6",
                "2:",
                "mov eax, dword ptr [r12 + {mutexes}]",
                "xor edi, edi",
                "lea esi, [rax - 1]",
                "call {uniform}",
                "mov edx, dword ptr [r12 + {loops}]",
                "test edx, edx",
                "je 4f",
                "xor ecx, ecx",
                ".p2align 4",
                "3:",
                "add ecx, 1",
                "cmp dword ptr [r12 + {loops}], ecx",
                "ja 3b",
                "4:",
                "mov esi, eax",
                "lea rdi, [rsi + rsi*8]",
                "lea r13, [rsi + rdi*4]",
                "mov rdi, qword ptr [r12 + {first}]",
                "shl r13, 3",
                "add rdi, r13",
                "call {lock}",
                "mov rdi, qword ptr [r12 + {first}]",
                "add dword ptr [r14], 1",
                "add rdi, r13",
                "call {unlock}",
                "mov eax, dword ptr [r12 + {left}]",
                "sub eax, 1",
                "mov dword ptr [r12 + {left}], eax",
                "jne 2b",
                left = const offset_of!(Turn, left),
                loops = const offset_of!(Turn, loops),
                mutexes = const offset_of!(Turn, mutexes),
                first = const offset_of!(Turn, first),
                uniform = sym uniform,
                lock = sym libc::pthread_mutex_lock,
                unlock = sym libc::pthread_mutex_unlock,
                in("r12") turn as *mut Turn,
                in("r14") turn.count,
                out("r13") _,
                clobber_abi("C"),
            );
        }
    }
}

/// The locks in Rust, for other machines: the same draws, loop, locks and
/// counter.
#[cfg(any(test, not(target_arch = "x86_64")))]
mod portable {
    use super::super::pmutex::SpacedSlot;
    use super::{spin, uniform, Turn};
    use std::sync::atomic::Ordering::Relaxed;

    /// As the x86-64 `take`.
    ///
    /// # Safety
    /// `turn.first` starts `turn.mutexes` initialised mutexes, one
    /// [`SpacedSlot`] apart, that outlive the call, and `turn.count` points
    /// to a live counter.
    pub(super) unsafe fn take(turn: &mut Turn) {
        let stride = std::mem::size_of::<SpacedSlot>();
        while turn.left > 0 {
            let i = uniform(0, turn.mutexes - 1) as usize;
            spin(&turn.loops);
            // SAFETY: mutex `i` is one of the caller's (see above).
            let m = unsafe { turn.first.add(i * stride) }.cast::<libc::pthread_mutex_t>();
            // SAFETY: an initialised mutex and a live counter (see above).
            unsafe {
                libc::pthread_mutex_lock(m);
                // A plain load and store, no atomic read-modify-write, as
                // sysbench's `global_var++`.
                let c = &*turn.count;
                c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
                libc::pthread_mutex_unlock(m);
            }
            turn.left -= 1;
        }
    }
}

/// sysbench's empty loop of `*loops` turns, as its compiler wrote it: a 32-bit
/// count (sysbench's `unsigned int`) goes up by one and is compared with the
/// count read from memory again (sysbench's `ck_pr_barrier` is a compiler
/// barrier), one taken branch per turn, the loop on a 16-byte boundary.
#[cfg(any(test, not(target_arch = "x86_64")))]
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
    use std::sync::atomic::Ordering;

    /// On x86-64 the locks are taken by sysbench's loop in assembly; other
    /// machines run the portable loop. Both take as many locks, count them
    /// and draw as many numbers from the thread's generator as sysbench's
    /// `sb_rand_uniform` would. (Which mutex each lock takes is not seen
    /// from here.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_assembly_and_the_portable_loops_take_as_many_locks_and_draws() {
        for (mutexes, loops) in [(1, 0), (16, 3), (4096, 0)] {
            let w = MutexBench::new(mutexes, 0, loops);
            let mut expected = Xoroshiro::new(5);
            for _ in 0..37 {
                expected.unit();
            }
            for asm in [true, false] {
                let mut turn = w.turn(37);
                DRAWS.with(|d| d.set(Xoroshiro::new(5)));
                // SAFETY: `turn` holds `w`'s mutexes and counter.
                unsafe {
                    match asm {
                        true => x86_64::take(&mut turn),
                        false => portable::take(&mut turn),
                    }
                }
                let mut left = DRAWS.with(|d| d.replace(Xoroshiro::ZERO));
                let what = format!("{mutexes} mutexes, assembly {asm}");
                assert_eq!(turn.left, 0, "{what}");
                assert_eq!(left.next_u64(), expected.clone().next_u64(), "{what}");
            }
            assert_eq!(w.count.0.load(Ordering::Relaxed), 2 * 37);
        }
    }

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
