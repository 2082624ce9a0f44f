//! sysbench text output of the built-in tests `cpu`, `memory`, `fileio`,
//! `threads` and `mutex` (sysbench has no JSON for them), in the layout of
//! sysbench 1.0 ([`v1`]) and of 0.4/0.5 ([`v04`]). The test is read from the
//! output: its own lines name cpu, memory and fileio (and, in 0.4, threads and
//! mutex); sysbench 1.0's threads and mutex reports look alike, but mutex runs
//! exactly one event per thread, threads runs until `--time` or `--events`.
//!
//! Rates go to `metrics` under the names every rtlab benchmark uses
//! (`events_per_s`, `total_events`, `total_time_s`, `ops_per_s` and `mib_per_s`
//! for memory, `reads_per_s`, `writes_per_s`, `fsyncs_per_s`, `read_mib_per_s`,
//! `written_mib_per_s` for fileio); the per-event latency goes to the total
//! series. sysbench prints latencies in ms with two decimals (10 µs steps), one
//! percentile (`--percentile`, 95 by default) and no standard deviation; with
//! `--histogram=on` (1.0) its histogram fills the series' HdrHistogram and gives
//! the percentiles and the standard deviation.
//!
//! With a histogram every percentile comes from it, by sysbench's own rule, at
//! its 1 µs print resolution; sysbench's printed percentile (10 µs steps) is
//! checked against it and kept as a metric. Taking that one figure into the
//! summary beside the others would mix two resolutions: a median of 0.021 ms from
//! the histogram would sit above a 99th percentile printed as 0.02 ms.

mod v04;
mod v1;
mod values;

use values::{memory_line, ms, number, percentile, shared_line};

use super::{unknown_system, Skeleton, Source};
use crate::format::histfile::ParseError;
use crate::record::{Counters, Run, Series, Warning};
use rtlab_engine::stats::hist::LatencyHistogram;
use rtlab_engine::stats::{Moments, Summary};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The tests whose output this reads.
pub const TESTS: &[&str] = &["cpu", "memory", "fileio", "threads", "mutex"];

/// The index of sysbench's banner line (`sysbench 1.0.20 (using ...)`,
/// `sysbench 0.4.12:  multi-threaded ...`), if the text has one among its
/// first lines.
pub fn banner_line(text: &str) -> Option<usize> {
    text.lines()
        .take(5)
        .position(|l| l.starts_with("sysbench 1.") || l.starts_with("sysbench 0."))
}

/// What the latency section and histogram said, with the lines that said it.
#[derive(Default)]
struct Latency {
    min: Option<u64>,
    avg: Option<u64>,
    max: Option<(u64, usize)>,
    /// `(percentile, ns, line)` as printed (`95th percentile`).
    percentile: Option<(String, u64, usize)>,
    /// `(value ns, count, line)` from `--histogram=on`.
    histogram: Vec<(u64, u64, usize)>,
}

/// What one report says, whatever its layout.
#[derive(Default)]
struct Report {
    /// The test, when the output names it.
    detected: Option<&'static str>,
    metrics: BTreeMap<String, f64>,
    params: Map<String, Value>,
    lat: Latency,
    /// The total number of events and its line.
    events: Option<(u64, usize)>,
}

/// The largest run time accepted: its nanoseconds fit in an `i64`, as dates
/// need (292 years).
const MAX_TOTAL_TIME_S: f64 = (i64::MAX / 1_000_000_000) as f64;

/// sysbench's percentile of its histogram (`sb_histogram_snapshot_get_pct`):
/// the value of the first bucket at which the running count reaches
/// `floor(total × p / 100 + 0.5)`, computed as sysbench computes it so that
/// both give the same bucket. `buckets` are ascending and add up to `total`.
fn sysbench_percentile(buckets: &[(u64, u64, usize)], total: u64, p: f64) -> u64 {
    let rank = (total as f64 * p / 100.0 + 0.5).floor().max(1.0);
    let mut seen: u64 = 0;
    for &(value, count, _) in buckets {
        // No overflow: the counts were added up (checked) before.
        seen += count;
        if seen as f64 >= rank {
            return value;
        }
    }
    buckets.last().map_or(0, |b| b.0)
}

/// Parses sysbench's text whose banner is line `banner` (0-based); `test`
/// names the test when the user said it.
pub fn parse(
    text: &str,
    banner: usize,
    src: &Source,
    test: Option<&str>,
) -> Result<Run, ParseError> {
    let version_line = text.lines().nth(banner).unwrap_or("");
    let version = version_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .trim_end_matches(':');
    let mut report = if version.starts_with("0.") {
        v04::read(text, banner)?
    } else {
        v1::read(text, banner)?
    };
    report
        .params
        .insert("sysbench_version".into(), json!(version));
    finish(report, text, banner, src, test)
}

/// The test of a report: what the output says, else what the user said, else
/// sysbench 1.0's threads or mutex told apart by the events per thread: more
/// than one is threads for certain, one each is mutex unless the user says
/// otherwise (a threads run whose events each outlast `--time` looks the same).
/// Also how it was told, for the record.
fn test_of(
    r: &Report,
    banner: usize,
    events: u64,
    told: Option<&str>,
) -> Result<(String, &'static str), ParseError> {
    match (r.detected, told) {
        (Some(d), Some(t)) if d != t => Err(ParseError {
            line: banner + 1,
            message: format!("this is sysbench {d} output, not {t} as --sysbench-test says"),
        }),
        (Some(d), _) => Ok((d.to_string(), "the output")),
        (None, Some(t)) => Ok((t.to_string(), "--sysbench-test")),
        (None, None) => {
            let threads = r.params.get("threads").and_then(Value::as_u64);
            let per_thread = r.metrics.get("thread_events_avg");
            let spread = r.metrics.get("thread_events_stddev");
            let one_each =
                threads == Some(events) && per_thread == Some(&1.0) && spread == Some(&0.0);
            Ok(if one_each {
                (
                    "mutex".into(),
                    "one event per thread (sysbench mutex runs exactly one)",
                )
            } else {
                (
                    "threads".into(),
                    "more than one event per thread (sysbench mutex runs exactly one)",
                )
            })
        }
    }
}

/// The run of a report: the latency summary (from the histogram when there is
/// one), what is unreported, the warnings.
fn finish(
    r: Report,
    text: &str,
    banner: usize,
    src: &Source,
    told: Option<&str>,
) -> Result<Run, ParseError> {
    let last = text.lines().count().max(1);
    let missing = |what: &str| {
        ParseError {
        line: last,
        message: format!(
            "the output ends without {what}: it is incomplete (was sysbench stopped, or is the file cut?)"
        ),
    }
    };
    let total_time = *r
        .metrics
        .get("total_time_s")
        .ok_or_else(|| missing("'total time:' (the statistics)"))?;
    let (events, events_line) = r
        .events
        .ok_or_else(|| missing("'total number of events:'"))?;
    let lat = &r.lat;
    let (Some(min), Some(avg), Some((max, max_line))) = (lat.min, lat.avg, lat.max) else {
        return Err(missing("the latency min/avg/max"));
    };
    if !(min <= avg && avg <= max) {
        return Err(ParseError {
            line: max_line,
            message: format!(
                "min {} ms, avg {} ms and max {} ms are not in order: the latency section is damaged",
                min as f64 / 1e6,
                avg as f64 / 1e6,
                max as f64 / 1e6
            ),
        });
    }
    let (test, told_by) = test_of(&r, banner, events, told)?;
    let guessed = told_by.starts_with("one event");
    let Report {
        mut metrics,
        mut params,
        lat,
        ..
    } = r;
    if !metrics.contains_key("events_per_s") && total_time > 0.0 {
        metrics.insert("events_per_s".into(), events as f64 / total_time);
    }

    let mut warnings = vec![unknown_system()];
    if guessed {
        warnings.push(Warning::new(
            "test_guessed",
            "sysbench 1.0 prints threads and mutex alike: one event per thread was read as mutex (a threads run whose every event outlasts --time looks the same: import it with --sysbench-test threads)",
        ));
    }
    let mut unreported = super::ESTIMATES.to_vec();
    let mut m = Moments::default();
    let mut h = LatencyHistogram::new();
    let mut in_histogram: u64 = 0;
    for &(v, c, line) in &lat.histogram {
        let too_many = |e: String| ParseError { line, message: e };
        in_histogram = in_histogram.checked_add(c).ok_or_else(|| {
            too_many(format!(
                "the histogram's counts add up to more than 64 bits can count ({})",
                u64::MAX
            ))
        })?;
        m.record_n(v, c).map_err(|e| too_many(e.to_string()))?;
        h.record_n(v, c);
    }
    let mut summary = Summary {
        samples: events,
        min_ns: min,
        mean_ns: avg as f64,
        max_ns: max,
        ..Summary::default()
    };
    if !lat.histogram.is_empty() {
        if in_histogram != events {
            return Err(ParseError {
                line: events_line,
                message: format!(
                    "the total number of events is {events} but the latency histogram holds {in_histogram}: the file mixes two runs or was edited"
                ),
            });
        }
        unreported.clear();
        // Clamping into [min, max] keeps the order: min and max are exact but
        // printed to 10 µs, a bucket's value may lie a little outside them.
        let q = |p: f64| sysbench_percentile(&lat.histogram, events, p).clamp(min, max);
        summary.stddev_ns = m.stddev();
        summary.p50_ns = q(50.0);
        summary.p90_ns = q(90.0);
        summary.p95_ns = q(95.0);
        summary.p99_ns = q(99.0);
        summary.p999_ns = q(99.9);
        summary.p9999_ns = q(99.99);
    }
    if let Some((p, ns, line)) = &lat.percentile {
        let pct: f64 = p.parse().unwrap_or(100.0);
        if !lat.histogram.is_empty() {
            // sysbench prints the same bucket's value twice: to 1 µs in the
            // histogram, to 10 µs here. More apart than one 10 µs step, they
            // cannot come from one run.
            let from_hist = sysbench_percentile(&lat.histogram, events, pct);
            if from_hist.abs_diff(*ns) > 10_000 {
                return Err(ParseError {
                        line: *line,
                        message: format!(
                            "the {p}th percentile is {} ms but the histogram above puts it at {} ms: the file mixes two runs or was edited",
                            *ns as f64 / 1e6,
                            from_hist as f64 / 1e6
                        ),
                    });
            }
            metrics.insert(format!("latency_p{p}_s"), *ns as f64 / 1e9);
        } else {
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
            "imported from sysbench: min, avg and max are in 10 µs steps; the percentiles and the stddev come from its histogram (1 µs steps), with which its own percentile agrees".to_string()
        } else {
            format!(
                "imported from sysbench: latencies are in 10 µs steps, and sysbench does not report {} (they are unknown, not 0; sysbench 1.0 with --histogram=on gives percentiles)",
                unreported.join(", ")
            )
        },
    ));
    params.insert("source".into(), json!("sysbench"));
    params.insert("test".into(), json!(test));
    params.insert("test_from".into(), json!(told_by));
    params.insert("file".into(), json!(src.name));
    params.insert("unreported".into(), json!(unreported));
    if let Some((p, _, _)) = &lat.percentile {
        params.insert("percentile".into(), json!(p));
    }
    // At most MAX_TOTAL_TIME_S seconds: the nanoseconds fit in an i64.
    let duration_ns = (total_time * 1e9).round() as u64;
    let started_at = src.modified.as_ref().and_then(|m| {
        let end = chrono::DateTime::parse_from_rfc3339(m).ok()?;
        let start = end.checked_sub_signed(chrono::Duration::nanoseconds(duration_ns as i64))?;
        Some(
            start
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        )
    });
    let counters = Counters {
        samples: events,
        ..Counters::default()
    };
    let total = Series::new("all".into(), counters, summary, h.to_data());
    let kind = format!("bench.{test}");
    let mut run = Skeleton {
        started_at,
        ..Skeleton::of_file(&kind, src, duration_ns, Value::Object(params), warnings)
    }
    .into_run();
    run.total = Some(total);
    run.metrics = metrics;
    Ok(run)
}
