//! The memory bench: sysbench's `memory` test, and a bandwidth mode of its own.
//!
//! One event moves one block of `block_size` bytes. With `global` scope all
//! threads share one block, with `local` each has its own; as in sysbench the
//! run also ends after `total_size` bytes over all threads, each thread moving
//! an equal share (`total_size / block_size / threads` blocks; the remainder
//! is not moved). Words are relaxed atomics: one plain load or store each,
//! which the compiler may neither drop nor merge (sysbench uses
//! ConcurrencyKit's loads and stores for the same reason), and shared blocks
//! stay free of data races.
//!
//! [`Method::Sysbench`] does sysbench 1.0's work per word (`size_t`):
//!
//! | access | `write` | `read` | `none` |
//! |--------|---------|--------|--------|
//! | `seq` | stores, in address order, the number of words from each word to the end of the block | loads each word in order | walks the words without touching them |
//! | `rnd` | as many times as the block has words: draws a double in `[0, 1)` from xoroshiro128+, scales it to a word index and stores the byte count so far there | the same draw, and loads the word | the draw only |
//!
//! with sysbench's bookkeeping around each event ([`Accounting::Sysbench`]).
//! Its random words may repeat and miss words, and its `seq` loop costs more
//! instructions per word than the memory takes on most machines, so its MiB/s
//! measure its loop as much as the memory. [`Method::Bandwidth`] moves every
//! word of the block exactly once per event, as fast as the CPU issues the
//! accesses (`seq`: eight words per turn of the loop; `rnd`: a full-period
//! walk over the words in an order no prefetcher follows), with the lean
//! bookkeeping ([`Accounting::Lean`]): the memory's speed, not sysbench's.

use super::{Accounting, EventCtl, EventError, Tally, Workload, Xoroshiro};
use crate::load::sys::Mapping;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bytes per word moved.
pub const WORD: u64 = std::mem::size_of::<usize>() as u64;

const R: Ordering = Ordering::Relaxed;

/// Load, store, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oper {
    /// Load every word.
    Read,
    /// Store every word.
    Write,
    /// Touch no word: only the loop (and, `rnd`, the random draws) runs.
    None,
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

/// Whose work an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// sysbench 1.0's, word for word, with its bookkeeping per event.
    Sysbench,
    /// Every word once per event, as fast as the CPU issues the accesses, with
    /// the lean bookkeeping. `Oper::None` has no meaning here.
    Bandwidth,
}

/// The parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Bytes per event; a multiple of [`WORD`], at least one word.
    pub block_size: u64,
    /// Stop after this many bytes over all threads (0: no limit).
    pub total_size: u64,
    /// Load, store or neither.
    pub oper: Oper,
    /// Sequential or random.
    pub access: Access,
    /// Shared or per-thread block.
    pub scope: Scope,
    /// sysbench's work or the bandwidth mode's.
    pub method: Method,
    /// Blocks from the HugeTLB pool (huge pages reserved beforehand, as
    /// sysbench's `--memory-hugetlb`) instead of ordinary pages.
    pub hugetlb: bool,
}

impl MemoryConfig {
    /// The blocks a run of `threads` threads maps: one (global scope) or one
    /// per thread.
    pub fn blocks(&self, threads: usize) -> usize {
        match self.scope {
            Scope::Global => 1,
            Scope::Local => threads.max(1),
        }
    }
}

/// The memory workload, with every block allocated and touched.
pub struct Memory {
    cfg: MemoryConfig,
    threads: u64,
    global: Option<Block>,
    /// Local scope: each thread's block, taken by [`Workload::thread`].
    local: Mutex<Vec<Option<Block>>>,
}

/// The blocks could not be allocated: the system refused `bytes` bytes. The
/// caller should have checked the size against the memory available (or the
/// HugeTLB pool) first; this catches sizes no address space holds, and a pool
/// emptied meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockAllocError {
    /// Bytes asked for, over all blocks.
    pub bytes: u64,
    /// Asked of the HugeTLB pool.
    pub hugetlb: bool,
}

impl std::fmt::Display for BlockAllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.hugetlb {
            write!(
                f,
                "cannot take {} bytes of memory blocks from the HugeTLB pool; reserve more huge pages (/proc/sys/vm/nr_hugepages) or give a smaller --block-size",
                self.bytes
            )
        } else {
            write!(
                f,
                "cannot allocate {} bytes of memory blocks; give a smaller --block-size or fewer threads",
                self.bytes
            )
        }
    }
}

impl std::error::Error for BlockAllocError {}

/// A thread's state: its own block (local scope) and the blocks it may still
/// move. Its random generator is the thread's own, in thread-local memory, as
/// sysbench's: [`Memory::thread`] seeds it on the thread that runs the events.
pub struct MemoryThread {
    local: Option<Block>,
    /// The bandwidth mode's walk: the next index of the full-period sequence.
    walk: u64,
    left: u64,
}

/// One block of words starting on a page boundary, as sysbench allocates its
/// blocks (`memalign` to the page size, or huge pages): where a block starts
/// within a page changes how fast the caches and the prefetchers move it.
pub struct Block {
    /// The block's first word, on a page boundary in `_storage`.
    first: std::ptr::NonNull<AtomicUsize>,
    /// Its length in words.
    words: usize,
    /// What holds the words, which never move while it lives: ordinary
    /// pages from the allocator (a boxed slice with room before the first
    /// page boundary) or huge pages (a [`Mapping`]).
    _storage: Box<dyn Send + Sync>,
}

// SAFETY: `first` points into `_storage`, which the block owns and which never
// moves; every access to the words is atomic.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

/// The HugeTLB pool of the default huge page size, from `/proc/meminfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HugePool {
    /// Bytes per huge page.
    pub page: u64,
    /// Huge pages reserved (`vm.nr_hugepages`).
    pub total: u64,
    /// Of those, free for a new mapping: free, less those another mapping
    /// has reserved but not yet touched (`HugePages_Rsvd`), which a
    /// `MAP_HUGETLB` mapping cannot take.
    pub free: u64,
}

impl HugePool {
    /// The pool as `/proc/meminfo` shows it, `None` when it shows none (a
    /// kernel without HugeTLB).
    pub fn now() -> Option<HugePool> {
        Self::parse(&std::fs::read_to_string("/proc/meminfo").ok()?)
    }

    /// The pool from the text of `/proc/meminfo`.
    pub fn parse(meminfo: &str) -> Option<HugePool> {
        let field = |key: &str| {
            meminfo.lines().find_map(|l| {
                let rest = l.strip_prefix(key)?.strip_prefix(':')?;
                let mut words = rest.split_whitespace();
                let n: u64 = words.next()?.parse().ok()?;
                Some(match words.next() {
                    Some("kB") => n * 1024,
                    _ => n,
                })
            })
        };
        Some(HugePool {
            page: field("Hugepagesize")?.max(1),
            total: field("HugePages_Total")?,
            free: field("HugePages_Free")?.saturating_sub(field("HugePages_Rsvd").unwrap_or(0)),
        })
    }

    /// Huge pages one block of `bytes` takes.
    pub fn pages_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.page)
    }
}

impl Block {
    /// A block of `bytes` (a multiple of [`WORD`]), every page written once,
    /// or `None` when the system refuses the memory: asked for fallibly, so
    /// that a size from the command line cannot abort the process.
    fn new(bytes: u64, hugetlb: bool) -> Option<Block> {
        let words = usize::try_from(bytes / WORD).ok()?;
        if hugetlb {
            let pool = HugePool::now()?;
            let len = usize::try_from(pool.pages_for(bytes).checked_mul(pool.page)?).ok()?;
            let m = Mapping::huge(len).ok()?;
            // Written once, as sysbench clears its blocks: every huge page is
            // mapped before the start.
            m.atomic_words().iter().for_each(|w| w.store(0, R));
            return Some(Block {
                first: std::ptr::NonNull::from(m.atomic_words().first()?),
                words,
                _storage: Box::new(m),
            });
        }
        let page = crate::load::sys::page_size() / WORD as usize;
        let mut v: Vec<AtomicUsize> = Vec::new();
        v.try_reserve_exact(words.checked_add(page)?).ok()?;
        // Zeroed and written once, so every page is mapped before the start.
        v.extend((0..words + page).map(|_| AtomicUsize::new(0)));
        let start = v.as_ptr().align_offset(page * WORD as usize).min(page);
        let v = v.into_boxed_slice();
        Some(Block {
            first: std::ptr::NonNull::from(v.get(start)?),
            words,
            _storage: Box::new(v),
        })
    }

    /// The block's words.
    #[inline(always)]
    fn words(&self) -> &[AtomicUsize] {
        // SAFETY: `words` words from `first` lie in `_storage` (made so by
        // `new`), which lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.first.as_ptr(), self.words) }
    }
}

/// The blocks a thread moves when `threads` threads share `total` bytes in
/// blocks of `block` bytes (0: no limit), as sysbench counts them: each its
/// equal share, the remainder left out.
pub fn blocks_per_thread(total: u64, block: u64, threads: u64) -> u64 {
    match total {
        0 => u64::MAX,
        t => t / block / threads.max(1),
    }
}

impl Memory {
    /// Allocates and touches every block before the run: the shared one (global
    /// scope) or one per thread (local scope). `threads` share `total_size` in
    /// equal parts, as in sysbench.
    ///
    /// # Panics
    /// If `cfg.block_size` is not a multiple of [`WORD`] of at least one word
    /// (the command line refuses such sizes): sysbench's random loop, in
    /// assembly on x86-64, touches one word before it looks at the size.
    pub fn new(cfg: MemoryConfig, threads: usize) -> Result<Self, BlockAllocError> {
        assert!(
            cfg.block_size >= WORD && cfg.block_size.is_multiple_of(WORD),
            "a memory block is a multiple of {WORD} bytes, at least one word: {}",
            cfg.block_size
        );
        let threads = threads.max(1);
        let blocks = cfg.blocks(threads);
        let refused = BlockAllocError {
            bytes: cfg.block_size.saturating_mul(blocks as u64),
            hugetlb: cfg.hugetlb,
        };
        let mut all = Vec::new();
        all.try_reserve_exact(blocks).map_err(|_| refused)?;
        for _ in 0..blocks {
            all.push(Some(
                Block::new(cfg.block_size, cfg.hugetlb).ok_or(refused)?,
            ));
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
        // Called once per index before the start barrier, on the thread that
        // runs the events: taking the block out of the lock is not on the
        // measured path, and the generator seeded here is that thread's.
        sysbench::seed(Xoroshiro::from_clock(index as u64));
        let local = match self.local.lock() {
            Ok(mut blocks) => blocks.get_mut(index).and_then(Option::take),
            Err(poisoned) => poisoned.into_inner().get_mut(index).and_then(Option::take),
        };
        MemoryThread {
            local,
            walk: 0,
            left: blocks_per_thread(self.cfg.total_size, self.cfg.block_size, self.threads),
        }
    }

    fn accounting(&self) -> Accounting {
        match self.cfg.method {
            Method::Sysbench => Accounting::Sysbench,
            Method::Bandwidth => Accounting::Lean,
        }
    }

    #[inline]
    fn event(
        &self,
        t: &mut MemoryThread,
        tally: &mut Tally,
        _: &EventCtl,
    ) -> Result<bool, EventError> {
        if t.left == 0 {
            return Ok(false);
        }
        t.left -= 1;
        let buf: &[AtomicUsize] = match (&t.local, &self.global) {
            (Some(b), _) | (None, Some(b)) => b.words(),
            (None, None) => unreachable!("one of the blocks exists for each scope"),
        };
        let c = &self.cfg;
        match (c.method, c.access, c.oper) {
            (Method::Sysbench, Access::Seq, Oper::Write) => sysbench::seq_write(buf),
            (Method::Sysbench, Access::Seq, Oper::Read) => sysbench::seq_read(buf),
            (Method::Sysbench, Access::Seq, Oper::None) => sysbench::seq_none(buf),
            (Method::Sysbench, Access::Rnd, Oper::Write) => sysbench::rnd_write(buf),
            (Method::Sysbench, Access::Rnd, Oper::Read) => sysbench::rnd_read(buf),
            (Method::Sysbench, Access::Rnd, Oper::None) => sysbench::rnd_none(buf),
            (Method::Bandwidth, Access::Seq, Oper::Write) => bandwidth::seq_write(buf),
            (Method::Bandwidth, Access::Seq, _) => {
                black_box(bandwidth::seq_read(buf));
            }
            (Method::Bandwidth, Access::Rnd, Oper::Write) => {
                t.walk = bandwidth::walk_write(buf, t.walk);
            }
            (Method::Bandwidth, Access::Rnd, _) => {
                let (next, acc) = bandwidth::walk_read(buf, t.walk);
                t.walk = next;
                black_box(acc);
            }
        }
        match c.oper {
            Oper::Read => tally.bytes_read += c.block_size,
            Oper::Write => tally.bytes_written += c.block_size,
            Oper::None => {}
        }
        tally.ops += 1;
        Ok(true)
    }
}

super::compiled_here!(Memory);

/// sysbench 1.0's loops over a block of words, with the machine work of its
/// compiled form (gcc at -O2 with ConcurrencyKit's loads and stores, which are
/// compiler barriers): where the optimiser here would do less per word, the
/// loop says what sysbench's does and does it too.
mod sysbench {
    use super::{Xoroshiro, R, WORD};
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;

    /// Stores into each word, in address order, the number of words from it
    /// to the end of the block, worked out from the word's address (a
    /// subtraction and a shift per word, as sysbench's loop does; counting
    /// down instead would take half the instructions). Eight words per turn
    /// of the loop, as sysbench's compiled loop.
    #[inline(always)]
    pub(super) fn seq_write(buf: &[AtomicUsize]) {
        let end = buf.as_ptr_range().end;
        by_eights(buf, |x| store_words_to(x, end));
    }

    /// Calls `f` on every word of `buf` in order, eight words per turn of
    /// the loop as sysbench's compiled loops, written out so that the loop
    /// stays so at any optimisation level (a binary built for size does not
    /// unroll loops).
    #[inline(always)]
    fn by_eights(buf: &[AtomicUsize], mut f: impl FnMut(&AtomicUsize)) {
        let (eights, rest) = buf.as_chunks::<8>();
        for [w0, w1, w2, w3, w4, w5, w6, w7] in eights {
            f(w0);
            f(w1);
            f(w2);
            f(w3);
            f(w4);
            f(w5);
            f(w6);
            f(w7);
        }
        for w in rest {
            f(w);
        }
    }

    /// Stores into `w` the number of words from it to `end`.
    #[inline(always)]
    fn store_words_to(w: &AtomicUsize, end: *const AtomicUsize) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: one 8-byte store into `w`, a valid, aligned word of the
        // block (an atomic: other threads' plain stores to it cannot tear it
        // on x86-64); the other instructions work on registers.
        unsafe {
            std::arch::asm!(
                "mov {v}, {end}",
                "sub {v}, {p}",
                "sar {v}, 3",
                "mov qword ptr [{p}], {v}",
                end = in(reg) end,
                p = in(reg) w.as_ptr(),
                v = out(reg) _,
                options(nostack),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: both pointers are in (or one past) the same block.
        w.store(unsafe { end.offset_from(w) } as usize, R);
    }

    /// Loads each word in address order, eight per turn; the values are not
    /// used.
    #[inline(always)]
    pub(super) fn seq_read(buf: &[AtomicUsize]) {
        by_eights(buf, |w| {
            w.load(R);
        });
    }

    /// Walks the words in order without touching them: an empty loop with a
    /// compiler barrier per word (sysbench's `ck_pr_barrier`), eight words
    /// per turn.
    #[inline(always)]
    pub(super) fn seq_none(buf: &[AtomicUsize]) {
        by_eights(buf, |_| barrier());
    }

    /// A compiler barrier: an empty assembly block, no instruction. Without
    /// `nomem` the optimiser must assume it touches memory, so a loop of
    /// them stays.
    #[inline(always)]
    fn barrier() {
        // SAFETY: no instruction runs.
        unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
    }

    /// What sysbench's random loops read from memory again for every word
    /// (the access to the block is a compiler barrier): the generator, the
    /// block and its size in bytes, each on a cache line of its own, as in
    /// sysbench. Its thread-local generator starts a cache line; its
    /// thread-local block address lies two lines after it; its size is a
    /// global. The loop stores the generator at every turn: with the address
    /// and the size on the generator's line, 1 MiB random writes ran 6 %
    /// faster than sysbench's (bench/RESULTS.md). The generator stays here
    /// for the thread's life, as sysbench's: copied in and out around every
    /// event, it cost 1 KiB random writes some 6 % (bench/RESULTS.md).
    #[repr(C, align(64))]
    struct Loop {
        rng: Xoroshiro,
        _to_base: [u64; 14],
        base: *const AtomicUsize,
        _to_bytes: [u64; 7],
        bytes: u64,
    }

    const _: () = assert!(
        std::mem::offset_of!(Loop, rng) == 0
            && std::mem::offset_of!(Loop, base) == 128
            && std::mem::offset_of!(Loop, bytes) == 192
    );

    thread_local! {
        /// [`Loop`] where sysbench keeps its generator: in thread-local
        /// memory, not on the stack. Where it lives, and how the loop
        /// addresses it, set the speed of a loop whose every turn waits for
        /// the stores of the previous one (bench/RESULTS.md).
        static LOOP: Cell<Loop> = const {
            Cell::new(Loop {
                rng: Xoroshiro::ZERO,
                _to_base: [0; 14],
                base: std::ptr::null(),
                _to_bytes: [0; 7],
                bytes: 0,
            })
        };
    }

    /// Which word a turn of the random loop touches, and how.
    #[derive(Clone, Copy)]
    enum Touch {
        Store,
        Load,
    }

    /// Seeds this thread's generator, which its random loops draw from.
    pub(super) fn seed(rng: Xoroshiro) {
        // SAFETY: the thread's own `Loop`, not borrowed elsewhere.
        LOOP.with(|cell| unsafe { (*cell.as_ptr()).rng = rng });
    }

    /// This thread's generator as the loops left it.
    #[cfg(test)]
    pub(super) fn generator() -> Xoroshiro {
        // SAFETY: as in `seed`.
        LOOP.with(|cell| unsafe { (*cell.as_ptr()).rng.clone() })
    }

    /// Runs sysbench's random loop over `buf` with this thread's generator,
    /// which it leaves where the loop stopped: as many times as the block has
    /// words, stores the byte offset reached at (or loads) the word a draw
    /// names.
    #[inline(always)]
    fn rnd(buf: &[AtomicUsize], touch: Touch) {
        // SAFETY: `in_loop` hands over this thread's own `Loop`, holding
        // `buf` and its size, as both loops require.
        in_loop(buf, |p| unsafe {
            #[cfg(target_arch = "x86_64")]
            x86_64::rnd(p, touch);
            #[cfg(not(target_arch = "x86_64"))]
            portable::rnd(p, touch);
        });
    }

    /// Puts `buf` and its size into this thread's [`Loop`] when they are not
    /// already there, and runs `run` on it. sysbench sets its block's address
    /// once per thread. With the address on a line of its own but stored
    /// again before every event, 1 KiB random writes (128 words an event) ran
    /// at 0.70 of sysbench's rate; stored once, as here, they run as with the
    /// old layout or faster (bench/RESULTS.md).
    #[inline(always)]
    fn in_loop(buf: &[AtomicUsize], run: impl FnOnce(*mut Loop)) {
        LOOP.with(|cell| {
            let p = cell.as_ptr();
            let bytes = buf.len() as u64 * WORD;
            // SAFETY: the thread's own `Loop`, not borrowed elsewhere.
            unsafe {
                if (*p).base != buf.as_ptr() || (*p).bytes != bytes {
                    (*p).base = buf.as_ptr();
                    (*p).bytes = bytes;
                }
            }
            run(p);
        });
    }

    /// The portable random loop, which the machines without an assembly
    /// loop run, for the tests to hold the two to the same results.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(super) fn rnd_portable(buf: &[AtomicUsize], write: bool) {
        let touch = if write { Touch::Store } else { Touch::Load };
        // SAFETY: as in `rnd`.
        in_loop(buf, |p| unsafe { portable::rnd(p, touch) });
    }

    /// The random loop as sysbench's compiled one runs on x86-64, instruction
    /// for instruction (gcc 12 at -O2, sysbench 1.0.20): the optimiser here
    /// schedules the same work differently, and the difference is the speed
    /// of the loop. Written out, it runs the same whatever the compiler or
    /// the code around it.
    #[cfg(target_arch = "x86_64")]
    mod x86_64 {
        use super::{Loop, Touch};
        use std::mem::offset_of;

        /// One turn of the loop reads the generator's two words, the block
        /// and its size from thread-local memory (segment `fs`) at an offset
        /// held in a register, as code that reaches a thread-local variable
        /// of another unit does; stores the generator's new words back; and
        /// touches the word at the truncated product of the draw and the
        /// block's word count. The draw is xoroshiro128+'s sum of the two
        /// words, its top 52 bits as a double in `[1, 2)`, minus 1. A product
        /// from 2^63 up (never, here) takes the conversion for such values.
        macro_rules! sysbench_rnd_loop {
            ($p:expr, $touch:literal) => {
                std::arch::asm!(
                    // The offset of the `Loop` from the thread pointer,
                    // whose first word holds the pointer itself (x86-64 ABI).
                    "mov r10, qword ptr fs:0",
                    "sub rsi, r10",
                    "mov r10, qword ptr fs:[rsi + {bytes}]",
                    "xor edi, edi",
                    "movabs r8, 0x3ff0000000000000",
                    "movabs r9, 0x8000000000000000",
                    "jmp 3f",
                    // The loop 32 bytes past a 64-byte boundary, as in
                    // sysbench's binary (see the cpu bench).
                    ".p2align 6",
                    ".skip 32, 0x90",
                    "2:",
                    "cvttsd2si r10, xmm0",
                    "4:",
                    "mov rax, qword ptr fs:[rsi + {base}]",
                    $touch,
                    "mov r10, qword ptr fs:[rsi + {bytes}]",
                    "add rdi, 8",
                    "cmp r10, rdi",
                    "jle 5f",
                    "3:",
                    "mov rax, qword ptr fs:[rsi]",
                    "mov r11, qword ptr fs:[rsi + 8]",
                    "sar r10, 3",
                    "pxor xmm1, xmm1",
                    "cvtsi2sd xmm1, r10",
                    "mov rdx, rax",
                    "mov rcx, rax",
                    "add rax, r11",
                    "shr rax, 12",
                    "xor rdx, r11",
                    "ror rcx, 9",
                    "or rax, r8",
                    "mov r12, rdx",
                    "xor rcx, rdx",
                    "ror rdx, 28",
                    "movq xmm0, rax",
                    "shl r12, 14",
                    "mov qword ptr fs:[rsi + 8], rdx",
                    "subsd xmm0, xmm3",
                    "xor rcx, r12",
                    "mov qword ptr fs:[rsi], rcx",
                    "mulsd xmm0, xmm1",
                    "comisd xmm0, xmm2",
                    "jb 2b",
                    "subsd xmm0, xmm2",
                    "cvttsd2si r10, xmm0",
                    "xor r10, r9",
                    "jmp 4b",
                    "5:",
                    base = const offset_of!(Loop, base),
                    bytes = const offset_of!(Loop, bytes),
                    inout("rsi") $p => _,
                    in("xmm2") 9_223_372_036_854_775_808.0f64,
                    in("xmm3") 1.0f64,
                    out("rax") _, out("rcx") _, out("rdx") _, out("rdi") _,
                    out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                    out("r12") _, out("xmm0") _, out("xmm1") _,
                    options(nostack),
                )
            };
        }

        /// The loop over the block that `p` holds, with its generator.
        ///
        /// # Safety
        /// `p` points to the calling thread's own thread-local `Loop`, whose
        /// `base` and `bytes` are a valid block of words and its size.
        #[inline(always)]
        pub(super) unsafe fn rnd(p: *mut Loop, touch: Touch) {
            // SAFETY: the loop reads and writes `*p` through `fs`, which is
            // where the thread's own `Loop` lives, and touches only words at
            // indices below the block's word count (the draw is in [0, 1)).
            // It stores the byte offset reached, or loads into a register.
            unsafe {
                match touch {
                    Touch::Store => sysbench_rnd_loop!(p, "mov qword ptr [rax + r10*8], rdi"),
                    Touch::Load => sysbench_rnd_loop!(p, "mov rax, qword ptr [rax + r10*8]"),
                }
            }
        }
    }

    /// The random loop in Rust, for other machines: the same draws and
    /// accesses, with the block, its size and the generator read from
    /// memory again for every word.
    #[cfg(any(test, not(target_arch = "x86_64")))]
    mod portable {
        use super::{Loop, Touch, R, WORD};

        /// The loop over the block that `p` holds, with its generator.
        ///
        /// # Safety
        /// `p` is valid and aligned, and its `base` and `bytes` are a valid
        /// block of words and its size; nothing else refers to it meanwhile.
        #[inline(always)]
        pub(super) unsafe fn rnd(p: *mut Loop, touch: Touch) {
            let mut i = 0;
            loop {
                // SAFETY: volatile reads of the caller's `Loop` (see above).
                let (base, bytes) = unsafe {
                    (
                        std::ptr::read_volatile(std::ptr::addr_of!((*p).base)),
                        std::ptr::read_volatile(std::ptr::addr_of!((*p).bytes)),
                    )
                };
                if i >= bytes {
                    break;
                }
                let words = (bytes as i64 >> 3) as f64;
                // SAFETY: as above; the generator is a field apart.
                let x = unsafe { (*p).rng.unit_in_memory() } * words;
                // SAFETY: the index is inside the block (`x` is in
                // `[0, words)`).
                let w = unsafe { &*base.add(to_size(x)) };
                match touch {
                    Touch::Store => w.store(i as usize, R),
                    Touch::Load => {
                        w.load(R);
                    }
                }
                i += WORD;
            }
        }

        /// `x` (finite, at least 0) truncated to a `size_t` as sysbench's
        /// compiled code converts it: a comparison with 2^63, then one signed
        /// conversion (the other branch, for values from 2^63, never runs here).
        #[inline(always)]
        fn to_size(x: f64) -> usize {
            const TWO63: f64 = 9_223_372_036_854_775_808.0;
            if x < TWO63 {
                // SAFETY: `x` is finite and in `[0, 2^63)`: exact truncation.
                unsafe { x.to_int_unchecked::<i64>() as usize }
            } else {
                above_i64(x - TWO63)
            }
        }

        /// `x + 2^63` truncated, for `x` in `[0, 2^63)`; out of the hot path.
        #[cold]
        #[inline(never)]
        fn above_i64(x: f64) -> usize {
            (x as u64 | 1 << 63) as usize
        }
    }

    /// As many times as the block has words, stores the byte offset reached
    /// at a random word.
    #[inline(always)]
    pub(super) fn rnd_write(buf: &[AtomicUsize]) {
        rnd(buf, Touch::Store);
    }

    /// As many times as the block has words, loads a random word.
    #[inline(always)]
    pub(super) fn rnd_read(buf: &[AtomicUsize]) {
        rnd(buf, Touch::Load);
    }

    /// The random draws of [`rnd_read`] alone, this thread's generator
    /// taken into registers for the event (no access to the block, so
    /// nothing makes sysbench's loop reload it) and put back after it.
    #[inline(always)]
    pub(super) fn rnd_none(buf: &[AtomicUsize]) {
        LOOP.with(|cell| {
            let p = cell.as_ptr();
            // SAFETY: the thread's own `Loop`, not borrowed elsewhere.
            let mut rng = unsafe { (*p).rng.clone() };
            by_eights(buf, |_| {
                rng.next_u64();
            });
            // SAFETY: as above.
            unsafe { (*p).rng = rng };
        });
    }
}

/// The bandwidth mode's loops: every word of the block once.
mod bandwidth {
    use super::R;
    use std::sync::atomic::AtomicUsize;

    /// Stores the words left into every word in order, eight words per turn
    /// of the loop: at one word per turn the loop's own instructions, not the
    /// memory, would set the pace.
    #[inline(always)]
    pub(super) fn seq_write(buf: &[AtomicUsize]) {
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

    /// Loads every word in order, eight per turn of the loop; their XOR, so
    /// that no load can be dropped.
    #[inline(always)]
    pub(super) fn seq_read(buf: &[AtomicUsize]) -> usize {
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

    /// The step of the walk over `0..2^k`: a linear congruential sequence
    /// whose multiplier is 1 mod 4 and whose increment is odd has the full
    /// period 2^k (Hull-Dobell), so every index comes once per 2^k steps, and
    /// consecutive indices lie far apart.
    #[inline(always)]
    fn step(x: u64, mask: u64) -> u64 {
        x.wrapping_mul(0x5851_F42D_4C95_7F2D)
            .wrapping_add(0x1405_7B7E_F767_814F)
            & mask
    }

    /// The indices of one event: the walk over the next power of two at or
    /// above the block's words from `from`, those beyond the block skipped, so
    /// that each word comes exactly once. Calls `f` with each; returns where
    /// the next event starts.
    #[inline(always)]
    fn walk(n: usize, from: u64, mut f: impl FnMut(usize)) -> u64 {
        let mask = (n as u64).next_power_of_two() - 1;
        let mut x = from & mask;
        let mut done = 0;
        while done < n {
            if (x as usize) < n {
                f(x as usize);
                done += 1;
            }
            x = step(x, mask);
        }
        x
    }

    /// Stores the step number into every word once, in the walk's order.
    #[inline(always)]
    pub(super) fn walk_write(buf: &[AtomicUsize], from: u64) -> u64 {
        let mut i = 0;
        walk(buf.len(), from, |x| {
            buf[x].store(i, R);
            i += 1;
        })
    }

    /// Loads every word once, in the walk's order; the next start and the
    /// XOR of the words.
    #[inline(always)]
    pub(super) fn walk_read(buf: &[AtomicUsize], from: u64) -> (u64, usize) {
        let mut acc = 0;
        let next = walk(buf.len(), from, |x| acc ^= buf[x].load(R));
        (next, acc)
    }
}

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
            method: Method::Sysbench,
            hugetlb: false,
        }
    }

    #[test]
    fn blocks_are_shared_out_as_sysbench_counts_them() {
        // sysbench: total / block / threads per thread, the rest left out.
        assert_eq!(blocks_per_thread(100 << 30, 1024, 1), 100 << 20);
        assert_eq!(blocks_per_thread(10_000, 1024, 3), 3);
        assert_eq!(blocks_per_thread(1024, 1024, 2), 0);
        assert_eq!(blocks_per_thread(0, 1024, 4), u64::MAX);
    }

    #[test]
    fn total_size_bounds_the_events_in_every_mode() {
        // 1 MiB + 5 KiB over 3 threads in 1 KiB blocks: 343 blocks each,
        // 1029 in all; the 2 KiB left over are not moved.
        for method in [Method::Sysbench, Method::Bandwidth] {
            for oper in [Oper::Read, Oper::Write, Oper::None] {
                if method == Method::Bandwidth && oper == Oper::None {
                    continue;
                }
                for access in [Access::Seq, Access::Rnd] {
                    for scope in [Scope::Global, Scope::Local] {
                        let c = MemoryConfig {
                            total_size: (1 << 20) + 5 * 1024,
                            method,
                            ..cfg(oper, access, scope)
                        };
                        let w = Memory::new(c, 3).unwrap();
                        let out = test_run(&w, 3, 0, 0);
                        let all = super::super::ThreadStats::total(&out.threads);
                        let what = format!("{method:?} {oper:?} {access:?} {scope:?}");
                        assert_eq!(all.events(), 1029, "{what}");
                        assert!(out.threads.iter().all(|t| t.events() == 343), "{what}");
                        assert_eq!(all.tally.ops, 1029);
                        let (read, written) = match oper {
                            Oper::Read => (1029 * 1024, 0),
                            Oper::Write => (0, 1029 * 1024),
                            Oper::None => (0, 0),
                        };
                        assert_eq!(
                            (all.tally.bytes_read, all.tally.bytes_written),
                            (read, written),
                            "{what}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "at least one word")]
    fn a_block_below_one_word_is_refused() {
        let _ = Memory::new(
            MemoryConfig {
                block_size: 4,
                ..cfg(Oper::Write, Access::Rnd, Scope::Global)
            },
            1,
        );
    }

    #[test]
    fn the_accounting_follows_the_method() {
        let w = |method| {
            let c = MemoryConfig {
                method,
                ..cfg(Oper::Write, Access::Seq, Scope::Global)
            };
            Memory::new(c, 1).unwrap().accounting()
        };
        assert_eq!(w(Method::Sysbench), Accounting::Sysbench);
        assert_eq!(w(Method::Bandwidth), Accounting::Lean);
    }

    fn words(n: usize) -> Vec<AtomicUsize> {
        (0..n).map(|_| AtomicUsize::new(0)).collect()
    }

    fn values(b: &[AtomicUsize]) -> Vec<usize> {
        b.iter().map(|w| w.load(R)).collect()
    }

    #[test]
    fn sysbench_stores_what_sysbench_stores() {
        // seq: the words from each word to the end (19: eight-word turns and
        // a rest).
        let b = words(19);
        sysbench::seq_write(&b);
        assert_eq!(values(&b), (1..=19).rev().collect::<Vec<_>>());
        // rnd: the byte offset reached, at random words inside the block.
        let b = words(64);
        sysbench::seed(Xoroshiro::new(3));
        sysbench::rnd_write(&b);
        let v = values(&b);
        assert!(v.iter().all(|x| x % 8 == 0 && *x < 64 * 8));
        assert!(v.iter().filter(|x| **x != 0).count() > 16, "{v:?}");
        // none and read leave the block alone.
        let b = words(64);
        sysbench::seq_none(&b);
        sysbench::seq_read(&b);
        sysbench::rnd_read(&b);
        sysbench::rnd_none(&b);
        assert!(values(&b).iter().all(|x| *x == 0));
    }

    /// The random loop stores each byte offset at the word sysbench's draw
    /// names, and the thread's generator goes on from one event to the next.
    #[test]
    fn the_random_loop_draws_sysbenchs_sequence_and_keeps_its_generator() {
        let b = words(64);
        let mut draws = Xoroshiro::new(11);
        sysbench::seed(draws.clone());
        let mut expected = vec![0; 64];
        for event in 0..3 {
            sysbench::rnd_write(&b);
            for i in 0..64 {
                expected[(draws.unit() * 64.0) as usize] = i * 8;
            }
            assert_eq!(values(&b), expected, "event {event}");
            assert_eq!(
                sysbench::generator().next_u64(),
                draws.clone().next_u64(),
                "event {event}"
            );
        }
        // The draws of the `none` operation step the same generator.
        sysbench::rnd_none(&b);
        for _ in 0..64 {
            draws.next_u64();
        }
        assert_eq!(sysbench::generator().next_u64(), draws.next_u64());
    }

    /// The generator is the thread's, as sysbench's: another thread's seed
    /// and draws leave it alone, and a thread taking its state seeds it.
    #[test]
    fn each_thread_draws_from_its_own_generator() {
        sysbench::seed(Xoroshiro::new(11));
        std::thread::spawn(|| {
            sysbench::seed(Xoroshiro::new(5));
            sysbench::rnd_write(&words(64));
        })
        .join()
        .unwrap();
        assert_eq!(
            sysbench::generator().next_u64(),
            Xoroshiro::new(11).next_u64()
        );
        // An unseeded (all-zero) generator draws only zeros, word 0 each time.
        sysbench::seed(Xoroshiro::ZERO);
        let m = Memory::new(cfg(Oper::Write, Access::Rnd, Scope::Local), 1).unwrap();
        let _state = m.thread(0);
        let mut g = sysbench::generator();
        assert_ne!((g.next_u64(), g.next_u64()), (0, 0));
    }

    /// On x86-64 the random loop is sysbench's, written in assembly; other
    /// machines run the portable loop. From the same seed, both store the
    /// same words and leave the generator in the same state, event after
    /// event.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_assembly_and_the_portable_random_loops_agree() {
        for n in [1, 2, 7, 64, 1000] {
            for write in [true, false] {
                let run = |portable: bool| {
                    let b = words(n);
                    sysbench::seed(Xoroshiro::new(n as u64));
                    (0..3)
                        .map(|_| {
                            match (portable, write) {
                                (true, _) => sysbench::rnd_portable(&b, write),
                                (false, true) => sysbench::rnd_write(&b),
                                (false, false) => sysbench::rnd_read(&b),
                            }
                            (values(&b), sysbench::generator().next_u64())
                        })
                        .collect::<Vec<_>>()
                };
                let (asm, portable) = (run(false), run(true));
                assert_eq!(asm, portable, "{n} words, write {write}");
                assert_eq!(asm[2].0.iter().any(|v| *v != 0), write && n > 1);
            }
        }
    }

    #[test]
    fn the_bandwidth_walk_touches_every_word_once() {
        for n in [1, 2, 7, 64, 100, 1000] {
            let b = words(n);
            let mut from = 12_345;
            for round in 1..=3 {
                let next = bandwidth::walk_write(&b, from);
                // Every index came once: the step numbers are 0..n.
                let mut v = values(&b);
                v.sort_unstable();
                assert_eq!(v, (0..n).collect::<Vec<_>>(), "n {n} round {round}");
                from = next;
            }
            let (_, acc) = bandwidth::walk_read(&b, from);
            assert_eq!(acc, (0..n).fold(0, |a, x| a ^ x));
        }
        let b = words(19);
        bandwidth::seq_write(&b);
        assert_eq!(values(&b), (1..=19).rev().collect::<Vec<_>>());
        assert_eq!(bandwidth::seq_read(&b), (1..=19).fold(0, |a, x| a ^ x));
    }

    #[test]
    fn blocks_start_on_a_page_and_hold_their_words() {
        let page = crate::load::sys::page_size();
        for bytes in [8, 1024, 100_000 * 8] {
            let b = Block::new(bytes, false).unwrap();
            assert_eq!(b.words().len() as u64 * WORD, bytes);
            assert_eq!(b.words().as_ptr() as usize % page, 0);
            assert!(b.words().iter().all(|w| w.load(R) == 0));
        }
        // Every page is in memory before a run touches it: 40 MiB, above the
        // largest mmap threshold glibc ever sets (32 MiB), so the pages always
        // come fresh from the kernel, whatever other tests freed before.
        let b = Block::new(40 << 20, false).unwrap();
        let words = b.words();
        let len = words.len() * WORD as usize;
        assert_eq!(
            super::super::pages_not_resident(words.as_ptr().cast(), len),
            0
        );
    }

    #[test]
    fn the_huge_page_pool_is_read_from_meminfo() {
        let text = "MemTotal:        2029132 kB\nHugePages_Total:       8\nHugePages_Free:        7\n\
                    HugePages_Rsvd:        0\nHugepagesize:       2048 kB\nHugetlb:           16384 kB\n";
        let pool = HugePool::parse(text).unwrap();
        assert_eq!(
            pool,
            HugePool {
                page: 2 << 20,
                total: 8,
                free: 7
            }
        );
        assert_eq!(
            [1, 2 << 20, (2 << 20) + 8, 64 << 20].map(|b| pool.pages_for(b)),
            [1, 1, 2, 32]
        );
        assert_eq!(HugePool::parse("MemTotal:        2029132 kB\n"), None);
        // Pages another mapping reserved are not free for this one.
        let reserved = text.replace("HugePages_Rsvd:        0", "HugePages_Rsvd:        5");
        assert_eq!(HugePool::parse(&reserved).unwrap().free, 2);
        let older = text.replace("HugePages_Rsvd:        0\n", "");
        assert_eq!(HugePool::parse(&older).unwrap().free, 7);
    }

    /// Holds at least `free` huge pages free in the pool (reserving more),
    /// and gives back what it reserved when dropped.
    struct Reserved(u64);

    impl Reserved {
        const KNOB: &str = "/proc/sys/vm/nr_hugepages";

        fn at_least(free: u64) -> Reserved {
            let pool = HugePool::now().expect("this kernel has a HugeTLB pool");
            let was = pool.total;
            if pool.free < free {
                std::fs::write(Self::KNOB, (was + free - pool.free).to_string()).unwrap();
            }
            let now = HugePool::now().unwrap();
            assert!(
                now.free >= free,
                "the kernel reserved {} huge pages of {} asked (memory too fragmented?)",
                now.free,
                free
            );
            Reserved(was)
        }
    }

    impl Drop for Reserved {
        fn drop(&mut self) {
            let _ = std::fs::write(Self::KNOB, self.0.to_string());
        }
    }

    /// The page size the kernel maps at `addr` in this process, from
    /// `/proc/self/smaps` (kB).
    fn kernel_page_kb(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = (lo..hi).contains(&addr);
                        continue;
                    }
                }
            }
            if let (true, Some(kb)) = (inside, line.strip_prefix("KernelPageSize:")) {
                return kb.trim().trim_end_matches("kB").trim().parse().unwrap();
            }
        }
        panic!("{addr:#x} is in no mapping of /proc/self/smaps");
    }

    #[test]
    #[ignore = "needs root: reserves huge pages (/proc/sys/vm/nr_hugepages)"]
    fn huge_blocks_come_from_the_pool() {
        let _reserved = Reserved::at_least(2);
        let before = HugePool::now().unwrap();
        // 3 MiB: two huge pages of 2 MiB.
        let c = MemoryConfig {
            block_size: 3 << 20,
            total_size: 30 << 20,
            hugetlb: true,
            ..cfg(Oper::Write, Access::Seq, Scope::Global)
        };
        let w = Memory::new(c, 1).unwrap();
        let during = HugePool::now().unwrap();
        let b = w.global.as_ref().unwrap();
        let start = b.words().as_ptr() as usize;
        assert_eq!(before.free - during.free, before.pages_for(3 << 20));
        assert_eq!(start % before.page as usize, 0);
        assert_eq!(kernel_page_kb(start), before.page / 1024);
        assert_eq!(b.words().len() as u64 * WORD, 3 << 20);
        let out = test_run(&w, 1, 0, 0);
        let all = super::super::ThreadStats::total(&out.threads);
        assert_eq!((all.events(), all.tally.bytes_written), (10, 30 << 20));
        // sysbench's sequential write: the words from each to the block's end.
        let n = b.words().len();
        assert_eq!(b.words()[0].load(R), n);
        assert_eq!(b.words()[n - 1].load(R), 1);
        drop(w);
        assert_eq!(HugePool::now().unwrap().free, before.free);
        // A pool with too few pages: refused, not a crash at the first touch.
        let c = MemoryConfig {
            block_size: (before.free + 1) * before.page,
            ..c
        };
        let e = Memory::new(c, 1).err().unwrap();
        assert!(e.to_string().contains("HugeTLB pool"), "{e}");
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
