//! cyclictest 2.x results: the `-h N`/`-H N` histogram text (with or without
//! `-q`, the status lines are skipped) and the `--json=FILE` document, whose keys
//! `"cmdline:"` and `"rt_test_version:"` carry a stray colon and which has no
//! overflow counts (they are `cycles` minus the histogram's total).
//!
//! cyclictest measures whole microseconds, so bucket `i` holds values of exactly
//! `i` µs; imported series record them as `i × 1000` ns. Values past the
//! histogram's range are known only by count (and the maximum): they are recorded
//! at the range, the largest at the reported maximum, so percentiles that fall
//! among them are lower bounds and a warning says so.

use super::{file_label, fingerprint_from_uname, unknown_system, Skeleton, Source};
use crate::format::histfile::{self, ParseError};
use crate::record::{self, Counters, Run, Series, Warning};
use rtlab_engine::stats::hist::{LatencyHistogram, UsBucketsData, MAX_US_BUCKETS};
use rtlab_engine::stats::{Moments, MomentsOverflow, Summary};
use rtlab_engine::sysinfo::{PreemptModel, Uname};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// One thread's results, as cyclictest reports them.
#[derive(Debug, Clone, Default)]
struct Column {
    thread: Option<usize>,
    cpu: Option<usize>,
    /// The 1-µs buckets, dense over the histogram's range; `None` when cyclictest
    /// kept no histogram (`--json` without `-h`).
    buckets: Option<Vec<u64>>,
    overflows: u64,
    overflow_cycles: Vec<u64>,
    /// Wake-ups, when the histogram does not hold them all.
    cycles: u64,
    min_us: u64,
    avg_us: f64,
    max_us: u64,
}

impl Column {
    /// Values in the column; `None` when the counts add up to more than 64
    /// bits hold (they cannot come from a measurement).
    fn checked_samples(&self) -> Option<u64> {
        match &self.buckets {
            Some(b) => b
                .iter()
                .try_fold(self.overflows, |acc, &n| acc.checked_add(n)),
            None => Some(self.cycles),
        }
    }

    /// Values in the column; [`check`] made sure they add up.
    fn samples(&self) -> u64 {
        self.checked_samples().unwrap_or(u64::MAX)
    }

    /// All threads together.
    fn total(cols: &[Column]) -> Column {
        let samples: u64 = cols.iter().map(Column::samples).sum();
        let buckets = cols.iter().try_fold(Vec::<u64>::new(), |mut acc, c| {
            let b = c.buckets.as_ref()?;
            acc.resize(acc.len().max(b.len()), 0);
            for (a, x) in acc.iter_mut().zip(b) {
                *a += x;
            }
            Some(acc)
        });
        let weighted: f64 = cols.iter().map(|c| c.avg_us * c.samples() as f64).sum();
        let live = cols.iter().filter(|c| c.samples() > 0);
        Column {
            thread: None,
            cpu: None,
            buckets,
            overflows: cols.iter().map(|c| c.overflows).sum(),
            overflow_cycles: Vec::new(),
            cycles: samples,
            min_us: live.clone().map(|c| c.min_us).min().unwrap_or(0),
            avg_us: if samples > 0 {
                weighted / samples as f64
            } else {
                0.0
            },
            max_us: live.map(|c| c.max_us).max().unwrap_or(0),
        }
    }

    /// The series, noting in `unreported` the summary fields it cannot give.
    /// The column passed [`check`]; its values in ns fit in 64 bits.
    fn series(
        &self,
        name: String,
        unreported: &mut BTreeSet<&'static str>,
    ) -> Result<Series, MomentsOverflow> {
        let mut m = Moments::default();
        let mut h = LatencyHistogram::new();
        let summary = match &self.buckets {
            Some(buckets) => {
                for (us, &n) in buckets.iter().enumerate() {
                    m.record_n(us as u64 * 1000, n)?;
                    h.record_n(us as u64 * 1000, n);
                }
                if self.overflows > 0 {
                    // An overflowed value is at least the range, and at least
                    // the reported minimum (which matters when all overflowed).
                    let floor = (buckets.len() as u64 * 1000).max(self.min_us * 1000);
                    let max = (self.max_us * 1000).max(floor);
                    m.record_n(floor, self.overflows - 1)?;
                    h.record_n(floor, self.overflows - 1);
                    m.record_n(max, 1)?;
                    h.record(max);
                }
                let mut s = Summary::new(&m, &h);
                // Every value is a whole µs; the histogram reports the top of a
                // value's bucket, up to 0.1% above it.
                for p in [
                    &mut s.p50_ns,
                    &mut s.p90_ns,
                    &mut s.p95_ns,
                    &mut s.p99_ns,
                    &mut s.p999_ns,
                    &mut s.p9999_ns,
                ] {
                    *p = (*p / 1000 * 1000).max(s.min_ns);
                }
                if self.overflows > 0 {
                    // Overflowed values are known only by count: cyclictest's own
                    // average covers them all, the spread is unknown.
                    s.mean_ns = self.avg_us * 1000.0;
                    s.stddev_ns = 0.0;
                    unreported.insert("stddev_ns");
                }
                s
            }
            None => {
                if self.cycles > 0 {
                    unreported.extend(super::ESTIMATES);
                }
                Summary {
                    samples: self.cycles,
                    min_ns: self.min_us * 1000,
                    mean_ns: self.avg_us * 1000.0,
                    max_ns: self.max_us * 1000,
                    ..Summary::default()
                }
            }
        };
        Ok(Series {
            name,
            thread: self.thread,
            cpu: self.cpu,
            tid: None,
            interval_ns: None,
            counters: Counters {
                samples: summary.samples,
                overruns: 0,
                deadline_misses: 0,
                overflows: self.overflows,
            },
            summary,
            max_at: None,
            histogram: h.to_data(),
            us_histogram: self.buckets.as_ref().map(|b| UsBucketsData {
                max_us: b.len() as u32,
                buckets: b
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(us, &n)| (us as u32, n))
                    .collect(),
                overflow: self.overflows,
                overflow_cycles: self.overflow_cycles.clone(),
            }),
            trace: Vec::new(),
        })
    }
}

/// Refuses columns whose numbers no measurement gives: counts that add up to
/// more than 64 bits hold (per thread or over all threads), latencies whose
/// nanoseconds do not fit in 64 bits, min/avg/max out of order. `line` says
/// where a thread's numbers are, by thread index.
fn check(cols: &[Column], line: impl Fn(usize) -> usize) -> Result<(), ParseError> {
    let mut all: u64 = 0;
    for (i, c) in cols.iter().enumerate() {
        let err = |message: String| ParseError {
            line: line(i),
            message: format!("thread {i}: {message}"),
        };
        let n = c.checked_samples().ok_or_else(|| {
            err("its histogram counts and overflows add up to more than 64 bits can count: they cannot come from a measurement".into())
        })?;
        all = all.checked_add(n).ok_or_else(|| {
            err("the counts of all threads add up to more than 64 bits can count: they cannot come from a measurement".into())
        })?;
        const MAX_US: u64 = u64::MAX / 1000;
        if c.min_us > MAX_US || c.max_us > MAX_US || !(c.avg_us.is_finite() && c.avg_us >= 0.0) {
            return Err(err(format!(
                "min {} µs, avg {} µs or max {} µs is not a latency (negative, or more than 64 bits of ns)",
                c.min_us, c.avg_us, c.max_us
            )));
        }
        if n > 0 && !(c.min_us as f64 <= c.avg_us && c.avg_us <= c.max_us as f64) {
            return Err(err(format!(
                "min {} µs, avg {} µs and max {} µs are not in order",
                c.min_us, c.avg_us, c.max_us
            )));
        }
    }
    Ok(())
}

/// Per-thread series, the total, and the warnings the columns justify. The
/// columns passed [`check`]; `line` is where a failure is reported.
fn fill(skel: Skeleton<'_>, cols: &[Column], line: usize) -> Result<Run, ParseError> {
    let too_large = |e: MomentsOverflow| ParseError {
        line,
        message: e.to_string(),
    };
    let mut unreported = BTreeSet::new();
    let mut warnings = skel.warnings.clone();
    let mut params = skel.params.clone();
    let series: Vec<Series> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let name = match c.cpu {
                Some(cpu) => format!("cpu{cpu}"),
                None => format!("thread{i}"),
            };
            c.series(name, &mut unreported)
        })
        .collect::<Result<_, _>>()
        .map_err(too_large)?;
    let total = Column::total(cols)
        .series("all".into(), &mut unreported)
        .map_err(too_large)?;
    warnings.push(Warning::new(
        "imported_cyclictest",
        "imported from cyclictest: values are whole microseconds, and cyclictest counts no missed periods (overruns) or deadline misses, so those counters are 0 here, not measured",
    ));
    if total.counters.overflows > 0 {
        let range = cols
            .iter()
            .filter_map(|c| c.buckets.as_ref().map(Vec::len))
            .max()
            .unwrap_or(0);
        let share = total.counters.overflows as f64 / total.counters.samples.max(1) as f64;
        warnings.push(Warning::new(
            "overflow",
            format!(
                "{} of {} values ({:.3}%) were above the {range} µs histogram range and are known only by count: percentiles among them are lower bounds (rerun cyclictest with a larger -h)",
                total.counters.overflows,
                total.counters.samples,
                share * 100.0
            ),
        ));
    }
    if cols.iter().any(|c| c.buckets.is_none() && c.cycles > 0) {
        warnings.push(Warning::new(
            "no_histogram",
            "cyclictest kept no histogram (run without -h): only min, average and max are known; percentiles and stddev are unknown (rerun with -h 1000 or more)",
        ));
    }
    if let Value::Object(p) = &mut params {
        p.insert("threads".into(), json!(cols.len()));
        p.insert("unreported".into(), json!(unreported));
    }
    let mut run = Skeleton {
        params,
        warnings,
        ..skel
    }
    .into_run();
    run.series = series;
    run.total = Some(total);
    Ok(run)
}

/// The first line (1-based) whose text contains `needle`, else the last line.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| text.lines().count().max(1))
}

/// Whether the text is `-H` output: its histogram lines carry one count more
/// (the total over all threads) than there are threads in `# Min Latencies`.
fn is_histofall(text: &str) -> bool {
    let counts = text
        .lines()
        .skip_while(|l| l.trim_end() != "# Histogram")
        .skip(1)
        .find(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        })
        .map(|l| l.split_whitespace().count().saturating_sub(1));
    let threads = text
        .lines()
        .find_map(|l| l.strip_prefix("# Min Latencies:"))
        .map(|v| v.split_whitespace().count());
    matches!((counts, threads), (Some(c), Some(t)) if c == t + 1)
}

/// Parses `cyclictest -h N` / `-H N` output (or an rtlab `--histfile`), whose
/// dense columns may hold at most `max_cells` buckets in all.
pub fn from_histogram_text(text: &str, src: &Source, max_cells: usize) -> Result<Run, ParseError> {
    let histofall = is_histofall(text);
    let parsed = histfile::parse(text, histofall, max_cells)?;
    let last = text.lines().count().max(1);
    if !text
        .lines()
        .any(|l| l.starts_with("# Histogram Overflows:"))
    {
        return Err(ParseError {
            line: last,
            message: "the file ends before cyclictest's summary ('# Total:' to '# Histogram Overflows:'): it is incomplete".into(),
        });
    }
    if let Some(n) = text.lines().position(|l| l.starts_with("# Total:")) {
        let totals = text.lines().nth(n).unwrap_or("")["# Total:".len()..]
            .split_whitespace()
            .map(|w| w.parse::<u64>().ok());
        for (t, (total, col)) in totals.zip(&parsed).enumerate() {
            let Some(sum) = col.buckets.iter().try_fold(0u64, |a, &b| a.checked_add(b)) else {
                return Err(ParseError {
                    line: n + 1,
                    message: format!("thread {t}: its histogram lines add up to more than 64 bits can count: they cannot come from a measurement"),
                });
            };
            if total != Some(sum) {
                return Err(ParseError {
                    line: n + 1,
                    message: format!(
                        "'# Total:' gives {} for thread {t} but its histogram lines add up to {sum}",
                        total.map(|v| v.to_string()).unwrap_or("no number".into())
                    ),
                });
            }
        }
    }
    let cols: Vec<Column> = parsed
        .into_iter()
        .enumerate()
        .map(|(i, c)| Column {
            thread: Some(i),
            cpu: None,
            cycles: 0,
            buckets: Some(c.buckets),
            overflows: c.overflows,
            overflow_cycles: c.overflow_cycles,
            min_us: c.min_us,
            avg_us: c.avg_us as f64,
            max_us: c.max_us,
        })
        .collect();
    let range = cols[0].buckets.as_ref().map_or(0, Vec::len);
    let summary_line = line_of(text, "# Min Latencies");
    check(&cols, |_| summary_line)?;
    let skel = Skeleton {
        kind: "latency".into(),
        label: file_label(src),
        src,
        fingerprint: Default::default(),
        started_at: None,
        ended_at: None,
        duration_ns: 0,
        params: json!({
            "source": "cyclictest",
            "source_format": if histofall { "histogram -H" } else { "histogram -h" },
            "file": src.name,
            "histogram_max_us": range,
        }),
        warnings: vec![
            unknown_system(),
            Warning::new(
                "duration_unknown",
                "cyclictest's histogram does not record when or how long it ran: the times are the file's modification time and the duration is 0",
            ),
        ],
    };
    fill(skel, &cols, line_of(text, "# Histogram"))
}

/// The value of a cyclictest option in a command line: `-h 8`, `-h8`, `-h=8`,
/// `--histogram=8`, `--histogram 8`.
fn option_value(cmdline: &str, short: char, long: &str) -> Option<String> {
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let next = || words.get(i + 1).map(|s| s.to_string());
        if let Some(rest) = w.strip_prefix("--") {
            let (name, value) = match rest.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (rest, None),
            };
            if name == long {
                return value.or_else(next);
            }
        } else if let Some(rest) = w.strip_prefix('-').and_then(|r| r.strip_prefix(short)) {
            let rest = rest.trim_start_matches('=');
            return if rest.is_empty() {
                next()
            } else {
                Some(rest.to_string())
            };
        }
    }
    None
}

/// Parses cyclictest's `--json` file, whose histograms may hold at most
/// `max_cells` 1-µs buckets in all.
/// cyclictest's `--json` writer prints `"avg": -nan` for a thread that made no
/// cycle (it ends every thread once the first is done, so a late thread may
/// have none). Such a file parses with those values as `null`; anything else
/// that is not JSON stays an error.
pub fn json_with_nan(text: &str) -> Option<Value> {
    if !text.contains("\"rt_test_version:\"") && !text.contains("\"cmdline:\"") {
        return None;
    }
    let nan = regex::Regex::new(r"(:\s*)-?nan\b").expect("a valid pattern");
    serde_json::from_str(&nan.replace_all(text, "${1}null")).ok()
}

pub fn from_json(v: &Value, text: &str, src: &Source, max_cells: usize) -> Result<Run, ParseError> {
    let err = |needle: &str, message: String| ParseError {
        line: line_of(text, needle),
        message,
    };
    let Some(threads) = v.get("thread").and_then(Value::as_object) else {
        return Err(err(
            "\"thread\"",
            "no \"thread\" object: not a cyclictest --json file".into(),
        ));
    };
    // cyclictest 2.x writes "cmdline:" with a stray colon; accept both spellings.
    let field = |k: &str| v.get(format!("{k}:")).or_else(|| v.get(k));
    let cmdline = field("cmdline").and_then(Value::as_str).unwrap_or("");
    let range_us = option_value(cmdline, 'h', "histogram")
        .or_else(|| option_value(cmdline, 'H', "histofall"))
        .map(|r| {
            let n = r.parse::<usize>().map_err(|_| {
                err(
                    "cmdline",
                    format!("the histogram size '{r}' in the command line is not a number"),
                )
            })?;
            if n > MAX_US_BUCKETS as usize {
                return Err(err(
                    "cmdline",
                    format!("the histogram size {n} in the command line is beyond the largest histogram rtlab reads ({MAX_US_BUCKETS} buckets of 1 µs, 10 s, as --histogram-max)"),
                ));
            }
            Ok(n)
        })
        .transpose()?;
    if let Some(n) = v.get("num_threads") {
        if n.as_u64() != Some(threads.len() as u64) {
            return Err(err(
                "\"num_threads\"",
                format!("num_threads is {n} but {} threads follow", threads.len()),
            ));
        }
    }
    let mut keys: Vec<(usize, &Value)> = Vec::new();
    for (k, t) in threads {
        let n = k.parse::<usize>().map_err(|_| {
            err(
                &format!("\"{k}\""),
                format!("thread key '{k}' is not a number"),
            )
        })?;
        keys.push((n, t));
    }
    keys.sort_by_key(|(n, _)| *n);
    // Every thread's histogram entries first: without -h in the command line the
    // range is the highest bucket of any thread.
    let mut entries = Vec::new();
    for (n, t) in keys {
        let here = format!("\"{n}\": {{");
        let hist = t
            .get("histogram")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                err(
                    &here,
                    format!("thread {n}: \"histogram\" is missing or not an object"),
                )
            })?;
        let mut pairs = Vec::new();
        for (k, c) in hist {
            let (Some(us), Some(count)) = (k.parse::<usize>().ok(), c.as_u64()) else {
                return Err(err(
                    &format!("\"{k}\": {c}"),
                    format!("thread {n}: histogram entry \"{k}\": {c} is not \"µs\": count"),
                ));
            };
            pairs.push((us, count));
        }
        entries.push((n, t, here, pairs));
    }
    let top = |pairs: &[(usize, u64)]| {
        pairs
            .iter()
            .map(|(us, _)| us.saturating_add(1))
            .max()
            .unwrap_or(0)
    };
    let any_entries = entries.iter().any(|e| !e.3.is_empty());
    let guessed_range = range_us.is_none() && any_entries;
    let range = range_us
        .or_else(|| any_entries.then(|| entries.iter().map(|e| top(&e.3)).max().unwrap_or(0)));
    if let Some(range) = range {
        // Checked before any column is allocated: the bucket keys and the -h
        // in the command line are text, the columns are dense.
        if range > MAX_US_BUCKETS as usize {
            return Err(err(
                "\"histogram\"",
                format!("histogram bucket {} µs is beyond the largest histogram rtlab reads ({MAX_US_BUCKETS} buckets of 1 µs, 10 s, as --histogram-max)", range - 1),
            ));
        }
        let cells = range.saturating_mul(entries.len());
        if cells > max_cells {
            return Err(err(
                "\"histogram\"",
                format!("{} threads of {range} 1-µs buckets make {cells} buckets, more than rtlab holds for one file on this machine ({max_cells}, from 90% of MemAvailable)", entries.len()),
            ));
        }
    }
    let mut cols = Vec::new();
    for (n, t, here, pairs) in entries {
        let num = |name: &str| -> Result<u64, ParseError> {
            t.get(name).and_then(Value::as_u64).ok_or_else(|| {
                err(
                    &here,
                    format!("thread {n}: \"{name}\" is missing or not a whole number"),
                )
            })
        };
        let cycles = num("cycles")?;
        // A thread without a cycle has no latency: cyclictest prints its
        // unset min/max and a NaN average.
        let no_cycle = cycles == 0 && t.get("avg").is_some_and(Value::is_null);
        let avg = t
            .get("avg")
            .and_then(Value::as_f64)
            .or(no_cycle.then_some(0.0))
            .ok_or_else(|| {
                err(
                    &here,
                    format!("thread {n}: \"avg\" is missing or not a number"),
                )
            })?;
        let buckets = match range {
            Some(range) => {
                if top(&pairs) > range {
                    return Err(err(
                        &here,
                        format!("thread {n}: histogram bucket {} is outside the -h {range} range of the command line", top(&pairs) - 1),
                    ));
                }
                let mut b = vec![0u64; range];
                for (us, c) in pairs {
                    // Two keys may name one bucket ("7" and "07").
                    b[us] = b[us].checked_add(c).ok_or_else(|| {
                        err(&here, format!("thread {n}: histogram bucket {us} holds more than 64 bits can count"))
                    })?;
                }
                Some(b)
            }
            None => None,
        };
        let in_hist = buckets
            .iter()
            .flatten()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .ok_or_else(|| {
                err(&here, format!("thread {n}: the histogram's counts add up to more than 64 bits can count: they cannot come from a measurement"))
            })?;
        if in_hist > cycles {
            return Err(err(
                &here,
                format!("thread {n}: the histogram holds {in_hist} values but cycles is {cycles}"),
            ));
        }
        cols.push(Column {
            thread: Some(n),
            cpu: t.get("cpu").and_then(Value::as_u64).map(|c| c as usize),
            overflows: if buckets.is_some() {
                cycles - in_hist
            } else {
                0
            },
            buckets,
            overflow_cycles: Vec::new(),
            cycles,
            min_us: if no_cycle { 0 } else { num("min")? },
            avg_us: avg,
            max_us: if no_cycle { 0 } else { num("max")? },
        });
    }
    if cols.is_empty() {
        return Err(err("\"thread\"", "the \"thread\" object is empty".into()));
    }
    let thread_lines: Vec<usize> = cols
        .iter()
        .map(|c| line_of(text, &format!("\"{}\": {{", c.thread.unwrap_or(0))))
        .collect();
    check(&cols, |i| thread_lines[i])?;
    let sys = v.get("sysinfo").cloned().unwrap_or(Value::Null);
    let s = |k: &str| sys.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut fp = fingerprint_from_uname(Uname {
        hostname: s("nodename"),
        release: s("release"),
        version: s("version"),
        machine: s("machine"),
    });
    if sys.get("realtime").and_then(Value::as_u64) == Some(1) {
        fp.preempt = PreemptModel::Rt;
        fp.preempt_source = "cyclictest sysinfo.realtime".into();
    }
    let time = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .and_then(|t| chrono::DateTime::parse_from_rfc2822(t).ok())
    };
    let (start, end) = (time("start_time"), time("end_time"));
    let rfc = |t: chrono::DateTime<chrono::FixedOffset>| {
        t.with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    };
    let duration_ns = match (start, end) {
        (Some(a), Some(b)) => (b - a).num_nanoseconds().unwrap_or(0).max(0) as u64,
        _ => 0,
    };
    let mut warnings = Vec::new();
    if fp.kernel_release.is_empty() {
        warnings.push(unknown_system());
    }
    if guessed_range {
        warnings.push(Warning::new(
            "histogram_range",
            "the command line names no -h/-H size: the histogram range is taken as its highest bucket, so no value counts as an overflow",
        ));
    }
    warnings.push(Warning::new(
        "duration_seconds",
        "cyclictest's JSON gives start and end to the second: the duration is approximate",
    ));
    let interval_ns = option_value(cmdline, 'i', "interval")
        .and_then(|i| i.parse::<u64>().ok())
        .and_then(|us| us.checked_mul(1000));
    let priority = option_value(cmdline, 'p', "priority").and_then(|p| p.parse::<i64>().ok());
    let skel = Skeleton {
        kind: "latency".into(),
        label: if fp.kernel_release.is_empty() {
            file_label(src)
        } else {
            record::default_label(&fp)
        },
        src,
        fingerprint: fp,
        started_at: start.map(rfc),
        ended_at: end.map(rfc),
        duration_ns,
        params: json!({
            "source": "cyclictest",
            "source_format": "json",
            "file": src.name,
            "cmdline": cmdline,
            "rt_tests_version": field("rt_test_version"),
            "return_code": v.get("return_code"),
            "histogram_max_us": cols.iter().filter_map(|c| c.buckets.as_ref().map(Vec::len)).max(),
            "interval_ns": interval_ns,
            "priority": priority,
        }),
        warnings,
    };
    fill(skel, &cols, line_of(text, "\"thread\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_in_all_their_spellings() {
        let c = "cyclictest -l100 -h 8 -i200 --priority=80 -q";
        assert_eq!(option_value(c, 'h', "histogram").as_deref(), Some("8"));
        assert_eq!(option_value(c, 'i', "interval").as_deref(), Some("200"));
        assert_eq!(option_value(c, 'p', "priority").as_deref(), Some("80"));
        assert_eq!(
            option_value("x --histogram 30", 'h', "histogram").as_deref(),
            Some("30")
        );
        assert_eq!(option_value("x --histfile=f", 'h', "histogram"), None);
        assert_eq!(
            option_value("x -H=5", 'H', "histofall").as_deref(),
            Some("5")
        );
    }

    fn src() -> Source {
        Source {
            name: "c.json".into(),
            modified: None,
        }
    }

    /// A cyclictest --json document with one thread per `(histogram, cycles)`.
    fn json_doc(cmdline: &str, threads: &[(Value, Value)]) -> (Value, String) {
        let mut th = serde_json::Map::new();
        for (i, (h, cycles)) in threads.iter().enumerate() {
            th.insert(
                i.to_string(),
                json!({"histogram": h, "cycles": cycles, "min": 1, "avg": 2.0, "max": 3}),
            );
        }
        let v = json!({"cmdline:": cmdline, "num_threads": threads.len(), "thread": th});
        let text = serde_json::to_string_pretty(&v).unwrap();
        (v, text)
    }

    #[test]
    fn a_histogram_size_past_the_limit_is_refused_before_allocating() {
        let (v, text) = json_doc("cyclictest -h 999999999999", &[(json!({"1": 1}), json!(1))]);
        let e = from_json(&v, &text, &src(), 1 << 20).unwrap_err();
        assert!(
            e.message.contains("histogram size 999999999999"),
            "{}",
            e.message
        );
        let (v, text) = json_doc("cyclictest", &[(json!({"999999999999": 1}), json!(1))]);
        let e = from_json(&v, &text, &src(), 1 << 20).unwrap_err();
        assert!(
            e.message.contains("bucket 999999999999 µs is beyond"),
            "{}",
            e.message
        );
        let (v, text) = json_doc("cyclictest -h 5000", &vec![(json!({}), json!(1)); 4]);
        let e = from_json(&v, &text, &src(), 10_000).unwrap_err();
        assert!(e.message.contains("4 threads of 5000"), "{}", e.message);
    }

    #[test]
    fn counts_that_wrap_when_summed_are_refused() {
        let half = u64::MAX / 2 + 1;
        let (v, text) = json_doc(
            "cyclictest -h 4",
            &[(json!({"1": half, "2": half}), json!(1))],
        );
        let e = from_json(&v, &text, &src(), 1 << 20).unwrap_err();
        assert!(e.message.contains("64 bits"), "{}", e.message);
        assert_eq!(e.line, line_of(&text, "\"0\": {"));
        let t = (json!({"1": half}), json!(half));
        let (v, text) = json_doc("cyclictest -h 4", &[t.clone(), t]);
        let e = from_json(&v, &text, &src(), 1 << 20).unwrap_err();
        assert!(e.message.contains("all threads"), "{}", e.message);
        let (v, text) = json_doc("cyclictest -h 4", &[(json!({"1": -3}), json!(1))]);
        assert!(from_json(&v, &text, &src(), 1 << 20).is_err());
    }

    #[test]
    fn min_avg_max_out_of_order_are_refused() {
        let text = "# Histogram\n000001 000002\n# Total: 000000002\n# Min Latencies: 00009\n# Avg Latencies: 00001\n# Max Latencies: 00001\n# Histogram Overflows: 00000\n";
        let e = from_histogram_text(text, &src(), 1 << 20).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("not in order"), "{}", e.message);
    }

    #[test]
    fn overflowed_values_are_lower_bounds_at_the_range_and_the_max_is_exact() {
        let c = Column {
            thread: Some(0),
            buckets: Some(vec![0, 2, 1, 0]),
            overflows: 3,
            min_us: 1,
            avg_us: 20.5,
            max_us: 50,
            ..Column::default()
        };
        let mut unreported = BTreeSet::new();
        let s = c.series("t".into(), &mut unreported).unwrap();
        assert_eq!(s.counters.samples, 6);
        assert_eq!(s.summary.min_ns, 1000);
        assert_eq!(s.summary.max_ns, 50_000);
        assert_eq!(s.summary.mean_ns, 20_500.0);
        assert_eq!(s.summary.p50_ns, 2000);
        assert_eq!(s.summary.p90_ns, 50_000.min(s.summary.p90_ns));
        assert!(s.summary.p90_ns >= 4000);
        assert!(unreported.contains("stddev_ns"));
        let us = s.us_histogram.unwrap();
        assert_eq!((us.max_us, us.overflow), (4, 3));
        assert_eq!(us.buckets, vec![(1, 2), (2, 1)]);
    }

    #[test]
    fn when_everything_overflowed_the_reported_minimum_bounds_the_percentiles() {
        let c = Column {
            buckets: Some(vec![0, 0]),
            overflows: 3,
            min_us: 10,
            avg_us: 15.0,
            max_us: 30,
            ..Column::default()
        };
        let s = c.series("t".into(), &mut BTreeSet::new()).unwrap().summary;
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns), (10_000, 10_000, 30_000));
    }

    #[test]
    fn exact_columns_give_exact_mean_and_stddev() {
        let c = Column {
            buckets: Some(vec![0, 0, 1, 0, 1]),
            min_us: 2,
            avg_us: 3.0,
            max_us: 4,
            ..Column::default()
        };
        let mut unreported = BTreeSet::new();
        let s = c.series("t".into(), &mut unreported).unwrap();
        assert_eq!(s.summary.mean_ns, 3000.0);
        assert_eq!(s.summary.stddev_ns, 1000.0);
        assert!(unreported.is_empty());
    }

    #[test]
    fn the_total_adds_buckets_and_weights_the_average() {
        let a = Column {
            buckets: Some(vec![1, 1]),
            avg_us: 0.5,
            max_us: 1,
            ..Column::default()
        };
        let b = Column {
            buckets: Some(vec![0, 0, 2]),
            avg_us: 2.0,
            min_us: 2,
            max_us: 2,
            ..Column::default()
        };
        let t = Column::total(&[a, b]);
        assert_eq!(t.buckets, Some(vec![1, 1, 2]));
        assert_eq!(t.avg_us, 1.25);
        assert_eq!((t.min_us, t.max_us), (0, 2));
    }
}
