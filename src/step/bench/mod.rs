//! The throughput benchmarks with sysbench's workloads, every event timed
//! (`rtlab bench cpu|memory|fileio|threads|mutex`, scenario probes `bench.cpu`
//! ... `bench.mutex`, whose duration key is `time` as in sysbench). See the
//! engine's `bench` module for the workload semantics next to sysbench's.
//!
//! One module per bench holds its `Params` (its own options with [`Common`]
//! flattened in), their checks and its run; this one holds what they share: the
//! options of every bench and their checks, the measuring of a workload into a
//! run with the metrics every bench has, and what a stored run was asked.

/// What every bench's `Params` has from its flags and its place in the
/// registry: the defaults (parsing no flags), its `KIND` (`$name`, the
/// variant `$variant` of the step parameters, the progress line's
/// `$command`), its step, what its runs were asked (the module's `what`
/// says its own values in words), its own interval rates (`$rates`), and the
/// limits of the common options, where `$default_time` (ns; 0: until the work
/// is done) applies when neither --time nor --events is given. The module
/// gives `plan`, `measure`, `asked` and `what`.
macro_rules! bench_step {
    ($name:literal, $variant:ident, $command:literal, $default_time:expr, $rates:expr) => {
        /// Runs of this bench: how a scenario reads its steps (its duration
        /// key is `time`, as in sysbench) and how they are shown.
        pub const KIND: crate::step::Kind = crate::step::Kind::probe::<Params>($name, "time")
            .command($command)
            .periods(false, false)
            .view(crate::step::View::Bench)
            .metrics(super::METRICS)
            .asked(|params| {
                let asked = match params.step() {
                    Some(crate::step::Params::$variant(p)) => p.asked(),
                    _ => params.to_value(),
                };
                super::Asked::of(asked).describe(what)
            });

        step! {
            fn options(&self) -> crate::step::rt::Options<'_> {
                crate::step::rt::Options {
                    perf: Some(&self.common.perf),
                    ..Default::default()
                }
            }

            fn planned_ns(&self) -> Option<u64> {
                self.common.planned_ns($default_time)
            }
        }

        impl Params {
            /// The limits the common options set, checked.
            fn lim(&self) -> anyhow::Result<super::Lim> {
                self.common.lim($default_time)
            }

            /// The step a run of these parameters records, and the bench's
            /// own rates of an interval.
            fn recorded(&self) -> (crate::step::Params, super::Rates) {
                (self.clone().into(), $rates)
            }
        }
    };
}

pub mod cpu;
pub mod fileio;
pub mod memory;
pub mod mutex;
pub mod prepared;
pub mod threads;

use super::value::{opt_positive, Dur, Sec, Size};
use super::Observer;
use crate::error::bad_flag;
use crate::record::{self, Better, Counters, Run, Series, Status, Warning};
use crate::system;
use anyhow::Result;
use clap::Args;
use rtlab_engine::bench::{self, Bench, Limits, Outcome, Report, Snapshot, Tally, ThreadStats};
use rtlab_engine::rt::signals;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;

/// The metrics of every bench, and which way each improves.
const METRICS: &[(&str, Better)] = &[
    ("*_per_s", Better::Higher),
    ("spread_*", Better::Lower),
    ("cv", Better::Lower),
    ("*_stddev*", Better::Lower),
    ("timing_overhead_ns", Better::Lower),
    ("latency_p*", Better::Lower),
];

/// How long a bench runs when neither --time nor --events is given.
const DEFAULT_TIME_NS: u64 = 10_000_000_000;

/// Options of every bench.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Common {
    /// Worker threads.
    #[arg(
        short,
        long,
        default_value_t = 1,
        value_name = "N",
        alias = "num-threads"
    )]
    pub threads: usize,
    /// Stop after this long (e.g. 10s, 1m; a bare number is seconds) [default:
    /// 10s; no time limit when --events is given].
    #[arg(long, value_name = "DUR", alias = "max-time")]
    pub time: Option<Dur<Sec>>,
    /// Stop after this many events over all threads [default: no limit].
    #[arg(long, value_name = "N", alias = "max-requests")]
    pub events: Option<u64>,
    /// Print the rates of each interval of this length while running (e.g. 1s; a
    /// bare number is seconds) [default: none].
    #[arg(long, value_name = "DUR")]
    pub report_interval: Option<Dur<Sec>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub perf: super::perf::PerfArgs,
}

impl Default for Common {
    fn default() -> Self {
        super::defaults()
    }
}

/// When to stop, and how often to report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lim {
    /// Threads, time and event limits as the engine takes them.
    pub limits: Limits,
    /// Interval between rate lines (zero: none).
    pub interval: Duration,
    /// Record performance counters (`--perf`).
    pub perf: bool,
}

impl Common {
    /// The limits, checked; `default_time` (ns, 0: none) applies when neither
    /// --time nor --events is given.
    pub fn lim(&self, default_time: u64) -> Result<Lim> {
        if !(1..=4096).contains(&self.threads) {
            return Err(bad_flag(
                "--threads",
                format!("{} is outside 1-4096", self.threads),
            ));
        }
        let time_ns = match (&self.time, self.events) {
            (Some(t), _) => t.positive("--time")?,
            (None, Some(_)) => 0,
            (None, None) => default_time,
        };
        if self.events == Some(0) {
            return Err(bad_flag(
                "--events",
                "0 events measures nothing; give a count above 0 or leave it out",
            ));
        }
        let interval = Duration::from_nanos(
            opt_positive("--report-interval", &self.report_interval)?.unwrap_or(0),
        );
        Ok(Lim {
            limits: Limits {
                threads: self.threads,
                time_ns,
                events: self.events.unwrap_or(0),
            },
            interval,
            perf: self.perf.perf,
        })
    }

    /// How long it is planned to run (ns), when it says: --time, else
    /// `default_time` unless --events is given.
    pub fn planned_ns(&self, default_time: u64) -> Option<u64> {
        match (&self.time, self.events) {
            (Some(t), _) => t.get(),
            (None, Some(_)) => None,
            (None, None) => (default_time > 0).then_some(default_time),
        }
    }
}

/// A size flag above zero, in bytes.
fn size_flag(flag: &str, size: &Size) -> Result<u64> {
    match size.bytes(flag)? {
        0 => Err(bad_flag(
            flag,
            format!("'{size}' is zero; give a size above 0"),
        )),
        v => Ok(v),
    }
}

/// A byte count in binary units: `1KiB`, `16MiB`, `3GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    let s = format!("{v:.1}");
    format!("{}{}", s.trim_end_matches(".0"), UNITS[u])
}

/// The most mutexes `threads --locks` and `mutex --mutexes` allocate (128 bytes
/// each, 128 MiB in all); sysbench's default is 4096.
const MAX_MUTEXES: usize = 1 << 20;

/// Refuses a count of mutexes above [`MAX_MUTEXES`], naming the flag.
fn check_mutexes(flag: &str, n: usize) -> Result<()> {
    if n > MAX_MUTEXES {
        return Err(bad_flag(
            flag,
            format!("{n} mutexes is more than {MAX_MUTEXES}; sysbench uses 4096"),
        ));
    }
    Ok(())
}

/// A signal stopped the work before anything was measured (fileio's preparing):
/// nothing to print or save, exit 130.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "interrupted while preparing the fileio files; they were removed, nothing was measured",
        )
    }
}

impl std::error::Error for Interrupted {}

/// A bench run before its bench's own metrics: the record and the raw outcome.
struct Measured {
    run: Run,
    outcome: Outcome,
    total: ThreadStats,
}

fn series_of(name: String, st: &ThreadStats, thread: bool) -> Series {
    let counters = Counters {
        samples: st.events(),
        ..Counters::default()
    };
    Series {
        thread: thread.then_some(st.index),
        tid: thread.then_some(st.tid),
        windows: st.windows.to_data(),
        ..Series::new(name, counters, st.summary(), st.hist.to_data())
    }
}

fn mean_stddev(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let mean = values.clone().sum::<f64>() / n;
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// A bench's own rates over an interval, after its events/s: from the
/// tallies at its end and at its start, over `dt` seconds.
pub type Rates = fn(now: &Tally, prev: &Tally, dt: f64) -> String;

/// The rate of a count that grew from `prev` to `now` over `dt` seconds.
fn per_s(now: u64, prev: u64, dt: f64) -> f64 {
    (now - prev) as f64 / dt
}

/// One interval line of a bench with its own `rates`: the rates since the
/// previous line.
pub(crate) fn interval_line(rates: Rates, prev: &Snapshot, now: &Snapshot) -> String {
    let dt = (now.elapsed_ns - prev.elapsed_ns) as f64 / 1e9;
    format!(
        "[{:>6.1}s] events/s {:.2}{}",
        now.elapsed_ns as f64 / 1e9,
        per_s(now.events, prev.events, dt),
        rates(&now.tally, &prev.tally, dt)
    )
}

/// The rates of benches that take locks: `locks/s`.
fn lock_rates(now: &Tally, prev: &Tally, dt: f64) -> String {
    format!("  locks/s {:.2}", per_s(now.ops, prev.ops, dt))
}

/// Runs workload `w` within `lim` and builds the run of the step `params` with
/// the metrics every bench has; `obs` gets the interval lines.
fn measure<W: Bench>(
    w: &W,
    lim: Lim,
    (params, rates): (super::Params, Rates),
    mut warnings: Vec<Warning>,
    obs: &mut dyn Observer,
) -> Measured {
    let fp = system::fingerprint();
    let stop = signals::install();
    let overhead = bench::timing_overhead(w.accounting());
    let started_at = record::now_rfc3339();
    let counters = lim.perf.then(super::perf::ProcessCounters::start);
    let mut prev = Snapshot::default();
    let report = Report {
        every: lim.interval,
        percentile: obs.interval_percentile(),
        latency_histogram: obs.latency_histogram(),
    };
    let outcome = w.run(lim.limits, stop, report, &mut |snap| {
        obs.bench_interval(rates, &prev, snap);
        prev = *snap;
    });
    let perf = counters.map(super::perf::ProcessCounters::finish);
    let total = ThreadStats::total(&outcome.threads);
    let events = total.events();
    let secs = outcome.elapsed_ns as f64 / 1e9;
    let s = total.summary();
    let mut m = BTreeMap::new();
    m.insert("total_events".to_string(), events as f64);
    m.insert("total_time_s".to_string(), secs);
    if secs > 0.0 {
        m.insert("events_per_s".to_string(), events as f64 / secs);
    }
    m.insert("timing_overhead_ns".to_string(), overhead);
    if events > 0 {
        m.insert("spread_max_min_ns".to_string(), s.spread_max_min() as f64);
        m.insert("spread_p95_mean_ns".to_string(), s.spread_p95_mean());
        if s.mean_ns > 0.0 {
            m.insert("cv".to_string(), s.stddev_ns / s.mean_ns);
        }
    }
    let (ev_mean, ev_sd) = mean_stddev(outcome.threads.iter().map(|t| t.events() as f64));
    let (t_mean, t_sd) = mean_stddev(outcome.threads.iter().map(|t| t.busy_ns as f64 / 1e9));
    m.insert("fairness_events_avg".to_string(), ev_mean);
    m.insert("fairness_events_stddev".to_string(), ev_sd);
    m.insert("fairness_time_avg_s".to_string(), t_mean);
    m.insert("fairness_time_stddev_s".to_string(), t_sd);

    let status = if outcome.error.is_some() {
        Status::Failed
    } else if outcome.stopped {
        Status::Interrupted
    } else {
        Status::Complete
    };
    let by_signal = signals::received().is_some() || outcome.stopped;
    warnings.extend(system::fingerprint_warnings(&fp));
    let mut run = super::new_run(fp, started_at, params);
    run.status = status;
    run.exit_code = status.exit_code(by_signal, false);
    run.ended_at = record::now_rfc3339();
    run.duration_ns = outcome.elapsed_ns;
    run.series = outcome
        .threads
        .iter()
        .map(|t| series_of(format!("thread{}", t.index), t, true))
        .collect();
    run.total = Some(series_of("all".into(), &total, false));
    run.metrics = m;
    run.perf = perf;
    run.warnings = warnings;
    Measured {
        run,
        outcome,
        total,
    }
}

/// Sets `name` to `count / total_time_s` (the record's own figures).
fn rate(run: &mut Run, name: &str, count: f64) {
    let secs = run.metrics["total_time_s"];
    if secs > 0.0 {
        run.metrics.insert(name.to_string(), count / secs);
    }
}

/// What a bench run was asked, in the keys rtlab recorded before runs kept
/// their step's parameters (sizes in bytes, the fileio file size worked out):
/// from the step's parameters, or as recorded by an older rtlab or an import
/// (sysbench's `cpu_max_prime` is read as `max_prime`). A value nobody
/// recorded is absent.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked(Map<String, Value>);

impl Asked {
    /// What `v` says was asked.
    pub fn of(v: Value) -> Asked {
        let mut m = match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if let (false, Some(n)) = (m.contains_key("max_prime"), m.get("cpu_max_prime")) {
            m.insert("max_prime".into(), n.clone());
        }
        Asked(m)
    }

    /// A count, `?` when not recorded.
    fn count(&self, key: &str) -> String {
        self.0
            .get(key)
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_string(), |n| n.to_string())
    }

    /// A size in bytes, `?` when not recorded.
    fn size(&self, key: &str) -> String {
        self.0
            .get(key)
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_string(), bytes)
    }

    /// A word, `?` when not recorded.
    fn word(&self, key: &str) -> &str {
        self.0.get(key).and_then(Value::as_str).unwrap_or("?")
    }

    /// A flag, false when not recorded.
    fn on(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool) == Some(true)
    }

    /// In one line: `what` the bench says of its own values, then its threads.
    fn describe(&self, what: fn(&Asked) -> String) -> String {
        format!("{}, {} thread(s)", what(self), self.count("threads"))
    }
}

/// `a` serialised, with `threads` from the common options: the start of what a
/// bench's [`asked`] gives.
fn with_threads(common: &Common, mut a: Value) -> Value {
    if let Value::Object(m) = &mut a {
        m.insert("threads".into(), common.threads.into());
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunParams;

    /// The defaults of `P` as a scenario spells them, read back.
    pub(super) fn round_trip<P>(p: &P)
    where
        P: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
    {
        let v = serde_json::to_value(p).unwrap();
        let back: P = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(&back, p, "{v}");
    }

    /// The error of `r`, as printed: `--flag: message`.
    pub(super) fn refusal<T>(r: Result<T>) -> String {
        match r {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    /// A machine with two CPUs and `mem` bytes available.
    pub(super) fn machine(mem: u64) -> super::super::Machine {
        super::super::Machine {
            cpus: vec![0, 1],
            mem_available: mem,
        }
    }

    #[test]
    fn every_bench_takes_the_keys_a_scenario_gives_it() {
        // As scenario/probes.rs lists them; `time` sets how long a step runs.
        let all: [(&super::super::Probe, &[&str]); 5] = [
            (cpu::KIND.probe.as_ref().unwrap(), &["max_prime"]),
            (
                memory::KIND.probe.as_ref().unwrap(),
                &["block_size", "total_size", "oper", "access", "scope"],
            ),
            (
                fileio::KIND.probe.as_ref().unwrap(),
                &[
                    "dir",
                    "total_size",
                    "files",
                    "block_size",
                    "mode",
                    "rw_ratio",
                    "fsync_freq",
                    "fsync_end",
                    "direct",
                ],
            ),
            (threads::KIND.probe.as_ref().unwrap(), &["yields", "locks"]),
            (
                mutex::KIND.probe.as_ref().unwrap(),
                &["mutexes", "locks", "loops"],
            ),
        ];
        for (probe, keys) in all {
            let have = probe.keys();
            for k in keys.iter().chain(&["time", "events", "threads"]) {
                assert!(have.iter().any(|h| h == k), "{}: no key {k}", probe.name);
            }
            assert_eq!(probe.duration_key, "time");
            assert!(probe.required.is_empty());
            assert_eq!(super::super::probe(probe.name), Some(probe));
        }
    }

    #[test]
    fn binary_sizes() {
        assert_eq!(bytes(512), "512B");
        assert_eq!(bytes(1024), "1KiB");
        assert_eq!(bytes(1536), "1.5KiB");
        assert_eq!(bytes(256 << 20), "256MiB");
        assert_eq!(bytes(3 << 30), "3GiB");
    }

    #[test]
    fn interval_lines_are_rates_of_the_interval() {
        let prev = Snapshot {
            elapsed_ns: 1_000_000_000,
            events: 100,
            ..Snapshot::default()
        };
        let now = Snapshot {
            running: 1,
            pct_ns: 0,
            elapsed_ns: 1_500_000_000,
            events: 400,
            tally: Tally {
                reads: 50,
                writes: 25,
                fsyncs: 5,
                bytes_read: 1 << 20,
                bytes_written: 1 << 19,
                ops: 0,
            },
        };
        assert_eq!(
            interval_line(|_, _, _| String::new(), &prev, &now),
            "[   1.5s] events/s 600.00"
        );
        assert_eq!(
            interval_line(fileio::rates, &prev, &now),
            "[   1.5s] events/s 600.00  reads/s 100.00  writes/s 50.00  fsyncs/s 10.00  \
             read MiB/s 2.00  written MiB/s 1.00"
        );
    }

    #[test]
    fn fairness_spread() {
        let (m, sd) = mean_stddev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!((m, sd), (5.0, 2.0));
        assert_eq!(mean_stddev(std::iter::empty()), (0.0, 0.0));
    }

    #[test]
    fn common_options_are_checked_once_naming_the_flag() {
        let c = |f: fn(&mut Common)| {
            let mut c = Common::default();
            f(&mut c);
            c
        };
        assert!(refusal(c(|c| c.threads = 0).lim(0)).starts_with("--threads: 0 is outside"));
        assert!(refusal(c(|c| c.time = Some("0".into())).lim(0)).starts_with("--time: '0'"));
        assert!(refusal(c(|c| c.events = Some(0)).lim(0)).starts_with("--events: 0 events"));
        let e = refusal(c(|c| c.report_interval = Some("-1s".into())).lim(0));
        assert!(e.starts_with("--report-interval:"), "{e}");

        let d = Common::default();
        assert_eq!(
            d.lim(DEFAULT_TIME_NS).unwrap().limits.time_ns,
            DEFAULT_TIME_NS
        );
        assert_eq!(d.planned_ns(DEFAULT_TIME_NS), Some(DEFAULT_TIME_NS));
        assert_eq!(d.planned_ns(0), None);
        let events = c(|c| c.events = Some(5));
        assert_eq!(events.lim(DEFAULT_TIME_NS).unwrap().limits.time_ns, 0);
        assert_eq!(events.planned_ns(DEFAULT_TIME_NS), None);
        let timed = c(|c| c.time = Some("300ms".into()));
        assert_eq!(timed.planned_ns(0), Some(300_000_000));
        round_trip(&timed);
    }

    #[test]
    fn stored_step_parameters_read_back_as_the_step() {
        use super::super::Params as P;
        let all = [
            P::BenchCpu(cpu::Params::default()),
            P::BenchMemory(memory::Params::default()),
            P::BenchFileio(fileio::Params::default()),
            P::BenchThreads(threads::Params::default()),
            P::BenchMutex(mutex::Params::default()),
        ];
        for p in all {
            let step = serde_json::to_value(&p).unwrap();
            assert_eq!(
                serde_json::from_value::<super::super::Params>(step).unwrap(),
                p
            );
            let stored = RunParams::Step(Box::new(p.clone())).to_value();
            assert_eq!(stored["probe"], p.name());
            assert_eq!(
                stored["time"],
                Value::Null,
                "unset values are stored as null"
            );
            let back: RunParams = serde_json::from_value(stored).unwrap();
            assert_eq!(back, RunParams::Step(Box::new(p)));
        }
    }

    #[test]
    fn what_older_runs_and_imports_recorded_is_read_as_asked() {
        let old = Asked::of(serde_json::json!({
            "max_prime": 2000, "threads": 2, "time_ns": 1_000_000_000u64,
        }));
        assert_eq!(
            (old.count("max_prime"), old.count("threads")),
            ("2000".into(), "2".into())
        );
        let sysbench = Asked::of(serde_json::json!({
            "source": "sysbench", "cpu_max_prime": 20000, "threads": 4,
        }));
        assert_eq!(sysbench.count("max_prime"), "20000");
        assert_eq!(Asked::of(Value::Null), Asked(Map::new()));
    }

    /// What a run of `kind` with `params` was asked, in one line.
    fn described(kind: &str, params: RunParams) -> String {
        (super::super::kind(kind).asked)(&params)
    }

    #[test]
    fn typed_and_recorded_parameters_read_the_same() {
        let mut m = memory::Params::default();
        m.common.threads = 2;
        let typed = described(
            "bench.memory",
            RunParams::Step(Box::new(super::super::Params::BenchMemory(m))),
        );
        let old = RunParams::Recorded(serde_json::json!({
            "block_size": 1024, "total_size": 100u64 << 30, "oper": "write",
            "access": "seq", "scope": "global", "threads": 2,
        }));
        assert_eq!(typed, described("bench.memory", old));
        assert_eq!(
            typed,
            "block 1KiB, seq write global, total 100GiB, 2 thread(s)"
        );
        let bw = memory::Params {
            mode: memory::ModeArg::Bandwidth,
            ..Default::default()
        };
        assert_eq!(
            described(
                "bench.memory",
                RunParams::Step(Box::new(super::super::Params::BenchMemory(bw)))
            ),
            "block 1KiB, seq write global, total 100GiB, bandwidth mode, 1 thread(s)"
        );

        let f = fileio::Params {
            total_size: "8M".into(),
            direct: true,
            ..Default::default()
        };
        let typed = described(
            "bench.fileio",
            RunParams::Step(Box::new(super::super::Params::BenchFileio(f))),
        );
        assert_eq!(
            typed,
            "rndrw in .: 128 files × 64KiB, block 16KiB, O_DIRECT, 1 thread(s)"
        );
    }

    #[test]
    fn imported_runs_say_what_they_know() {
        let sysbench = RunParams::Recorded(serde_json::json!({
            "source": "sysbench", "cpu_max_prime": 20000, "threads": 4,
        }));
        assert_eq!(
            described("bench.cpu", sysbench),
            "max prime 20000, 4 thread(s)"
        );
        let bare = RunParams::Recorded(serde_json::json!({"source": "sysbench"}));
        assert_eq!(
            described("bench.threads", bare),
            "? yields, ? locks, ? thread(s)"
        );
    }
}
