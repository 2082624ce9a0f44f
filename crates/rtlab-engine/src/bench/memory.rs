//! The memory bench: sysbench's `memory` test.
//!
//! One event moves one block of `block_size` bytes word by word (machine words,
//! sysbench's `size_t`): `seq` walks the block in order, `rnd` touches as many
//! words at uniformly random indices; `write` stores and `read` loads. With
//! `global` scope all threads share one block, with `local` each has its own. As
//! in sysbench the run also ends after `total_size` bytes over all threads, each
//! thread moving an equal share (the remainder of the division is not moved).
//! Words are relaxed atomics: one plain load or store each, which the compiler
//! may neither drop nor merge, and shared blocks stay free of data races.

use super::{EventCtl, EventError, Rng, Tally, Workload};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bytes per word moved.
pub const WORD: u64 = std::mem::size_of::<usize>() as u64;

/// Load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oper {
    /// Load every word.
    Read,
    /// Store every word.
    Write,
}

/// Order of the words within a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// In address order.
    Seq,
    /// At random indices.
    Rnd,
}

/// Who shares a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One block for all threads.
    Global,
    /// One block per thread.
    Local,
}

/// The parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Bytes per event; a multiple of [`WORD`], at least one word.
    pub block_size: u64,
    /// Stop after this many bytes over all threads (0: no limit).
    pub total_size: u64,
    /// Load or store.
    pub oper: Oper,
    /// Sequential or random.
    pub access: Access,
    /// Shared or per-thread block.
    pub scope: Scope,
}

/// The memory workload, with every block allocated and touched.
pub struct Memory {
    cfg: MemoryConfig,
    threads: u64,
    global: Option<Box<[AtomicUsize]>>,
    /// Local scope: each thread's block, taken by [`Workload::thread`].
    local: Mutex<Vec<Option<Box<[AtomicUsize]>>>>,
}

/// The blocks could not be allocated: the system refused `bytes` bytes. The
/// caller should have checked the size against the memory available first;
/// this catches sizes no address space holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockAllocError {
    /// Bytes asked for, over all blocks.
    pub bytes: u64,
}

impl std::fmt::Display for BlockAllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot allocate {} bytes of memory blocks; give a smaller --block-size or fewer threads",
            self.bytes
        )
    }
}

impl std::error::Error for BlockAllocError {}

/// A thread's state: its own block (local scope), random generator, and the
/// blocks it may still move.
pub struct MemoryThread {
    local: Option<Box<[AtomicUsize]>>,
    rng: Rng,
    left: u64,
}

/// One block of `bytes` (a multiple of [`WORD`]), or `None` when the system
/// refuses the memory: asked for fallibly, so that a size from the command line
/// cannot abort the process.
fn block(bytes: u64) -> Option<Box<[AtomicUsize]>> {
    let words = usize::try_from(bytes / WORD).ok()?;
    let mut v: Vec<AtomicUsize> = Vec::new();
    v.try_reserve_exact(words).ok()?;
    // Zeroed and written once, so every page is mapped before the start.
    v.extend((0..words).map(|_| AtomicUsize::new(0)));
    Some(v.into_boxed_slice())
}

impl Memory {
    /// Allocates and touches every block before the run: the shared one (global
    /// scope) or one per thread (local scope). `threads` share `total_size` in
    /// equal parts, as in sysbench.
    pub fn new(cfg: MemoryConfig, threads: usize) -> Result<Self, BlockAllocError> {
        let threads = threads.max(1);
        let blocks = if cfg.scope == Scope::Global {
            1
        } else {
            threads
        };
        let refused = BlockAllocError {
            bytes: cfg.block_size.saturating_mul(blocks as u64),
        };
        let mut all = Vec::new();
        all.try_reserve_exact(blocks).map_err(|_| refused)?;
        for _ in 0..blocks {
            all.push(Some(block(cfg.block_size).ok_or(refused)?));
        }
        let (global, local) = match cfg.scope {
            Scope::Global => (all.pop().flatten(), Vec::new()),
            Scope::Local => (None, all),
        };
        Ok(Memory {
            global,
            local: Mutex::new(local),
            threads: threads as u64,
            cfg,
        })
    }
}

impl Workload for Memory {
    type Thread = MemoryThread;

    fn thread(&self, index: usize) -> MemoryThread {
        // Called once per index before the start barrier: taking the block
        // out of the lock is not on the measured path.
        let local = match self.local.lock() {
            Ok(mut blocks) => blocks.get_mut(index).and_then(Option::take),
            Err(poisoned) => poisoned.into_inner().get_mut(index).and_then(Option::take),
        };
        MemoryThread {
            local,
            rng: Rng::from_clock(index as u64),
            left: match self.cfg.total_size {
                0 => u64::MAX,
                t => t / self.cfg.block_size / self.threads,
            },
        }
    }

    #[inline]
    fn event(
        &self,
        t: &mut MemoryThread,
        tally: &mut Tally,
        _: &EventCtl,
    ) -> Result<bool, EventError> {
        let size = self.cfg.block_size;
        if t.left == 0 {
            return Ok(false);
        }
        t.left -= 1;
        let buf: &[AtomicUsize] = match (&t.local, &self.global) {
            (Some(b), _) | (None, Some(b)) => b,
            (None, None) => unreachable!("one of the blocks exists for each scope"),
        };
        let n = buf.len() as u64;
        match (self.cfg.access, self.cfg.oper) {
            (Access::Seq, Oper::Write) => write_seq(buf),
            (Access::Seq, Oper::Read) => {
                black_box(read_seq(buf));
            }
            (Access::Rnd, Oper::Write) => {
                for i in 0..n as usize {
                    buf[t.rng.below(n) as usize].store(i, Ordering::Relaxed);
                }
            }
            (Access::Rnd, Oper::Read) => {
                let mut acc = 0usize;
                for _ in 0..n {
                    acc ^= buf[t.rng.below(n) as usize].load(Ordering::Relaxed);
                }
                black_box(acc);
            }
        }
        match self.cfg.oper {
            Oper::Read => tally.bytes_read += size,
            Oper::Write => tally.bytes_written += size,
        }
        tally.ops += 1;
        Ok(true)
    }
}

/// Stores the words left (as sysbench does) into every word of `buf` in
/// order, eight words per turn of the loop as sysbench's compiled loop does
/// them: at one word per turn, the loop's own cost caps the stores at about one
/// per cycle, which is below what the memory takes here (0.94× sysbench's
/// MiB/s with a 64 MiB block).
#[inline(always)]
fn write_seq(buf: &[AtomicUsize]) {
    const R: Ordering = Ordering::Relaxed;
    let (eights, rest) = buf.as_chunks::<8>();
    let mut left = buf.len();
    for w in eights {
        w[0].store(left, R);
        w[1].store(left - 1, R);
        w[2].store(left - 2, R);
        w[3].store(left - 3, R);
        w[4].store(left - 4, R);
        w[5].store(left - 5, R);
        w[6].store(left - 6, R);
        w[7].store(left - 7, R);
        left -= 8;
    }
    for w in rest {
        w.store(left, R);
        left -= 1;
    }
}

/// Loads every word of `buf` in order, eight per turn of the loop (see
/// [`write_seq`]); their XOR, so that no load can be dropped.
#[inline(always)]
fn read_seq(buf: &[AtomicUsize]) -> usize {
    const R: Ordering = Ordering::Relaxed;
    let (eights, rest) = buf.as_chunks::<8>();
    let mut acc = 0;
    for w in eights {
        acc ^= w[0].load(R) ^ w[1].load(R) ^ w[2].load(R) ^ w[3].load(R);
        acc ^= w[4].load(R) ^ w[5].load(R) ^ w[6].load(R) ^ w[7].load(R);
    }
    for w in rest {
        acc ^= w.load(R);
    }
    acc
}

super::compiled_here!(Memory);

/// One CPU cache, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    /// 1, 2, 3.
    pub level: u32,
    /// `Data`, `Unified` (instruction caches are left out).
    pub kind: String,
    /// Bytes.
    pub size: u64,
}

impl Cache {
    /// `L1d`, `L2`, `L3`.
    pub fn name(&self) -> String {
        if self.kind == "Data" {
            format!("L{}d", self.level)
        } else {
            format!("L{}", self.level)
        }
    }
}

/// Parses a sysfs cache size (`32K`, `512K`, `32768K`, `8M`).
fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The data and unified caches of CPU 0, smallest level first, from
/// `/sys/devices/system/cpu/cpu0/cache/index*/`.
pub fn caches() -> Vec<Cache> {
    let mut out = Vec::new();
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let kind = kind.trim().to_string();
        if kind == "Instruction" {
            continue;
        }
        if let (Ok(level), Some(size)) = (level.trim().parse(), parse_cache_size(&size)) {
            out.push(Cache { level, kind, size });
        }
    }
    out.sort_by_key(|c| (c.level, c.size));
    out
}

/// The smallest cache that holds `bytes`, if any does.
pub fn fits_in(caches: &[Cache], bytes: u64) -> Option<&Cache> {
    caches.iter().find(|c| bytes <= c.size)
}

/// A block size that no cache holds: the next power of two at or above four times
/// the largest cache, and at least 64 MiB.
pub fn block_beyond_caches(caches: &[Cache]) -> u64 {
    let largest = caches.iter().map(|c| c.size).max().unwrap_or(0);
    (largest.saturating_mul(4))
        .next_power_of_two()
        .max(64 << 20)
}

#[cfg(test)]
mod tests {
    use super::super::test_run;
    use super::*;

    fn cfg(oper: Oper, access: Access, scope: Scope) -> MemoryConfig {
        MemoryConfig {
            block_size: 1024,
            total_size: 1 << 20,
            oper,
            access,
            scope,
        }
    }

    #[test]
    fn total_size_bounds_the_events_in_every_mode() {
        for oper in [Oper::Read, Oper::Write] {
            for access in [Access::Seq, Access::Rnd] {
                for scope in [Scope::Global, Scope::Local] {
                    let w = Memory::new(cfg(oper, access, scope), 2).unwrap();
                    let out = test_run(&w, 2, 0, 0);
                    let all = super::super::ThreadStats::total(&out.threads);
                    assert_eq!(all.events(), 1024, "{oper:?} {access:?} {scope:?}");
                    let moved = all.tally.bytes_read + all.tally.bytes_written;
                    assert_eq!(moved, 1 << 20);
                }
            }
        }
    }

    #[test]
    fn a_block_no_address_space_holds_is_an_error_not_an_abort() {
        let huge = MemoryConfig {
            block_size: u64::MAX / WORD * WORD,
            ..cfg(Oper::Write, Access::Seq, Scope::Global)
        };
        let e = Memory::new(huge, 1).err().unwrap();
        assert_eq!(e.bytes, huge.block_size);
        let local = MemoryConfig {
            block_size: 1 << 62,
            ..cfg(Oper::Write, Access::Seq, Scope::Local)
        };
        assert_eq!(Memory::new(local, 4).err().unwrap().bytes, u64::MAX);
    }

    #[test]
    fn cache_sizes_and_suggestions() {
        assert_eq!(parse_cache_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_cache_size("8M"), Some(8 << 20));
        assert_eq!(parse_cache_size("x"), None);
        let c = vec![
            Cache {
                level: 1,
                kind: "Data".into(),
                size: 32 << 10,
            },
            Cache {
                level: 3,
                kind: "Unified".into(),
                size: 32 << 20,
            },
        ];
        assert_eq!(fits_in(&c, 1024).unwrap().name(), "L1d");
        assert_eq!(fits_in(&c, 1 << 20).unwrap().name(), "L3");
        assert!(fits_in(&c, 64 << 20).is_none());
        assert_eq!(block_beyond_caches(&c), 128 << 20);
        assert_eq!(block_beyond_caches(&[]), 64 << 20);
    }
}
