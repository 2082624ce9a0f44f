//! cyclictest's `-v` lines: one `thread:cycle:latency` line per wake-up
//! (`%8d:%8lu:%8ld`, the latency in µs, or ns with `-N`), or with `-o RED` one
//! line per RED wake-ups, holding the largest of them and its cycle.

use rtlab_engine::probe::samples::Sample;
use std::io::Write;

/// A thread's wake-ups since its last line (with `-o`).
#[derive(Debug, Clone, Copy, Default)]
struct Group {
    count: u64,
    max: u64,
    cycle: u64,
}

/// Writes the sample lines of every thread to stdout.
#[derive(Debug)]
pub struct SampleLines {
    nsecs: bool,
    reduce: u64,
    groups: Vec<Group>,
}

impl SampleLines {
    /// A line per wake-up; values in ns when `nsecs`.
    pub fn new(nsecs: bool) -> Self {
        Self::reduced(nsecs, 1)
    }

    /// A line per `reduce` wake-ups (cyclictest's `-o`).
    pub fn reduced(nsecs: bool, reduce: u64) -> Self {
        SampleLines {
            nsecs,
            reduce: reduce.max(1),
            groups: Vec::new(),
        }
    }

    /// The lines of `samples` of thread `thread`.
    pub fn lines(&mut self, thread: usize, samples: &[Sample]) -> String {
        if self.groups.len() <= thread {
            self.groups.resize(thread + 1, Group::default());
        }
        let g = &mut self.groups[thread];
        let mut out = String::new();
        for s in samples {
            let v = if self.nsecs {
                s.latency_ns
            } else {
                s.latency_ns / 1000
            };
            if g.count == 0 || v > g.max {
                g.max = v;
                g.cycle = s.cycle;
            }
            g.count += 1;
            if g.count == self.reduce {
                out.push_str(&format!("{thread:8}:{:8}:{:8}\n", g.cycle, g.max));
                *g = Group::default();
            }
        }
        out
    }

    /// Writes the lines of `samples` of thread `thread` to stdout.
    pub fn write(&mut self, thread: usize, samples: &[Sample]) {
        let text = self.lines(thread, samples);
        // A closed pipe (`| head`) is not an error.
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }

    /// Pushes what was written out.
    pub fn flush(&mut self) {
        let _ = std::io::stdout().lock().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(cycle: u64, latency_ns: u64) -> Sample {
        Sample {
            cycle,
            latency_ns,
            at_ns: 0,
        }
    }

    #[test]
    fn one_line_per_wake_up_as_cyclictest_prints_it() {
        let mut l = SampleLines::new(false);
        assert_eq!(
            l.lines(1, &[s(0, 71_900), s(1, 409_000)]),
            "       1:       0:      71\n       1:       1:     409\n"
        );
        let mut n = SampleLines::new(true);
        assert_eq!(n.lines(0, &[s(7, 12_846)]), "       0:       7:   12846\n");
    }

    #[test]
    fn a_reduced_line_holds_the_largest_of_its_wake_ups_across_batches() {
        let mut l = SampleLines::reduced(false, 3);
        assert_eq!(l.lines(0, &[s(0, 5_000), s(1, 9_000)]), "");
        assert_eq!(
            l.lines(0, &[s(2, 1_000), s(3, 2_000)]),
            "       0:       1:       9\n"
        );
        assert_eq!(
            l.lines(0, &[s(4, 1_000), s(5, 1_000)]),
            "       0:       3:       2\n"
        );
    }
}
