//! sysbench 1.0 text output of the built-in tests `cpu`, `memory`, `fileio`,
//! `threads` and `mutex` (sysbench has no JSON for them).
//!
//! Rates go to `metrics` under the names every rtlab benchmark uses
//! (`events_per_s`, `total_events`, `total_time_s`, `ops_per_s` and `mib_per_s`
//! for memory, `reads_per_s`, `writes_per_s`, `fsyncs_per_s`, `read_mib_per_s`,
//! `written_mib_per_s` for fileio); the per-event latency goes to the total
//! series. sysbench prints latencies in ms with two decimals (10 µs steps), one
//! percentile (`--percentile`, 95 by default) and no standard deviation; with
//! `--histogram=on` its histogram fills the series' HdrHistogram and gives the
//! other percentiles.

use super::{file_label, unknown_system, Skeleton, Source};
use crate::record::{Counters, Run, Series, Warning};
use crate::report::histfile::ParseError;
use crate::units::{parse_duration, DefaultUnit};
use rtlab_engine::stats::hist::LatencyHistogram;
use rtlab_engine::stats::{Moments, Summary};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The tests whose output this reads.
pub const TESTS: &[&str] = &["cpu", "memory", "fileio", "threads", "mutex"];

/// The index of sysbench's banner line (`sysbench 1.0.20 (using ...)`), if the
/// text has one among its first lines.
pub fn banner_line(text: &str) -> Option<usize> {
    text.lines()
        .take(5)
        .position(|l| l.starts_with("sysbench 1."))
}

/// What the latency section and histogram said.
#[derive(Default)]
struct Latency {
    min: Option<u64>,
    avg: Option<u64>,
    max: Option<u64>,
    /// `(percentile, ns)` as printed (`95th percentile`).
    percentile: Option<(String, u64)>,
    /// `(value ns, count)` from `--histogram=on`.
    histogram: Vec<(u64, u64)>,
}

/// Parses sysbench's text; `test` names the test when the output cannot.
pub fn parse(
    text: &str,
    banner: usize,
    src: &Source,
    test: Option<&str>,
) -> Result<Run, ParseError> {
    let mut detected: Option<&str> = None;
    let mut metrics: BTreeMap<String, f64> = BTreeMap::new();
    let mut params = Map::new();
    let mut lat = Latency::default();
    let mut section = "";
    let version = text.lines().nth(banner).unwrap_or("");
    params.insert(
        "sysbench_version".into(),
        json!(version.split_whitespace().nth(1)),
    );
    for (n, raw) in text.lines().enumerate().skip(banner + 1) {
        let line_no = n + 1;
        let err = |m: String| ParseError {
            line: line_no,
            message: m,
        };
        let line = raw.trim();
        let number = |v: &str| -> Result<f64, ParseError> {
            v.trim()
                .trim_end_matches('s')
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| err(format!("'{}' is not a number", v.trim())))
        };
        let ms = |v: &str| -> Result<u64, ParseError> {
            parse_duration(&format!("{}ms", v.trim()), DefaultUnit::Millis)
                .map_err(|_| err(format!("'{}' is not a latency in ms", v.trim())))
        };
        if line.is_empty() || line.starts_with('[') || line.starts_with("WARNING") {
            continue;
        }
        if section == "histogram" {
            if let Some((value, bar)) = line.split_once('|') {
                let count = bar.split_whitespace().last().unwrap_or("");
                let count = count
                    .parse::<u64>()
                    .map_err(|_| err(format!("histogram count '{count}' is not a number")))?;
                lat.histogram.push((ms(value)?, count));
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
            detected = Some("memory");
            continue;
        }
        if let Some(rest) = line.strip_prefix("Doing ") {
            params.insert(
                "file_test_mode".into(),
                json!(rest.trim_end_matches(" test")),
            );
            continue;
        }
        if let Some(rest) = line.strip_prefix("Total operations:") {
            // "Total operations: 4354161 (4339515.70 per second)"
            let (total, rate) = rest.split_once('(').unwrap_or((rest, ""));
            metrics.insert("total_operations".into(), number(total)?);
            metrics.insert(
                "ops_per_s".into(),
                number(
                    rate.trim()
                        .trim_end_matches(')')
                        .trim_end_matches("per second"),
                )?,
            );
            continue;
        }
        if let Some((amount, rate)) = line.split_once(" MiB transferred (") {
            // "4252.11 MiB transferred (4237.81 MiB/sec)"
            metrics.insert("mib_transferred".into(), number(amount)?);
            metrics.insert(
                "mib_per_s".into(),
                number(rate.trim_end_matches(')').trim_end_matches("MiB/sec"))?,
            );
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
                    detected = Some("fileio");
                    "fileio"
                }
                "CPU speed" => {
                    detected = Some("cpu");
                    "cpu"
                }
                _ => "",
            };
            continue;
        }
        match (section, key) {
            (_, "Number of threads") => {
                params.insert("threads".into(), json!(number(value)? as u64));
            }
            (_, "Prime numbers limit") => {
                detected = Some("cpu");
                params.insert("cpu_max_prime".into(), json!(number(value)? as u64));
            }
            (_, "block size" | "total size" | "operation" | "scope") => {
                params.insert(format!("memory_{}", key.replace(' ', "_")), json!(value));
            }
            ("cpu", "events per second") => {
                metrics.insert("events_per_s".into(), number(value)?);
            }
            ("fileio", "reads/s") => {
                metrics.insert("reads_per_s".into(), number(value)?);
            }
            ("fileio", "writes/s") => {
                metrics.insert("writes_per_s".into(), number(value)?);
            }
            ("fileio", "fsyncs/s") => {
                metrics.insert("fsyncs_per_s".into(), number(value)?);
            }
            (_, "read, MiB/s") => {
                metrics.insert("read_mib_per_s".into(), number(value)?);
            }
            (_, "written, MiB/s") => {
                metrics.insert("written_mib_per_s".into(), number(value)?);
            }
            (_, "total time") => {
                metrics.insert("total_time_s".into(), number(value)?);
            }
            (_, "total number of events") => {
                metrics.insert("total_events".into(), number(value)?);
            }
            ("latency", "min") => lat.min = Some(ms(value)?),
            ("latency", "avg") => lat.avg = Some(ms(value)?),
            ("latency", "max") => lat.max = Some(ms(value)?),
            ("latency", "sum") => {
                metrics.insert("latency_sum_s".into(), ms(value)? as f64 / 1e9);
            }
            ("latency", k) if k.ends_with("th percentile") => {
                let p = k.trim_end_matches("th percentile").to_string();
                lat.percentile = Some((p, ms(value)?));
            }
            (_, "events (avg/stddev)" | "execution time (avg/stddev)") => {
                let (avg, sd) = value
                    .split_once('/')
                    .ok_or_else(|| err(format!("'{value}' is not avg/stddev")))?;
                let name = if key.starts_with("events") {
                    "thread_events"
                } else {
                    "thread_time_s"
                };
                metrics.insert(format!("{name}_avg"), number(avg)?);
                metrics.insert(format!("{name}_stddev"), number(sd)?);
            }
            _ => {}
        }
    }
    let last = text.lines().count().max(1);
    let missing = |what: &str| {
        ParseError {
        line: last,
        message: format!(
            "the output ends without {what}: it is incomplete (was sysbench stopped, or is the file cut?)"
        ),
    }
    };
    let total_time = *metrics
        .get("total_time_s")
        .ok_or_else(|| missing("'total time:' (General statistics)"))?;
    let events = *metrics
        .get("total_events")
        .ok_or_else(|| missing("'total number of events:'"))?;
    let (Some(min), Some(avg), Some(max)) = (lat.min, lat.avg, lat.max) else {
        return Err(missing("the 'Latency (ms):' min/avg/max"));
    };
    let test = match (detected, test) {
        (Some(d), Some(t)) if d != t => {
            return Err(ParseError {
                line: banner + 1,
                message: format!("this is sysbench {d} output, not {t} as --sysbench-test says"),
            })
        }
        (Some(d), _) => d.to_string(),
        (None, Some(t)) => t.to_string(),
        (None, None) => {
            return Err(ParseError {
                line: banner + 1,
                message: "sysbench threads and mutex print the same report: say which with --sysbench-test threads or --sysbench-test mutex".into(),
            })
        }
    };
    if !metrics.contains_key("events_per_s") && total_time > 0.0 {
        metrics.insert("events_per_s".into(), events / total_time);
    }

    let mut warnings = vec![unknown_system()];
    let mut unreported = super::ESTIMATES.to_vec();
    let mut m = Moments::default();
    let mut h = LatencyHistogram::new();
    for &(v, c) in &lat.histogram {
        m.record_n(v, c);
        h.record_n(v, c);
    }
    let mut summary = if lat.histogram.is_empty() {
        Summary::default()
    } else {
        unreported.clear();
        Summary::new(&m, &h)
    };
    summary.samples = events as u64;
    summary.min_ns = min;
    summary.mean_ns = avg as f64;
    summary.max_ns = max;
    if let Some((p, ns)) = &lat.percentile {
        let field = match p.as_str() {
            "50" => Some(("p50_ns", &mut summary.p50_ns)),
            "90" => Some(("p90_ns", &mut summary.p90_ns)),
            "95" => Some(("p95_ns", &mut summary.p95_ns)),
            "99" => Some(("p99_ns", &mut summary.p99_ns)),
            _ => None,
        };
        match field {
            Some((name, slot)) => {
                *slot = *ns;
                unreported.retain(|u| *u != name);
            }
            None => {
                metrics.insert(format!("latency_p{p}_s"), *ns as f64 / 1e9);
            }
        }
        if *ns > max {
            warnings.push(Warning::new(
                "percentile_above_max",
                format!(
                    "sysbench's {p}th percentile ({} ms) is above its maximum ({} ms): it is an estimate from sysbench's own histogram; it was clamped to the maximum",
                    *ns as f64 / 1e6,
                    max as f64 / 1e6
                ),
            ));
        }
    }
    for p in [
        &mut summary.p50_ns,
        &mut summary.p90_ns,
        &mut summary.p95_ns,
        &mut summary.p99_ns,
        &mut summary.p999_ns,
        &mut summary.p9999_ns,
    ] {
        if *p != 0 {
            *p = (*p).clamp(min, max);
        }
    }
    warnings.push(Warning::new(
        "imported_sysbench",
        if unreported.is_empty() {
            "imported from sysbench: latencies are in 10 µs steps; percentiles other than sysbench's own and the stddev come from its histogram".to_string()
        } else {
            format!(
                "imported from sysbench: latencies are in 10 µs steps, and sysbench does not report {} (they are unknown, not 0; use --histogram=on for percentiles)",
                unreported.join(", ")
            )
        },
    ));
    params.insert("source".into(), json!("sysbench"));
    params.insert("test".into(), json!(test));
    params.insert("file".into(), json!(src.name));
    params.insert("unreported".into(), json!(unreported));
    if let Some((p, _)) = &lat.percentile {
        params.insert("percentile".into(), json!(p));
    }
    let duration_ns = (total_time * 1e9).round() as u64;
    let started_at = src.modified.as_ref().and_then(|m| {
        let end = chrono::DateTime::parse_from_rfc3339(m).ok()?;
        let start = end - chrono::Duration::nanoseconds(duration_ns as i64);
        Some(
            start
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        )
    });
    let total = Series {
        name: "all".into(),
        thread: None,
        cpu: None,
        tid: None,
        interval_ns: None,
        counters: Counters {
            samples: events as u64,
            ..Counters::default()
        },
        summary,
        max_at: None,
        histogram: h.to_data(),
        us_histogram: None,
        trace: Vec::new(),
    };
    let mut run = Skeleton {
        kind: format!("bench.{test}"),
        label: file_label(src),
        src,
        fingerprint: Default::default(),
        started_at,
        ended_at: None,
        duration_ns,
        params: Value::Object(params),
        warnings,
    }
    .into_run();
    run.total = Some(total);
    run.metrics = metrics;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        Source {
            name: "cpu.txt".into(),
            modified: Some("2026-01-02T03:04:05.000000Z".into()),
        }
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
        assert_eq!(run.params["cpu_max_prime"], 2000);
        assert_eq!(run.params["unreported"][0], "stddev_ns");
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

    #[test]
    fn the_wrong_test_name_is_refused() {
        let e = parse(CPU, 0, &src(), Some("mutex")).unwrap_err();
        assert!(e.message.contains("cpu output, not mutex"), "{}", e.message);
    }
}
