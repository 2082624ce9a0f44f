//! What a measuring command shows while it measures: the live view of latency
//! threads, its progress and load rates on a terminal, a bench's interval
//! lines, notes.

use super::common::OutputArgs;
use crate::format::text::live::LiveView;
use crate::progress::Progress;
use crate::units::TimeUnit;
use std::io::Write;

/// The live view of a measuring step, on a terminal unless `--quiet`; the
/// interval lines of a bench, on stdout (stderr with `--json`).
pub struct LiveObserver {
    on: bool,
    json: bool,
    unit: TimeUnit,
    view: Option<LiveView>,
    /// A line of load rates is on the terminal.
    load_line: bool,
    progress: Progress,
}

impl LiveObserver {
    /// The live view `out` asks for.
    pub fn new(out: &OutputArgs) -> LiveObserver {
        LiveObserver {
            on: out.live(),
            json: out.json,
            unit: out.unit,
            view: None,
            load_line: false,
            progress: Progress::off(),
        }
    }

    /// With a progress line of `what`, planned to run `planned_ns` (`None`:
    /// until stopped).
    pub fn with_progress(mut self, what: &str, planned_ns: Option<u64>) -> LiveObserver {
        self.progress = Progress::timed(self.on, what, planned_ns);
        self
    }
}

impl crate::step::Observer for LiveObserver {
    fn start(&mut self, names: &[String]) {
        if self.on {
            self.view = Some(LiveView::new(names.to_vec(), self.unit));
        }
    }

    fn latency(&mut self, snaps: &[rtlab_engine::probe::latency::LiveSnapshot]) {
        if let Some(v) = self.view.as_mut() {
            self.progress.suspend(|| v.draw(snaps));
        }
    }

    fn loads(&mut self, elapsed: std::time::Duration, rates: &[(&str, f64)]) {
        if self.progress.is_on() {
            let line = crate::format::text::loads::live_line(elapsed, rates);
            let rates = line.split_once("  ").map_or("", |(_, r)| r);
            self.progress.message(rates.to_string());
        } else if self.on {
            eprint!(
                "\r\x1b[K{}",
                crate::format::text::loads::live_line(elapsed, rates)
            );
            self.load_line = true;
        }
    }

    fn end(&mut self) {
        if let Some(v) = self.view.as_mut() {
            self.progress.suspend(|| v.clear());
        }
        self.progress.clear();
        if self.load_line {
            eprint!("\r\x1b[K");
        }
    }

    fn interval(&mut self, line: &str) {
        let json = self.json;
        self.progress.suspend(|| {
            if json {
                eprintln!("{line}");
            } else {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        });
    }

    fn note(&mut self, text: &str) {
        if self.on {
            self.progress.suspend(|| eprintln!("{text}"));
        }
    }
}
