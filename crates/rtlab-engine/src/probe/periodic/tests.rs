use super::*;
use std::cell::{Cell, RefCell};

/// A clock that wakes at the scripted times (or at the deadline when the
/// script has ended), never before the deadline asked.
struct WakeAt {
    now: Cell<u64>,
    wakes: RefCell<std::vec::IntoIter<u64>>,
    asked: RefCell<Vec<u64>>,
}

impl WakeAt {
    fn new(wakes: Vec<u64>) -> Self {
        WakeAt {
            now: Cell::new(0),
            wakes: RefCell::new(wakes.into_iter()),
            asked: RefCell::new(Vec::new()),
        }
    }
}

impl Clock for WakeAt {
    fn now(&self) -> u64 {
        self.now.get()
    }
    fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
        self.asked.borrow_mut().push(deadline);
        let at = self.wakes.borrow_mut().next().unwrap_or(deadline);
        self.now.set(at.max(deadline).max(self.now.get()));
        Ok(())
    }
}

/// Counts the levels written.
#[derive(Default)]
struct Levels(Vec<bool>);

impl Output for Levels {
    fn set(&mut self, high: bool) -> bool {
        self.0.push(high);
        true
    }
}

fn stats() -> PeriodStats {
    PeriodStats::new(1000, 100)
}

#[test]
fn an_exact_schedule_has_no_jitter_and_the_nominal_frequency() {
    let clock = WakeAt::new(vec![]);
    let mut s = stats();
    let mut out = Levels::default();
    let end = run_loop(
        &clock,
        &mut out,
        1000,
        11_000,
        &mut s,
        &AtomicBool::new(false),
    );
    assert_eq!(end, LoopEnd::Done);
    assert_eq!(s.toggles, 11);
    assert_eq!(s.periods.count, 10);
    assert_eq!((s.periods.min, s.periods.max), (1000, 1000));
    assert_eq!(s.jitter_moments.max, 0);
    assert_eq!((s.late, s.missed, s.out_of_tolerance), (0, 0, 0));
    assert!((s.achieved_hz() - 1e6).abs() < 1e-6);
    assert!(s.held());
    assert_eq!(out.0.len(), 11);
    assert!(out.0.windows(2).all(|w| w[0] != w[1]), "levels alternate");
}

#[test]
fn a_wake_up_past_the_next_slot_skips_it_and_counts_it_missed() {
    // Slots at 1000, 2000, ...; the second wake-up comes at 4200: slots 3000
    // and 4000 have passed, so the next one asked is 5000.
    let clock = WakeAt::new(vec![1000, 4200]);
    let mut s = stats();
    let mut out = Levels::default();
    run_loop(
        &clock,
        &mut out,
        1000,
        7000,
        &mut s,
        &AtomicBool::new(false),
    );
    assert_eq!(clock.asked.borrow()[..3], [1000, 2000, 5000]);
    // Periods: 3200 (late: round(3.2) − 1 = 2 missed), 800, 1000, 1000.
    assert_eq!(s.periods.count, 4);
    assert_eq!((s.late, s.missed), (1, 2));
    assert_eq!(s.out_of_tolerance, 2, "3200 and 800 are beyond 100 ns");
    assert_eq!(s.jitter_moments.max, 2200);
    assert_eq!(s.worst_at, 1);
    // 4 periods over 6000 ns.
    assert!((s.achieved_hz() - 4.0e9 / 6000.0).abs() < 1e-3);
    assert!(!s.held());
}

#[test]
fn missed_periods_are_the_rounded_length_minus_one_above_one_and_a_half() {
    let mut s = stats();
    for p in [1499, 1500, 1501, 2499, 2500, 10_000] {
        s.record_period(p);
    }
    // 1499 and 1500 are not late; 1501 → 1, 2499 → 1, 2500 → 2, 10000 → 9.
    assert_eq!(s.late, 4);
    assert_eq!(s.missed, 13);
}

#[test]
fn achieved_frequency_is_periods_over_the_span() {
    let mut s = stats();
    for t in [0, 900, 2100, 3000] {
        s.toggle(t);
    }
    assert_eq!(s.periods.count, 3);
    assert!((s.achieved_hz() - 1e6).abs() < 1e-6);
    // The mean period is on time but two periods are 10% and 20% off: not held.
    assert_eq!(s.out_of_tolerance, 1);
    assert!(!s.held());
    let mut wide = PeriodStats::new(1000, 200);
    for t in [0, 900, 2100, 3000] {
        wide.toggle(t);
    }
    assert!(wide.held());
    assert!(!PeriodStats::new(1000, 100).held(), "nothing measured");
}

#[test]
fn a_raised_stop_ends_the_loop_before_any_toggle() {
    let clock = WakeAt::new(vec![]);
    let mut s = stats();
    let end = run_loop(
        &clock,
        &mut NoOutput,
        1000,
        5000,
        &mut s,
        &AtomicBool::new(true),
    );
    assert_eq!(end, LoopEnd::Stopped);
    assert_eq!(s.toggles, 0);
}

#[test]
fn spin_waits_reach_the_deadline() {
    let c = crate::rt::clock::SystemClock::new(crate::rt::clock::ClockId::Monotonic);
    for spin_ns in [u64::MAX, 50_000] {
        let s = Spin { clock: c, spin_ns };
        let t = s.now() + 200_000;
        s.sleep_until(t).unwrap();
        assert!(s.now() >= t);
    }
}

#[test]
fn a_file_output_holds_the_last_level() {
    let dir = std::env::temp_dir().join(format!("rtlab-periodic-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&dir)
        .unwrap();
    let mut out = FileOutput(f);
    assert!(out.set(true));
    assert_eq!(std::fs::read(&dir).unwrap(), b"1");
    assert!(out.set(false));
    assert_eq!(std::fs::read(&dir).unwrap(), b"0");
    std::fs::remove_file(&dir).unwrap();
}
