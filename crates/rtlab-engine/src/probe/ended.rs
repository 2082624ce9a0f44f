//! How a probe's main thread waits for its measuring threads: asleep on a
//! condition variable that each thread signals as it ends, woken only for
//! the live view's ticks (or to take samples out of rings), so that the end
//! of a run is seen at once and the main thread costs next to nothing while
//! the others measure. Short polls instead (20 ms) wake it 50 times a second
//! and see the end up to a poll late.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How many measuring threads have ended.
#[derive(Default)]
pub(crate) struct Ended {
    count: Mutex<usize>,
    changed: Condvar,
}

/// Counts its thread as ended when dropped: at the end of the thread's
/// closure, or while a panic unwinds it.
pub(crate) struct EndGuard<'a>(&'a Ended);

impl Drop for EndGuard<'_> {
    fn drop(&mut self) {
        *self.0.count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.changed.notify_all();
    }
}

impl Ended {
    /// To be held by a measuring thread for as long as it runs.
    pub(crate) fn guard(&self) -> EndGuard<'_> {
        EndGuard(self)
    }

    /// Waits until `all` threads have ended or `timeout` has passed; whether
    /// they all have.
    fn wait(&self, all: usize, timeout: Duration) -> bool {
        let count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let (count, _) = self
            .changed
            .wait_timeout_while(count, timeout, |n| *n < all)
            .unwrap_or_else(PoisonError::into_inner);
        *count >= all
    }

    /// Until `all` threads have ended, wakes every `step` (at most) and calls
    /// `each` with whether a `tick` has passed since the last tick; returns as
    /// soon as the last thread ends.
    pub(crate) fn wait_ticking(
        &self,
        all: usize,
        step: Duration,
        tick: Duration,
        mut each: impl FnMut(bool),
    ) {
        let mut next_tick = Instant::now() + tick;
        while !self.wait(all, step) {
            let due = Instant::now() >= next_tick;
            if due {
                next_tick += tick;
            }
            each(due);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads that end long before the first tick: the wait returns when the
    /// last one ends, with no tick seen (a poll until the tick would wait
    /// the whole minute).
    #[test]
    fn the_wait_ends_with_the_last_thread_not_at_the_next_tick() {
        let ended = Ended::default();
        let mut calls = 0;
        std::thread::scope(|s| {
            for ms in [1, 20, 40] {
                let ended = &ended;
                s.spawn(move || {
                    let _end = ended.guard();
                    std::thread::sleep(Duration::from_millis(ms));
                });
            }
            let minute = Duration::from_secs(60);
            ended.wait_ticking(3, minute, minute, |_| calls += 1);
        });
        assert_eq!(calls, 0);
        assert_eq!(*ended.count.lock().unwrap(), 3);
    }

    /// A thread that panics still counts as ended, so the wait cannot hang.
    #[test]
    fn a_thread_that_panics_has_ended() {
        let ended = Ended::default();
        let joined = std::thread::scope(|s| {
            let h = s.spawn(|| {
                let _end = ended.guard();
                panic!("a measuring thread fails");
            });
            let minute = Duration::from_secs(60);
            ended.wait_ticking(1, minute, minute, |_| {});
            h.join()
        });
        assert!(joined.is_err());
    }

    /// Steps shorter than the tick: `each` runs every step, and says a tick
    /// is due only once a tick has passed.
    #[test]
    fn steps_between_ticks_are_told_apart() {
        let ended = Ended::default();
        let mut held = Some(ended.guard());
        let (mut steps, mut ticks) = (0, 0);
        let hour = Duration::from_secs(3600);
        ended.wait_ticking(1, Duration::from_millis(5), hour, |due| {
            steps += 1;
            ticks += usize::from(due);
            if steps == 4 {
                drop(held.take());
            }
        });
        assert_eq!((steps, ticks), (4, 0));
    }

    /// Steps as long as the tick: every wake-up is a tick.
    #[test]
    fn ticks_come_about_every_tick() {
        let ended = Ended::default();
        let mut held = Some(ended.guard());
        let mut ticks = 0;
        let tick = Duration::from_millis(10);
        ended.wait_ticking(1, tick, tick, |due| {
            ticks += usize::from(due);
            if ticks == 3 {
                drop(held.take());
            }
        });
        assert_eq!(ticks, 3);
    }
}
