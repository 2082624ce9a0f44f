//! The progress line of a command that runs for a while: what it does, how far
//! it is (step i of n, or seconds of the planned duration) and the time left, on
//! stderr when it is a terminal; nothing on a pipe, nothing with --quiet, and
//! never a character on stdout.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// A command shorter than this shows no progress.
pub const AFTER: Duration = Duration::from_secs(2);

/// The look of counted progress (`rtlab run`'s steps, imported files): the
/// item under way (`step 2 of 4`, while one is done), what it is, elapsed and
/// time left.
pub fn steps_style() -> ProgressStyle {
    let at = |s: &ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = write!(w, "{}", (s.pos() + 1).min(s.len().unwrap_or(u64::MAX)));
    };
    ProgressStyle::with_template(
        "{spinner} {prefix} {at} of {len}: {msg} [{elapsed_precise}] time left {eta}",
    )
    .expect("constant template")
    .with_key("at", at)
}

/// How often a progress line is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Whether progress may be shown: not `quiet`, and stderr is a terminal.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A progress line, or nothing (off, or not worth showing).
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// No progress line.
    pub fn off() -> Progress {
        Progress { bar: None }
    }

    /// `what` running for `planned` (ns; `None`: until stopped), when `on`:
    /// elapsed and time left, redrawn on its own. A planned run of at most
    /// [`AFTER`] shows nothing.
    pub fn timed(on: bool, what: &str, planned_ns: Option<u64>) -> Progress {
        let planned = planned_ns.map(Duration::from_nanos);
        if !on || planned.is_some_and(|p| p <= AFTER) {
            return Progress::off();
        }
        let left = move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let done = s.elapsed().as_secs();
            let _ = match planned {
                Some(p) => write!(
                    w,
                    "{done} s of {} s, time left {} s",
                    p.as_secs(),
                    p.as_secs().saturating_sub(done)
                ),
                None => write!(w, "{done} s"),
            };
        };
        let style = ProgressStyle::with_template("{spinner} {prefix}: {left}  {msg}")
            .expect("constant template")
            .with_key("left", left);
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(style)
            .with_prefix(what.to_string());
        bar.enable_steady_tick(TICK);
        Progress { bar: Some(bar) }
    }

    /// `what` done to `len` items (`item` 3 of 7), when `on`: elapsed and time
    /// left, shown once it has run for [`AFTER`].
    pub fn steps(on: bool, item: &str, what: &str, len: u64) -> Progress {
        if !on {
            return Progress::off();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
            .with_style(steps_style())
            .with_prefix(item.to_string())
            .with_message(what.to_string());
        Progress { bar: Some(bar) }
    }

    /// One more item done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
            if b.is_hidden() && b.elapsed() >= AFTER {
                b.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    /// Text after the progress (the rates of loads).
    pub fn message(&self, text: String) {
        if let Some(b) = &self.bar {
            b.set_message(text);
        }
    }

    /// Runs `f`, which writes to the terminal, with the progress line out of its
    /// way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Whether a line is shown or may be.
    pub fn is_on(&self) -> bool {
        self.bar.is_some()
    }

    /// Erases the line; nothing more is drawn.
    pub fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_or_unwanted_progress_is_nothing() {
        assert!(!Progress::timed(false, "latency", Some(60_000_000_000)).is_on());
        assert!(!Progress::timed(true, "latency", Some(2_000_000_000)).is_on());
        assert!(!Progress::steps(false, "file", "reading", 5).is_on());
    }

    #[test]
    fn counted_progress_stays_hidden_for_its_first_seconds() {
        let p = Progress::steps(true, "file", "reading", 3);
        p.inc();
        assert!(p.bar.as_ref().unwrap().is_hidden());
        assert_eq!(p.bar.as_ref().unwrap().position(), 1);
    }
}
