//! Wake-ups cut into windows by the time they happened, on the wall clock:
//! a window ends on a multiple of its length, so the windows of every CPU and
//! every host line up. Only the first window of a session (started between two
//! boundaries) and the last one (stopped between two) are partial.
//!
//! A wake-up belongs to the window its time falls in, whenever the main thread
//! gets to see it; a window is closed once the clock is past its end, so a late
//! close moves when it is stored, never its bounds or its wake-ups.

use rtlab_engine::probe::latency::LatencyConfig;
use rtlab_engine::stats::hist::LatencyHistogram;
use std::collections::VecDeque;

/// The period and deadline of one measuring thread (ns): a wake-up `l` late
/// counts `l / interval` overruns, and a miss when above the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub interval_ns: u64,
    pub deadline_ns: u64,
}

impl Period {
    /// Each measuring thread's.
    pub fn of(cfg: &LatencyConfig) -> Vec<Period> {
        (0..cfg.threads.len())
            .map(|i| Period {
                interval_ns: cfg.interval_of(i),
                deadline_ns: cfg.deadline_ns.unwrap_or(cfg.interval_of(i)),
            })
            .collect()
    }
}

/// One thread's wake-ups in one window.
pub struct Acc {
    pub hist: LatencyHistogram,
    pub count: i64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// When the maximum happened (wall clock, Unix ns).
    pub max_at_ns: i64,
    pub overruns: i64,
    pub misses: i64,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            hist: LatencyHistogram::new(),
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_at_ns: 0,
            overruns: 0,
            misses: 0,
        }
    }

    fn reset(&mut self) {
        self.hist.reset();
        (self.count, self.min_ns, self.max_ns, self.max_at_ns) = (0, u64::MAX, 0, 0);
        (self.overruns, self.misses) = (0, 0);
    }

    fn add(&mut self, at_ns: i64, latency_ns: u64, p: Period) {
        self.hist.record(latency_ns);
        self.count += 1;
        self.min_ns = self.min_ns.min(latency_ns);
        if latency_ns > self.max_ns || self.count == 1 {
            self.max_ns = latency_ns;
            self.max_at_ns = at_ns;
        }
        self.overruns += (latency_ns / p.interval_ns.max(1)) as i64;
        self.misses += i64::from(latency_ns > p.deadline_ns);
    }
}

/// A window being filled: [start, end), one [`Acc`] per thread.
struct Open {
    start_ns: i64,
    end_ns: i64,
    accs: Vec<Acc>,
}

/// A window as it closes.
pub struct Closed<'a> {
    pub start_ns: i64,
    pub end_ns: i64,
    /// Shorter than a whole window: the session began or ended inside it.
    pub partial: bool,
    /// One per thread, in thread order.
    pub accs: &'a [Acc],
}

/// The windows of one session.
pub struct Cut {
    window_ns: i64,
    periods: Vec<Period>,
    /// Oldest first; never overlapping.
    open: VecDeque<Open>,
    /// The end of the last window opened (where the next one starts).
    next_start_ns: i64,
    /// Accumulators of closed windows, reset, for the next ones.
    spare: Vec<Vec<Acc>>,
    /// The latest wake-up seen (wall clock): the probe ran until then.
    seen_ns: i64,
}

/// The next multiple of `window_ns` after `t` (windows align on the clock).
pub fn next_boundary(t: i64, window_ns: i64) -> i64 {
    t - t.rem_euclid(window_ns) + window_ns
}

impl Cut {
    /// A session of threads with these periods, windows of `window_ns`,
    /// begun at `start_ns` (wall clock): its first window runs to the next
    /// boundary.
    pub fn new(window_ns: i64, periods: Vec<Period>, start_ns: i64) -> Cut {
        let mut cut = Cut {
            window_ns,
            periods,
            open: VecDeque::new(),
            next_start_ns: start_ns,
            spare: Vec::new(),
            seen_ns: i64::MIN,
        };
        cut.open_next(start_ns);
        cut
    }

    fn open_next(&mut self, start_ns: i64) {
        let n = self.periods.len();
        let accs = self
            .spare
            .pop()
            .unwrap_or_else(|| (0..n).map(|_| Acc::new()).collect());
        let end_ns = next_boundary(start_ns, self.window_ns);
        self.open.push_back(Open {
            start_ns,
            end_ns,
            accs,
        });
        self.next_start_ns = end_ns;
    }

    /// A wake-up of `thread` at `at_ns` (wall clock), `latency_ns` late. It goes
    /// to the window its time falls in; one whose window was already closed
    /// (seen very late, or the clock stepped back) to the oldest open window.
    pub fn add(&mut self, thread: usize, at_ns: i64, latency_ns: u64) {
        let Some(&period) = self.periods.get(thread) else {
            return;
        };
        if self.open.back().is_none_or(|w| at_ns >= w.end_ns) {
            // Windows nobody woke in (the clock stepped forward) are not opened.
            let start = self
                .next_start_ns
                .max(at_ns - at_ns.rem_euclid(self.window_ns));
            self.open_next(start);
        }
        self.seen_ns = self.seen_ns.max(at_ns);
        if let Some(w) = self.open.iter_mut().find(|w| at_ns < w.end_ns) {
            w.accs[thread].add(at_ns, latency_ns, period);
        }
    }

    /// Closes, oldest first, every open window that ended at or before
    /// `until_ns` and that a later wake-up shows the probe ran through (a
    /// probe that stopped inside a window leaves it to [`Cut::finish`]);
    /// windows without a single wake-up are dropped.
    pub fn close_until(&mut self, until_ns: i64, mut f: impl FnMut(Closed<'_>)) {
        let over = until_ns.min(self.seen_ns);
        while self.open.front().is_some_and(|w| w.end_ns <= over) {
            if let Some(w) = self.open.pop_front() {
                let end = w.end_ns;
                self.emit(w, end, &mut f);
            }
        }
    }

    /// Closes every open window: the probe has stopped, and its last wake-up
    /// ends the last window.
    pub fn finish(&mut self, mut f: impl FnMut(Closed<'_>)) {
        while let Some(w) = self.open.pop_front() {
            let end = if self.open.is_empty() {
                self.seen_ns
                    .saturating_add(1)
                    .clamp(w.start_ns + 1, w.end_ns)
            } else {
                w.end_ns
            };
            self.emit(w, end, &mut f);
        }
    }

    fn emit(&mut self, mut w: Open, end_ns: i64, f: &mut impl FnMut(Closed<'_>)) {
        if w.accs.iter().any(|a| a.count > 0) {
            let on = |t: i64| t.rem_euclid(self.window_ns) == 0;
            f(Closed {
                start_ns: w.start_ns,
                end_ns,
                partial: !on(w.start_ns) || !on(end_ns),
                accs: &w.accs,
            });
        }
        w.accs.iter_mut().for_each(Acc::reset);
        self.spare.push(w.accs);
    }

    /// Windows open now (bounded by the time since the last close).
    #[cfg(test)]
    pub fn open_windows(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
#[path = "cut_tests.rs"]
mod tests;
