//! sysbench 1.0's report: `key: value` lines in sections (`CPU speed:`, `File
//! operations:`, `Throughput:`, `General statistics:`, `Latency (ms):`, `Threads
//! fairness:`), memory's `Total operations:` and `MiB transferred` lines, and
//! with `--histogram=on` the `Latency histogram` before them. Interval lines
//! (`[ 1s ] ...`) and warnings are skipped.

use super::{memory_line, ms, number, percentile, shared_line, Report};
use crate::format::histfile::ParseError;
use crate::units::parse_count;
use serde_json::json;

/// Reads the lines after the banner (line `banner`, 0-based).
pub(super) fn read(text: &str, banner: usize) -> Result<Report, ParseError> {
    let mut r = Report::default();
    let mut section = "";
    for (n, raw) in text.lines().enumerate().skip(banner + 1) {
        let line_no = n + 1;
        let err = |m: String| ParseError {
            line: line_no,
            message: m,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('[') || line.starts_with("WARNING") {
            continue;
        }
        if section == "histogram" {
            if let Some((value, bar)) = line.split_once('|') {
                let count = bar.split_whitespace().last().unwrap_or("");
                let count = parse_count(count).map_err(|e| err(format!("histogram count {e}")))?;
                let value = ms(value, line_no)?;
                if let Some(&(prev, _, _)) = r.lat.histogram.last() {
                    if value < prev {
                        return Err(err(format!(
                            "histogram value {} ms is below the line before ({} ms): sysbench prints its histogram in ascending order",
                            value as f64 / 1e6,
                            prev as f64 / 1e6
                        )));
                    }
                }
                r.lat.histogram.push((value, count, line_no));
                continue;
            }
            if line.starts_with("value") {
                continue;
            }
            section = "";
        }
        if line.starts_with("Latency histogram") {
            section = "histogram";
            continue;
        }
        if line.starts_with("Running memory speed test") {
            r.detected = Some("memory");
            continue;
        }
        if let Some(rest) = line.strip_prefix("Doing ") {
            r.params.insert(
                "file_test_mode".into(),
                json!(rest.trim_end_matches(" test")),
            );
            continue;
        }
        let ops = ("Total operations:", "per second");
        if memory_line(&mut r, line, ops, "MiB", line_no)? {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            section = match key {
                "Latency (ms)" => "latency",
                "File operations" => {
                    r.detected = Some("fileio");
                    "fileio"
                }
                "CPU speed" => {
                    r.detected = Some("cpu");
                    "cpu"
                }
                "SQL statistics" => {
                    return Err(err(
                        "this is the report of a sysbench Lua script (OLTP): rtlab imports sysbench's cpu, memory, fileio, threads and mutex tests".into(),
                    ))
                }
                _ => "",
            };
            continue;
        }
        if shared_line(&mut r, section == "latency", key, value, line_no)? {
            continue;
        }
        let mut metric = |name: &str| -> Result<(), ParseError> {
            r.metrics.insert(name.into(), number(value, line_no)?);
            Ok(())
        };
        match (section, key) {
            (_, "Prime numbers limit") => {
                r.detected = Some("cpu");
                let n = parse_count(value).map_err(|e| err(format!("prime numbers limit {e}")))?;
                r.params.insert("cpu_max_prime".into(), json!(n));
            }
            (_, "block size" | "total size" | "operation" | "scope") => {
                r.params
                    .insert(format!("memory_{}", key.replace(' ', "_")), json!(value));
            }
            ("cpu", "events per second") => metric("events_per_s")?,
            ("fileio", "reads/s") => metric("reads_per_s")?,
            ("fileio", "writes/s") => metric("writes_per_s")?,
            ("fileio", "fsyncs/s") => metric("fsyncs_per_s")?,
            (_, "read, MiB/s") => metric("read_mib_per_s")?,
            (_, "written, MiB/s") => metric("written_mib_per_s")?,
            ("latency", "sum") => {
                r.metrics
                    .insert("latency_sum_s".into(), ms(value, line_no)? as f64 / 1e9);
            }
            ("latency", k) if k.ends_with("th percentile") => {
                let p = k.trim_end_matches("th percentile");
                r.lat.percentile = Some(percentile(p, value, line_no)?);
            }
            _ => {}
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// `sysbench cpu --cpu-max-prime=2000 --time=1 run` (sysbench 1.0.20).
    const CPU: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 1
Initializing random number generator from current time


Prime numbers limit: 2000

Initializing worker threads...

Threads started!

CPU speed:
    events per second: 17891.76

General statistics:
    total time:                          1.0043s
    total number of events:              17980

Latency (ms):
         min:                                    0.03
         avg:                                    0.06
         max:                                   32.09
         95th percentile:                        0.03
         sum:                                  999.55

Threads fairness:
    events (avg/stddev):           17980.0000/0.00
    execution time (avg/stddev):   0.9995/0.00

";

    fn src() -> Source {
        crate::import::test_source("cpu.txt")
    }

    #[test]
    fn cpu_output_gives_metrics_and_the_latency_summary() {
        let run = parse(CPU, 0, &src(), None).unwrap();
        assert_eq!(run.kind, "bench.cpu");
        assert_eq!(run.metrics["events_per_s"], 17891.76);
        assert_eq!(run.metrics["total_events"], 17980.0);
        assert_eq!(run.metrics["total_time_s"], 1.0043);
        assert_eq!(run.metrics["thread_events_avg"], 17980.0);
        let s = run.total.unwrap().summary;
        assert_eq!(
            (s.samples, s.min_ns, s.max_ns, s.p95_ns),
            (17980, 30_000, 32_090_000, 30_000)
        );
        assert_eq!(s.mean_ns, 60_000.0);
        assert_eq!(s.p99_ns, 0);
        assert_eq!(run.params.recorded("cpu_max_prime"), 2000);
        assert_eq!(run.params.recorded("unreported")[0], "stddev_ns");
        assert_eq!(run.duration_ns, 1_004_300_000);
        assert_eq!(run.started_at, "2026-01-02T03:04:03.995700Z");
    }

    #[test]
    fn a_bad_value_names_its_line_and_a_cut_file_is_incomplete() {
        let bad = CPU.replace("17980\n", "17x80\n");
        let e = parse(&bad, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, 19);
        assert!(e.message.contains("'17x80'"), "{}", e.message);
        let cut: String = CPU.lines().take(20).map(|l| format!("{l}\n")).collect();
        let e = parse(&cut, 0, &src(), None).unwrap_err();
        assert!(e.message.contains("incomplete"), "{}", e.message);
    }

    /// The CPU report with a histogram: `buckets` as `(ms text, count)`, the
    /// total number of events and sysbench's 99th percentile as printed.
    fn with_histogram(buckets: &[(&str, &str)], events: &str, p99: &str) -> String {
        let mut hist = String::from(
            "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n",
        );
        for (v, c) in buckets {
            hist.push_str(&format!(
                "{v:>12} |****                                     {c}\n"
            ));
        }
        hist.push_str(" \n");
        CPU.replace(
            "Threads started!\n\n",
            &format!("Threads started!\n\n{hist}"),
        )
        .replace("17980\n", &format!("{events}\n"))
        .replace(
            "95th percentile:                        0.03",
            &format!("99th percentile:                        {p99}"),
        )
        .replace(
            "min:                                    0.03",
            "min:                                    0.02",
        )
    }

    /// The line (1-based) of the first line containing `needle`.
    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).unwrap() + 1
    }

    #[test]
    fn sysbench_percentile_printed_to_10us_never_puts_p99_below_p50() {
        // The median bucket prints as 0.021 ms, the 99th percentile as "0.02"
        // (0.024 ms to two decimals). Taking that figure beside histogram
        // percentiles gave p50 21 007 ns > p99 20 000 ns.
        let text = with_histogram(
            &[("0.019", "10"), ("0.021", "280"), ("0.024", "10")],
            "300",
            "0.02",
        );
        let run = parse(&text, 0, &src(), None).unwrap();
        run.check_numbers().unwrap();
        let s = run.total.as_ref().unwrap().summary;
        assert_eq!(
            (s.min_ns, s.p50_ns, s.p99_ns, s.max_ns),
            (20_000, 21_000, 24_000, 32_090_000)
        );
        assert_eq!(run.metrics["latency_p99_s"], 20e-6);
        assert!(run.unreported().is_empty());
    }

    #[test]
    fn percentiles_follow_sysbench_rank_rule() {
        let b = [(1000, 1, 0), (2000, 2, 0), (3000, 1, 0)];
        // rank = floor(n·p/100 + 0.5), at least 1.
        assert_eq!(sysbench_percentile(&b, 4, 50.0), 2000);
        assert_eq!(sysbench_percentile(&b, 4, 1.0), 1000);
        assert_eq!(sysbench_percentile(&b, 4, 87.5), 3000);
        assert_eq!(sysbench_percentile(&b, 4, 100.0), 3000);
    }

    #[test]
    fn a_histogram_that_disagrees_with_the_event_count_is_refused() {
        let text = with_histogram(&[("0.020", "10")], "11", "0.02");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "total number of events"));
        assert!(
            e.message
                .contains("is 11 but the latency histogram holds 10"),
            "{}",
            e.message
        );
    }

    #[test]
    fn histogram_counts_that_wrap_are_refused_naming_the_line() {
        let max = u64::MAX.to_string();
        let text = with_histogram(&[("0.020", &max), ("0.021", "1")], "1", "0.02");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "0.021 |"));
        assert!(e.message.contains("more than 64 bits"), "{}", e.message);
    }

    #[test]
    fn negative_and_oversized_counts_are_refused() {
        let text = with_histogram(&[("0.020", "-5")], "1", "0.02");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "0.020 |"));
        assert!(e.message.contains("'-5' is negative"), "{}", e.message);
        let text = CPU.replace("17980\n", "184467440737095516160\n");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, 19);
        assert!(
            e.message.contains("more than 64 bits can count"),
            "{}",
            e.message
        );
        let text = CPU.replace("17980\n", "1.5e30\n");
        assert!(parse(&text, 0, &src(), None)
            .unwrap_err()
            .message
            .contains("not a whole number"));
    }

    #[test]
    fn a_printed_percentile_the_histogram_does_not_give_is_refused() {
        let text = with_histogram(&[("0.020", "300")], "300", "0.50");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "99th percentile"));
        assert!(
            e.message.contains("the histogram above puts it at 0.02 ms"),
            "{}",
            e.message
        );
    }

    #[test]
    fn impossible_latencies_and_times_are_refused() {
        let text = CPU.replace("32.09\n", "0.01\n");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "max:"));
        assert!(e.message.contains("not in order"), "{}", e.message);
        let text = with_histogram(&[("0.021", "1"), ("0.020", "1")], "2", "0.02");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, line_of(&text, "0.020 |"));
        let text = CPU.replace("1.0043s", "1e300s");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert!(e.message.contains("292 years"), "{}", e.message);
    }

    /// sysbench 1.0's threads and mutex reports look alike; mutex runs one
    /// event per thread (`sysbench mutex --threads=2`, `sysbench threads
    /// --threads=2 --time=1`, as run here).
    #[test]
    fn threads_and_mutex_are_told_apart_by_their_events_per_thread() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import/");
        for (file, test) in [("mutex", "mutex"), ("threads", "threads")] {
            let text = std::fs::read_to_string(format!("{dir}sysbench-1.0-{file}.txt")).unwrap();
            let run = parse(&text, 0, &src(), None).unwrap();
            assert_eq!(run.kind, format!("bench.{test}"));
            // One event each is a guess, said in a warning.
            let guessed = run.warnings.iter().any(|w| w.code == "test_guessed");
            assert_eq!(guessed, test == "mutex");
            // Said by the user, the test is taken, and checked where the output says.
            let told = parse(&text, 0, &src(), Some("threads")).unwrap();
            assert_eq!(told.kind, "bench.threads");
        }
    }

    #[test]
    fn a_lua_script_report_is_refused() {
        let text = CPU.replace("CPU speed:", "SQL statistics:");
        let e = parse(&text, 0, &src(), None).unwrap_err();
        assert!(e.message.contains("Lua script"), "{}", e.message);
    }

    #[test]
    fn the_wrong_test_name_is_refused() {
        let e = parse(CPU, 0, &src(), Some("mutex")).unwrap_err();
        assert!(e.message.contains("cpu output, not mutex"), "{}", e.message);
    }
}
