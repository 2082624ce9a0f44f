//! What a stopped load did: its [`LoadRecord`], with the rates it achieved, the
//! totals over its workers and how each of them ended.

use super::placement::Placement;
use super::set::STOP_GRACE;
use super::spec::LoadSpec;
use crate::record::{LoadRecord, LoadWorker, Warning};
use rtlab_engine::load::CounterValues;
use rtlab_engine::rt::process::{Exit, Usage};
use std::collections::BTreeMap;
use std::time::Duration;

/// How a worker ended.
pub struct Ended {
    /// Its exit status.
    pub exit: Exit,
    /// What it used.
    pub usage: Usage,
    /// Ended before the stop request.
    pub early: bool,
    /// Needed SIGKILL.
    pub killed: bool,
}

/// One worker of a load, as it was when the load stopped.
pub struct WorkerEnd<'a> {
    /// Its number within the load.
    pub index: u32,
    /// Its process id.
    pub pid: i32,
    /// What it counted.
    pub counts: CounterValues,
    /// How it ended (`None`: not known).
    pub ended: Option<&'a Ended>,
}

/// When the loads ran.
pub struct Span {
    /// From every worker ready to the stop request: what the rates are over.
    pub elapsed: Duration,
    /// How long starting took (ms).
    pub start_ms: f64,
    /// How long stopping took (ms).
    pub stop_ms: f64,
}

/// The record of one spec's workers; a worker that did not stop when asked adds a
/// warning.
pub fn record(
    spec: &LoadSpec,
    placement: &Placement,
    workers: &[WorkerEnd],
    span: &Span,
    warnings: &mut Vec<Warning>,
) -> LoadRecord {
    let secs = span.elapsed.as_secs_f64().max(1e-9);
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_worker = Vec::new();
    let mut max_rss = 0u64;
    for w in workers {
        let c = w.counts;
        let (usage, end) = match w.ended {
            Some(e) => (Some(e.usage), describe_end(e)),
            None => (None, "unknown".to_string()),
        };
        if end != "stopped" {
            warnings.push(Warning::new(
                "load_worker",
                format!(
                    "load '{}' worker {} (pid {}) {end}: its rates cover only part of the run",
                    spec.text, w.index, w.pid
                ),
            ));
        }
        let cpu_ns = usage.map_or(0, |u| u.cpu_ns);
        let minflt = usage.map_or(0, |u| u.minor_faults);
        let rss = usage.map_or(0, |u| u.max_rss_kib);
        max_rss = max_rss.max(rss);
        for (k, v) in [
            ("ops", c.ops),
            ("bytes", c.bytes),
            ("rounds", c.rounds),
            ("restarts", c.restarts),
            ("errors", c.errors),
            ("cpu_ns", cpu_ns),
            ("user_ns", usage.map_or(0, |u| u.user_ns)),
            ("sys_ns", usage.map_or(0, |u| u.sys_ns)),
            ("minor_faults", minflt),
            ("major_faults", usage.map_or(0, |u| u.major_faults)),
            ("ctx_switches", usage.map_or(0, |u| u.ctx_switches)),
        ] {
            *totals.entry(k.into()).or_default() += v;
        }
        per_worker.push(LoadWorker {
            index: w.index,
            pid: w.pid,
            ops: c.ops,
            ops_per_s: c.ops as f64 / secs,
            cpu_pct: cpu_ns as f64 / 1e9 / secs * 100.0,
            minor_faults_per_s: minflt as f64 / secs,
            max_rss_kib: rss,
            end,
        });
    }
    totals.insert("max_rss_kib".into(), max_rss);
    let rate = |k: &str| totals.get(k).copied().unwrap_or(0) as f64 / secs;
    let workers = spec.workers.max(1) as f64;
    let mut achieved = serde_json::Map::new();
    for (k, v) in [
        ("ops_per_s", rate("ops")),
        (spec.load.op_rate_name(), rate("ops")),
        ("ops_per_s_per_worker", rate("ops") / workers),
        ("bytes_per_s", rate("bytes")),
        ("mb_per_s", rate("bytes") / 1e6),
        ("cpu_pct_per_worker", rate("cpu_ns") / 1e9 * 100.0 / workers),
        ("minor_faults_per_s", rate("minor_faults")),
        ("major_faults_per_s", rate("major_faults")),
        ("ctx_switches_per_s", rate("ctx_switches")),
    ] {
        achieved.insert(k.into(), round3(v).into());
    }
    let mut params = match serde_json::to_value(&spec.load) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    params.remove("kind");
    params.insert("force".into(), spec.force.into());
    if let Some(m) = spec.mix {
        params.insert("mix".into(), m.into());
    }
    params.insert("cpus".into(), serde_json::json!(placement.cpus));
    params.insert("nice".into(), serde_json::json!(placement.nice));
    params.insert("policy".into(), placement.policy.name().into());
    params.insert("priority".into(), placement.priority.into());
    LoadRecord {
        spec: spec.text.clone(),
        kind: spec.load.kind().into(),
        workers: spec.workers,
        params: params.into(),
        achieved,
        totals,
        per_worker,
        start_ms: round3(span.start_ms),
        stop_ms: round3(span.stop_ms),
        elapsed_ns: span.elapsed.as_nanos() as u64,
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn describe_end(e: &Ended) -> String {
    if e.killed {
        return format!(
            "killed (no exit within {} ms of SIGTERM)",
            STOP_GRACE.as_millis()
        );
    }
    match e.exit {
        Exit::Signal(sig) => format!("crashed: signal {sig}"),
        Exit::Code(code) if e.early => format!("exited {code} before the stop"),
        Exit::Code(0) => "stopped".into(),
        Exit::Code(code) => format!("exited {code}"),
        Exit::Other(s) => format!("ended with status {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(exit: Exit, early: bool, killed: bool) -> Ended {
        Ended {
            exit,
            usage: Usage {
                cpu_ns: 1_000_000_000,
                minor_faults: 10,
                max_rss_kib: 2048,
                ..Usage::default()
            },
            early,
            killed,
        }
    }

    #[test]
    fn rates_are_over_the_span_and_odd_ends_are_warned_about() {
        let spec = super::super::spec::parse("cpu:2").unwrap().remove(0);
        let (ok, crashed) = (
            ended(Exit::Code(0), false, false),
            ended(Exit::Signal(11), true, false),
        );
        let worker = |index, ops, ended| WorkerEnd {
            index,
            pid: 100 + index as i32,
            counts: CounterValues {
                ops,
                ..CounterValues::default()
            },
            ended,
        };
        let span = Span {
            elapsed: Duration::from_secs(2),
            start_ms: 1.23456,
            stop_ms: 0.5,
        };
        let mut warnings = Vec::new();
        let r = record(
            &spec,
            &Placement::default(),
            &[worker(0, 300, Some(&ok)), worker(1, 100, Some(&crashed))],
            &span,
            &mut warnings,
        );
        assert_eq!(r.achieved["ops_per_s"], 200.0);
        assert_eq!(r.achieved["ops_per_s_per_worker"], 100.0);
        assert_eq!(r.achieved["cpu_pct_per_worker"], 50.0);
        assert_eq!((r.totals["ops"], r.totals["max_rss_kib"]), (400, 2048));
        assert_eq!((r.start_ms, r.elapsed_ns), (1.235, 2_000_000_000));
        assert_eq!(r.per_worker[0].end, "stopped");
        assert_eq!(r.per_worker[1].end, "crashed: signal 11");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("worker 1 (pid 101) crashed"));
        assert_eq!(r.params["policy"], "other");
    }

    #[test]
    fn every_way_of_ending_is_named() {
        let says = |exit, early, killed| describe_end(&ended(exit, early, killed));
        assert_eq!(says(Exit::Code(0), false, false), "stopped");
        assert_eq!(says(Exit::Code(2), false, false), "exited 2");
        assert_eq!(says(Exit::Code(0), true, false), "exited 0 before the stop");
        assert_eq!(says(Exit::Other(7), false, false), "ended with status 7");
        assert!(says(Exit::Signal(9), false, true).starts_with("killed (no exit within"));
    }
}
