//! `rtlab monitor`: the latency probe run around the clock, its wake-ups cut
//! into windows aligned on the wall clock; each closed window is one row per
//! CPU in the store, committed before the next window's first row, then
//! retention runs and the threshold alert is checked.

pub mod alert;
pub mod unit;

use crate::step::Observer;
use crate::store::{Retention, Store, Window, PASS_ROWS};
use crate::units::Human;
use alert::Alerts;
use rtlab_engine::probe::latency::LiveSnapshot;
use rtlab_engine::probe::samples::Sample;
use rtlab_engine::rt::signals;
use rtlab_engine::stats::hist::LatencyHistogram;
use std::sync::atomic::Ordering;

/// What does not change from window to window.
pub struct Setup {
    pub window_ns: i64,
    pub retention: Retention,
    pub session: String,
    pub host: String,
    pub kernel: String,
    /// The CPU of each measuring thread (-1: not pinned).
    pub cpus: Vec<i64>,
    /// Print a line per closed window.
    pub verbose: bool,
}

/// The wall clock, Unix ns.
pub fn now_ns() -> i64 {
    chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
}

/// One thread's window so far.
struct Acc {
    hist: LatencyHistogram,
    count: i64,
    min_ns: u64,
    max_ns: u64,
    max_at_ns: i64,
    /// Overruns and misses at the start of the window (the probe counts from its start).
    base: (u64, u64),
}

impl Acc {
    fn new() -> Acc {
        Acc {
            hist: LatencyHistogram::new(),
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_at_ns: 0,
            base: (0, 0),
        }
    }
}

/// The [`Observer`] that cuts the probe's wake-ups into windows and stores them.
pub struct Monitor<'a> {
    store: &'a mut Store,
    setup: Setup,
    alerts: Alerts,
    accs: Vec<Acc>,
    snaps: Vec<LiveSnapshot>,
    start_ns: i64,
    close_at_ns: i64,
    /// Rows stored and wake-ups in them.
    pub stored: (usize, i64),
    /// The first failure to store; it stops the probe.
    pub error: Option<anyhow::Error>,
}

impl<'a> Monitor<'a> {
    pub fn new(store: &'a mut Store, setup: Setup, alerts: Alerts) -> Monitor<'a> {
        let n = setup.cpus.len();
        let start_ns = now_ns();
        let close_at_ns = next_boundary(start_ns, setup.window_ns);
        Monitor {
            store,
            alerts,
            accs: (0..n).map(|_| Acc::new()).collect(),
            snaps: vec![LiveSnapshot::default(); n],
            setup,
            start_ns,
            close_at_ns,
            stored: (0, 0),
            error: None,
        }
    }

    /// Closes the current window at `end_ns`: one row per thread, in one
    /// transaction; then retention and alerts.
    fn close(&mut self, end_ns: i64, partial: bool) {
        let s = &self.setup;
        let rows: Vec<Window> = self
            .accs
            .iter_mut()
            .zip(&self.snaps)
            .zip(&s.cpus)
            .map(|((acc, snap), &cpu)| {
                let mut w = Window {
                    level: crate::store::Level::Window,
                    session: s.session.clone(),
                    host: s.host.clone(),
                    kernel: s.kernel.clone(),
                    cpu,
                    start_ns: self.start_ns,
                    end_ns,
                    partial,
                    windows: 1,
                    samples: acc.count,
                    overruns: (snap.overruns - acc.base.0) as i64,
                    misses: (snap.misses - acc.base.1) as i64,
                    min_ns: if acc.count > 0 { acc.min_ns as i64 } else { 0 },
                    p50_ns: 0,
                    p99_ns: 0,
                    p999_ns: 0,
                    max_ns: acc.max_ns as i64,
                    max_at_ns: acc.max_at_ns,
                    hist: Default::default(),
                };
                w.set_hist(&acc.hist);
                acc.hist.reset();
                (acc.count, acc.min_ns, acc.max_ns) = (0, u64::MAX, 0);
                acc.base = (snap.overruns, snap.misses);
                w
            })
            .collect();
        self.start_ns = end_ns;
        self.close_at_ns = next_boundary(end_ns, s.window_ns);
        let saved = self.store.save_windows(&rows).and_then(|()| {
            self.store
                .downsample(end_ns, &self.setup.retention, PASS_ROWS)
        });
        if let Err(e) = saved {
            self.error.get_or_insert(e);
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

/// The next multiple of `window_ns` after `t` (windows align on the clock).
fn next_boundary(t: i64, window_ns: i64) -> i64 {
    t - t.rem_euclid(window_ns) + window_ns
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
    fn wants_samples(&self) -> bool {
        true
    }

    fn samples(&mut self, thread: usize, samples: &[Sample]) {
        let (Some(acc), Some(last)) = (self.accs.get_mut(thread), samples.last()) else {
            return;
        };
        let now = now_ns();
        for s in samples {
            acc.hist.record(s.latency_ns);
            acc.count += 1;
            acc.min_ns = acc.min_ns.min(s.latency_ns);
            if s.latency_ns > acc.max_ns || acc.count == 1 {
                acc.max_ns = s.latency_ns;
                // The batch is at most a few ms old: its last wake-up is "now".
                acc.max_at_ns = now - (last.at_ns - s.at_ns) as i64;
            }
        }
    }

    fn latency(&mut self, snaps: &[LiveSnapshot]) {
        for (mine, snap) in self.snaps.iter_mut().zip(snaps) {
            *mine = *snap;
        }
        let now = now_ns();
        if now >= self.close_at_ns && self.error.is_none() {
            self.close(now, now - self.start_ns < self.setup.window_ns * 9 / 10);
        }
    }

    fn end(&mut self) {
        if self.error.is_none() && self.accs.iter().any(|a| a.count > 0) {
            self.close(now_ns(), true);
        }
        self.alerts.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_close_on_multiples_of_their_length() {
        assert_eq!(next_boundary(0, 10), 10);
        assert_eq!(next_boundary(9, 10), 10);
        assert_eq!(next_boundary(10, 10), 20);
        assert_eq!(next_boundary(1_234, 1_000), 2_000);
    }
}
