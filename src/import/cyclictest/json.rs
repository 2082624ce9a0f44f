//! cyclictest's `--json=FILE` document (2.x), whose keys `"cmdline:"` and
//! `"rt_test_version:"` carry a stray colon and which has no overflow counts
//! (they are `cycles` minus the histogram's total).

use super::{check, fill, line_of, Column};
use crate::format::histfile::ParseError;
use crate::import::{file_label, fingerprint_from_uname, unknown_system, Skeleton, Source};
use crate::record::{self, Run, Warning};
use rtlab_engine::stats::hist::MAX_US_BUCKETS;
use rtlab_engine::sysinfo::{PreemptModel, Uname};
use serde_json::{json, Value};

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

/// Parses cyclictest's `--json` file, whose histograms may hold at most
/// `max_cells` 1-µs buckets in all.
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
    // `-N`: min, avg and max are in ns (the histogram stays in µs buckets).
    let nanos = v.get("resolution_in_ns").and_then(Value::as_u64) == Some(1);
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
            min: if no_cycle { 0 } else { num("min")? },
            avg,
            avg_exact: true,
            nanos,
            max: if no_cycle { 0 } else { num("max")? },
            ..Column::default()
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
        crate::import::test_source("c.json")
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
    fn nanosecond_resolution_is_read_as_ns_and_the_average_kept_exact() {
        let text = r#"{"cmdline:": "cyclictest -N -l 3", "num_threads": 1,
            "resolution_in_ns": 1,
            "thread": {"0": {"histogram": {}, "cycles": 3, "min": 11550, "avg": 12345.5, "max": 30000}}}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let run = from_json(&v, text, &src(), 1 << 20).unwrap();
        let s = &run.series[0].summary;
        assert_eq!((s.min_ns, s.max_ns), (11_550, 30_000));
        assert!((s.mean_ns - 12_345.5).abs() < 1e-6, "{}", s.mean_ns);
        // Without -N the same numbers are µs.
        let us = text.replace("\"resolution_in_ns\": 1", "\"resolution_in_ns\": 0");
        let v: Value = serde_json::from_str(&us).unwrap();
        let run = from_json(&v, &us, &src(), 1 << 20).unwrap();
        assert_eq!(run.series[0].summary.min_ns, 11_550_000);
    }
}
