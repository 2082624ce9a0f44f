//! stress-ng's log layout: `stress-ng: info:  [PID] …` lines, the run length
//! and its spelled-out form, the dispatch line, and the `--metrics(-brief)`
//! table, with rtlab's achieved ops in the bogo-ops columns.

use super::{Hog, Outcome};
use crate::record::LoadRecord;

/// One line of stress-ng's log: `level` is `info`, `warn`, `metrc` or `debug`,
/// padded as stress-ng pads it.
pub fn line(level: &str, pid: u32, text: &str) -> String {
    format!("stress-ng: {:<6} [{pid}] {text}\n", format!("{level}:"))
}

/// What stress-ng says about the run length: `setting to a 90 second (1 min,
/// 30.00 secs) run per stressor`, or `defaulting to …` when `-t` was not given.
pub fn run_length(pid: u32, secs: u64, given: bool) -> String {
    let verb = if given { "setting" } else { "defaulting" };
    line(
        "info",
        pid,
        &format!(
            "{verb} to a {secs} second{} run per stressor",
            spelled(secs as f64)
        ),
    )
}

/// `dispatching hogs: 2 cpu, 1 vm`, in the order of the command line.
pub fn dispatch(pid: u32, hogs: &[Hog]) -> String {
    let parts: Vec<String> = hogs
        .iter()
        .map(|h| format!("{} {}", h.workers, h.name))
        .collect();
    line(
        "info",
        pid,
        &format!("dispatching hogs: {}", parts.join(", ")),
    )
}

/// `successful run completed in 2.00s`, with the spelled-out form past a minute.
pub fn completed(pid: u32, secs: f64, ok: bool) -> String {
    let verb = if ok { "successful" } else { "unsuccessful" };
    line(
        "info",
        pid,
        &format!("{verb} run completed in {secs:.2}s{}", spelled(secs)),
    )
}

/// ` (1 year, 2 days, 1 hour, 1 min, 1.00 secs)` for more than a minute, else
/// nothing: stress-ng's way of spelling a length (a year is 365.2425 days).
pub fn spelled(secs: f64) -> String {
    if secs <= 60.0 {
        return String::new();
    }
    let mut left = secs;
    let mut parts = Vec::new();
    for (unit, len) in [
        ("year", 31_556_952.0),
        ("day", 86_400.0),
        ("hour", 3_600.0),
        ("min", 60.0),
    ] {
        let n = (left / len).floor();
        if n >= 1.0 {
            parts.push(format!("{n:.0} {unit}{}", if n > 1.0 { "s" } else { "" }));
            left -= n * len;
        }
    }
    parts.push(format!("{left:.2} secs"));
    format!(" ({})", parts.join(", "))
}

/// What one stressor did, in stress-ng's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The stressor's name.
    pub name: &'static str,
    /// rtlab ops done by all its workers.
    pub ops: u64,
    /// Wall time its workers ran (s).
    pub real_s: f64,
    /// User CPU time of all its workers (s).
    pub usr_s: f64,
    /// System CPU time of all its workers (s).
    pub sys_s: f64,
    /// CPU used per worker, percent of one CPU.
    pub cpu_pct: f64,
    /// Largest resident set of a worker (KiB).
    pub rss_kib: u64,
}

impl Row {
    /// The row of stressor `hog` from what its load recorded.
    pub fn of(hog: &Hog, r: &LoadRecord) -> Row {
        let total = |k: &str| r.totals.get(k).copied().unwrap_or(0);
        let real_s = r.elapsed_ns as f64 / 1e9;
        let usr_s = total("user_ns") as f64 / 1e9;
        let sys_s = total("sys_ns") as f64 / 1e9;
        Row {
            name: hog.name,
            ops: total("ops"),
            real_s,
            usr_s,
            sys_s,
            cpu_pct: if real_s > 0.0 {
                (usr_s + sys_s) / real_s / r.workers.max(1) as f64 * 100.0
            } else {
                0.0
            },
            rss_kib: total("max_rss_kib"),
        }
    }

    /// Ops per second of wall time.
    pub fn per_real_s(&self) -> f64 {
        per(self.ops, self.real_s)
    }

    /// Ops per second of CPU time.
    pub fn per_cpu_s(&self) -> f64 {
        per(self.ops, self.usr_s + self.sys_s)
    }
}

fn per(ops: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        ops as f64 / secs
    } else {
        0.0
    }
}

/// The rows of every stressor that ran, in dispatch order.
pub fn rows(out: &Outcome) -> Vec<Row> {
    out.records()
        .filter_map(|(hog, rec)| rec.map(|r| Row::of(hog, r)))
        .collect()
}

const HEAD: [&str; 2] = [
    "stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s",
    "                          (secs)    (secs)    (secs)   (real time) (usr+sys time)",
];
const HEAD_FULL: [&str; 2] = [" CPU used per       RSS Max", " instance (%)          (KB)"];

/// The metrics table: `--metrics-brief`, or with `full` (`--metrics`) the CPU
/// per instance and the largest RSS too.
pub fn metrics(pid: u32, rows: &[Row], full: bool) -> String {
    let mut s = String::new();
    for (i, head) in HEAD.iter().enumerate() {
        let extra = if full { HEAD_FULL[i] } else { "" };
        s.push_str(&line("metrc", pid, &format!("{head}{extra}")));
    }
    for r in rows {
        let mut text = format!(
            "{:<13} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>12.2} {:>14.2}",
            r.name,
            r.ops,
            r.real_s,
            r.usr_s,
            r.sys_s,
            r.per_real_s(),
            r.per_cpu_s()
        );
        if full {
            text.push_str(&format!(" {:>12.2} {:>13}", r.cpu_pct, r.rss_kib));
        }
        s.push_str(&line("metrc", pid, &text));
    }
    s
}

/// `-v`: each worker's start and end, as stress-ng's debug lines say them.
pub fn instances(pid: u32, out: &Outcome) -> String {
    let mut s = String::new();
    for (hog, rec) in out.records() {
        for w in rec.map(|r| r.per_worker.as_slice()).unwrap_or_default() {
            let (wpid, i, name) = (w.pid as u32, w.index, hog.name);
            s.push_str(&line(
                "debug",
                wpid,
                &format!("{name}: started [{wpid}] (instance {i})"),
            ));
            s.push_str(&line(
                "debug",
                wpid,
                &format!("{name}: exited [{wpid}] (instance {i})"),
            ));
            s.push_str(&line("debug", pid, &format!("process [{wpid}] terminated")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_spelled_as_stress_ng_spells_them() {
        for (secs, want) in [
            (60.0, ""),
            (61.0, " (1 min, 1.00 secs)"),
            (120.0, " (2 mins, 0.00 secs)"),
            (3601.0, " (1 hour, 1.00 secs)"),
            (3660.0, " (1 hour, 1 min, 0.00 secs)"),
            (86_400.0, " (1 day, 0.00 secs)"),
            (90_061.0, " (1 day, 1 hour, 1 min, 1.00 secs)"),
            (172_800.0, " (2 days, 0.00 secs)"),
            (
                63_113_852.0,
                " (1 year, 365 days, 5 hours, 48 mins, 20.00 secs)",
            ),
        ] {
            assert_eq!(spelled(secs), want, "{secs}");
        }
        assert_eq!(
            run_length(7, 86_400, false),
            "stress-ng: info:  [7] defaulting to a 86400 second (1 day, 0.00 secs) run per stressor\n"
        );
        assert_eq!(
            run_length(7, 2, true),
            "stress-ng: info:  [7] setting to a 2 second run per stressor\n"
        );
        assert_eq!(
            completed(7, 61.0, true),
            "stress-ng: info:  [7] successful run completed in 61.00s (1 min, 1.00 secs)\n"
        );
    }

    #[test]
    fn the_table_lines_up_as_stress_ng_s() {
        let r = Row {
            name: "cpu",
            ops: 1171,
            real_s: 1.001,
            usr_s: 0.54,
            sys_s: 0.0,
            cpu_pct: 54.13,
            rss_kib: 6604,
        };
        let t = metrics(9, &[r], true);
        let want = "\
stress-ng: metrc: [9] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s CPU used per       RSS Max
stress-ng: metrc: [9]                           (secs)    (secs)    (secs)   (real time) (usr+sys time) instance (%)          (KB)
stress-ng: metrc: [9] cpu                1171      1.00      0.54      0.00      1169.83        2168.52        54.13          6604
";
        assert_eq!(t, want);
        let brief = metrics(9, &[], false);
        assert!(brief
            .lines()
            .all(|l| l.ends_with("bogo ops/s") || l.ends_with("(usr+sys time)")));
    }
}
