//! Gap markers: for every gap at or above a threshold, one line written to an
//! ftrace `trace_marker` file, `rtlab-gap cpu=C thread=T gap=N start=S end=E`
//! (S and E in CLOCK_MONOTONIC ns, the trace's `mono` clock), so that a trace
//! of the kernel's events can be cut at the gap's window on its CPU.
//!
//! The line is built on the stack and written with one `write(2)`: no
//! allocation, no lock. Only a gap at or above the threshold costs anything.

use super::{Scale, Ticks};
use crate::probe::latency::Line;
use crate::rt::clock::{Clock, ClockId, SystemClock};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

/// What every gap marker line starts with.
pub const GAP_PREFIX: &str = "rtlab-gap ";

/// Where gap markers go and from which gap (part of the configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapMarks {
    /// The `trace_marker` file (of a tracefs instance).
    pub path: PathBuf,
    /// Gaps this long or longer are marked (ns).
    pub threshold_ns: u64,
}

/// One spinning thread's open marker file.
#[derive(Debug)]
pub struct GapMarker {
    file: File,
    mono: SystemClock,
    /// Gaps of this many ticks or more are marked.
    pub(super) threshold_ticks: u64,
    cpu: u64,
    thread: u64,
}

impl GapMarker {
    /// Opens `marks.path` for thread `thread` on `cpu`, its loop reading ticks
    /// of `scale`.
    pub fn open(
        marks: &GapMarks,
        scale: Scale,
        cpu: usize,
        thread: usize,
    ) -> std::io::Result<GapMarker> {
        Ok(GapMarker {
            file: OpenOptions::new().write(true).open(&marks.path)?,
            mono: SystemClock::new(ClockId::Monotonic),
            threshold_ticks: scale.ticks(marks.threshold_ns),
            cpu: cpu as u64,
            thread: thread as u64,
        })
    }

    /// Marks gap number `n`, `gap` ticks long and ended at tick `end` of `t`:
    /// its end in CLOCK_MONOTONIC is the clock now less the ticks since.
    /// A failed write is not retried: the analysis then lacks this gap, as it
    /// would lack one the kernel dropped.
    #[cold]
    pub(super) fn mark<T: Ticks>(&self, t: &T, scale: Scale, end: u64, gap: u64, n: u64) {
        let now_ns = self.mono.now();
        let end_ns = now_ns.saturating_sub(scale.ns(t.ticks().wrapping_sub(end)));
        let line = self.line(n, end_ns.saturating_sub(scale.ns(gap)), end_ns);
        let _ = (&self.file).write(line.bytes());
    }

    fn line(&self, n: u64, start_ns: u64, end_ns: u64) -> Line {
        let mut l = Line::new();
        l.put(GAP_PREFIX.as_bytes());
        for (key, v) in [
            (&b"cpu="[..], self.cpu),
            (b" thread=", self.thread),
            (b" gap=", n),
            (b" start=", start_ns),
            (b" end=", end_ns),
        ] {
            l.put(key);
            l.number(v);
        }
        l.put(b"\n");
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_marker_holds_cpu_thread_number_start_and_end() {
        let path = std::env::temp_dir().join(format!("rtlab-gapmark-{}", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        let marks = GapMarks {
            path: path.clone(),
            threshold_ns: 3_000,
        };
        // 3 ticks a ns.
        let scale = Scale::from_rate(3_000_000_000, 1_000_000_000);
        let m = GapMarker::open(&marks, scale, 5, 1).unwrap();
        assert_eq!(m.threshold_ticks, 9_000);
        let l = m.line(17, 1_000, u64::MAX);
        assert_eq!(
            std::str::from_utf8(l.bytes()).unwrap(),
            "rtlab-gap cpu=5 thread=1 gap=17 start=1000 end=18446744073709551615\n"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
