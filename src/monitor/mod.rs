pub mod alert;
pub mod cut;
pub mod unit;

use crate::step::Observer;
use crate::store::{Retention, Store, Window, PASS_ROWS};
use crate::units::Human;
use alert::Alerts;
use cut::{Closed, Cut, Period};
use rtlab_engine::probe::latency::LiveSnapshot;
use rtlab_engine::probe::samples::Sample;
use rtlab_engine::rt::clock::{Clock, ClockId, SystemClock};
use rtlab_engine::rt::{mem, signals};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What does not change from window to window.
pub struct Setup {
    pub window_ns: i64,
    pub retention: Retention,
    pub session: String,
    pub host: String,
    pub kernel: String,
    /// The CPU of each measuring thread (-1: not pinned).
    pub cpus: Vec<i64>,
    /// The period and deadline of each measuring thread.
    pub periods: Vec<Period>,
    /// Print a line per closed window.
    pub verbose: bool,
}

/// The wall clock, Unix ns.
pub fn now_ns() -> i64 {
    chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
}

/// The wall clock (Unix ns) and the probe's clock (ns), read together.
pub type Clocks = Box<dyn FnMut() -> (i64, u64)>;

/// The real clocks, for a probe sleeping on `probe`.
pub fn clocks(probe: ClockId) -> Clocks {
    let clock = SystemClock::new(probe);
    Box::new(move || (now_ns(), clock.now()))
}

/// How long after a boundary its window is closed: every wake-up before the
/// boundary has been taken from the rings by then.
const GRACE_NS: i64 = 50_000_000;

/// The [`Observer`] that cuts the probe's wake-ups into windows and stores them.
pub struct Monitor<'a> {
    store: &'a mut Store,
    setup: Setup,
    alerts: Alerts,
    cut: Cut,
    clocks: Clocks,
    /// Rows stored and wake-ups in them.
    pub stored: (usize, i64),
    /// The first failure to store; it stops the probe.
    pub error: Option<anyhow::Error>,
}

impl<'a> Monitor<'a> {
    pub fn new(store: &'a mut Store, setup: Setup, alerts: Alerts, mut clocks: Clocks) -> Self {
        let (now, _) = clocks();
        Monitor {
            store,
            alerts,
            cut: Cut::new(setup.window_ns, setup.periods.clone(), now),
            setup,
            clocks,
            stored: (0, 0),
            error: None,
        }
    }

    /// Stores each window `close` closes (one transaction per window, all
    /// CPUs), then runs retention and the alerts.
    fn close(&mut self, close: impl FnOnce(&mut Cut, &mut dyn FnMut(Closed<'_>))) {
        let mut closed: Vec<Vec<Window>> = Vec::new();
        let s = &self.setup;
        close(&mut self.cut, &mut |c| closed.push(rows(s, &c)));
        for rows in closed {
            if self.error.is_some() {
                return;
            }
            let end_ns = rows.first().map_or(0, |w| w.end_ns);
            let saved = self.store.save_windows(&rows).and_then(|()| {
                self.store
                    .downsample(end_ns, &self.setup.retention, PASS_ROWS)
            });
            if let Err(e) = saved {
                self.error = Some(e);
                signals::stop_flag().store(true, Ordering::SeqCst);
                return;
            }
            self.stored.0 += rows.len();
            self.stored.1 += rows.iter().map(|w| w.samples).sum::<i64>();
            for w in &rows {
                if self.setup.verbose {
                    println!("{}", line(w));
                }
                self.alerts.check(w);
            }
        }
    }
}

/// A closed window's rows, one per thread.
fn rows(s: &Setup, c: &Closed<'_>) -> Vec<Window> {
    c.accs
        .iter()
        .zip(&s.cpus)
        .map(|(acc, &cpu)| {
            let mut w = Window {
                level: crate::store::Level::Window,
                session: s.session.clone(),
                host: s.host.clone(),
                kernel: s.kernel.clone(),
                cpu,
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                partial: c.partial,
                windows: 1,
                samples: acc.count,
                overruns: acc.overruns,
                misses: acc.misses,
                min_ns: if acc.count > 0 { acc.min_ns as i64 } else { 0 },
                p50_ns: 0,
                p99_ns: 0,
                p999_ns: 0,
                max_ns: acc.max_ns as i64,
                max_at_ns: acc.max_at_ns,
                hist: Default::default(),
            };
            w.set_hist(&acc.hist);
            w
        })
        .collect()
}

/// One closed window as a line of the log.
pub fn line(w: &Window) -> String {
    let h = |ns: i64| Human(ns.max(0) as u64).to_string();
    format!(
        "{} cpu{} samples {} p99 {} max {} overruns {} misses {}{}",
        crate::format::text::windows::time(w.end_ns),
        w.cpu,
        w.samples,
        h(w.p99_ns),
        h(w.max_ns),
        w.overruns,
        w.misses,
        if w.partial { " (partial)" } else { "" }
    )
}

impl Observer for Monitor<'_> {
    fn start(&mut self, _names: &[String]) {
        // Window histograms (~230 kB each) are made and freed for as long as
        // the monitor runs: each its own mapping, so that the RSS stays flat.
        mem::map_large_allocations(128 * 1024);
        let (now, _) = (self.clocks)();
        self.cut = Cut::new(self.setup.window_ns, self.setup.periods.clone(), now);
    }

    fn wants_samples(&self) -> bool {
        true
    }

    fn sample_poll(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn thread_histograms(&self) -> bool {
        false
    }

    fn samples(&mut self, thread: usize, samples: &[Sample]) {
        let (wall, probe) = (self.clocks)();
        let offset = wall - probe as i64;
        for s in samples {
            self.cut.add(thread, s.at_ns as i64 + offset, s.latency_ns);
        }
    }

    fn latency(&mut self, _snaps: &[LiveSnapshot]) {
        let (now, _) = (self.clocks)();
        self.close(|cut, f| cut.close_until(now - GRACE_NS, f));
    }

    fn end(&mut self) {
        self.close(|cut, f| cut.finish(f));
        self.alerts.finish();
    }
}

#[cfg(test)]
#[path = "day_tests.rs"]
mod day_tests;
