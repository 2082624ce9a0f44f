//! stress-ng's achieved loads: the metrics table it logs at the end of a run
//! (`--metrics-brief`, or `--metrics` with its two more columns; with or without
//! the `stress-ng: metrc: [pid]` prefix that `--log-brief` drops) and its
//! `--yaml FILE` document. Each stressor becomes one [`LoadRecord`] of a `load`
//! run: its bogo ops per second (real time, and per usr+sys CPU second) are the
//! rates it achieved, also kept as metrics `<stressor>.bogo_ops_per_s` and
//! `<stressor>.bogo_ops_per_s_usr_sys`.
//!
//! Bogo ops are stress-ng's own units of work, one kind per stressor: they
//! compare one stressor between runs, never with another stressor or with an
//! rtlab load's ops, and the records keep stress-ng's stressor names as their
//! kinds so that no comparison mixes them.

mod brief;
mod yaml;

pub use brief::is_brief;
pub use yaml::is_yaml;

use super::{file_label, Skeleton, Source};
use crate::format::histfile::ParseError;
use crate::record::{self, LoadRecord, Run, Warning};
use rtlab_engine::sysinfo::Fingerprint;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub use brief::parse as from_brief;
pub use yaml::parse as from_yaml;

/// One stressor's results, as stress-ng reports them.
#[derive(Debug, Clone, Default, PartialEq)]
struct Stressor {
    name: String,
    /// Instances (workers), when the file says.
    instances: Option<u32>,
    bogo_ops: u64,
    /// Wall-clock time of its instances (s).
    real_s: f64,
    usr_s: f64,
    sys_s: f64,
    /// Bogo ops per second of wall-clock time.
    per_s: f64,
    /// Bogo ops per second of usr+sys CPU time.
    per_cpu_s: f64,
    /// CPU used per instance, percent of one CPU.
    cpu_pct: Option<f64>,
    /// Largest resident set of an instance (KiB).
    max_rss_kib: Option<u64>,
    /// Where the file gives it.
    line: usize,
}

impl Stressor {
    /// Its record, as rtlab keeps a load's.
    fn record(&self, source_format: &str) -> LoadRecord {
        let mut achieved = serde_json::Map::new();
        achieved.insert("bogo_ops_per_s".into(), json!(self.per_s));
        achieved.insert("bogo_ops_per_s_usr_sys".into(), json!(self.per_cpu_s));
        if let Some(pct) = self.cpu_pct {
            achieved.insert("cpu_pct_per_worker".into(), json!(pct));
        }
        let mut totals = BTreeMap::from([
            ("bogo_ops".to_string(), self.bogo_ops),
            (
                "cpu_ns".to_string(),
                ((self.usr_s + self.sys_s) * 1e9).round() as u64,
            ),
        ]);
        if let Some(rss) = self.max_rss_kib {
            totals.insert("max_rss_kib".into(), rss);
        }
        LoadRecord {
            spec: match self.instances {
                Some(n) => format!("{}:{n}", self.name),
                None => self.name.clone(),
            },
            kind: self.name.clone(),
            workers: self.instances.unwrap_or(0),
            params: json!({"source": "stress-ng", "source_format": source_format, "stressor": self.name}),
            achieved,
            totals,
            per_worker: Vec::new(),
            start_ms: 0.0,
            stop_ms: 0.0,
            elapsed_ns: (self.real_s * 1e9).round() as u64,
        }
    }
}

/// What a file says about a run besides its stressors.
struct Whole {
    source_format: &'static str,
    fingerprint: Fingerprint,
    /// How long the run took (s), when the file says.
    duration_s: Option<f64>,
    params: serde_json::Map<String, Value>,
    warnings: Vec<Warning>,
}

/// The `load` run of `stressors`.
fn to_run(stressors: &[Stressor], whole: Whole, src: &Source) -> Result<Run, ParseError> {
    for (i, s) in stressors.iter().enumerate() {
        if stressors[..i].iter().any(|o| o.name == s.name) {
            return Err(ParseError {
                line: s.line,
                message: format!(
                    "stressor '{}' is reported twice: the file mixes two runs or was edited",
                    s.name
                ),
            });
        }
    }
    if stressors.is_empty() {
        return Err(ParseError {
            line: 1,
            message: "no stressor is reported".into(),
        });
    }
    let Whole {
        source_format,
        fingerprint,
        duration_s,
        mut params,
        mut warnings,
    } = whole;
    let known_system = !fingerprint.kernel_release.is_empty();
    if !known_system {
        warnings.insert(0, super::unknown_system());
    }
    warnings.push(Warning::new(
        "imported_stress_ng",
        "imported from stress-ng: bogo ops are stress-ng's own units of work, one kind per stressor: compare a stressor's rate between runs, never with another stressor or with an rtlab load",
    ));
    let unknown: Vec<&str> = stressors
        .iter()
        .filter(|s| s.instances.is_none())
        .map(|s| s.name.as_str())
        .collect();
    if !unknown.is_empty() {
        warnings.push(Warning::new(
            "workers_unknown",
            format!(
                "the file does not say how many instances of {} ran (workers shown as 0)",
                unknown.join(", ")
            ),
        ));
    }
    let duration_s =
        duration_s.unwrap_or_else(|| stressors.iter().map(|s| s.real_s).fold(0.0, f64::max));
    let duration_ns = (duration_s * 1e9).round() as u64;
    params.insert("source".into(), json!("stress-ng"));
    params.insert("source_format".into(), json!(source_format));
    params.insert("file".into(), json!(src.name));
    params.insert(
        "stressors".into(),
        json!(stressors
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()),
    );
    let ended = src.modified.clone().unwrap_or_else(record::now_rfc3339);
    let started_at = chrono::DateTime::parse_from_rfc3339(&ended)
        .ok()
        .and_then(|end| end.checked_sub_signed(chrono::Duration::nanoseconds(duration_ns as i64)))
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        });
    let label = if known_system {
        record::default_label(&fingerprint)
    } else {
        file_label(src)
    };
    let mut run = Skeleton {
        kind: "load".into(),
        label,
        src,
        fingerprint,
        started_at,
        ended_at: Some(ended),
        duration_ns,
        params: Value::Object(params),
        warnings,
    }
    .into_run();
    for s in stressors {
        run.metrics
            .insert(format!("{}.bogo_ops_per_s", s.name), s.per_s);
        run.metrics
            .insert(format!("{}.bogo_ops_per_s_usr_sys", s.name), s.per_cpu_s);
    }
    run.loads = stressors.iter().map(|s| s.record(source_format)).collect();
    Ok(run)
}

/// A finite, non-negative number, else an error at `line` naming `what`.
fn number(v: &str, what: &str, line: usize) -> Result<f64, ParseError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| ParseError {
            line,
            message: format!("{what} '{}' is not a number", v.trim()),
        })
}

/// A whole count, else an error at `line` naming `what`.
fn count(v: &str, what: &str, line: usize) -> Result<u64, ParseError> {
    crate::units::parse_count(v).map_err(|e| ParseError {
        line,
        message: format!("{what} {e}"),
    })
}
