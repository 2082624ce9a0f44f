//! The report of `bench/vs-cyclictest.sh` (`bench/cyclictest-report.awk`) on
//! records written here: each pair's two runs matched by the pair's number
//! whichever tool ran first, the task-clock verdict on the pairs' ratios, and
//! the fixed part apart from the cost per wake-up; runs taken at once
//! (`TASK_CLOCK=together`) read the same and are said to be so.

use crate::common::{expect, squeezed_line as line};
use assert_cmd::Command;
use std::path::Path;

/// Wake-ups of the long runs and of the short ones the fixed part is read from.
const LOOPS: u32 = 1000;
const FIXED: u32 = 10;

/// One condition's records: for pair k (from 1), cyclictest spends `fixed.1`
/// ms plus `0.1 k` ms a wake-up beyond its short run, rtlab `fixed.0` plus
/// `per_wakeup` times as much. The tools alternate as the script runs them:
/// cyclictest first in odd pairs, rtlab first in even ones.
fn records(cond: &str, pairs: u32, fixed: (f64, f64), per_wakeup: f64) -> (String, Vec<f64>) {
    let mut lines = String::new();
    let mut ratios = Vec::new();
    for k in 1..=pairs {
        let cyc_per = 0.1 * f64::from(k);
        let cyc = fixed.1 + f64::from(LOOPS - FIXED) * cyc_per;
        let rtlab = fixed.0 + f64::from(LOOPS - FIXED) * cyc_per * per_wakeup;
        let cyc_line = format!("cyclictest {cond} {k} {cyc} {}\n", fixed.1);
        let rtlab_line = format!("rtlab {cond} {k} {rtlab} {}\n", fixed.0);
        if k % 2 == 1 {
            lines += &(cyc_line + &rtlab_line);
        } else {
            lines += &(rtlab_line + &cyc_line);
        }
        ratios.push(rtlab / cyc);
    }
    (lines, ratios)
}

/// The report of the records, with one line of the other measurements per
/// tool and condition.
fn report(task_clock: &str) -> String {
    report_with(task_clock, &[])
}

/// [`report`] with more `-v NAME=VALUE` settings of the report.
fn report_with(task_clock: &str, settings: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task-clock"), task_clock).unwrap();
    let mut results = String::new();
    for cond in ["idle", "stress"] {
        results += &format!("cyclictest {cond} 8 13 32 900 12500 2700 270 - 2900\n");
        results += &format!("rtlab {cond} 8 13 31 950 12600 3300 650 0 2900\n");
    }
    std::fs::write(dir.path().join("results"), results).unwrap();
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let out = expect(
        Command::new("awk")
            .arg("-f")
            .arg(bench.join("interval.awk"))
            .arg("-f")
            .arg(bench.join("cyclictest-report.awk"))
            .arg("-v")
            .arg(format!("loops={LOOPS}"))
            .arg("-v")
            .arg(format!("fixed={FIXED}"))
            .args(settings.iter().flat_map(|s| ["-v", s]))
            .arg(dir.path().join("task-clock"))
            .arg(dir.path().join("results")),
        &[0],
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn pairs_are_matched_by_number_and_the_fixed_part_is_shown_apart() {
    // Idle: 5 pairs, rtlab 5 ms more at start and 1 % more a wake-up. Stress:
    // the same work for both.
    let (idle, mut r) = records("idle", 5, (8.0, 3.0), 1.01);
    let (stress, _) = records("stress", 5, (3.0, 3.0), 1.0);
    let text = report(&(idle + &stress));

    // Five ratios: the median is the third, the interval their extremes.
    r.sort_by(f64::total_cmp);
    let verdict = if r[4] <= 1.05 { "ok" } else { "undecided" };
    assert!(r[0] <= 1.05, "the records make an undecided or ok idle row");
    let want = format!(
        "task-clock idle median of 5 pairs {:.3}, interval {:.3}-{:.3} (90%): {verdict} against <= 1.05",
        r[2], r[0], r[4]
    );
    assert_eq!(line(&text, "task-clock idle"), want);
    // Matching an even pair's rtlab with the previous pair's cyclictest
    // would make these ratios anything but equal.
    assert_eq!(
        line(&text, "task-clock stress"),
        "task-clock stress median of 5 pairs 1.000, interval 1.000-1.000 (90%): ok against <= 1.05"
    );
    assert_eq!(
        line(&text, "idle fixed"),
        "idle fixed (a 10-wake-up run): rtlab 8.0 ms, cyclictest 3.0 ms; \
         per wake-up beyond it: median 1.010, interval 1.010-1.010"
    );
    assert!(
        line(&text, "stress fixed").ends_with("median 1.000, interval 1.000-1.000"),
        "{text}"
    );
    // The per-pair range of the whole task-clock, beside the mean ratio.
    let idle_row = line(&text, "idle ");
    assert!(
        idle_row.ends_with(&format!("{:.3}-{:.3}", r[0], r[4])),
        "{idle_row}"
    );
}

#[test]
fn a_reading_perf_did_not_give_leaves_its_pair_out() {
    // Five pairs of equal work, and a sixth whose rtlab reading is missing
    // ("-"): five ratios, not six, and no division by nothing.
    let (mut idle, _) = records("idle", 5, (3.0, 3.0), 1.0);
    idle += "cyclictest idle 6 500 3\nrtlab idle 6 - 3\n";
    let (stress, _) = records("stress", 5, (3.0, 3.0), 1.0);
    let text = report(&(idle + &stress));
    assert_eq!(
        line(&text, "task-clock idle"),
        "task-clock idle median of 5 pairs 1.000, interval 1.000-1.000 (90%): ok against <= 1.05"
    );
    assert!(
        line(&text, "idle fixed").ends_with("median 1.000, interval 1.000-1.000"),
        "{text}"
    );
}

#[test]
fn runs_taken_at_once_are_paired_alike_and_said_to_be() {
    let (idle, _) = records("idle", 5, (8.0, 3.0), 1.01);
    let (stress, _) = records("stress", 5, (3.0, 3.0), 1.0);
    let records = idle + &stress;
    // The script writes rtlab's line first in every pair when both ran at
    // once: the same records in another order.
    let mut at_once: Vec<&str> = records.lines().collect();
    at_once.sort_by_key(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (
            f[1] == "stress",
            f[2].parse::<u32>().unwrap(),
            f[0] == "cyclictest",
        )
    });
    let together = report_with(&(at_once.join("\n") + "\n"), &["together=1"]);
    let apart = report(&records);
    for key in [
        "task-clock idle",
        "task-clock stress",
        "idle fixed",
        "stress fixed",
    ] {
        assert_eq!(line(&together, key), line(&apart, key), "{key}");
    }
    assert!(
        together.contains("task_ms: task-clock of another run of each, both at once,"),
        "{together}"
    );
    assert!(
        apart.contains("task_ms: task-clock of another run of each, interleaved,"),
        "{apart}"
    );
}
