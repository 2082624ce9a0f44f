//! POSIX mutexes with default attributes, the locks sysbench's `threads` and
//! `mutex` tests use, laid out in memory as sysbench lays out its own. Unlike
//! `std::sync::Mutex` they do not spin before sleeping, so contention behaves
//! as in sysbench; and where neighbouring mutexes share a cache line in
//! sysbench, they share one here, so that contention costs the same.
//!
//! Each mutex is set up with `pthread_mutex_init(3)` in a block from `malloc`,
//! as sysbench sets up its own, so that every page of the block has been
//! written (and faulted in) before the run starts. A block of zeros would do
//! for the mutexes themselves (`PTHREAD_MUTEX_INITIALIZER` is all zeros), but
//! the optimiser makes an allocation filled with zeros a zeroed allocation,
//! and a large one is fresh pages that nothing has touched: the first lock on
//! each page then takes page faults inside the timed run. For the `mutex`
//! test's 4 096 mutexes (1.2 MB) that was some 600 faults and a millisecond,
//! 5 % of a run of two million locks.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// One mutex followed by `PAD` bytes, as sysbench declares its lock structs
/// (`PAD` 0: a bare `pthread_mutex_t`).
#[repr(C)]
pub(super) struct Slot<const PAD: usize> {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    /// Never read or written, as sysbench's.
    _pad: MaybeUninit<[u8; PAD]>,
}

/// `n` mutexes in one heap block, one after the other: the `threads` test's
/// array of bare mutexes ([`Bare`]), or the `mutex` test's array of mutexes
/// each followed by 256 bytes ([`Spaced`]).
pub struct PthreadMutexes<const PAD: usize> {
    slots: Box<[Slot<PAD>]>,
}

/// sysbench's `threads` test: bare mutexes, 40 bytes apart on Linux x86-64,
/// so that neighbours share cache lines.
pub type Bare = PthreadMutexes<0>;

/// sysbench's `mutex` test: each mutex followed by 256 bytes of padding.
pub type Spaced = PthreadMutexes<256>;

/// One mutex of [`Spaced`] with its padding.
pub(super) type SpacedSlot = Slot<256>;

// SAFETY: pthread mutexes exist to be shared between threads; they are only
// used through pthread_mutex_lock/unlock, which synchronise.
unsafe impl<const PAD: usize> Send for PthreadMutexes<PAD> {}
// SAFETY: as above.
unsafe impl<const PAD: usize> Sync for PthreadMutexes<PAD> {}

/// Holds one lock; unlocks it when dropped. Not `Send`: a pthread mutex must
/// be unlocked by the thread that locked it.
pub struct PthreadGuard<'a>(*mut libc::pthread_mutex_t, PhantomData<&'a ()>);

impl<const PAD: usize> PthreadMutexes<PAD> {
    /// `n` unlocked mutexes with default attributes, at least one. They
    /// never move: the block is allocated once and never grows.
    pub fn new(n: usize) -> Self {
        let mut slots = Box::<[Slot<PAD>]>::new_uninit_slice(n.max(1));
        for slot in slots.iter_mut() {
            // SAFETY: `slot` is this block's memory for one `Slot`; its
            // mutex (offset 0 of a `repr(C)` struct) is a `pthread_mutex_t`
            // in an `UnsafeCell` (same layout), which pthread_mutex_init(3)
            // writes in full. With default attributes it cannot fail.
            unsafe {
                let mutex = UnsafeCell::raw_get(&raw mut (*slot.as_mut_ptr()).mutex);
                libc::pthread_mutex_init(mutex, std::ptr::null());
            }
        }
        // SAFETY: every slot's mutex was initialised above; the padding may
        // stay uninitialised.
        PthreadMutexes {
            slots: unsafe { slots.assume_init() },
        }
    }

    /// How many mutexes there are (at least one).
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Where the first mutex starts: the others follow it, each
    /// `size_of::<Slot<PAD>>()` bytes after the one before, for code that
    /// locks them through the pthread functions directly.
    pub(super) fn first(&self) -> *mut u8 {
        self.slots[0].mutex.get().cast()
    }

    /// Locks mutex `i` (below [`Self::len`]), waiting as long as needed.
    #[inline]
    pub(super) fn lock(&self, i: usize) -> PthreadGuard<'_> {
        let m = self.slots[i].mutex.get();
        // SAFETY: pthread_mutex_lock(3) on an initialised mutex that never
        // moves (the block is not resized). A default mutex only fails on
        // EDEADLK-style misuse, which the guard's scoping rules out.
        unsafe { libc::pthread_mutex_lock(m) };
        PthreadGuard(m, PhantomData)
    }
}

impl Drop for PthreadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: pthread_mutex_unlock(3) of a mutex this guard locked, on
        // the thread that locked it (the guard is not Send), while the block
        // it lives in is borrowed.
        unsafe { libc::pthread_mutex_unlock(self.0) };
    }
}

impl<const PAD: usize> Drop for PthreadMutexes<PAD> {
    fn drop(&mut self) {
        for s in self.slots.iter() {
            // SAFETY: pthread_mutex_destroy(3) on an unlocked mutex: no guard
            // can outlive the block it borrows.
            unsafe { libc::pthread_mutex_destroy(s.mutex.get()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn each_mutex_excludes_other_threads() {
        let m = Bare::new(2);
        let c = [AtomicU64::new(0), AtomicU64::new(0)];
        std::thread::scope(|s| {
            for t in 0..4 {
                let (m, c) = (&m, &c);
                s.spawn(move || {
                    for _ in 0..10_000 {
                        let _g = m.lock(t % 2);
                        // A non-atomic read-modify-write: only exclusion
                        // keeps it exact.
                        let c = &c[t % 2];
                        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(c.map(|c| c.load(Ordering::Relaxed)), [20_000, 20_000]);
    }

    /// Every page that holds a mutex is in memory once the mutexes exist,
    /// so that no lock in a timed run takes a page fault (sysbench's
    /// `pthread_mutex_init` loop writes every page of its own block).
    #[test]
    fn every_page_of_the_block_is_resident_before_the_first_lock() {
        // 41 MB: above the largest mmap threshold glibc ever sets (32 MiB),
        // so the block is always fresh pages from the kernel, whatever other
        // tests freed before, as the `mutex` test's 1.2 MB are in a run.
        let m = Spaced::new(140_000);
        // Up to the end of the last mutex: the padding after it is never
        // written, here or in sysbench.
        let len = (m.len() - 1) * std::mem::size_of::<SpacedSlot>()
            + std::mem::size_of::<libc::pthread_mutex_t>();
        assert_eq!(super::super::pages_not_resident(m.first(), len), 0);
    }

    #[test]
    fn the_mutexes_lie_as_sysbench_lays_them_out() {
        fn gap<const PAD: usize>(m: &PthreadMutexes<PAD>) -> usize {
            m.slots[1].mutex.get() as usize - m.slots[0].mutex.get() as usize
        }
        let size = std::mem::size_of::<libc::pthread_mutex_t>();
        assert_eq!(gap(&Bare::new(3)), size);
        assert_eq!(gap(&Spaced::new(3)), size + 256);
        assert_eq!((Bare::new(3).len(), Bare::new(0).len()), (3, 1));
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        assert_eq!(size, 40);
    }
}
