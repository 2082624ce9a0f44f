//! Property tests of the importers: whatever a file holds, parsing never panics
//! and never allocates more than its budget, a refusal is an input error
//! (exit 2) naming the file, and an accepted file gives a run whose numbers
//! hold together (see [`Run::check_numbers`]): counters, summaries and
//! histograms count the same values, min ≤ p50 ≤ … ≤ max.
//!
//! The generators write files close to real ones (cyclictest `-h` text and
//! `--json`, sysbench reports, rtlab JSON) with numbers drawn from the edges:
//! huge buckets, counts near 2^64, negative and non-numeric words, lines
//! dropped or out of order.

use super::{parse_text, Options, Source};
use crate::record::Run;
use proptest::prelude::*;
use serde_json::{json, Value};

/// The bucket budget of these tests: small, so that a file asking for more is
/// refused quickly.
const CELLS: usize = 1 << 16;

fn src() -> Source {
    Source {
        name: "p.txt".into(),
        modified: Some("2026-01-02T03:04:05.000000Z".into()),
    }
}

/// Parses and checks what every outcome must satisfy; returns the run.
fn outcome(text: &str) -> Result<Option<Run>, TestCaseError> {
    match parse_text(text, &src(), &Options::default(), CELLS) {
        Ok(run) => {
            prop_assert!(run.check_numbers().is_ok(), "{:?}", run.check_numbers());
            let total = run.total.as_ref();
            if run.kind == "latency" && run.series.len() > 1 {
                let sum = run
                    .series
                    .iter()
                    .try_fold(0u64, |a, s| a.checked_add(s.counters.samples));
                prop_assert_eq!(sum, total.map(|t| t.counters.samples));
            }
            Ok(Some(run))
        }
        Err(e) => {
            prop_assert_eq!(crate::error::exit_code(&e), 2);
            prop_assert!(e.to_string().starts_with("p.txt"), "{e}");
            Ok(None)
        }
    }
}

/// A count as a file may write it: mostly small, sometimes at or past 2^64,
/// negative or not a number.
fn count() -> impl Strategy<Value = String> {
    prop_oneof![
        60 => (0u64..50).prop_map(|n| n.to_string()),
        1 => (u64::MAX - 3..=u64::MAX).prop_map(|n| n.to_string()),
        1 => prop_oneof![
            Just("18446744073709551616".to_string()),
            Just("-3".to_string()),
            Just("x1".to_string()),
        ],
    ]
}

/// A bucket index: mostly near, sometimes far past any budget.
fn bucket() -> impl Strategy<Value = u64> {
    prop_oneof![
        30 => 0u64..60,
        1 => 0u64..40_000,
        1 => prop_oneof![Just(999_999_999_999u64), Just(9_999_999), Just(u64::MAX)],
    ]
}

/// Drops a line, or swaps two: damage a real file may show.
fn damage(text: &str, how: (u8, usize, usize)) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let (a, b) = (how.1 % lines.len(), how.2 % lines.len());
    match how.0 % 8 {
        0 => {
            lines.remove(a);
        }
        1 => lines.swap(a, b),
        _ => {}
    }
    lines.join("\n") + "\n"
}

/// A thread's min, avg and max seeds and its overflow count.
type Summary = (u64, u64, u64, String);

fn cyclictest_text() -> impl Strategy<Value = String> {
    (1usize..4)
        .prop_flat_map(|cols| {
            (
                prop::collection::vec((bucket(), prop::collection::vec(count(), cols)), 1..10),
                prop::collection::vec(
                    (
                        0u64..30,
                        0u64..30,
                        0u64..30,
                        prop_oneof![3 => Just("0".to_string()), 1 => count()],
                    ),
                    cols,
                ),
                any::<bool>(),
                (any::<u8>(), any::<usize>(), any::<usize>()),
            )
        })
        .prop_map(|(mut rows, summary, with_total, how)| {
            rows.sort_by_key(|r| r.0);
            rows.dedup_by_key(|r| r.0);
            let mut t = String::from("# Histogram\n");
            for (b, counts) in &rows {
                t.push_str(&format!("{b:06} {}\n", counts.join("\t")));
            }
            let col = |f: &dyn Fn(&Summary) -> String| {
                summary.iter().map(f).collect::<Vec<_>>().join(" ")
            };
            if with_total {
                let totals = (0..summary.len()).map(|c| {
                    rows.iter()
                        .map(|r| r.1[c].parse::<u64>().unwrap_or(0))
                        .try_fold(0u64, |a, n| a.checked_add(n))
                        .map_or("18446744073709551616".to_string(), |n| n.to_string())
                });
                t.push_str(&format!(
                    "# Total: {}\n",
                    totals.collect::<Vec<_>>().join(" ")
                ));
            }
            let (lo, mid, hi) = (
                col(&|s| s.0.min(s.1).min(s.2).to_string()),
                col(&|s| s.1.to_string()),
                col(&|s| s.0.max(s.1).max(s.2).to_string()),
            );
            t.push_str(&format!(
                "# Min Latencies: {lo}\n# Avg Latencies: {mid}\n# Max Latencies: {hi}\n"
            ));
            t.push_str(&format!(
                "# Histogram Overflows: {}\n",
                col(&|s| s.3.clone())
            ));
            t.push_str("# Histogram Overflow at cycle number:\n# Thread 0: 00012\n");
            damage(&t, how)
        })
}

fn sysbench_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((1u64..3000, count()), 0..8),
        prop_oneof![4 => Just(None), 1 => count().prop_map(Some)],
        (1u64..4000, 1u64..4000, 1u64..4000),
        prop::sample::select(vec!["50", "95", "95", "99", "99", "99.9", "0", "150"]),
        prop_oneof![3 => Just(None), 1 => (0u64..4000).prop_map(Some)],
        (any::<u8>(), any::<usize>(), any::<usize>()),
    )
        .prop_map(|(mut hist, events, (a, b, c), p, pv, how)| {
            hist.sort_by_key(|h| h.0);
            let sum = hist
                .iter()
                .map(|h| h.1.parse::<u64>().unwrap_or(0))
                .try_fold(0u64, |s, n| s.checked_add(n))
                .map_or("1".to_string(), |n| n.to_string());
            let events = events.unwrap_or(sum);
            // Mostly the percentile sysbench would print for this histogram:
            // the value at rank floor(n·p/100 + 0.5), in 10 µs steps.
            let pv = pv.unwrap_or_else(|| {
                let n: f64 = events.parse().unwrap_or(1.0);
                let rank = (n * p.parse::<f64>().unwrap_or(50.0) / 100.0 + 0.5).floor().max(1.0);
                let mut seen = 0.0;
                let at = hist.iter().find(|h| {
                    seen += h.1.parse::<f64>().unwrap_or(0.0);
                    seen >= rank
                });
                at.map_or(a, |h| (h.0 + 5) / 10)
            });
            let mut v = [a, b, c];
            v.sort_unstable();
            let ms = |x: u64| format!("{}.{:02}", x / 100, x % 100);
            let mut t = String::from("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nNumber of threads: 1\nPrime numbers limit: 2000\n\n");
            if !hist.is_empty() {
                t.push_str("Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n");
                for (value, n) in &hist {
                    t.push_str(&format!("{:>12} |***  {n}\n", format!("{}.{:03}", value / 1000, value % 1000)));
                }
                t.push_str(" \n");
            }
            t.push_str(&format!(
                "CPU speed:\n    events per second: 100.5\n\nGeneral statistics:\n    total time:                          1.0043s\n    total number of events:              {events}\n\nLatency (ms):\n         min:        {}\n         avg:        {}\n         max:        {}\n         {p}th percentile:        {}\n         sum:        999.55\n",
                ms(v[0]), ms(v[1]), ms(v[2]), ms(pv)
            ));
            damage(&t, how)
        })
}

fn cyclictest_json() -> impl Strategy<Value = String> {
    let cycles = prop_oneof![
        4 => Just(Ok(0u64)),
        1 => (1u64..5).prop_map(Ok),
        1 => count().prop_map(Err),
    ];
    (
        prop::collection::vec(
            (
                prop::collection::vec((bucket(), count()), 0..6),
                cycles,
                (0u64..30, 0u64..30),
            ),
            1..4,
        ),
        // u64::MAX stands for "a range that holds every bucket".
        prop_oneof![1 => Just(None), 1 => bucket().prop_map(Some), 3 => Just(Some(u64::MAX))],
    )
        .prop_map(|(threads, h)| {
            let num = |s: &str| -> Value { serde_json::from_str(s).unwrap_or_else(|_| json!(s)) };
            let mut th = serde_json::Map::new();
            let mut top = 0;
            for (i, (hist, cycles, (lo, hi))) in threads.iter().enumerate() {
                let in_hist = hist
                    .iter()
                    .map(|h| h.1.parse::<u64>().unwrap_or(0))
                    .try_fold(0u64, |a, n| a.checked_add(n));
                // Mostly the histogram's count plus some overflows, as
                // cyclictest writes; sometimes any count.
                let cycles = match (cycles, in_hist) {
                    (Ok(extra), Some(n)) => json!(n.saturating_add(*extra)),
                    (Ok(_), None) => json!(1),
                    (Err(c), _) => num(c),
                };
                top = hist
                    .iter()
                    .map(|h| h.0.saturating_add(1))
                    .fold(top, u64::max);
                let hist: serde_json::Map<String, Value> =
                    hist.iter().map(|(b, n)| (b.to_string(), num(n))).collect();
                th.insert(
                    i.to_string(),
                    json!({"histogram": hist, "cycles": cycles, "min": lo.min(hi),
                           "avg": (lo + hi) as f64 / 2.0, "max": lo.max(hi), "cpu": i}),
                );
            }
            let cmdline = match h.map(|h| if h == u64::MAX { top } else { h }) {
                Some(h) => format!("cyclictest -q -h {h} -i 200"),
                None => "cyclictest -q -i 200".into(),
            };
            let doc = json!({"file_version": 1, "cmdline:": cmdline, "rt_test_version:": "2.40",
                             "num_threads": threads.len(), "thread": th});
            serde_json::to_string_pretty(&doc).unwrap()
        })
}

/// A real sysbench report with a histogram, as rtlab JSON.
fn rtlab_json_document() -> Value {
    let text = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nNumber of threads: 1\nPrime numbers limit: 2000\n\nLatency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n       0.020 |****** 220\n       0.021 |**     78\n       0.090 |*      2\n \nCPU speed:\n    events per second: 100.5\n\nGeneral statistics:\n    total time:                          1.0043s\n    total number of events:              300\n\nLatency (ms):\n         min:        0.02\n         avg:        0.02\n         max:        0.09\n         99th percentile:        0.02\n         sum:        6.25\n";
    let run = parse_text(text, &src(), &Options::default(), CELLS).unwrap();
    serde_json::to_value(&run).unwrap()
}

/// The numeric places of a run document a forger would change.
const FIELDS: &[&str] = &[
    "/total/counters/samples",
    "/total/summary/samples",
    "/total/summary/min_ns",
    "/total/summary/p50_ns",
    "/total/summary/p99_ns",
    "/total/summary/max_ns",
    "/total/summary/mean_ns",
    "/total/histogram/buckets/0/1",
    "/total/histogram/buckets/1/1",
];

/// Files the real tools wrote (`tests/fixtures/import/`), one of each layout.
const FIXTURES: [&str; 10] = [
    include_str!("../../tests/fixtures/import/cyclictest-summary.txt"),
    include_str!("../../tests/fixtures/import/cyclictest-summary-ns.txt"),
    include_str!("../../tests/fixtures/import/cyclictest-live-tty.txt"),
    include_str!("../../tests/fixtures/import/cyclictest-verbose-q.txt"),
    include_str!("../../tests/fixtures/import/sysbench-0.4-fileio.txt"),
    include_str!("../../tests/fixtures/import/sysbench-1.0-memory.txt"),
    include_str!("../../tests/fixtures/import/sysbench-1.0-mutex.txt"),
    include_str!("../../tests/fixtures/import/stress-ng-metrics.txt"),
    include_str!("../../tests/fixtures/import/stress-ng-log-brief.txt"),
    include_str!("../../tests/fixtures/import/stress-ng.yaml"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A real file with a line dropped or swapped, or cut anywhere.
    #[test]
    fn damaged_tool_outputs_never_panic_and_what_they_give_adds_up(
        which in 0..FIXTURES.len(),
        how in (0u8..8, any::<usize>(), any::<usize>()),
        cut in prop::option::of(any::<usize>()),
    ) {
        let mut text = damage(FIXTURES[which], how);
        if let Some(at) = cut {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        outcome(&text)?;
    }

    #[test]
    fn cyclictest_text_never_panics_and_what_it_accepts_adds_up(text in cyclictest_text()) {
        if let Some(run) = outcome(&text)? {
            prop_assert_eq!(run.kind.as_str(), "latency");
            for s in &run.series {
                let us = s.us_histogram.as_ref().unwrap();
                prop_assert!(us.max_us as usize <= CELLS);
            }
        }
    }

    #[test]
    fn sysbench_text_never_panics_and_what_it_accepts_is_ordered(text in sysbench_text()) {
        if let Some(run) = outcome(&text)? {
            let s = run.total.as_ref().unwrap();
            prop_assert_eq!(s.counters.samples as f64, run.metrics["total_events"]);
            // Percentiles from a histogram leave nothing unreported.
            if !s.histogram.buckets.is_empty() {
                prop_assert!(run.unreported().is_empty());
            }
        }
    }

    #[test]
    fn cyclictest_json_never_panics_and_what_it_accepts_adds_up(text in cyclictest_json()) {
        outcome(&text)?;
    }

    #[test]
    fn rtlab_json_whose_counts_disagree_is_refused(
        field in prop::sample::select(FIELDS),
        value in prop_oneof![0u64..400, Just(u64::MAX), 20_000u64..100_000],
    ) {
        let mut doc = rtlab_json_document();
        *doc.pointer_mut(field).unwrap() = json!(value);
        let text = serde_json::to_string_pretty(&doc).unwrap();
        outcome(&text)?;
    }

    #[test]
    fn any_text_never_panics(
        head in prop::sample::select(vec![
            "",
            "# Histogram\n",
            "sysbench 1.0.20\n",
            "sysbench 0.4.12:\n",
            "{",
            "{\"format\": \"rtlab/1\", ",
            "T: 0 (1) P:80 I:1000 C:",
            "stress-ng: metrc: [1] stressor       bogo ops real time\n",
            "---\nmetrics:\n    - stressor: cpu\n",
            "0: 0: ",
        ]),
        body in "[0-9 #:|.\\-\\n{}\"a-zT\\t]{0,300}",
    ) {
        outcome(&format!("{head}{body}"))?;
    }
}

#[test]
fn the_unchanged_rtlab_document_is_accepted() {
    let text = serde_json::to_string_pretty(&rtlab_json_document()).unwrap();
    let run = outcome(&text).unwrap().unwrap();
    assert_eq!(run.total.unwrap().counters.samples, 300);
}
