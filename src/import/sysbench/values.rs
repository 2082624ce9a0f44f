//! The values of sysbench's report lines, as both layouts print them: numbers
//! (`1.0043s`), latencies in ms (`0.03`, 0.4's `0.03ms`), the total time, the
//! printed percentile and the `Threads fairness` lines.

use super::{Report, MAX_TOTAL_TIME_S};
use crate::format::histfile::ParseError;
use crate::units::{parse_count, parse_duration, DefaultUnit};
use serde_json::json;
use std::collections::BTreeMap;

/// A finite, non-negative number as sysbench prints it (`1.0043s` too), else
/// an error at `line`.
pub(super) fn number(v: &str, line: usize) -> Result<f64, ParseError> {
    v.trim()
        .trim_end_matches('s')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| ParseError {
            line,
            message: format!("'{}' is not a number", v.trim()),
        })
}

/// A latency in ms (`0.03`, or `0.03ms` as 0.4 prints it), in ns.
pub(super) fn ms(v: &str, line: usize) -> Result<u64, ParseError> {
    let v = v.trim().trim_end_matches("ms");
    parse_duration(&format!("{v}ms"), DefaultUnit::Millis).map_err(|_| ParseError {
        line,
        message: format!("'{v}' is not a latency in ms"),
    })
}

/// The total run time, refused past [`MAX_TOTAL_TIME_S`].
fn total_time(v: &str, line: usize) -> Result<f64, ParseError> {
    let t = number(v, line)?;
    if t > MAX_TOTAL_TIME_S {
        return Err(ParseError {
            line,
            message: format!(
                "total time {} is more than 292 years: no run lasts that long",
                v.trim()
            ),
        });
    }
    Ok(t)
}

/// A printed percentile `(p, ns, line)` from its rank (`95`) and value.
pub(super) fn percentile(
    p: &str,
    value: &str,
    line: usize,
) -> Result<(String, u64, usize), ParseError> {
    if !p.parse::<f64>().is_ok_and(|x| x > 0.0 && x <= 100.0) {
        return Err(ParseError {
            line,
            message: format!("'{p}' is not a percentile between 0 and 100"),
        });
    }
    Ok((p.to_string(), ms(value, line)?, line))
}

/// The `Threads fairness` lines (`events (avg/stddev): 17980.0000/0.00`) as
/// metrics `thread_events_avg`, `thread_events_stddev`, `thread_time_s_avg`,
/// `thread_time_s_stddev`.
fn fairness(
    metrics: &mut BTreeMap<String, f64>,
    key: &str,
    value: &str,
    line: usize,
) -> Result<(), ParseError> {
    let (avg, sd) = value.split_once('/').ok_or_else(|| ParseError {
        line,
        message: format!("'{value}' is not avg/stddev"),
    })?;
    let name = if key.starts_with("events") {
        "thread_events"
    } else {
        "thread_time_s"
    };
    metrics.insert(format!("{name}_avg"), number(avg, line)?);
    metrics.insert(format!("{name}_stddev"), number(sd, line)?);
    Ok(())
}

/// A `key: value` line both layouts print alike: the number of threads, the
/// total time and events, the latency's min, avg and max (`in_latency`: in
/// its section) and the fairness lines, into `r`. Whether it was one of them.
pub(super) fn shared_line(
    r: &mut Report,
    in_latency: bool,
    key: &str,
    value: &str,
    line: usize,
) -> Result<bool, ParseError> {
    let count = |what: &str| {
        parse_count(value).map_err(|e| ParseError {
            line,
            message: format!("{what} {e}"),
        })
    };
    match (in_latency, key) {
        (_, "Number of threads") => {
            r.params
                .insert("threads".into(), json!(count("number of threads")?));
        }
        (_, "total time") => {
            r.metrics
                .insert("total_time_s".into(), total_time(value, line)?);
        }
        (_, "total number of events") => {
            let n = count("total number of events")?;
            r.events = Some((n, line));
            r.metrics.insert("total_events".into(), n as f64);
        }
        (true, "min") => r.lat.min = Some(ms(value, line)?),
        (true, "avg") => r.lat.avg = Some(ms(value, line)?),
        (true, "max") => r.lat.max = Some((ms(value, line)?, line)),
        (_, "events (avg/stddev)" | "execution time (avg/stddev)") => {
            fairness(&mut r.metrics, key, value, line)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Memory's two result lines, `<ops.0> N (X <ops.1>)` and `A <size>
/// transferred (B <size>/sec)` (`Total operations: 4354161 (4339515.70 per
/// second)`, `4252.11 MiB transferred (4237.81 MiB/sec)`), as the metrics
/// `total_operations`, `ops_per_s`, `mib_transferred` and `mib_per_s`.
/// Whether `text` was one of them.
pub(super) fn memory_line(
    r: &mut Report,
    text: &str,
    ops: (&str, &str),
    size: &str,
    line: usize,
) -> Result<bool, ParseError> {
    let (names, total, rate, unit) = if let Some(rest) = text.strip_prefix(ops.0) {
        let (total, rate) = rest.split_once('(').unwrap_or((rest, ""));
        (
            ["total_operations", "ops_per_s"],
            total,
            rate,
            ops.1.to_string(),
        )
    } else if let Some((amount, rate)) = text.split_once(&format!(" {size} transferred (")) {
        (
            ["mib_transferred", "mib_per_s"],
            amount,
            rate,
            format!("{size}/sec"),
        )
    } else {
        return Ok(false);
    };
    r.metrics.insert(names[0].into(), number(total, line)?);
    let rate = rate
        .trim()
        .trim_end_matches(')')
        .trim_end_matches(unit.as_str());
    r.metrics.insert(names[1].into(), number(rate, line)?);
    Ok(true)
}
