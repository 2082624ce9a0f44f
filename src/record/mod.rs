//! The Run record: what every measurement produces, what the store keeps, what
//! reports read. Plain serde types; `--json` prints one as a document with
//! `"format": "rtlab/1"`. All times are integer nanoseconds.

pub mod perf;
pub mod sweep;
pub mod why;

pub use rtlab_engine::rt::mem::PageFaults;

use rtlab_engine::stats::hist::{HistogramData, UsBucketsData, MAX_US_BUCKETS};
use rtlab_engine::stats::trace::TracePoint;
use rtlab_engine::stats::windows::WindowsData;
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
    /// The exit code of a run that ended so: interrupted by a signal → 130, a
    /// threshold failed → 1, else 0.
    pub fn exit_code(self, by_signal: bool, threshold_failed: bool) -> i32 {
        if self == Status::Interrupted && by_signal {
            crate::error::EXIT_INTERRUPTED
        } else if threshold_failed {
            crate::error::EXIT_FAILED
        } else {
            crate::error::EXIT_OK
        }
    }

    /// The name stored and printed.
    pub fn name(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        }
    }
}

/// Which way a figure improves (a comparison's row, a probe's metric).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Smaller is better, down to zero (latencies, misses, spreads): a negative
    /// spread (p95 below the mean, a few large values pulling the mean up) is
    /// not better than a small positive one.
    Lower,
    /// Larger is better (throughput).
    Higher,
    /// Neither (sample counts, observation time).
    Neither,
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
    /// The values cut into time windows with coarse histograms, from which
    /// `analysis::interval` tells how sure each figure is; empty for runs
    /// imported or stored by an older rtlab.
    #[serde(skip_serializing_if = "WindowsData::is_empty", default)]
    pub windows: WindowsData,
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
    /// `minor_faults`, `major_faults`, `ctx_switches`, `cpu_ns` (and its parts
    /// `user_ns`, `sys_ns`).
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

/// The real-time readiness audit (`rtlab audit`) in a few numbers, kept with every run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditSummary {
    /// Checks that passed.
    pub ok: usize,
    /// Checks that warned.
    pub warn: usize,
    /// Checks that failed.
    pub fail: usize,
    /// Checks that did not apply or could not be read.
    pub na: usize,
    /// Ids of the failed checks.
    #[serde(default)]
    pub failed: Vec<String>,
    /// Ids of the checks that warned.
    #[serde(default)]
    pub warned: Vec<String>,
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
    pub params: RunParams,
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
    /// Root cause of its latency spikes, from kernel tracepoints (`--trace`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<why::Why>,
    /// Page faults the measuring threads took while measuring (latency runs): 0
    /// when everything their loop touched was resident and locked beforehand.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub page_faults: Option<PageFaults>,
    /// A periodic sweep's curves (`rtlab periodic --sweep`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sweep: Option<sweep::Sweep>,
    /// Performance counters (`--perf`, `rtlab perf`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub perf: Option<perf::PerfRecord>,
    /// What else the machine did while the run measured (absent for runs
    /// imported or stored by an older rtlab).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub background: Option<Background>,
    /// Why the numbers may mislead.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// Other load on the machine during a run, read from `/proc` at its start and
/// end, so that a comparison can say that something else ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Background {
    /// The 1-minute load average at the start and at the end.
    pub loadavg: (f64, f64),
    /// CPU time of the other processes over the run, in CPUs (1.0: one CPU
    /// busy all the time): the busy time of all CPUs (`/proc/stat`: user,
    /// nice, system, irq, softirq) less what this process and its children
    /// (the probe's threads, its loads) used.
    pub other_cpus: f64,
    /// The real-time threads (SCHED_FIFO, SCHED_RR) of other user-space
    /// processes seen at the start or the end, as `name fifo 95`: a thread
    /// that can take the measured CPU whatever its share of CPU time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rt_threads: Vec<String>,
}

/// Points a stored time series keeps at most; longer ones are decimated.
pub const MAX_STORED_TRACE_POINTS: usize = 4096;

/// What a run was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RunParams {
    /// The parameters of the rtlab step that measured it, tagged with its probe
    /// (`"probe": "latency"`).
    Step(Box<crate::step::Params>),
    /// Parameters as recorded by the tool a run was imported from, or by an
    /// rtlab from before runs recorded their step's parameters.
    Recorded(serde_json::Value),
}

impl RunParams {
    /// A recorded parameter by name (`unreported`, `interval_ns`); null for a
    /// step's parameters, which have their own types.
    pub fn recorded(&self, key: &str) -> &serde_json::Value {
        match self {
            RunParams::Recorded(v) => &v[key],
            RunParams::Step(_) => &serde_json::Value::Null,
        }
    }

    /// The step's parameters, when a step of this rtlab made the run.
    pub fn step(&self) -> Option<&crate::step::Params> {
        match self {
            RunParams::Step(p) => Some(p),
            RunParams::Recorded(_) => None,
        }
    }

    /// As JSON, the way a run document shows it.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

impl Run {
    /// Summary fields the run's source did not report (`params.unreported`, set
    /// by importers: sysbench gives no stddev and one percentile). They hold 0
    /// and must be shown as unknown.
    pub fn unreported(&self) -> Vec<&str> {
        self.params
            .recorded("unreported")
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default()
    }
}

/// A number in a run record that no measurement gives (see
/// [`Run::check_numbers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumbersError {
    /// The series concerned (`cpu0`, `all`).
    pub series: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for NumbersError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "series '{}': {}", self.series, self.message)
    }
}

impl std::error::Error for NumbersError {}

impl Series {
    /// The series `name` of values counted by `counters`, summarised by
    /// `summary` and `histogram`; nothing else known of it yet (its thread,
    /// CPU, period, 1-µs histogram, trace, time windows).
    pub fn new(
        name: String,
        counters: Counters,
        summary: Summary,
        histogram: HistogramData,
    ) -> Series {
        Series {
            name,
            thread: None,
            cpu: None,
            tid: None,
            interval_ns: None,
            counters,
            summary,
            max_at: None,
            histogram,
            us_histogram: None,
            trace: Vec::new(),
            windows: WindowsData::default(),
        }
    }

    /// The invariants of one series; `unreported` names summary fields that are
    /// unknown (held as 0) and so take no part in the order.
    fn check_numbers(&self, unreported: &[&str]) -> Result<(), String> {
        let s = &self.summary;
        if s.samples != self.counters.samples {
            return Err(format!(
                "the summary counts {} values but the counters {}",
                s.samples, self.counters.samples
            ));
        }
        fn sum(mut counts: impl Iterator<Item = u64>) -> Option<u64> {
            counts.try_fold(0u64, |a, c| a.checked_add(c))
        }
        if !self.histogram.buckets.is_empty() {
            match sum(self.histogram.buckets.iter().map(|b| b.1)) {
                Some(n) if n == s.samples => {}
                Some(n) => {
                    return Err(format!(
                        "its histogram holds {n} values but it counts {}",
                        s.samples
                    ))
                }
                None => {
                    return Err("its histogram counts add up to more than 64 bits can count".into())
                }
            }
        }
        if let Some(us) = &self.us_histogram {
            if us.max_us > MAX_US_BUCKETS {
                return Err(format!(
                    "its 1-µs histogram has {} buckets, more than the {MAX_US_BUCKETS} (10 s) rtlab keeps",
                    us.max_us
                ));
            }
            if let Some(&(b, _)) = us.buckets.iter().find(|b| b.0 >= us.max_us) {
                return Err(format!(
                    "its 1-µs histogram has a bucket {b} beyond its range of {} µs",
                    us.max_us
                ));
            }
            match sum(us.buckets.iter().map(|b| b.1).chain([us.overflow])) {
                Some(n) if n == s.samples => {}
                Some(n) => {
                    return Err(format!(
                        "its 1-µs histogram and overflows hold {n} values but it counts {}",
                        s.samples
                    ))
                }
                None => {
                    return Err(
                        "its 1-µs histogram counts add up to more than 64 bits can count".into(),
                    )
                }
            }
            if us.overflow != self.counters.overflows {
                return Err(format!(
                    "its 1-µs histogram has {} overflows but its counters {}",
                    us.overflow, self.counters.overflows
                ));
            }
        }
        let windows = &self.windows;
        if !windows.is_empty() && windows.readable() && windows.count() != s.samples {
            return Err(format!(
                "its time windows hold {} values but it counts {}",
                windows.count(),
                s.samples
            ));
        }
        if s.samples == 0 {
            return Ok(());
        }
        let known: Vec<(&str, u64)> = s
            .ordered()
            .into_iter()
            .filter(|(name, _)| !unreported.contains(name))
            .collect();
        for pair in known.windows(2) {
            let ((a, va), (b, vb)) = (pair[0], pair[1]);
            if va > vb {
                return Err(format!(
                    "{a} {va} is above {b} {vb}: the order statistics are out of order"
                ));
            }
        }
        // The mean is a float of the exact sum: allow its rounding.
        let slack = 1e-9 * s.max_ns as f64;
        let (min, max) = (s.min_ns as f64 - slack, s.max_ns as f64 + slack);
        if !(s.mean_ns.is_finite() && min <= s.mean_ns && s.mean_ns <= max) {
            return Err(format!(
                "mean_ns {} is outside min_ns {} to max_ns {}",
                s.mean_ns, s.min_ns, s.max_ns
            ));
        }
        if !(s.stddev_ns.is_finite() && s.stddev_ns >= 0.0) {
            return Err(format!("stddev_ns {} is not a spread", s.stddev_ns));
        }
        Ok(())
    }
}

impl Run {
    /// Refuses numbers no measurement gives, before the run is stored: in every
    /// series the counters, the summary and the histograms count the same
    /// values, and min ≤ p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9 ≤ p99.99 ≤ max (fields
    /// listed as unreported are unknown and left out), with the mean between
    /// min and max.
    pub fn check_numbers(&self) -> Result<(), NumbersError> {
        let unreported = self.unreported();
        for s in self.series.iter().chain(&self.total) {
            s.check_numbers(&unreported)
                .map_err(|message| NumbersError {
                    series: s.name.clone(),
                    message,
                })?;
        }
        Ok(())
    }
}

/// The longest label (and tag) rtlab stores, in characters: room for a
/// kernel, its configuration and a note, not for a page.
pub const MAX_LABEL_CHARS: usize = 200;

/// Refuses a label or tag (`what`) that pages and terminals could not show
/// as it is: control characters, or more than [`MAX_LABEL_CHARS`].
pub fn plain_name(what: &str, text: &str) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err(format!(
            "a {what} cannot hold control characters (escapes, carriage returns, tabs, newlines); give plain text"
        ));
    }
    let n = text.chars().count();
    if n > MAX_LABEL_CHARS {
        return Err(format!(
            "a {what} of {n} characters is too long; give at most {MAX_LABEL_CHARS}"
        ));
    }
    Ok(())
}

/// The longest host name, kernel release or kernel version a run read from
/// a file keeps, in characters (Linux allows 64 for each; a fully qualified
/// host name has up to 253).
pub const MAX_NAME_CHARS: usize = 255;

impl Run {
    /// Cuts the names another program wrote, which every page shows, to
    /// [`MAX_LABEL_CHARS`] (label, tags) and [`MAX_NAME_CHARS`] (host, kernel
    /// release and version), each cut noted as a warning (`truncated`): a
    /// file that names its host with 2 MB makes no 8 MB page.
    pub fn bound_names(&mut self) {
        let mut notes = Vec::new();
        let mut cut = |what: &str, text: &mut String, max: usize| {
            let n = text.chars().count();
            if n > max {
                *text = text.chars().take(max).collect();
                notes.push(Warning::new(
                    "truncated",
                    format!("its {what} was {n} characters long; the first {max} are kept"),
                ));
            }
        };
        cut("label", &mut self.label, MAX_LABEL_CHARS);
        for t in &mut self.tags {
            cut("tag", t, MAX_LABEL_CHARS);
        }
        let fp = &mut self.fingerprint;
        cut("host name", &mut fp.hostname, MAX_NAME_CHARS);
        cut("kernel release", &mut fp.kernel_release, MAX_NAME_CHARS);
        cut("kernel version", &mut fp.kernel_version, MAX_NAME_CHARS);
        self.warnings.extend(notes);
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
        params: RunParams,
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
            command_line: invoked_as(),
            params,
            fingerprint,
            audit: None,
            loads: Vec::new(),
            series: Vec::new(),
            total: None,
            metrics: BTreeMap::new(),
            breaktrace: None,
            why: None,
            page_faults: None,
            sweep: None,
            perf: None,
            background: None,
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

/// Where `rtlab run` hands each step's process the command the user typed
/// (a JSON array of strings), so that a step's run records that command, not
/// the internal `rtlab __step --params …` line it was started with.
pub const COMMAND_ENV: &str = "RTLAB_CAMPAIGN_COMMAND";

/// The command line to record: the user's, passwords hidden. A campaign step
/// (`rtlab __step`) records the command of the `rtlab run` that started it.
pub fn invoked_as() -> Vec<String> {
    let own: Vec<String> = std::env::args().map(|a| without_password(&a)).collect();
    let campaign = std::env::var(COMMAND_ENV)
        .ok()
        .filter(|_| own.get(1).map(String::as_str) == Some("__step"))
        .and_then(|json| serde_json::from_str::<Vec<String>>(&json).ok());
    campaign.unwrap_or(own)
}

/// `arg` with the password of a URL in it (in the user part or a `password=`
/// parameter) replaced by `***`: what is recorded of a command line and shown
/// of a store's URL. Anything that is not a URL is kept as it is.
pub fn without_password(arg: &str) -> String {
    let Some((scheme, rest)) = arg.split_once("://") else {
        return arg.to_string();
    };
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let main = match main.rfind('@') {
        Some(at) => {
            let (user, host) = main.split_at(at);
            match user.split_once(':') {
                Some((name, _)) => format!("{name}:***{host}"),
                None => main.to_string(),
            }
        }
        None => main.to_string(),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    match query {
        Some(q) => format!("{scheme}://{main}?{q}"),
        None => format!("{scheme}://{main}"),
    }
}
