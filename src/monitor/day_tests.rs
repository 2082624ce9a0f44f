//! Weeks of monitoring on scripted clocks, fed as the probe feeds it: the rows
//! stay bounded by retention, the store file and this thread's heap stay flat,
//! and every window is aligned.

use super::*;
use crate::store::{Level, WindowFilter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::rc::Rc;

/// The system allocator, counting the bytes each thread holds.
struct Counting;

thread_local! {
    static HELD: Cell<i64> = const { Cell::new(0) };
}

fn held(delta: i64) {
    let _ = HELD.try_with(|h| h.set(h.get() + delta));
}

// SAFETY: every call goes to the system allocator unchanged; the counting
// touches a const-initialised thread-local that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        held(l.size() as i64);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        held(-(l.size() as i64));
        System.dealloc(p, l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        held(l.size() as i64);
        System.alloc_zeroed(l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        held(new as i64 - l.size() as i64);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const SEC: i64 = 1_000_000_000;
const MIN: i64 = 60 * SEC;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;
/// 2026-11-23 00:00:00 UTC.
const MIDNIGHT: i64 = 1_795_392_000 * SEC;
/// The probe's clock reads this much less than the wall clock.
const PROBE_BEHIND: i64 = MIDNIGHT - 12_345 * SEC;

/// The probe's period, and how often its wake-ups are taken.
const STEP: i64 = 10 * SEC;

/// A monitor of one CPU, a wake-up every [`STEP`], windows of 15 min, windows kept
/// 1 h, hourly rows 3 h, daily rows 1 d; its clocks read `wall`.
fn monitor<'a>(store: &'a mut Store, wall: &Rc<Cell<i64>>) -> Monitor<'a> {
    let setup = Setup {
        window_ns: 15 * MIN,
        retention: Retention {
            windows_ns: HOUR,
            hourly_ns: 3 * HOUR,
            daily_ns: DAY,
        },
        session: "s1".into(),
        host: "board".into(),
        kernel: "6.18".into(),
        cpus: vec![1],
        periods: vec![Period {
            interval_ns: STEP as u64,
            deadline_ns: 100_000,
        }],
        verbose: false,
    };
    let w = Rc::clone(wall);
    let clocks: Clocks = Box::new(move || (w.get(), (w.get() - PROBE_BEHIND) as u64));
    Monitor::new(store, setup, Alerts::new(None, None, 1), clocks)
}

/// Runs the monitor from `wall` for `ns`, as the probe would: a wake-up every
/// [`STEP`] (its latency scripted), taken from the ring at once.
fn run_for(mon: &mut Monitor<'_>, wall: &Cell<i64>, ns: i64, batch: &mut Vec<Sample>) {
    for _ in 0..ns / STEP {
        let at = wall.get() + STEP / 2;
        let cycle = (at / STEP) as u64;
        batch.clear();
        batch.push(Sample {
            cycle,
            latency_ns: 1_000 + cycle * 7_919 % 90_000,
            at_ns: (at - PROBE_BEHIND) as u64,
        });
        wall.set(wall.get() + STEP);
        mon.samples(0, batch);
        mon.latency(&[]);
    }
}

fn count(store: &Store, level: Level) -> usize {
    let f = WindowFilter {
        level: Some(level),
        ..Default::default()
    };
    store.windows(&f).unwrap().len()
}

#[test]
fn weeks_of_windows_keep_rows_store_and_heap_flat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("day.db");
    let mut store = Store::open(&path).unwrap();
    // Started mid-window: 00:02:30.
    let wall = Rc::new(Cell::new(MIDNIGHT + 150 * SEC));
    let mut mon = monitor(&mut store, &wall);
    mon.start(&["cpu1".into()]);
    let mut batch = Vec::with_capacity(4);
    let size = |p: &std::path::Path| {
        let wal = p.with_extension("db-wal");
        std::fs::metadata(p).unwrap().len() + std::fs::metadata(wal).map_or(0, |m| m.len())
    };
    // Three days (288 windows): hour → day merges and day deletions all run.
    run_for(&mut mon, &wall, 3 * DAY, &mut batch);
    let (rows_n, heap_n, size_n) = (mon.stored.0, HELD.with(Cell::get), size(&path));
    assert_eq!(
        rows_n, 288,
        "every 15 min window stored, the first one partial"
    );
    let mut max = (0, 0, 0);
    // Then ten times as long, checking the bounds every hour.
    for _ in 0..27 * 24 {
        run_for(&mut mon, &wall, HOUR, &mut batch);
        assert!(mon.cut.open_windows() <= 1);
        let s = &*mon.store;
        let (w, h, d) = (
            count(s, Level::Window),
            count(s, Level::Hour),
            count(s, Level::Day),
        );
        max = (max.0.max(w), max.1.max(h), max.2.max(d));
        assert!(w <= 5, "an hour of windows and the one closing: {w}");
        assert!(h <= 5, "3 h of hourly rows and the 2 being filled: {h}");
        assert!(d <= 3, "a day of daily rows and the 2 being filled: {d}");
    }
    eprintln!(
        "most rows: {max:?}, heap {heap_n} → {}, store {size_n} → {}",
        HELD.with(Cell::get),
        size(&path)
    );
    assert_eq!(mon.stored.0, 10 * rows_n);
    let heap = HELD.with(Cell::get) - heap_n;
    assert!(heap.abs() < 64 * 1024, "heap grew by {heap} bytes");
    let grown = size(&path) as i64 - size_n as i64;
    assert!(
        grown < size_n as i64 / 10 + 64 * 1024,
        "store {size_n} → {} bytes",
        size(&path)
    );
    mon.end();
    let all = mon.store.windows(&WindowFilter::default()).unwrap();
    let (last, full) = all.split_last().unwrap();
    assert!(last.partial, "stopped inside a window: {last:?}");
    assert_eq!(
        last.end_ns,
        wall.get() - STEP / 2 + 1,
        "at its last wake-up"
    );
    for w in full.iter().filter(|w| w.level == Level::Window) {
        assert_eq!(w.start_ns % (15 * MIN), 0, "{w:?}");
        assert_eq!(w.end_ns - w.start_ns, 15 * MIN);
        assert!(!w.partial);
        assert_eq!(w.samples, 90);
    }
    for w in full.iter().filter(|w| w.level != Level::Window) {
        let span = if w.level == Level::Hour { HOUR } else { DAY };
        assert_eq!(w.start_ns % span, 0);
        assert_eq!(w.samples, w.windows * 90, "{w:?}");
    }
}
