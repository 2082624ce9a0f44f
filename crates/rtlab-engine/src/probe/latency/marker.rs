//! Spike markers: for every wake-up at or above a threshold, one line written
//! to an ftrace `trace_marker` file, so that a trace of the kernel's events can
//! be cut at the probe's own windows (from the programmed wake-up to the
//! measured one).
//!
//! The line is formatted into a stack buffer and written with one `write(2)`:
//! no allocation, no lock.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

/// What every spike marker line starts with.
pub const MARKER_PREFIX: &str = "rtlab-spike ";

/// Where spike markers go and from which latency (part of the configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpikeMarks {
    /// The `trace_marker` file (of a tracefs instance).
    pub path: PathBuf,
    /// Wake-ups this late or later are marked (ns).
    pub threshold_ns: u64,
}

/// One thread's open marker file.
#[derive(Debug)]
pub struct SpikeMarker {
    file: File,
    threshold_ns: u64,
    thread: u64,
}

/// The longest line: the prefix and four numbers of at most 20 digits.
const LINE_MAX: usize = 128;

/// A line built in place (also the noise probe's gap markers).
pub(crate) struct Line {
    buf: [u8; LINE_MAX],
    len: usize,
}

impl Line {
    pub(crate) fn new() -> Line {
        Line {
            buf: [0; LINE_MAX],
            len: 0,
        }
    }

    /// The line so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = (self.len + bytes.len()).min(LINE_MAX);
        self.buf[self.len..end].copy_from_slice(&bytes[..end - self.len]);
        self.len = end;
    }

    pub(crate) fn number(&mut self, v: u64) {
        let (digits, at) = crate::decimal::digits(v);
        self.put(&digits[at..]);
    }
}

impl SpikeMarker {
    /// Opens `marks.path` for thread `thread`.
    pub fn open(marks: &SpikeMarks, thread: usize) -> std::io::Result<SpikeMarker> {
        Ok(SpikeMarker {
            file: OpenOptions::new().write(true).open(&marks.path)?,
            threshold_ns: marks.threshold_ns,
            thread: thread as u64,
        })
    }

    /// Writes `rtlab-spike thread=T cycle=C latency=L expected=E` when
    /// `latency_ns` reaches the threshold. A failed write is not retried: the
    /// analysis then lacks this spike, as it would lack one the kernel dropped.
    #[inline]
    pub(crate) fn mark(&self, cycle: u64, latency_ns: u64, expected_ns: u64) {
        if latency_ns < self.threshold_ns {
            return;
        }
        let line = self.line(cycle, latency_ns, expected_ns);
        let _ = (&self.file).write(line.bytes());
    }

    fn line(&self, cycle: u64, latency_ns: u64, expected_ns: u64) -> Line {
        let mut l = Line::new();
        l.put(MARKER_PREFIX.as_bytes());
        l.put(b"thread=");
        l.number(self.thread);
        l.put(b" cycle=");
        l.number(cycle);
        l.put(b" latency=");
        l.number(latency_ns);
        l.put(b" expected=");
        l.number(expected_ns);
        l.put(b"\n");
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_line_holds_thread_cycle_latency_and_expected_time() {
        let dir = std::env::temp_dir().join(format!("rtlab-marker-{}", std::process::id()));
        let marks = SpikeMarks {
            path: dir.clone(),
            threshold_ns: 100,
        };
        std::fs::write(&dir, b"").unwrap();
        let m = SpikeMarker::open(&marks, 3).unwrap();
        let l = m.line(0, u64::MAX, 18_446_744_073);
        assert_eq!(
            std::str::from_utf8(l.bytes()).unwrap(),
            "rtlab-spike thread=3 cycle=0 latency=18446744073709551615 expected=18446744073\n"
        );
        m.mark(7, 99, 1_000);
        m.mark(8, 100, 2_000);
        let written = std::fs::read_to_string(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(
            written, "rtlab-spike thread=3 cycle=8 latency=100 expected=2000\n",
            "below the threshold nothing is written"
        );
    }
}
