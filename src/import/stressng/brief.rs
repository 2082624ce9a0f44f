//! The metrics table stress-ng logs at the end of a run with `--metrics-brief`
//! (six columns) or `--metrics` (eight: also CPU used per instance and the
//! largest RSS), each line prefixed `stress-ng: metrc: [pid] ` (`info:` before
//! 0.14; no prefix with `--log-brief`):
//!
//! ```text
//! stress-ng: info:  [27891] dispatching hogs: 2 cpu, 1 vm
//! stress-ng: metrc: [27891] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
//! stress-ng: metrc: [27891]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
//! stress-ng: metrc: [27891] cpu                1637      2.01      0.78      0.00       813.56        2095.15
//! stress-ng: info:  [27891] successful run completed in 2.03s
//! ```
//!
//! The instances come from `dispatching hogs:` (or a later `passed: 3: cpu (2)
//! vm (1)`), the duration from `run completed in`, without which the output is
//! incomplete.

use super::{count, number, to_run, Stressor, Whole};
use crate::format::histfile::ParseError;
use crate::import::Source;
use crate::record::{Run, Warning};
use serde_json::json;
use std::collections::BTreeMap;

/// A log line without stress-ng's `stress-ng: <level>: [pid] ` prefix.
fn message(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("stress-ng:") else {
        return line.trim();
    };
    let rest = rest.trim_start();
    let rest = rest.split_once(':').map_or(rest, |(_, r)| r).trim_start();
    match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((pid, r)) if pid.chars().all(|c| c.is_ascii_digit()) => r.trim(),
        _ => rest.trim(),
    }
}

/// Whether the text holds stress-ng's metrics table.
pub fn is_brief(text: &str) -> bool {
    text.lines().any(|l| {
        let m = message(l);
        m.starts_with("stressor") && m.contains("bogo ops")
    })
}

/// `2 cpu, 1 vm, 1 timer` (dispatching) or `cpu (2) vm (1)` (passed) as
/// instances by stressor; `None` when the text is not such a list.
fn instances(list: &str) -> Option<BTreeMap<String, u32>> {
    let mut out = BTreeMap::new();
    if list.contains('(') {
        for part in list.split(')').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, n) = part.split_once('(')?;
            out.insert(name.trim().to_string(), n.trim().parse().ok()?);
        }
    } else {
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (n, name) = part.split_once(' ')?;
            out.insert(name.trim().to_string(), n.parse().ok()?);
        }
    }
    Some(out)
}

/// One row of the table (`words` after the stressor's name), `columns` numbers.
fn row(name: &str, words: &[&str], columns: usize, line: usize) -> Result<Stressor, ParseError> {
    if words.len() != columns {
        return Err(ParseError {
            line,
            message: format!(
                "the row of '{name}' has {} values, the table's header announces {columns}: the line is cut or damaged",
                words.len()
            ),
        });
    }
    let num = |i: usize, what: &str| number(words[i], what, line);
    Ok(Stressor {
        name: name.to_string(),
        instances: None,
        bogo_ops: count(words[0], "bogo ops", line)?,
        real_s: num(1, "real time")?,
        usr_s: num(2, "usr time")?,
        sys_s: num(3, "sys time")?,
        per_s: num(4, "bogo ops/s (real time)")?,
        per_cpu_s: num(5, "bogo ops/s (usr+sys time)")?,
        cpu_pct: (columns == 8)
            .then(|| num(6, "CPU used per instance"))
            .transpose()?,
        max_rss_kib: (columns == 8)
            .then(|| count(words[7], "RSS max", line))
            .transpose()?,
        line,
    })
}

/// Parses the log of a stress-ng run with its metrics table.
pub fn parse(text: &str, src: &Source) -> Result<Run, ParseError> {
    let mut columns: Option<usize> = None;
    let mut in_table = false;
    let mut stressors: Vec<Stressor> = Vec::new();
    let mut dispatched = BTreeMap::new();
    let mut passed = BTreeMap::new();
    let mut completed: Option<(f64, bool)> = None;
    let mut params = serde_json::Map::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let m = message(raw);
        if m.starts_with("stressor") && m.contains("bogo ops") {
            columns = Some(if m.contains("CPU used per") { 8 } else { 6 });
            in_table = true;
            continue;
        }
        if in_table {
            let words: Vec<&str> = m.split_whitespace().collect();
            if words.first() == Some(&"(secs)") {
                continue;
            }
            if words.len() >= 2 && words[1].parse::<f64>().is_ok() {
                let cols = columns.unwrap_or(6);
                stressors.push(row(words[0], &words[1..], cols, line)?);
                continue;
            }
            in_table = false;
        }
        let bad_list = |what: &str| ParseError {
            line,
            message: format!("'{m}' is not a list of {what}"),
        };
        if let Some(list) = m.strip_prefix("dispatching hogs:") {
            dispatched = instances(list).ok_or_else(|| bad_list("'N stressor'"))?;
        } else if let Some(rest) = m.strip_prefix("passed:") {
            // "passed: 3: cpu (2) vm (1)"
            let list = rest.split_once(':').map_or("", |(_, l)| l);
            passed = instances(list).ok_or_else(|| bad_list("'stressor (N)'"))?;
        } else if let Some(rest) = m.strip_prefix("setting to a ") {
            // "setting to a 2 second run per stressor" (or "2 secs", "1 min")
            params.insert(
                "timeout".into(),
                json!(rest.trim_end_matches(" run per stressor")),
            );
        } else if let Some((head, rest)) = m.split_once("run completed in") {
            // "successful run completed in 2.03s (1 min, 0.00 secs)"
            let secs = rest.split_whitespace().next().unwrap_or("");
            let secs = secs.trim_end_matches("secs").trim_end_matches('s');
            let ok = !head.trim_start().starts_with("unsuccessful");
            completed = Some((number(secs, "the run time", line)?, ok));
        }
    }
    let last = text.lines().count().max(1);
    if stressors.is_empty() {
        return Err(ParseError {
            line: last,
            message: "the metrics table has no stressor row: the output is cut".into(),
        });
    }
    let Some((duration_s, ok)) = completed else {
        return Err(ParseError {
            line: last,
            message: "the output ends without stress-ng's 'run completed in' line: it is incomplete (was stress-ng stopped, or is the file cut?)".into(),
        });
    };
    for s in &mut stressors {
        s.instances = passed
            .get(&s.name)
            .or_else(|| dispatched.get(&s.name))
            .copied();
    }
    let mut warnings = Vec::new();
    if !ok {
        warnings.push(Warning::new(
            "unsuccessful",
            "stress-ng reported an unsuccessful run: a stressor failed or was not run, so its rates may cover part of the run",
        ));
    }
    let whole = Whole {
        source_format: if columns == Some(8) {
            "metrics"
        } else {
            "metrics-brief"
        },
        fingerprint: Default::default(),
        duration_s: Some(duration_s),
        params,
        warnings,
    };
    to_run(&stressors, whole, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_of_each_version_is_dropped() {
        assert_eq!(
            message("stress-ng: metrc: [27891] cpu   1637  2.01"),
            "cpu   1637  2.01"
        );
        assert_eq!(
            message("stress-ng: info:  [1] dispatching hogs: 2 cpu"),
            "dispatching hogs: 2 cpu"
        );
        assert_eq!(message("cpu   1637"), "cpu   1637");
    }

    #[test]
    fn instance_lists_of_both_spellings() {
        let d = instances(" 2 cpu, 1 vm, 1 timer").unwrap();
        assert_eq!((d["cpu"], d["vm"], d["timer"]), (2, 1, 1));
        let p = instances(" cpu (2) vm (1)").unwrap();
        assert_eq!((p["cpu"], p["vm"]), (2, 1));
        assert!(instances("two cpu").is_none());
    }
}
