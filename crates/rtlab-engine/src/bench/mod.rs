//! Throughput micro-benchmarks with sysbench's workloads, timed per event.
//!
//! Each bench keeps the work of one sysbench event exactly, so that events/s
//! compare with sysbench's on the same machine, and measures every event with
//! `CLOCK_MONOTONIC` into an HdrHistogram instead of sysbench's single percentile.
//!
//! | bench | one event in sysbench 1.0 | one event here |
//! |-------|---------------------------|----------------|
//! | [`cpu`] | for every `c` in `3..max_prime`: trial division by `2..=⌊√c⌋`, stop at the first divisor; primes are counted and thrown away (the compiler may drop the loop) | the same loop over the same numbers, with the machine work of sysbench's compiled loop (2 tested by the low bit, the others by one 64-bit division each); input and count pass through `black_box`, and the count (plus the prime 2) is kept as a check |
//! | [`memory`] | one block of `block_size` bytes, word by word (`size_t`): `seq` walks it in order, `rnd` touches as many words at indices drawn from xoroshiro128+; `write` stores, `read` loads, `none` only loops; `global` scope shares one block among threads, `local` gives each thread its own; each thread stops after its equal share of `total_size` | the same, with the machine work of sysbench's compiled loops ([`memory::Method::Sysbench`]); relaxed atomic word loads/stores (plain `mov`s the compiler may not drop), the same stored values and the same `total_size` shares. [`memory::Method::Bandwidth`] is rtlab's own: every word once per event, as fast as the CPU issues the accesses |
//! | [`fileio`] | one request of `block_size` bytes: sequential modes walk the files in order, random modes pick a block-aligned offset uniformly over the whole set; `rndrw` reads when `(reads+1)/(writes+1) < rw_ratio` (per thread); once writes made the set dirty, every `fsync_freq` requests the next requests are `fsync`s of each file in turn; `fsync_end` syncs all files at the end of each thread | the same request sequence, `pread`/`pwrite`, an fsync counts as an event as in sysbench |
//! | [`threads`] | take mutex number `n mod locks` (`n` a global 32-bit event counter), then `yields` times: lock, `sched_yield`, unlock (default pthread mutexes) | the same, with the same lock type |
//! | [`mutex`] | one event per thread: `locks` times pick a random mutex of `mutexes`, spin an empty loop of `loops` iterations, lock, increment one global counter, unlock | the same lock type (a default pthread mutex), the same generator and the same shared counter; the spin loop holds an empty assembly block (a compiler barrier) so it can never be optimised away; the locks are counted per thread, so that the total can be checked |
//!
//! Around each event the timing loop does sysbench's bookkeeping
//! ([`Accounting::Sysbench`]: three clock reads, its timer lock and its
//! histogram; see [`account`]), or, for the memory bench's bandwidth mode, a
//! lean one ([`Accounting::Lean`]: one clock read, the end of one event being
//! the start of the next). [`timing_overhead`] measures what either costs per
//! event with an empty event, so every run can report it.
//!
//! A run starts through [`Bench::run`], implemented in each workload's module:
//! the timing loop and the event are generic code, and generic code is compiled
//! where it is instantiated. Instantiated here, they get this crate's
//! optimisation level (opt-level 3 in release), not that of a binary built for
//! size, whose size-optimised loops cost up to 2× more instructions per word of
//! the memory bench.

pub mod account;
pub mod cpu;
pub mod fileio;
mod fileset;
mod live;
pub mod memory;
pub mod mutex;
pub mod pmutex;
mod rng;
pub mod threads;

pub use account::Accounting;
pub use live::{Report, Snapshot};
pub use rng::{Rng, Xoroshiro};

use crate::rt::clock::{Clock, ClockId, SystemClock};
use crate::stats::hist::LatencyHistogram;
use crate::stats::windows::Windows;
use crate::stats::{Moments, Summary};
use live::{Counts, IntervalHist, LiveSlot, Percentiles};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// When a run ends (whichever comes first; a workload may also run out of work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Worker threads.
    pub threads: usize,
    /// Stop after this long (ns); 0 = no time limit.
    pub time_ns: u64,
    /// Stop after this many events over all threads; 0 = no limit.
    pub events: u64,
}

/// Work counted besides events, per thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Read requests (fileio).
    pub reads: u64,
    /// Write requests (fileio).
    pub writes: u64,
    /// `fsync` calls (fileio).
    pub fsyncs: u64,
    /// Bytes read (memory, fileio).
    pub bytes_read: u64,
    /// Bytes written (memory, fileio).
    pub bytes_written: u64,
    /// Workload-specific operations: primes found (cpu), lock acquisitions
    /// (threads, mutex), blocks moved (memory).
    pub ops: u64,
}

impl Tally {
    /// Adds another tally.
    pub fn merge(&mut self, o: &Tally) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.fsyncs += o.fsyncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.ops += o.ops;
    }
}

/// What a failed event was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Creating or opening a file.
    Open,
    /// Reading.
    Read,
    /// Writing.
    Write,
    /// `fsync`.
    Fsync,
}

impl Op {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Open => "open",
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
        }
    }
}

/// Why an event failed: small and `Copy` so it leaves the hot path cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventError {
    /// The operation.
    pub op: Op,
    /// The errno (`ENOSPC`: the file system is full; `EROFS`: mounted read-only;
    /// `EINVAL` on a write with `--direct`: the file system does not take O_DIRECT).
    pub errno: i32,
    /// Index of the file concerned.
    pub file: u32,
}

/// What an event may consult while it runs: events that take long (a whole
/// mutex run) check it to end early.
pub struct EventCtl<'a> {
    stop: &'a AtomicBool,
    halt: &'a AtomicBool,
    deadline: u64,
    clock: SystemClock,
}

impl EventCtl<'_> {
    /// True once the run should end: a signal, another thread's error, or the
    /// time limit. Reads the clock when a time limit is set; call it every few
    /// µs of work, not per word.
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.halt.load(Ordering::Relaxed)
            || self.deadline != u64::MAX && self.clock.now() >= self.deadline
    }
}

/// A benchmark workload: per-thread state made before the start, and one event.
pub trait Workload: Sync {
    /// A thread's own state (buffers, random generator).
    type Thread: Send;
    /// Makes thread `index`'s state; runs before the start barrier, untimed,
    /// on the thread that runs its events (thread-local state set here is
    /// that thread's).
    fn thread(&self, index: usize) -> Self::Thread;
    /// Runs one event. `Ok(true)`: an event was done; `Ok(false)`: the workload has
    /// no more work and did nothing.
    fn event(
        &self,
        t: &mut Self::Thread,
        tally: &mut Tally,
        ctl: &EventCtl,
    ) -> Result<bool, EventError>;
    /// Runs once per thread after its last event, inside the timed window
    /// (fileio's fsync at the end).
    fn thread_done(&self, _t: &mut Self::Thread, _tally: &mut Tally) -> Result<(), EventError> {
        Ok(())
    }
    /// The bookkeeping around each event.
    fn accounting(&self) -> Accounting {
        Accounting::Sysbench
    }
}

/// One thread's results.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    /// Thread index.
    pub index: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Per-event times (ns).
    pub hist: LatencyHistogram,
    /// The per-event times in windows of the run, for the intervals of its
    /// figures; their exact moments added are the run's ([`ThreadStats::moments`]).
    pub windows: Windows,
    /// Work counted.
    pub tally: Tally,
    /// Time this thread ran, first event start to last event end (ns).
    pub busy_ns: u64,
    /// The error that stopped this thread, if one did.
    pub error: Option<EventError>,
}

impl ThreadStats {
    fn new(index: usize) -> Self {
        ThreadStats {
            index,
            tid: 0,
            hist: LatencyHistogram::new(),
            windows: Windows::new(),
            tally: Tally::default(),
            busy_ns: 0,
            error: None,
        }
    }

    /// Events done.
    pub fn events(&self) -> u64 {
        self.windows.moments().count
    }

    /// Exact moments of the per-event times (ns): the windows', added.
    pub fn moments(&self) -> Moments {
        self.windows.moments()
    }

    /// The summary of the per-event times.
    pub fn summary(&self) -> Summary {
        Summary::new(&self.moments(), &self.hist)
    }

    /// Folds another thread's stats into these (for the total).
    pub fn merge(&mut self, o: &ThreadStats) {
        self.hist.merge(&o.hist);
        self.windows.merge(&o.windows);
        self.tally.merge(&o.tally);
        self.busy_ns = self.busy_ns.max(o.busy_ns);
        self.error = self.error.or(o.error);
    }

    /// All threads together, named as thread `usize::MAX`.
    pub fn total(threads: &[ThreadStats]) -> ThreadStats {
        let mut all = ThreadStats::new(usize::MAX);
        for t in threads {
            all.merge(t);
        }
        all
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    /// Per-thread results, in thread order.
    pub threads: Vec<ThreadStats>,
    /// The measured window: first thread's start to last thread's end (ns).
    pub elapsed_ns: u64,
    /// Whether the stop flag (a signal) ended the run.
    pub stopped: bool,
    /// The first error of any thread; it stopped all threads.
    pub error: Option<EventError>,
}

struct Shared<'a> {
    limits: Limits,
    stop: &'a AtomicBool,
    halt: AtomicBool,
    claimed: AtomicU64,
    barrier: Barrier,
    start: AtomicU64,
    ends: Vec<AtomicU64>,
    live: Vec<LiveSlot>,
    /// Per-thread event times for interval percentiles; empty without them
    /// and with sysbench's accounting.
    hists: Vec<IntervalHist>,
    /// sysbench's histogram of the event times (its accounting only).
    log: Option<account::LogHistogram>,
    done: AtomicU64,
}

/// The timed loop of one thread. Integer work only between clock reads.
fn drive<W: Workload>(w: &W, index: usize, sh: &Shared) -> ThreadStats {
    let mut st = ThreadStats::new(index);
    st.tid = crate::rt::gettid();
    let mut state = w.thread(index);
    let clock = SystemClock::new(ClockId::Monotonic);
    sh.barrier.wait();
    let start = clock.now();
    // The first thread past the barrier sets the common start.
    let _ = sh
        .start
        .compare_exchange(0, start, Ordering::Relaxed, Ordering::Relaxed);
    let deadline = match sh.limits.time_ns {
        0 => u64::MAX,
        t => start.saturating_add(t),
    };
    let ctl = EventCtl {
        stop: sh.stop,
        halt: &sh.halt,
        deadline,
        clock,
    };
    let slot = &sh.live[index];
    match w.accounting() {
        Accounting::Lean => {
            let hist = sh.hists.get(index);
            let mut t0 = start;
            let mut events = 0;
            while may_start(sh) && event(w, &mut state, &mut st, &ctl, sh) {
                let t1 = clock.now();
                let d = t1.saturating_sub(t0);
                st.hist.record(d);
                st.windows.record(d);
                if let Some(h) = hist {
                    h.record(d);
                }
                events += 1;
                slot.publish(events, &st.tally);
                t0 = t1;
                if t1 >= deadline {
                    break;
                }
            }
        }
        Accounting::Sysbench => {
            // sysbench's steps, numbered as in the `account` module.
            let timer = account::TimerLock::new();
            let log = sh.log.as_ref();
            let mut rng = Xoroshiro::from_clock(index as u64);
            let mut events = 0;
            while may_start(sh) {
                if sh.limits.time_ns > 0 && clock.now() >= deadline {
                    break;
                }
                let t0 = timer.read(&clock, |t| t);
                if !event(w, &mut state, &mut st, &ctl, sh) {
                    break;
                }
                let d = timer.read(&clock, |t1| {
                    let d = t1.saturating_sub(t0);
                    st.hist.record(d);
                    st.windows.record(d);
                    d
                });
                if let Some(log) = log {
                    log.record(d, &mut rng);
                }
                events += 1;
                slot.publish(events, &st.tally);
            }
        }
    }
    if st.error.is_none() {
        if let Err(e) = w.thread_done(&mut state, &mut st.tally) {
            st.error = Some(e);
            sh.halt.store(true, Ordering::Relaxed);
        }
    }
    let end = clock.now();
    slot.publish(st.events(), &st.tally);
    st.busy_ns = end.saturating_sub(start);
    sh.ends[index].store(end, Ordering::Relaxed);
    sh.done.fetch_add(1, Ordering::Release);
    st
}

/// Whether another event may start: no signal, no other thread's error, and
/// (with an event limit) a number left to take.
#[inline(always)]
fn may_start(sh: &Shared) -> bool {
    !(sh.stop.load(Ordering::Relaxed)
        || sh.halt.load(Ordering::Relaxed)
        || sh.limits.events > 0 && sh.claimed.fetch_add(1, Ordering::Relaxed) >= sh.limits.events)
}

/// Runs one event; false when the thread should end (the workload has no
/// more work, or the event failed: its error is kept and the others stop).
#[inline(always)]
fn event<W: Workload>(
    w: &W,
    state: &mut W::Thread,
    st: &mut ThreadStats,
    ctl: &EventCtl,
    sh: &Shared,
) -> bool {
    match w.event(state, &mut st.tally, ctl) {
        Ok(more) => more,
        Err(e) => {
            st.error = Some(e);
            sh.halt.store(true, Ordering::Relaxed);
            false
        }
    }
}

/// A workload that can be run: the timing loop instantiated in this crate (see the
/// module's documentation). `compiled_here!(T)` implements it for `T`.
pub trait Bench: Workload {
    /// Runs the workload on `limits.threads` threads until a limit, its end,
    /// an error, or `stop`. Every `report.every` (if not zero) `on_interval`
    /// gets the totals so far; it runs on the calling thread, which does no
    /// measuring.
    fn run(
        &self,
        limits: Limits,
        stop: &AtomicBool,
        report: Report,
        on_interval: &mut dyn FnMut(&Snapshot),
    ) -> Outcome;
}

/// Implements [`Bench`] for a workload, in the module that defines it.
macro_rules! compiled_here {
    ($t:ty) => {
        impl $crate::bench::Bench for $t {
            #[inline(never)]
            fn run(
                &self,
                limits: $crate::bench::Limits,
                stop: &std::sync::atomic::AtomicBool,
                report: $crate::bench::Report,
                on_interval: &mut dyn FnMut(&$crate::bench::Snapshot),
            ) -> $crate::bench::Outcome {
                $crate::bench::run(self, limits, stop, report, on_interval)
            }
        }
    };
}
use compiled_here;

/// What [`Bench::run`] does, for any workload.
fn run<W: Workload>(
    w: &W,
    limits: Limits,
    stop: &AtomicBool,
    report: Report,
    on_interval: &mut dyn FnMut(&Snapshot),
) -> Outcome {
    let n = limits.threads.max(1);
    let interval = report.every;
    let sysbench = w.accounting() == Accounting::Sysbench;
    let sh = Shared {
        limits,
        stop,
        halt: AtomicBool::new(false),
        claimed: AtomicU64::new(0),
        barrier: Barrier::new(n),
        start: AtomicU64::new(0),
        ends: (0..n).map(|_| AtomicU64::new(0)).collect(),
        live: (0..n).map(|_| LiveSlot::default()).collect(),
        hists: match sysbench || interval.is_zero() || report.percentile <= 0.0 {
            true => Vec::new(),
            false => (0..n).map(|_| IntervalHist::new()).collect(),
        },
        log: (sysbench && report.latency_histogram).then(account::LogHistogram::new),
        done: AtomicU64::new(0),
    };
    let mut pct = Percentiles::new(match &sh.log {
        Some(log) => log.buckets(),
        None => sh.hists.buckets(),
    });
    let clock = SystemClock::new(ClockId::Monotonic);
    let threads = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let sh = &sh;
                s.spawn(move || drive(w, i, sh))
            })
            .collect();
        if !interval.is_zero() {
            let step = interval.as_nanos() as u64;
            let mut next = step;
            while sh.done.load(Ordering::Acquire) < n as u64 {
                std::thread::sleep(Duration::from_millis(10).min(interval));
                let start = sh.start.load(Ordering::Relaxed);
                if start == 0 {
                    continue;
                }
                let now = clock.now().saturating_sub(start);
                let done = sh.done.load(Ordering::Acquire);
                if now >= next && done < n as u64 {
                    let mut snap = Snapshot {
                        elapsed_ns: now,
                        running: n as u64 - done,
                        pct_ns: match &sh.log {
                            Some(log) => pct.since_last(log, report.percentile),
                            None => pct.since_last(&sh.hists[..], report.percentile),
                        },
                        ..Snapshot::default()
                    };
                    for slot in &sh.live {
                        let (e, t) = slot.read();
                        snap.events += e;
                        snap.tally.merge(&t);
                    }
                    on_interval(&snap);
                    next += step;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("bench threads do not panic"))
            .collect::<Vec<_>>()
    });
    let start = sh.start.load(Ordering::Relaxed);
    let end = sh
        .ends
        .iter()
        .map(|e| e.load(Ordering::Relaxed))
        .max()
        .unwrap_or(start);
    let error = threads.iter().find_map(|t| t.error);
    Outcome {
        threads,
        elapsed_ns: end.saturating_sub(start),
        stopped: stop.load(Ordering::Relaxed),
        error,
    }
}

/// An event that does nothing, under one accounting: what remains is the
/// timing loop itself.
struct Empty(Accounting);

impl Workload for Empty {
    type Thread = ();
    fn thread(&self, _: usize) {}
    fn event(&self, _: &mut (), _: &mut Tally, _: &EventCtl) -> Result<bool, EventError> {
        Ok(true)
    }
    fn accounting(&self) -> Accounting {
        self.0
    }
}

compiled_here!(Empty);

/// The cost (ns) that the timing loop adds to every event under `accounting`
/// (clock reads, stop checks, statistics, live counters): one thread runs
/// 20 000 empty events five times; the shortest run's time per event, so
/// that a preemption during the few milliseconds this takes does not count
/// as overhead.
pub fn timing_overhead(accounting: Accounting) -> f64 {
    let limits = Limits {
        threads: 1,
        time_ns: 0,
        events: 20_000,
    };
    (0..5)
        .map(|_| {
            let out =
                Empty(accounting).run(limits, &AtomicBool::new(false), Report::NONE, &mut |_| {});
            out.elapsed_ns as f64 / limits.events as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Runs `w` for a test, without a stop flag or interval reports: `threads`,
/// `time_ns` (0: none), `events` (0: none).
#[cfg(test)]
pub(crate) fn test_run<W: Workload>(w: &W, threads: usize, time_ns: u64, events: u64) -> Outcome {
    let limits = Limits {
        threads,
        time_ns,
        events,
    };
    run(
        w,
        limits,
        &AtomicBool::new(false),
        Report::NONE,
        &mut |_| {},
    )
}

/// How many of the pages that hold the `len` bytes from `start` are not yet
/// in memory (mincore(2)): a page a timed run touches first would take a page
/// fault inside the run.
#[cfg(test)]
pub(crate) fn pages_not_resident(start: *const u8, len: usize) -> usize {
    let page = crate::load::sys::page_size();
    let first = start as usize & !(page - 1);
    let span = start as usize + len - first;
    let mut resident = vec![0u8; span.div_ceil(page)];
    // SAFETY: mincore(2) on pages of a live allocation of the caller's, with
    // one byte per page to fill.
    let rc = unsafe { libc::mincore(first as *mut libc::c_void, span, resident.as_mut_ptr()) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    resident.iter().filter(|r| **r & 1 == 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Accounting; 2] = [Accounting::Lean, Accounting::Sysbench];

    #[test]
    fn event_limit_is_exact_over_threads() {
        for a in BOTH {
            let out = test_run(&Empty(a), 3, 0, 1000);
            let total: u64 = out.threads.iter().map(|t| t.events()).sum();
            assert_eq!(total, 1000);
            assert_eq!(out.threads.len(), 3);
            assert!(out.error.is_none() && !out.stopped);
            let all = ThreadStats::total(&out.threads);
            assert_eq!(all.events(), 1000);
            assert_eq!(all.hist.len(), 1000);
            // Per-event times chain end to start (lean) or are parts of it
            // (sysbench), so they sum to at most the window.
            assert!(all.moments().sum as u64 <= out.elapsed_ns * 3, "{a:?}");
        }
    }

    #[test]
    fn time_limit_ends_the_run_and_intervals_report() {
        let never = AtomicBool::new(false);
        let limits = Limits {
            threads: 1,
            time_ns: 300_000_000,
            events: 0,
        };
        let report = Report {
            every: Duration::from_millis(30),
            percentile: 95.0,
            latency_histogram: true,
        };
        for a in BOTH {
            let mut snaps = Vec::new();
            let out = Empty(a).run(limits, &never, report, &mut |s| snaps.push(*s));
            assert!(out.elapsed_ns >= 300_000_000);
            assert!(!snaps.is_empty());
            assert!(snaps.windows(2).all(|w| w[0].events <= w[1].events));
            assert!(snaps.last().unwrap().events <= out.threads[0].events());
            assert!(snaps.iter().all(|s| s.running == 1));
            // Empty events take some ns, far below a ms (sysbench's scale
            // starts at 1 µs).
            assert!(
                snaps.iter().any(|s| (1..1_000_000).contains(&s.pct_ns)),
                "{a:?}"
            );
        }
        // Without sysbench's latency histogram (`--percentile=0` there), its
        // accounting has no event times to give a percentile from; the lean
        // accounting keeps its own.
        let without = Report {
            latency_histogram: false,
            ..report
        };
        for a in BOTH {
            let mut snaps = Vec::new();
            Empty(a).run(limits, &never, without, &mut |s| snaps.push(*s));
            assert!(snaps.iter().any(|s| s.events > 0), "{a:?}");
            let with_pct = snaps.iter().filter(|s| s.pct_ns > 0).count();
            match a {
                Accounting::Sysbench => assert_eq!(with_pct, 0),
                Accounting::Lean => assert!(with_pct > 0),
            }
        }
    }

    #[test]
    fn stop_flag_ends_the_run() {
        let stop = AtomicBool::new(true);
        let limits = Limits {
            threads: 2,
            time_ns: 0,
            events: 0,
        };
        for a in BOTH {
            let out = Empty(a).run(limits, &stop, Report::NONE, &mut |_| {});
            assert!(out.stopped);
            assert_eq!(out.threads.iter().map(|t| t.events()).sum::<u64>(), 0);
        }
    }

    #[test]
    fn overhead_is_positive() {
        for a in BOTH {
            assert!(timing_overhead(a) > 0.0);
        }
    }
}
