//! cyclictest's status lines: one per thread,
//! `T: 0 ( 1234) P:80 I:1000 C:   1000 Min:      3 Act:    5 Avg:    4 Max:      12`
//! (`T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`,
//! wider Act and Avg with `-N`), under the line
//! `policy: fifo: loadavg: 0.01 0.02 0.00 1/90 1234` and an empty one while
//! it runs; values in µs (ns with `-N`), truncated.

use super::options::PolicyName;
use rtlab_engine::probe::latency::LiveSnapshot;

/// What cyclictest shows as the minimum before the first wake-up.
const NO_MIN: u64 = 1_000_000;

/// The settled facts of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its priority.
    pub priority: i32,
    /// Its interval (µs).
    pub interval_us: u64,
}

/// One thread's status line (without its newline).
pub fn line(index: usize, t: &ThreadInfo, s: &LiveSnapshot, nsecs: bool) -> String {
    let v = |ns: u64| if nsecs { ns } else { ns / 1000 };
    let min = if s.cycles == 0 { NO_MIN } else { v(s.min_ns) };
    let head = format!(
        "T:{index:2} ({:5}) P:{:2} I:{} C:{:7} Min:{min:7}",
        s.tid, t.priority, t.interval_us, s.cycles
    );
    if nsecs {
        format!(
            "{head} Act:{:8} Avg:{:8} Max:{:8}",
            v(s.last_ns),
            v(s.avg_ns),
            v(s.max_ns)
        )
    } else {
        format!(
            "{head} Act:{:5} Avg:{:5} Max:{:8}",
            v(s.last_ns),
            v(s.avg_ns),
            v(s.max_ns)
        )
    }
}

/// Every thread's status line, each with its newline.
pub fn lines(threads: &[ThreadInfo], snaps: &[LiveSnapshot], nsecs: bool) -> String {
    threads
        .iter()
        .zip(snaps)
        .enumerate()
        .map(|(i, (t, s))| line(i, t, s, nsecs) + "\n")
        .collect()
}

/// The line above the threads' while it runs: the policy named (and
/// `/other` when the threads run SCHED_OTHER under it) and the load average,
/// then an empty line.
pub fn policy_line(policy: PolicyName, forced_other: bool, loadavg: &str) -> String {
    let other = if forced_other { "/other" } else { "" };
    format!(
        "policy: {}{other}: loadavg: {}          \n\n",
        policy.name(),
        loadavg.trim_end_matches('\n')
    )
}

/// The frame cyclictest redraws: the policy line and the threads' lines.
pub fn frame(
    policy: (PolicyName, bool),
    loadavg: &str,
    threads: &[ThreadInfo],
    snaps: &[LiveSnapshot],
    nsecs: bool,
) -> String {
    policy_line(policy.0, policy.1, loadavg) + &lines(threads, snaps, nsecs)
}

/// The cursor movement up over a frame of `threads` threads, for the next.
pub fn up(threads: usize) -> String {
    format!("\x1b[{}A", threads + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(cycles: u64) -> LiveSnapshot {
        LiveSnapshot {
            tid: 26817,
            cycles,
            last_ns: 15_400,
            min_ns: 12_999,
            max_ns: 22_000,
            avg_ns: 13_700,
            overruns: 0,
            misses: 0,
        }
    }

    const T: ThreadInfo = ThreadInfo {
        priority: 30,
        interval_us: 1000,
    };

    #[test]
    fn lines_as_cyclictest_prints_them() {
        assert_eq!(
            line(0, &T, &snap(100), false),
            "T: 0 (26817) P:30 I:1000 C:    100 Min:     12 Act:   15 Avg:   13 Max:      22"
        );
        assert_eq!(
            line(1, &T, &snap(50), true),
            "T: 1 (26817) P:30 I:1000 C:     50 Min:  12999 Act:   15400 Avg:   13700 Max:   22000"
        );
        let before = LiveSnapshot::default();
        let other = ThreadInfo {
            priority: 0,
            interval_us: 1500,
        };
        assert_eq!(
            line(1, &other, &before, false),
            "T: 1 (    0) P: 0 I:1500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0"
        );
    }

    #[test]
    fn the_frame_has_the_policy_line_an_empty_line_and_a_line_per_thread() {
        let f = frame(
            (PolicyName::Batch, true),
            "0.55 1.94 2.75 3/90 26818\n",
            &[T, T],
            &[snap(1), snap(2)],
            false,
        );
        let lines: Vec<&str> = f.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            "policy: batch/other: loadavg: 0.55 1.94 2.75 3/90 26818          "
        );
        assert_eq!(lines[1], "");
        assert!(lines[3].starts_with("T: 1 (26817) P:30 I:1000 C:      2"));
        assert_eq!(up(2), "\x1b[4A");
        assert!(policy_line(PolicyName::Fifo, false, "x").starts_with("policy: fifo: loadavg: x"));
    }
}
