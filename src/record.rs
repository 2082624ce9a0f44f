//! The Run record: what every measurement produces, what the store keeps, what
//! reports read. Plain serde types; `--json` prints one as a document with
//! `"format": "rtlab/1"`. All times are integer nanoseconds.

use crate::tune::audit::AuditSummary;
use rtlab_engine::stats::hist::{HistogramData, UsBucketsData};
use rtlab_engine::stats::trace::TracePoint;
use rtlab_engine::stats::Summary;
use rtlab_engine::sysinfo::Fingerprint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The JSON format identifier; bumped on incompatible changes.
pub const FORMAT: &str = "rtlab/1";

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran to its planned end.
    Complete,
    /// Stopped early by a signal or a breaktrace; holds what was gathered.
    Interrupted,
    /// Could not measure.
    Failed,
}

impl Status {
    /// The name stored and printed.
    pub fn name(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        }
    }
}

/// Counters of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Counters {
    /// Values recorded (wake-ups, events, messages).
    pub samples: u64,
    /// Periods that expired while the measuring thread was late.
    pub overruns: u64,
    /// Values above the deadline.
    pub deadline_misses: u64,
    /// Values above the 1-µs histogram's range (`--histogram-max`).
    pub overflows: u64,
}

/// One series: a thread, a CPU, a leg, or all of them together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Name (`cpu0`, `thread1`, `all`, `leg2`).
    pub name: String,
    /// Thread index, when the series is one thread's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub thread: Option<usize>,
    /// CPU the thread was pinned to.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu: Option<usize>,
    /// Kernel thread id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tid: Option<i32>,
    /// The thread's period (ns), for periodic probes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub interval_ns: Option<u64>,
    /// Counters.
    pub counters: Counters,
    /// Order statistics and moments (ns).
    pub summary: Summary,
    /// Wake-up (or event) number of the maximum.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_at: Option<u64>,
    /// The HdrHistogram, non-empty buckets.
    pub histogram: HistogramData,
    /// The 1-µs histogram (cyclictest layout), when kept.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub us_histogram: Option<UsBucketsData>,
    /// Per-block maxima over time, for scatter plots.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub trace: Vec<TracePoint>,
}

/// A load that ran during the measurement, with the work it achieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LoadRecord {
    /// The spec as given (`cpu:4`, `vm:2:256M`, `dohell`).
    pub spec: String,
    /// Kind of load.
    pub kind: String,
    /// Workers.
    pub workers: u32,
    /// Parameters as key/value pairs.
    pub params: serde_json::Value,
    /// Achieved rates: name → value per second (`ops_per_s`, `bytes_per_s`,
    /// `minor_faults_per_s`, `ctx_switches_per_s`).
    pub achieved: serde_json::Map<String, serde_json::Value>,
    /// Totals over the run: `ops`, `bytes`, `rounds`, `restarts`, `errors`,
    /// `minor_faults`, `major_faults`, `ctx_switches`, `cpu_ns`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub totals: BTreeMap<String, u64>,
    /// Each worker process: what it did and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_worker: Vec<LoadWorker>,
    /// Time from the start request until every worker was ready (ms).
    #[serde(default)]
    pub start_ms: f64,
    /// Time from the stop request until every worker was gone (ms).
    #[serde(default)]
    pub stop_ms: f64,
    /// The window the rates are computed over: ready to stop request (ns).
    #[serde(default)]
    pub elapsed_ns: u64,
}

/// One worker process of a load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadWorker {
    /// Worker number within the load.
    pub index: u32,
    /// Process id.
    pub pid: i32,
    /// Units of work done.
    pub ops: u64,
    /// Units of work per second.
    pub ops_per_s: f64,
    /// CPU time used, percent of one core.
    pub cpu_pct: f64,
    /// Minor page faults per second.
    pub minor_faults_per_s: f64,
    /// Peak resident set size (KiB), including the processes it forked.
    pub max_rss_kib: u64,
    /// How it ended: `stopped` (on request), `killed` (did not stop in time),
    /// `crashed: signal N`, `exited N`.
    pub end: String,
}

/// Why a run is less trustworthy than it looks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Short stable key (`vm`, `not_root`, `dma_latency`, `mlock`, `priority99`,
    /// `smt_shared`, `rt_throttling`, ...).
    pub code: String,
    /// What it means for the numbers.
    pub message: String,
}

impl Warning {
    /// A warning.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Warning {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// A breaktrace event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakRecord {
    /// Thread index.
    pub thread: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Wake-up number (0-based).
    pub cycle: u64,
    /// The latency that exceeded the threshold (ns).
    pub latency_ns: u64,
    /// Whether a marker went to ftrace's `trace_marker` and tracing was stopped.
    pub trace_marker: bool,
}

/// Everything one measurement produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Always [`FORMAT`].
    pub format: String,
    /// Store id (absent until saved).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub id: Option<i64>,
    /// What was measured: `latency`, `net`, `bench.cpu`, ...
    pub kind: String,
    /// Label (default `<kernel release> <preemption model>`).
    pub label: String,
    /// Free tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Campaign the run belongs to.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub campaign: Option<i64>,
    /// How it ended.
    pub status: Status,
    /// The process exit code it produced.
    pub exit_code: i32,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub ended_at: String,
    /// Measured time (ns): first wake-up to last, the observation window.
    pub duration_ns: u64,
    /// rtlab version.
    pub rtlab_version: String,
    /// The command line.
    pub command_line: Vec<String>,
    /// All parameters, as given and as defaulted.
    pub params: serde_json::Value,
    /// The system it ran on.
    pub fingerprint: Fingerprint,
    /// The real-time readiness audit of that system (`rtlab audit`), in counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSummary>,
    /// Loads that ran during it.
    #[serde(default)]
    pub loads: Vec<LoadRecord>,
    /// Per-thread (or per-leg) series.
    pub series: Vec<Series>,
    /// All series together.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub total: Option<Series>,
    /// Throughput and other scalar results, by name, unit in the name
    /// (`events_per_s`, `read_mib_per_s`, `total_time_s`, `messages_lost`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// Breaktrace event, if one stopped the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub breaktrace: Option<BreakRecord>,
    /// Why the numbers may mislead.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

impl Run {
    /// Summary fields the run's source did not report (`params.unreported`, set
    /// by importers: sysbench gives no stddev and one percentile). They hold 0
    /// and must be shown as unknown.
    pub fn unreported(&self) -> Vec<&str> {
        self.params["unreported"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default()
    }
}

impl Run {
    /// A run of `kind` that measured nothing yet: status complete, exit code 0,
    /// ended now, this rtlab's version and command line, no series.
    pub fn new(
        kind: &str,
        label: String,
        fingerprint: Fingerprint,
        started_at: String,
        params: serde_json::Value,
    ) -> Run {
        Run {
            format: FORMAT.into(),
            id: None,
            kind: kind.into(),
            label,
            tags: Vec::new(),
            campaign: None,
            status: Status::Complete,
            exit_code: 0,
            started_at,
            ended_at: now_rfc3339(),
            duration_ns: 0,
            rtlab_version: env!("CARGO_PKG_VERSION").into(),
            command_line: std::env::args().collect(),
            params,
            fingerprint,
            audit: None,
            loads: Vec::new(),
            series: Vec::new(),
            total: None,
            metrics: BTreeMap::new(),
            breaktrace: None,
            warnings: Vec::new(),
        }
    }
}

/// The current time as RFC 3339 UTC with microseconds.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The default label: `<kernel release> <preemption model>`.
pub fn default_label(fp: &Fingerprint) -> String {
    let dynamic = fp.kernel_version.contains("PREEMPT_DYNAMIC");
    match (&fp.preempt_dynamic_mode, dynamic) {
        (Some(mode), _) => format!("{} PREEMPT_DYNAMIC({mode})", fp.kernel_release),
        (None, true) => format!("{} PREEMPT_DYNAMIC", fp.kernel_release),
        (None, false) => format!("{} {}", fp.kernel_release, fp.preempt.name()),
    }
}
