//! Proves that the measuring loops allocate nothing: a counting global allocator
//! counts the allocations made by this thread while `run_loop` (latency) and
//! `spin` (noise) run against the real clock, and while time windows record.
//! The ipc pairs and the bench threads run on threads of their own: there, the
//! allocations of every thread are counted, and must not grow with the loops.

use rtlab_engine::bench::cpu::Cpu;
use rtlab_engine::bench::{Bench, Limits, Report};
use rtlab_engine::probe::ipc::{self, IpcConfig, PairEnd, PairSpec};
use rtlab_engine::probe::latency::{
    run_loop, LiveStats, LoopEnd, LoopSpec, SpikeMarker, SpikeMarks, ThreadStats,
};
use rtlab_engine::probe::net::client::ThreadSetup;
use rtlab_engine::probe::noise::{spin, GapMarker, GapMarks, GapStats, Monotonic, Scale};
use rtlab_engine::rt::clock::{Clock, ClockId, SystemClock};
use rtlab_engine::rt::ipc::Mechanism;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::stats::windows::Windows;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

/// Allocations of every thread while [`ALL_ON`] is set.
static ALL: AtomicU64 = AtomicU64::new(0);
static ALL_ON: AtomicBool = AtomicBool::new(false);

/// Held by every test of this binary, so that none allocates while the ipc test
/// counts the allocations of every thread.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Waits for the other tests of this binary to finish.
fn alone() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn note() {
    if ALL_ON.load(Ordering::Relaxed) {
        ALL.fetch_add(1, Ordering::Relaxed);
    }
    // `try_with`: during thread teardown the locals may be gone.
    let _ = COUNTING.try_with(|c| {
        if c.get() {
            let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        }
    });
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note();
        System.alloc_zeroed(l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_measuring_loop_makes_zero_allocations() {
    let _alone = alone();
    let clock = SystemClock::new(ClockId::Monotonic);
    // Every wake-up is also marked, into a plain file standing for trace_marker.
    let marks = SpikeMarks {
        path: std::env::temp_dir().join(format!("rtlab-no-alloc-{}", std::process::id())),
        threshold_ns: 0,
    };
    // Absolute and relative sleeps, each handing every sample to a ring small
    // enough to fill, so that both the push and the counted drop run.
    for relative in [false, true] {
        // A small trace so that it fills and compacts during the run.
        let mut stats = ThreadStats::keeping(1_000, 16, 4);
        std::fs::write(&marks.path, b"").unwrap();
        let marker = SpikeMarker::open(&marks, 0).unwrap();
        let live = LiveStats::with_samples(128).with_marker(Some(marker));
        let stop = AtomicBool::new(false);
        let spec = LoopSpec {
            interval_ns: 50_000,
            loops: 300,
            end_ns: None,
            deadline_ns: 1,
            breaktrace_ns: None,
            relative,
            histograms: true,
        };
        let first = clock.now() + spec.interval_ns;

        ALLOCS.with(|a| a.set(0));
        COUNTING.with(|c| c.set(true));
        let end = run_loop(&clock, &spec, first, &mut stats, &live, &stop);
        COUNTING.with(|c| c.set(false));

        assert_eq!(end, LoopEnd::LoopsDone);
        assert_eq!(stats.moments.count, 300);
        assert!(
            stats.trace.block() > 1,
            "the trace compacted during the run"
        );
        assert!(
            stats.windows.block() > 1,
            "the windows compacted during the run"
        );
        let ring = live.samples().unwrap();
        assert_eq!(ring.dropped(), 300 - ring.capacity() as u64);
        let marked = std::fs::read_to_string(&marks.path).unwrap();
        assert_eq!(marked.lines().count(), 300, "one marker a wake-up");
        assert_eq!(
            ALLOCS.with(|a| a.get()),
            0,
            "allocations inside the measuring loop (relative: {relative})"
        );
    }

    // The noise loop, with a threshold low enough that it records gaps, and
    // every gap marked.
    std::fs::write(&marks.path, b"").unwrap();
    let gap_marks = GapMarks {
        path: marks.path.clone(),
        threshold_ns: 0,
    };
    let marker = GapMarker::open(&gap_marks, Scale::NS, 0, 0).unwrap();
    let mut gaps = GapStats::new();
    let stop = AtomicBool::new(false);
    ALLOCS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    spin(
        &Monotonic(clock),
        Scale::NS,
        0,
        20_000_000,
        &stop,
        &mut gaps,
        Some(&marker),
    );
    COUNTING.with(|c| c.set(false));
    assert!(gaps.moments.count > 0, "the loop recorded gaps");
    let marked = std::fs::read_to_string(&marks.path).unwrap();
    std::fs::remove_file(&marks.path).unwrap();
    assert_eq!(
        marked.lines().count() as u64,
        gaps.moments.count,
        "one marker a gap"
    );
    assert_eq!(
        ALLOCS.with(|a| a.get()),
        0,
        "allocations inside the noise loop"
    );

    // The counter itself works: an allocation while counting is seen.
    COUNTING.with(|c| c.set(true));
    let v: Vec<u8> = Vec::with_capacity(64);
    COUNTING.with(|c| c.set(false));
    drop(v);
    assert_eq!(ALLOCS.with(|a| a.get()), 1);
}

#[test]
fn the_periodic_loop_makes_zero_allocations() {
    let _alone = alone();
    use rtlab_engine::probe::periodic::{self, FileOutput, PeriodStats, Spin};
    let clock = SystemClock::new(ClockId::Monotonic);
    let path = std::env::temp_dir().join(format!("rtlab-noalloc-{}", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let mut out = FileOutput(file);
    let spin = Spin {
        clock,
        spin_ns: 20_000,
    };
    let mut stats = PeriodStats::new(50_000, 5_000);
    stats.warm_up();
    let stop = AtomicBool::new(false);
    let start = clock.now() + 50_000;
    ALLOCS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    let end = periodic::run_loop(
        &spin,
        &mut out,
        start,
        start + 10_000_000,
        &mut stats,
        &stop,
    );
    COUNTING.with(|c| c.set(false));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(end, periodic::LoopEnd::Done);
    // However busy the machine, the first toggle is at the start, and every
    // toggle after it closes a period.
    assert!(stats.toggles >= 1);
    assert_eq!(stats.periods.count, stats.toggles - 1);
    assert_eq!(stats.write_errors, 0);
    assert_eq!(
        ALLOCS.with(|a| a.get()),
        0,
        "allocations in the periodic loop"
    );
}

#[test]
fn recording_into_time_windows_never_allocates() {
    let _alone = alone();
    let mut w = Windows::new();
    ALLOCS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    // Enough values to fill and compact the windows a dozen times, over the
    // whole range of buckets (up to 2^40 ns).
    for i in 0..200_000u64 {
        w.record(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (24 + i % 40));
    }
    COUNTING.with(|c| c.set(false));
    assert!(w.block() >= 4_096, "block {}", w.block());
    assert_eq!(ALLOCS.with(|a| a.get()), 0, "allocations while recording");
}

/// Every allocation of every thread while a cpu bench of `events` events
/// runs on 2 threads.
fn bench_allocations(events: u64) -> u64 {
    let stop = AtomicBool::new(false);
    let limits = Limits {
        threads: 2,
        time_ns: 0,
        events,
    };
    ALL.store(0, Ordering::Relaxed);
    ALL_ON.store(true, Ordering::Relaxed);
    let out = Cpu { max_prime: 100 }.run(limits, &stop, Report::NONE, &mut |_| {});
    ALL_ON.store(false, Ordering::Relaxed);
    let done: u64 = out.threads.iter().map(|t| t.events()).sum();
    assert_eq!(done, events);
    ALL.load(Ordering::Relaxed)
}

#[test]
fn the_bench_timing_loop_allocates_nothing_however_many_events() {
    let _alone = alone();
    // Set-up (threads, their statistics and windows) allocates the same for
    // 10 events as for 20 000, which compact every thread's windows several
    // times; a loop that allocated would add thousands.
    let (few, many) = (bench_allocations(10), bench_allocations(20_000));
    assert!(few > 0, "the count sees the set-up");
    assert!(
        many < few + 20,
        "{few} allocations for 10 events, {many} for 20 000"
    );
}

/// Every allocation of every thread while one ipc run of `loops` wake-ups per
/// pair runs.
fn ipc_allocations(mechanism: Mechanism, loops: u64) -> u64 {
    let setup = || ThreadSetup {
        cpus: Vec::new(),
        policy: Policy::Other,
        priority: 0,
    };
    let cfg = IpcConfig {
        mechanism,
        pi: false,
        loops,
        duration_ns: 0,
        perf: false,
        pairs: vec![PairSpec {
            sender: setup(),
            receiver: setup(),
            interval_ns: 50_000,
        }],
    };
    let stop = AtomicBool::new(false);
    ALL.store(0, Ordering::Relaxed);
    ALL_ON.store(true, Ordering::Relaxed);
    let out = ipc::run(&cfg, &stop, Duration::from_secs(1), &mut |_| {});
    ALL_ON.store(false, Ordering::Relaxed);
    let out = out.expect("the pair runs");
    assert_eq!(out[0].end, PairEnd::Done);
    assert_eq!(out[0].latency.moments.count, loops);
    ALL.load(Ordering::Relaxed)
}

#[test]
fn the_ipc_loops_allocate_nothing_however_many_wake_ups() {
    let _alone = alone();
    for m in [
        Mechanism::Mqueue,
        Mechanism::Mutex,
        Mechanism::Condvar,
        Mechanism::Signal,
        Mechanism::Sem,
        Mechanism::Pipe,
        Mechanism::Eventfd,
        Mechanism::Futex,
    ] {
        // Set-up (threads, link, results) allocates the same for 2 wake-ups
        // as for 200 (about 20 here); a loop that allocated would add at least
        // 198. The other tests of this binary wait (`alone`); the margin is for
        // the test harness's own thread meanwhile.
        let (few, many) = (ipc_allocations(m, 2), ipc_allocations(m, 200));
        assert!(few > 0, "{m:?}: the count sees the set-up");
        assert!(
            many < few + 20,
            "{m:?}: {few} allocations for 2 wake-ups, {many} for 200"
        );
    }
}
