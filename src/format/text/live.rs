//! The live view: one line per thread, redrawn in place on stderr about four times a
//! second, erased when the run ends so that the final table stands alone.

use crate::units::TimeUnit;
use rtlab_engine::probe::latency::LiveSnapshot;
use std::io::Write;

/// Redraws per-thread lines in place.
pub struct LiveView {
    names: Vec<String>,
    unit: TimeUnit,
    drawn: usize,
}

impl LiveView {
    /// A view for threads with these names.
    pub fn new(names: Vec<String>, unit: TimeUnit) -> Self {
        LiveView {
            names,
            unit,
            drawn: 0,
        }
    }

    /// The text of one frame.
    pub fn frame(&self, snaps: &[LiveSnapshot]) -> String {
        let u = self.unit;
        let c = |ns: u64| u.cell(ns as f64);
        let mut out = String::new();
        for (name, s) in self.names.iter().zip(snaps) {
            out.push_str(&format!(
                "{name:>7}  C:{:>9}  Act:{:>9}  Min:{:>9}  Avg:{:>9}  Max:{:>9}  Ovr:{:>5}  Miss:{:>5} ({})\n",
                s.cycles,
                c(s.last_ns),
                c(s.min_ns),
                c(s.avg_ns),
                c(s.max_ns),
                s.overruns,
                s.misses,
                u.symbol()
            ));
        }
        out
    }

    /// Draws a frame over the previous one.
    pub fn draw(&mut self, snaps: &[LiveSnapshot]) {
        let mut err = std::io::stderr().lock();
        let mut text = String::new();
        if self.drawn > 0 {
            text.push_str(&format!("\x1b[{}A", self.drawn));
        }
        for line in self.frame(snaps).lines() {
            text.push_str("\x1b[2K");
            text.push_str(line);
            text.push('\n');
        }
        self.drawn = snaps.len().min(self.names.len());
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    /// Erases what was drawn.
    pub fn clear(&mut self) {
        if self.drawn == 0 {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\x1b[{}A\x1b[J", self.drawn);
        let _ = err.flush();
        self.drawn = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_has_one_line_per_thread_with_the_values() {
        let v = LiveView::new(vec!["cpu0".into(), "cpu1".into()], TimeUnit::Us);
        let s = LiveSnapshot {
            tid: 7,
            cycles: 42,
            last_ns: 5_500,
            min_ns: 3_000,
            max_ns: 80_000,
            avg_ns: 6_000,
            overruns: 1,
            misses: 2,
        };
        let f = v.frame(&[s, LiveSnapshot::default()]);
        assert_eq!(f.lines().count(), 2);
        let first = f.lines().next().unwrap();
        assert!(
            first.contains("cpu0")
                && first.contains("C:       42")
                && first.contains("Max:     80.0")
        );
    }
}
