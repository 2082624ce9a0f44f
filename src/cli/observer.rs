//! What a measuring command shows while it measures: the live view of latency
//! threads and load rates on a terminal, a bench's interval lines, notes.

use super::common::OutputArgs;
use crate::format::text::live::LiveView;
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
        }
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
            v.draw(snaps);
        }
    }

    fn loads(&mut self, elapsed: std::time::Duration, rates: &[(&str, f64)]) {
        if self.on {
            eprint!(
                "\r\x1b[K{}",
                crate::format::text::loads::live_line(elapsed, rates)
            );
            self.load_line = true;
        }
    }

    fn end(&mut self) {
        if let Some(v) = self.view.as_mut() {
            v.clear();
        }
        if self.load_line {
            eprint!("\r\x1b[K");
        }
    }

    fn interval(&mut self, line: &str) {
        if self.json {
            eprintln!("{line}");
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    fn note(&mut self, text: &str) {
        if self.on {
            eprintln!("{text}");
        }
    }
}
