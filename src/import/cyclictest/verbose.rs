//! cyclictest `-v`: after a few header lines (`Max CPUs = 2`, `Online CPUs = 2`,
//! `# /dev/cpu_dma_latency set to 0us`, `Thread 0 Interval: 1500`), one line per
//! wake-up, `%8d:%8lu:%8ld`: the thread, its cycle (from 0, every one) and the
//! latency. Every value is kept: each thread's 1-µs histogram holds them all,
//! exactly, and nothing overflows.
//!
//! The lines do not say their unit: cyclictest's is µs, ns with `-N`, which only
//! the summary lines that `-q` adds at the end show (see [`super::summary`]);
//! those lines, when there, must agree with the samples. `Thread N Interval:`
//! is not the thread's period (cyclictest prints the next thread's), so it is
//! not kept.

use super::summary::{parse_line, ThreadLine};
use super::{check, fill, Column};
use crate::format::histfile::ParseError;
use crate::import::{unknown_system, Skeleton, Source};
use crate::record::{Run, Warning};
use rtlab_engine::stats::hist::MAX_US_BUCKETS;
use serde_json::json;
use std::collections::BTreeMap;

/// The three numbers of a sample line, as text.
fn sample(line: &str) -> Option<[&str; 3]> {
    let mut parts = line.split(':').map(str::trim);
    let p = [parts.next()?, parts.next()?, parts.next()?];
    let number = |s: &str| {
        let digits = s.strip_prefix('-').unwrap_or(s);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    (parts.next().is_none() && p.iter().all(|s| number(s))).then_some(p)
}

/// Whether the text holds `-v` sample lines.
pub fn is_verbose(text: &str) -> bool {
    text.lines().any(|l| sample(l).is_some())
}

/// One thread's samples: raw values (the file's unit) and where the largest is.
#[derive(Default)]
struct Samples {
    values: Vec<u64>,
    max_line: usize,
}

/// Parses `-v` output, whose 1-µs histograms may hold at most `max_cells`
/// buckets in all.
pub fn from_verbose(text: &str, src: &Source, max_cells: usize) -> Result<Run, ParseError> {
    let mut threads: BTreeMap<usize, Samples> = BTreeMap::new();
    let mut summary: Vec<(ThreadLine, usize)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let l = raw.trim();
        let err = |m: String| ParseError { line, message: m };
        if let Some([t, c, v]) = sample(l) {
            let number = |s: &str, what: &str| {
                s.parse::<u64>()
                    .map_err(|_| err(format!("{what} '{s}' is not a count of 64 bits")))
            };
            let t = usize::try_from(number(t, "the thread")?)
                .ok()
                .filter(|t| *t < 1 << 16)
                .ok_or_else(|| err(format!("thread {t} is more than cyclictest runs")))?;
            let (cycle, value) = (number(c, "the cycle")?, number(v, "the latency")?);
            let s = threads.entry(t).or_default();
            if cycle != s.values.len() as u64 {
                return Err(err(format!(
                    "thread {t} goes from cycle {} to cycle {cycle}: cyclictest prints every cycle, a line is missing or the file was edited",
                    s.values.len() as i128 - 1
                )));
            }
            if s.values.iter().all(|&v| v < value) {
                s.max_line = line;
            }
            s.values.push(value);
        } else if l.starts_with("T:") {
            summary.push((parse_line(l, line)?, line));
        } else if let Some(rest) = l.strip_prefix("Thread ") {
            // "Thread 0 Interval: 1500": the thread exists, even without samples.
            let t = rest.split_whitespace().next().and_then(|t| t.parse().ok());
            let t = t
                .filter(|t| *t < 1 << 16)
                .ok_or_else(|| err(format!("'{l}' is not cyclictest's 'Thread N Interval: I'")))?;
            threads.entry(t).or_default();
        } else if !(l.is_empty()
            || l.starts_with('#')
            || l.starts_with("Max CPUs")
            || l.starts_with("Online CPUs")
            || l.starts_with("WARN"))
        {
            return Err(err(format!("'{l}' is not a line of cyclictest -v output")));
        }
    }
    for (l, _) in &summary {
        threads.entry(l.index).or_default();
    }
    if let Some(missing) = (0..threads.len()).find(|t| !threads.contains_key(t)) {
        return Err(ParseError {
            line: text.lines().count().max(1),
            message: format!(
                "thread {missing} has no line, but later threads have: the file was edited"
            ),
        });
    }
    let nanos = summary.first().is_some_and(|(t, _)| t.nanos);
    let to_us = |v: u64| if nanos { v / 1000 } else { v };
    let mut cols = Vec::new();
    let mut cells = 0usize;
    for (&t, s) in &threads {
        let top = s.values.iter().map(|&v| to_us(v)).max();
        let range = top.map_or(0, |m| m as usize + 1);
        cells = cells.saturating_add(range);
        if range > MAX_US_BUCKETS as usize || cells > max_cells {
            return Err(ParseError {
                line: s.max_line,
                message: format!(
                    "a latency of {} µs makes 1-µs histograms of {cells} buckets, more than rtlab holds for one file ({}; 10 s at most)",
                    range - 1,
                    max_cells.min(MAX_US_BUCKETS as usize)
                ),
            });
        }
        let mut buckets = vec![0u64; range];
        for &v in &s.values {
            buckets[to_us(v) as usize] += 1;
        }
        let sum: u128 = s.values.iter().map(|&v| to_us(v) as u128).sum();
        let n = s.values.len();
        cols.push(Column {
            thread: Some(t),
            buckets: Some(buckets),
            min: s.values.iter().map(|&v| to_us(v)).min().unwrap_or(0),
            avg: if n > 0 { sum as f64 / n as f64 } else { 0.0 },
            max: top.unwrap_or(0),
            ..Column::default()
        });
        if let Some((line, l)) = summary
            .iter()
            .find(|(l, _)| l.index == t)
            .map(|(l, n)| (*n, l))
        {
            let (min, max) = (s.values.iter().min(), s.values.iter().max());
            let agrees =
                l.cycles == n as u64 && (n == 0 || (min == Some(&l.min) && max == Some(&l.max)));
            if !agrees {
                return Err(ParseError {
                    line,
                    message: format!(
                        "thread {t}'s summary (C: {} Min: {} Max: {}) does not agree with its {n} samples: the file mixes two runs or was edited",
                        l.cycles, l.min, l.max
                    ),
                });
            }
            cols.last_mut().expect("pushed above").interval_us = l.interval_us;
        }
    }
    if cols.is_empty() {
        return Err(ParseError {
            line: text.lines().count().max(1),
            message: "no sample line: the file is empty or cut".into(),
        });
    }
    check(&cols, |i| threads.get(&i).map_or(1, |s| s.max_line.max(1)))?;
    let mut warnings = vec![unknown_system()];
    warnings.push(Warning::new(
        "duration_unknown",
        "cyclictest -v does not say how long it ran: the duration is 0",
    ));
    warnings.push(match (summary.is_empty(), nanos) {
        (true, _) => Warning::new(
            "unit_assumed",
            "cyclictest -v lines do not say their unit: they are read as µs, cyclictest's own (a file from cyclictest -N holds ns; with -q its summary line says which)",
        ),
        (false, true) => Warning::new(
            "unit_ns",
            "cyclictest -N printed ns: they are kept in 1-µs buckets, as every cyclictest import (their sub-µs digits are dropped)",
        ),
        (false, false) => Warning::new("unit_us", "the summary line says the samples are µs"),
    });
    let params = super::known(json!({
        "source": "cyclictest",
        "source_format": "verbose -v",
        "file": src.name,
        "unit": if nanos { "ns" } else { "us" },
        "histogram_max_us": cols.iter().filter_map(|c| c.buckets.as_ref().map(Vec::len)).max(),
        "priority": summary.first().map(|(t, _)| t.priority),
        "interval_ns": summary.first().and_then(|(t, _)| t.interval_us).map(|us| us.saturating_mul(1000)),
    }));
    let skel = Skeleton::of_file("latency", src, 0, params, warnings);
    fill(skel, &cols, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Source {
        crate::import::test_source("v.txt")
    }

    #[test]
    fn every_sample_is_counted_exactly() {
        let text = "Thread 0 Interval: 1500\n       0:       0:      15\n       0:       1:      24\n       0:       2:      15\n";
        let run = from_verbose(text, &src(), 1 << 20).unwrap();
        let s = &run.series[0];
        assert_eq!(s.counters.samples, 3);
        assert_eq!(s.summary.min_ns, 15_000);
        assert_eq!(s.summary.max_ns, 24_000);
        assert_eq!(s.summary.p50_ns, 15_000);
        assert_eq!(s.summary.mean_ns, 18_000.0);
        let us = s.us_histogram.as_ref().unwrap();
        assert_eq!(
            (us.buckets.clone(), us.overflow),
            (vec![(15, 2), (24, 1)], 0)
        );
    }

    #[test]
    fn a_missing_cycle_or_a_cut_line_is_refused_at_its_line() {
        let e = from_verbose("0: 0: 5\n0: 2: 5\n", &src(), 1 << 20).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("from cycle 0 to cycle 2"),
            "{}",
            e.message
        );
        let e = from_verbose("0: 0: 5\n0: 1:\n", &src(), 1 << 20).unwrap_err();
        assert_eq!(e.line, 2);
        let e = from_verbose("0: 0: -5\n", &src(), 1 << 20).unwrap_err();
        assert!(e.message.contains("'-5'"), "{}", e.message);
    }

    #[test]
    fn the_summary_of_q_sets_the_unit_and_must_agree() {
        let ns = "0: 0: 12500\n0: 1: 20500\nT: 0 (1) P:80 I:1000 C:      2 Min:  12500 Act:   20500 Avg:   16500 Max:   20500\n";
        let run = from_verbose(ns, &src(), 1 << 20).unwrap();
        assert_eq!(run.series[0].summary.mean_ns, 16_000.0);
        assert_eq!(run.series[0].interval_ns, Some(1_000_000));
        let bad = ns.replace("C:      2", "C:      3");
        let e = from_verbose(&bad, &src(), 1 << 20).unwrap_err();
        assert_eq!(e.line, 3);
    }
}
