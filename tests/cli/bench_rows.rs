//! `bench/rows.awk`, the summary of many runs of `bench/vs-sysbench.sh`, on
//! outputs written here: each comparison's runs, the median of its median
//! ratios, their range, how many lie within the target and the verdicts
//! counted, whatever else the outputs hold (the control's columns, the old
//! format without an interval, prose).

use crate::common::{expect, squeezed_line as line};
use assert_cmd::Command;
use std::path::Path;

/// One run's output, as the script prints it: a header, two comparisons and
/// the tally. `seq` and `mutex` are the two median ratios; `control` adds
/// the three columns of `-a`.
fn run(seq: f64, mutex: f64, verdicts: (&str, &str), control: bool) -> String {
    let extra = if control {
        "   1.001  0.990-1.012   ok"
    } else {
        ""
    };
    format!(
        "sysbench 1.0.20, rtlab 0.1.0; 2 CPUs; load average at start: 0.10 0.20 0.30\n\
         comparison                             sysbench        rtlab   ratio      interval   n  target    verdict\n\
         memory 1M seq read MiB/s               50000.00     52000.00   {seq:.3}  1.001-1.100    9  0.97-1.03 {}{extra}\n\
         mutex 1/time, loops 0                     60.00        58.00   {mutex:.3}  0.900-1.010    9  0.97-1.03 {}{extra}\n\
         verdicts: 0 ok, 1 OFF, 1 undecided, of 2; medians within target: 1\n",
        verdicts.0, verdicts.1
    )
}

fn summary(outputs: &[String]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = outputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.path().join(format!("run{i}.txt"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/rows.awk");
    let out = expect(Command::new("awk").arg("-f").arg(script).args(&files), &[0]);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_comparison_gets_its_median_of_medians_range_and_counts() {
    let text = summary(&[
        run(1.045, 0.970, ("OFF", "undecided"), false),
        run(1.096, 0.954, ("OFF", "undecided"), true),
        run(1.020, 0.990, ("ok", "ok"), false),
        // The format before intervals: no count of rounds, skipped.
        "memory 1M seq read MiB/s  50000.00  40000.00  0.800  0.790-0.810  0.97-1.03 OFF\n".into(),
    ]);
    assert_eq!(
        line(&text, "memory 1M seq read"),
        "memory 1M seq read MiB/s 3 1.045 1.020-1.096 1/3 1 2",
        "{text}"
    );
    assert_eq!(
        line(&text, "mutex 1/time, loops 0"),
        "mutex 1/time, loops 0 3 0.970 0.954-0.990 2/3 1 0",
        "{text}"
    );
    assert_eq!(
        text.lines().count(),
        3,
        "a header and one line per comparison:\n{text}"
    );
}

#[test]
fn an_even_number_of_runs_takes_the_middle_two() {
    let text = summary(&[
        run(1.010, 1.000, ("ok", "ok"), false),
        run(1.040, 1.000, ("OFF", "ok"), false),
    ]);
    assert_eq!(
        line(&text, "memory 1M seq read"),
        "memory 1M seq read MiB/s 2 1.025 1.010-1.040 1/2 1 1",
        "{text}"
    );
}
