//! sysbench 0.4's report (0.5 prints the same for these tests, with `General
//! statistics:` and `response time:` for 0.4's `Test execution summary:` and
//! `per-request statistics:`). The test names itself in a `Doing ...` line;
//! latencies carry their unit (`2.26ms`); the percentile is `approx.  95
//! percentile:`. Memory prints `Operations performed: N (X ops/sec)` and `X MB
//! transferred (Y MB/sec)` (MB of 2^20 bytes); fileio prints its operations
//! (`R Read, W Write, O Other = T Total`, where Other are its fsyncs) and
//! `Read 130.31Mb  Written 86.875Mb ...` (binary units), from which the rates
//! rtlab names as 1.0 does are computed over the total time.

use super::{memory_line, number, percentile, shared_line, Report};
use crate::format::histfile::ParseError;
use crate::units::parse_count;
use serde_json::json;

/// The fileio modes 0.4 announces as `Doing <mode> test`.
const FILEIO_MODES: [&str; 6] = [
    "sequential write (creation)",
    "sequential read",
    "sequential rewrite",
    "random read",
    "random write",
    "random r/w",
];

/// A size as 0.4 prints it (`130.31Mb`, `0b`, `741.22Kb`), in MiB.
fn mib(v: &str, line: usize) -> Result<f64, ParseError> {
    let v = v.trim().trim_end_matches("/sec");
    let units = [
        ("Tb", 1024.0 * 1024.0),
        ("Gb", 1024.0),
        ("Mb", 1.0),
        ("Kb", 1.0 / 1024.0),
        ("b", 1.0 / 1048576.0),
    ];
    units
        .iter()
        .find_map(|(u, f)| v.strip_suffix(u).map(|n| (n, f)))
        .and_then(|(n, f)| {
            Some(
                n.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)?
                    * f,
            )
        })
        .ok_or_else(|| ParseError {
            line,
            message: format!("'{v}' is not a size such as 130.31Mb"),
        })
}

/// `8340 Read, 5560 Write, 17664 Other = 31564 Total` (0.5: `reads`, `writes`):
/// reads, writes and fsyncs, which must add up to the total.
fn operations(v: &str, line: usize) -> Result<[u64; 3], ParseError> {
    let err = |m: String| ParseError { line, message: m };
    let words: Vec<&str> = v.split([',', '=']).map(str::trim).collect();
    let [r, w, o, t] = words.as_slice() else {
        return Err(err(format!(
            "'{}' is not 'R Read, W Write, O Other = T Total'",
            v.trim()
        )));
    };
    let count = |word: &str, names: &[&str]| -> Result<u64, ParseError> {
        let (n, name) = word.split_once(' ').unwrap_or((word, ""));
        if !names.contains(&name) {
            return Err(err(format!("'{word}' is not a count of {}", names[0])));
        }
        parse_count(n).map_err(|e| err(format!("{} {e}", names[0])))
    };
    let counts = [
        count(r, &["Read", "reads"])?,
        count(w, &["Write", "writes"])?,
        count(o, &["Other"])?,
    ];
    let total = count(t, &["Total"])?;
    if counts.iter().try_fold(0u64, |a, &c| a.checked_add(c)) != Some(total) {
        return Err(err(format!(
            "{} reads, {} writes and {} other operations do not add up to the {total} total",
            counts[0], counts[1], counts[2]
        )));
    }
    Ok(counts)
}

/// Reads the lines after the banner (line `banner`, 0-based).
pub(super) fn read(text: &str, banner: usize) -> Result<Report, ParseError> {
    let mut r = Report::default();
    let mut section = "";
    // Fileio's counts and sizes, turned into rates once the time is known.
    let mut per_second: Vec<(&str, f64)> = Vec::new();
    for (n, raw) in text.lines().enumerate().skip(banner + 1) {
        let line_no = n + 1;
        let err = |m: String| ParseError {
            line: line_no,
            message: m,
        };
        let line = raw.trim();
        if let Some(doing) = line.strip_prefix("Doing ") {
            let test = match doing {
                "CPU performance benchmark" => "cpu",
                "memory operations speed test" => "memory",
                "thread subsystem performance test" => "threads",
                "mutex performance test" => "mutex",
                d => match d.strip_suffix(" test").filter(|m| FILEIO_MODES.contains(m)) {
                    Some(mode) => {
                        r.params.insert("file_test_mode".into(), json!(mode));
                        "fileio"
                    }
                    None => {
                        return Err(err(format!(
                            "'{line}': rtlab imports sysbench's cpu, memory, fileio, threads and mutex tests, not this one"
                        )))
                    }
                },
            };
            r.detected = Some(test);
            continue;
        }
        if let Some(rest) = line.strip_prefix("Thread yields per test:") {
            // "Thread yields per test: 1000 Locks used: 8"
            let (yields, locks) = rest.split_once("Locks used:").unwrap_or((rest, ""));
            for (key, v) in [("thread_yields", yields), ("thread_locks", locks)] {
                let v = parse_count(v).map_err(|e| err(format!("{key} {e}")))?;
                r.params.insert(key.into(), json!(v));
            }
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("Operations performed:")
            .filter(|r| r.contains("Total"))
        {
            let [reads, writes, fsyncs] = operations(rest, line_no)?;
            for (name, v) in [("reads", reads), ("writes", writes), ("fsyncs", fsyncs)] {
                r.metrics.insert(format!("total_{name}"), v as f64);
            }
            per_second.extend([
                ("reads_per_s", reads as f64),
                ("writes_per_s", writes as f64),
                ("fsyncs_per_s", fsyncs as f64),
            ]);
            continue;
        }
        // Memory's MB are of 2^20 bytes.
        let ops = ("Operations performed:", "ops/sec");
        if memory_line(&mut r, line, ops, "MB", line_no)? {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Read ") {
            // "Read 130.31Mb  Written 86.875Mb  Total transferred 217.19Mb  (741.22Kb/sec)"
            let words: Vec<&str> = rest.split_whitespace().collect();
            let [read, "Written", written, ..] = words.as_slice() else {
                return Err(err(format!(
                    "'{line}' is not 'Read <size>  Written <size> ...'"
                )));
            };
            per_second.extend([
                ("read_mib_per_s", mib(read, line_no)?),
                ("written_mib_per_s", mib(written, line_no)?),
            ]);
            continue;
        }
        if let Some(rate) = line.strip_suffix("Requests/sec executed") {
            r.metrics
                .insert("requests_per_s".into(), number(rate, line_no)?);
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            section = match key {
                "per-request statistics" | "response time" => "latency",
                _ => "",
            };
            continue;
        }
        if shared_line(&mut r, section == "latency", key, value, line_no)? {
            continue;
        }
        let mut memory = |name: &str| {
            r.params.insert(format!("memory_{name}"), json!(value));
        };
        match (section, key) {
            (_, "Maximum prime number checked in CPU test") => {
                r.detected = Some("cpu");
                let n = parse_count(value).map_err(|e| err(format!("maximum prime number {e}")))?;
                r.params.insert("cpu_max_prime".into(), json!(n));
            }
            (_, "Memory block size") => memory("block_size"),
            (_, "Memory transfer size") => memory("total_size"),
            (_, "Memory operations type") => memory("operation"),
            (_, "Memory scope type") => memory("scope"),
            (_, "total time taken by event execution") => {
                r.metrics
                    .insert("latency_sum_s".into(), number(value, line_no)?);
            }
            ("latency", k) if k.starts_with("approx.") && k.ends_with("percentile") => {
                let p = k["approx.".len()..].trim_end_matches("percentile").trim();
                r.lat.percentile = Some(percentile(p, value, line_no)?);
            }
            _ => {}
        }
    }
    if let Some(&secs) = r.metrics.get("total_time_s").filter(|s| **s > 0.0) {
        for (name, amount) in per_second {
            r.metrics.insert(name.into(), amount / secs);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::super::*;

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import/");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{DIR}{name}")).unwrap()
    }

    fn src() -> Source {
        crate::import::test_source("s.txt")
    }

    #[test]
    fn every_test_names_itself() {
        for test in TESTS {
            let run = parse(
                &fixture(&format!("sysbench-0.4-{test}.txt")),
                0,
                &src(),
                None,
            )
            .unwrap();
            assert_eq!(run.kind, format!("bench.{test}"));
            assert_eq!(run.params.recorded("sysbench_version"), "0.4.12");
            run.check_numbers().unwrap();
        }
    }

    #[test]
    fn the_cpu_summary_is_read_with_its_units() {
        let run = parse(&fixture("sysbench-0.4-cpu.txt"), 0, &src(), None).unwrap();
        let s = run.total.unwrap().summary;
        assert_eq!(
            (s.samples, s.min_ns, s.max_ns, s.p95_ns),
            (10_000, 2_580_000, 6_040_000, 2_630_000)
        );
        assert_eq!(s.mean_ns, 2_610_000.0);
        assert_eq!(run.metrics["total_time_s"], 13.0462);
        assert_eq!(run.metrics["latency_sum_s"], 26.0813);
        assert_eq!(run.metrics["events_per_s"], 10_000.0 / 13.0462);
        assert_eq!(run.params.recorded("cpu_max_prime"), 20_000);
        assert_eq!(run.params.recorded("threads"), 2);
    }

    #[test]
    fn fileio_rates_come_from_its_counts_and_sizes() {
        let run = parse(&fixture("sysbench-0.4-fileio.txt"), 0, &src(), None).unwrap();
        let m = &run.metrics;
        assert_eq!(
            (m["total_reads"], m["total_writes"], m["total_fsyncs"]),
            (72060.0, 48040.0, 153600.0)
        );
        assert_eq!(m["reads_per_s"], 72060.0 / 60.0004);
        assert_eq!(m["read_mib_per_s"], 1.0995 * 1024.0 / 60.0004);
        assert_eq!(m["written_mib_per_s"], 750.62 / 60.0004);
        assert_eq!(m["requests_per_s"], 2001.65);
        assert_eq!(run.params.recorded("file_test_mode"), "random r/w");
    }

    #[test]
    fn memory_rates_are_read_as_printed() {
        let run = parse(&fixture("sysbench-0.4-memory.txt"), 0, &src(), None).unwrap();
        assert_eq!(run.metrics["ops_per_s"], 10378.03);
        assert_eq!(run.metrics["mib_per_s"], 10378.03);
        assert_eq!(run.metrics["mib_transferred"], 10240.0);
        assert_eq!(run.params.recorded("memory_block_size"), "1024K");
    }

    #[test]
    fn a_percentile_above_the_maximum_is_clamped_and_said() {
        let run = parse(&fixture("sysbench-0.4-mutex.txt"), 0, &src(), None).unwrap();
        assert_eq!(run.total.as_ref().unwrap().summary.p95_ns, 411_630_000);
        assert!(run
            .warnings
            .iter()
            .any(|w| w.code == "percentile_above_max"));
    }

    /// sysbench 0.5 prints 0.4's report under 1.0's headings.
    #[test]
    fn the_layout_of_0_5_is_read_too() {
        let text = fixture("sysbench-0.4-threads.txt")
            .replace("sysbench 0.4.12:", "sysbench 0.5:")
            .replace("Test execution summary:", "General statistics:")
            .replace("per-request statistics:", "response time:")
            .replace("event execution: 7.4686", "event execution: 7.4686s");
        let run = parse(&text, 0, &src(), None).unwrap();
        assert_eq!(run.kind, "bench.threads");
        assert_eq!(run.metrics["latency_sum_s"], 7.4686);
        assert_eq!(run.params.recorded("thread_locks"), 2);
    }

    #[test]
    fn damaged_lines_are_refused_at_their_line() {
        let text = fixture("sysbench-0.4-fileio.txt");
        let bad = text.replace("48040 Write", "48041 Write");
        let e = parse(&bad, 0, &src(), None).unwrap_err();
        assert_eq!(e.line, 22);
        assert!(e.message.contains("do not add up"), "{}", e.message);
        let bad = text.replace("Written 750.62Mb", "Written 750.62Mx");
        assert_eq!(parse(&bad, 0, &src(), None).unwrap_err().line, 23);
        let oltp = text.replace("Doing random r/w test", "Doing OLTP test.");
        let e = parse(&oltp, 0, &src(), None).unwrap_err();
        assert!(e.message.contains("not this one"), "{}", e.message);
        let cut: String = text.lines().take(30).map(|l| format!("{l}\n")).collect();
        assert!(parse(&cut, 0, &src(), None)
            .unwrap_err()
            .message
            .contains("incomplete"));
    }
}
