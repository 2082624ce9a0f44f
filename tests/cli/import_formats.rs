//! `rtlab results import` of every layout the anchor tools print, from the files
//! in `tests/fixtures/import/` (written by cyclictest 2.40, sysbench 1.0.20 and
//! stress-ng 0.15.06 on a test machine; sysbench 0.4 from its documented
//! layout, see that folder's README), without being told the format; and the
//! refusal, naming the line, of cut and damaged copies.

use crate::store_common::{export_json, import, list_ids, rtlab, series_figures};
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// A fresh store and the run of one imported fixture.
fn imported(name: &str) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let id = import(&db, &[fixture(name).to_str().unwrap()])[0];
    let run = export_json(&db, id);
    (dir, run)
}

/// The per-thread (min, mean, max, samples) of a run, in ns.
fn threads(run: &Value) -> Vec<(u64, f64, u64, u64)> {
    series_figures(run)
        .into_iter()
        .map(|(n, min, mean, max)| (min, mean, max, n))
        .collect()
}

fn unreported(run: &Value) -> Vec<&str> {
    run["params"]["unreported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn cyclictest_summary_lines_give_min_avg_max_only() {
    let (_d, run) = imported("cyclictest-summary.txt");
    assert_eq!(run["kind"], "latency");
    assert_eq!(run["params"]["source_format"], "summary");
    assert_eq!(
        threads(&run),
        [
            (11_000, 23_000.0, 796_000, 1000),
            (14_000, 24_000.0, 390_000, 678)
        ]
    );
    assert_eq!(run["series"][0]["tid"], 20047);
    assert_eq!(run["series"][1]["interval_ns"], 1_500_000);
    assert_eq!(run["total"]["counters"]["samples"], 1678);
    for field in [
        "p50_ns",
        "p99_ns",
        "stddev_ns",
        "overruns",
        "deadline_misses",
    ] {
        assert!(unreported(&run).contains(&field), "{field}");
    }
    // The longest thread: 678 cycles of 1.5 ms.
    assert_eq!(run["duration_ns"], 1_017_000_000u64);
}

#[test]
fn cyclictest_n_summary_is_read_in_ns_and_old_layouts_without_interval() {
    let (_d, run) = imported("cyclictest-summary-ns.txt");
    assert_eq!(threads(&run), [(12_496, 20_887.0, 628_496, 1000)]);
    assert_eq!(run["params"]["unit"], "ns");
    let (_d, run) = imported("cyclictest-summary-old.txt");
    assert_eq!(
        threads(&run),
        [
            (5_000, 8_000.0, 31_000, 10_000),
            (5_000, 9_000.0, 27_000, 6_667)
        ]
    );
    assert!(run["series"][0]["interval_ns"].is_null());
    assert_eq!(run["duration_ns"], 0);
}

#[test]
fn a_captured_live_view_gives_its_last_complete_frame() {
    // Piped (escape codes, no \r) and from a terminal (\r\n).
    let (_d, run) = imported("cyclictest-live-pipe.txt");
    assert_eq!(run["params"]["source_format"], "live view");
    assert_eq!(
        threads(&run),
        [
            (12_000, 22_000.0, 42_000, 300),
            (17_000, 29_000.0, 67_000, 199)
        ]
    );
    let (_d, run) = imported("cyclictest-live-tty.txt");
    assert_eq!(
        threads(&run),
        [
            (12_000, 23_000.0, 122_000, 300),
            (14_000, 27_000.0, 45_000, 199)
        ]
    );
    // Cut inside the last frame: the frame before it.
    let (_d, run) = imported("cyclictest-live-cut.txt");
    assert_eq!(
        threads(&run),
        [
            (12_000, 23_000.0, 122_000, 292),
            (14_000, 27_000.0, 45_000, 189)
        ]
    );
    let codes: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"live_view"), "{codes:?}");
}

/// The samples of `-v` lines in a file, by thread.
fn verbose_samples(name: &str) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut out: Vec<Vec<u64>> = Vec::new();
    for l in text.lines() {
        let parts: Vec<&str> = l.split(':').map(str::trim).collect();
        if let [t, _, v] = parts[..] {
            if let (Ok(t), Ok(v)) = (t.parse::<usize>(), v.parse::<u64>()) {
                out.resize(out.len().max(t + 1), Vec::new());
                out[t].push(v);
            }
        }
    }
    out
}

#[test]
fn verbose_samples_give_an_exact_histogram() {
    for name in ["cyclictest-verbose.txt", "cyclictest-verbose-q.txt"] {
        let (_d, run) = imported(name);
        let samples = verbose_samples(name);
        assert_eq!(run["series"].as_array().unwrap().len(), samples.len());
        for (s, values) in run["series"].as_array().unwrap().iter().zip(&samples) {
            assert_eq!(s["counters"]["samples"], values.len());
            assert_eq!(s["counters"]["overflows"], 0);
            assert_eq!(s["summary"]["min_ns"], values.iter().min().unwrap() * 1000);
            assert_eq!(s["summary"]["max_ns"], values.iter().max().unwrap() * 1000);
            let mean = values.iter().sum::<u64>() as f64 * 1000.0 / values.len() as f64;
            assert!((s["summary"]["mean_ns"].as_f64().unwrap() - mean).abs() < 1e-6);
            // Every value in its 1-µs bucket.
            for (us, n) in s["us_histogram"]["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| (b[0].as_u64().unwrap(), b[1].as_u64().unwrap()))
            {
                assert_eq!(values.iter().filter(|&&v| v == us).count() as u64, n);
            }
        }
        assert_eq!(unreported(&run), ["deadline_misses", "overruns"]);
    }
}

#[test]
fn sysbench_04_and_10_of_every_test_without_being_told() {
    for (file, kind) in [
        ("sysbench-0.4-cpu.txt", "bench.cpu"),
        ("sysbench-0.4-memory.txt", "bench.memory"),
        ("sysbench-0.4-fileio.txt", "bench.fileio"),
        ("sysbench-0.4-threads.txt", "bench.threads"),
        ("sysbench-0.4-mutex.txt", "bench.mutex"),
        ("sysbench-1.0-cpu.txt", "bench.cpu"),
        ("sysbench-1.0-cpu-report-interval.txt", "bench.cpu"),
        ("sysbench-1.0-memory.txt", "bench.memory"),
        ("sysbench-1.0-fileio-histogram.txt", "bench.fileio"),
        ("sysbench-1.0-fileio-seqwr.txt", "bench.fileio"),
        ("sysbench-1.0-threads.txt", "bench.threads"),
        ("sysbench-1.0-mutex.txt", "bench.mutex"),
    ] {
        let (_d, run) = imported(file);
        assert_eq!(run["kind"], kind, "{file}");
        assert!(
            run["metrics"]["events_per_s"].as_f64().unwrap() > 0.0,
            "{file}"
        );
    }
    let (_d, run) = imported("sysbench-0.4-cpu.txt");
    let s = &run["total"]["summary"];
    assert_eq!(
        (s["min_ns"].as_u64(), s["p95_ns"].as_u64()),
        (Some(2_580_000), Some(2_630_000))
    );
    assert_eq!(run["metrics"]["total_time_s"], 13.0462);
    assert_eq!(unreported(&run)[0], "stddev_ns");
    let (_d, run) = imported("sysbench-1.0-fileio-histogram.txt");
    assert!(
        unreported(&run).is_empty(),
        "a histogram gives every percentile"
    );
    assert_eq!(run["params"]["file_test_mode"], "random r/w");
}

#[test]
fn stress_ng_metrics_and_yaml_are_loads_with_their_rates() {
    let (_d, run) = imported("stress-ng-metrics-brief.txt");
    assert_eq!(run["kind"], "load");
    let loads = run["loads"].as_array().unwrap();
    let got: Vec<(&str, u64, f64)> = loads
        .iter()
        .map(|l| {
            (
                l["kind"].as_str().unwrap(),
                l["workers"].as_u64().unwrap(),
                l["achieved"]["bogo_ops_per_s"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("cpu", 2, 524.37),
            ("vm", 1, 5133.88),
            ("timer", 1, 3493.62)
        ]
    );
    assert_eq!(loads[0]["totals"]["bogo_ops"], 1057);
    assert_eq!(run["metrics"]["vm.bogo_ops_per_s_usr_sys"], 41516.52);
    assert_eq!(run["duration_ns"], 2_060_000_000u64);

    let (_d, run) = imported("stress-ng-metrics.txt");
    assert_eq!(run["params"]["source_format"], "metrics");
    assert_eq!(run["loads"][1]["achieved"]["cpu_pct_per_worker"], 24.09);
    assert_eq!(run["loads"][1]["totals"]["max_rss_kib"], 6488);

    let (_d, run) = imported("stress-ng-log-brief.txt");
    assert_eq!(
        run["loads"].as_array().unwrap().len(),
        2,
        "misc metrics are no stressors"
    );
    assert_eq!(run["loads"][1]["spec"], "hdd:1");

    let (_d, run) = imported("stress-ng.yaml");
    assert_eq!(run["fingerprint"]["kernel_release"], "6.18.44-fc-v669");
    assert_eq!(run["params"]["stress_ng_version"], "0.15.06");
    let workers: Vec<u64> = run["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(workers, [2, 1, 1], "from CPU time and usage per instance");
    assert_eq!(run["loads"][0]["achieved"]["bogo_ops_per_s"], 864.865143);
}

/// A copy of a fixture changed by `edit`, imported: refused with exit 2 naming
/// `file line N`, and nothing stored.
fn refused(name: &str, edit: impl Fn(&str) -> String, line: usize, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, edit(&text)).unwrap();
    let out = rtlab(&db)
        .args(["results", "import"])
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{name} line {line}: ")),
        "{name}: {err}"
    );
    assert!(err.contains(what), "{name}: {err}");
    assert!(err.contains("nothing was imported"), "{err}");
    if db.exists() {
        assert!(list_ids(&db).is_empty());
    }
}

/// The first `n` lines.
fn head(n: usize) -> impl Fn(&str) -> String {
    move |t: &str| t.lines().take(n).map(|l| format!("{l}\n")).collect()
}

#[test]
fn cut_and_damaged_files_are_refused_at_the_wrong_line() {
    refused(
        "cyclictest-summary.txt",
        |t| t.replace("Max:     796", "Max:"),
        2,
        "not a cyclictest thread line",
    );
    refused(
        "cyclictest-summary.txt",
        |t| t.replace("Min:     14", "Min:    914"),
        3,
        "not in order",
    );
    refused(
        "cyclictest-summary.txt",
        |t| t.replace("T: 0", "T: 2"),
        2,
        "comes before thread 0",
    );
    refused(
        "cyclictest-summary.txt",
        |t| format!("{t}oops\n"),
        4,
        "not a line of cyclictest",
    );
    refused(
        "cyclictest-verbose.txt",
        |t| t.replace("       0:       5:", "       0:       6:"),
        11,
        "from cycle 4 to cycle 6",
    );
    refused(
        "cyclictest-verbose-q.txt",
        |t| t.replace("C:     50", "C:     51"),
        55,
        "does not agree",
    );
    refused("sysbench-0.4-cpu.txt", head(16), 16, "incomplete");
    refused(
        "sysbench-0.4-memory.txt",
        |t| t.replace("(10378.03 ops/sec)", "(many ops/sec)"),
        16,
        "'many' is not a number",
    );
    refused("sysbench-1.0-mutex.txt", head(14), 14, "incomplete");
    refused("stress-ng-metrics-brief.txt", head(6), 6, "incomplete");
    refused(
        "stress-ng-metrics-brief.txt",
        |t| t.replace("      5133.88       41516.52", "      5133.88"),
        6,
        "has 5 values",
    );
    refused("stress-ng.yaml", head(40), 40, "incomplete");
    refused(
        "stress-ng.yaml",
        |t| t.replacen("      bogo-ops: 1736\n", "", 1),
        28,
        "has no 'bogo-ops'",
    );
}
