//! The throughput benchmarks with sysbench's workloads, every event timed
//! (`rtlab bench cpu|memory|fileio|threads|mutex`, scenario probes `bench.cpu`
//! ... `bench.mutex`, whose duration key is `time` as in sysbench). See the
//! engine's `bench` module for the workload semantics next to sysbench's.
//!
//! One module per bench holds its `Params` (its own options with [`Common`]
//! flattened in), their checks and its run; this one holds what they share: the
//! options of every bench and their checks, the measuring of a workload into a
//! run with the metrics every bench has, and what a stored run was asked.

/// What every bench's `Params` has from its flags and its probe's name: the
/// defaults (parsing no flags), the `PROBE` a scenario reads its steps with,
/// and the limits of the common options, where `$default_time` (ns; 0: until
/// the work is done) applies when neither --time nor --events is given.
macro_rules! bench_step {
    ($name:literal, $default_time:expr) => {
        impl Default for Params {
            fn default() -> Self {
                crate::step::defaults()
            }
        }

        /// How a scenario reads the steps of this bench.
        pub const PROBE: crate::step::Probe = crate::step::Probe::of::<Params>($name, "time");

        impl crate::step::Step for Params {
            fn probe(&self) -> &'static crate::step::Probe {
                &PROBE
            }

            fn check(&self, m: &crate::step::Machine) -> anyhow::Result<()> {
                self.plan(m).map(drop)
            }

            fn planned_ns(&self) -> Option<u64> {
                self.common.planned_ns($default_time)
            }

            fn rt_need(&self) -> Option<(rtlab_engine::rt::sched::Policy, i32, &'static str)> {
                None
            }
        }

        impl Params {
            /// The limits the common options set, checked.
            fn lim(&self) -> anyhow::Result<super::Lim> {
                self.common.lim($default_time)
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

use super::{de, Observer};
use crate::error::bad_flag;
use crate::record::{self, Counters, Run, RunParams, Series, Status, Warning};
use crate::system;
use crate::units::{parse_positive_duration, parse_size, DefaultUnit};
use anyhow::Result;
use clap::Args;
use rtlab_engine::bench::{self, Bench, Limits, Outcome, Report, Snapshot, ThreadStats};
use rtlab_engine::rt::signals;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;

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
    #[serde(deserialize_with = "de::opt_duration")]
    pub time: Option<String>,
    /// Stop after this many events over all threads [default: no limit].
    #[arg(long, value_name = "N", alias = "max-requests")]
    pub events: Option<u64>,
    /// Print the rates of each interval of this length while running (e.g. 1s; a
    /// bare number is seconds) [default: none].
    #[arg(long, value_name = "DUR")]
    #[serde(deserialize_with = "de::opt_duration")]
    pub report_interval: Option<String>,
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
            (Some(t), _) => parse_positive_duration(t, DefaultUnit::Seconds)
                .map_err(|e| bad_flag("--time", e))?,
            (None, Some(_)) => 0,
            (None, None) => default_time,
        };
        if self.events == Some(0) {
            return Err(bad_flag(
                "--events",
                "0 events measures nothing; give a count above 0 or leave it out",
            ));
        }
        let interval = match &self.report_interval {
            Some(i) => Duration::from_nanos(
                parse_positive_duration(i, DefaultUnit::Seconds)
                    .map_err(|e| bad_flag("--report-interval", e))?,
            ),
            None => Duration::ZERO,
        };
        self.perf.check()?;
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
            (Some(t), _) => parse_positive_duration(t, DefaultUnit::Seconds).ok(),
            (None, Some(_)) => None,
            (None, None) => (default_time > 0).then_some(default_time),
        }
    }
}

/// A size flag above zero, in bytes.
fn size_flag(flag: &str, text: &str) -> Result<u64> {
    match parse_size(text).map_err(|e| bad_flag(flag, e))? {
        0 => Err(bad_flag(
            flag,
            format!("'{text}' is zero; give a size above 0"),
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
    Series {
        name,
        thread: thread.then_some(st.index),
        cpu: None,
        tid: thread.then_some(st.tid),
        interval_ns: None,
        counters: Counters {
            samples: st.events(),
            ..Counters::default()
        },
        summary: st.summary(),
        max_at: None,
        histogram: st.hist.to_data(),
        us_histogram: None,
        trace: Vec::new(),
        windows: st.windows.to_data(),
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

/// One interval line of the bench `kind` (`cpu`): the rates since the previous
/// line.
pub(crate) fn interval_line(kind: &str, prev: &Snapshot, now: &Snapshot) -> String {
    let dt = (now.elapsed_ns - prev.elapsed_ns) as f64 / 1e9;
    let rate = |a: u64, b: u64| (a - b) as f64 / dt;
    let (t, p) = (&now.tally, &prev.tally);
    let mut line = format!(
        "[{:>6.1}s] events/s {:.2}",
        now.elapsed_ns as f64 / 1e9,
        rate(now.events, prev.events)
    );
    match kind {
        "fileio" => line.push_str(&format!(
            "  reads/s {:.2}  writes/s {:.2}  fsyncs/s {:.2}  read MiB/s {:.2}  written MiB/s {:.2}",
            rate(t.reads, p.reads),
            rate(t.writes, p.writes),
            rate(t.fsyncs, p.fsyncs),
            rate(t.bytes_read, p.bytes_read) / MIB,
            rate(t.bytes_written, p.bytes_written) / MIB,
        )),
        "memory" => line.push_str(&format!(
            "  MiB/s {:.2}",
            rate(t.bytes_read + t.bytes_written, p.bytes_read + p.bytes_written) / MIB
        )),
        "mutex" | "threads" => line.push_str(&format!("  locks/s {:.2}", rate(t.ops, p.ops))),
        _ => {}
    }
    line
}

/// Runs workload `w` within `lim` and builds the run of the step `params` with
/// the metrics every bench has; `obs` gets the interval lines.
fn measure<W: Bench>(
    w: &W,
    lim: Lim,
    params: super::Params,
    mut warnings: Vec<Warning>,
    obs: &mut dyn Observer,
) -> Measured {
    let fp = system::fingerprint();
    let stop = signals::install();
    let kind = params.name().trim_start_matches("bench.");
    let overhead = bench::timing_overhead(w.accounting());
    let started_at = record::now_rfc3339();
    let counters = lim.perf.then(super::perf::ProcessCounters::start);
    let mut prev = Snapshot::default();
    let report = Report {
        every: lim.interval,
        percentile: obs.interval_percentile(),
    };
    let outcome = w.run(lim.limits, stop, report, &mut |snap| {
        obs.bench_interval(kind, &prev, snap);
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
    let kind = params.name();
    let mut run = super::new_run(kind, fp, started_at, params);
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
/// (sysbench's `cpu_max_prime` is read as `max_prime`). A value nobody recorded
/// is absent.
pub fn asked(params: &RunParams) -> Map<String, Value> {
    let v = match params.step() {
        Some(super::Params::BenchCpu(p)) => p.asked(),
        Some(super::Params::BenchMemory(p)) => p.asked(),
        Some(super::Params::BenchFileio(p)) => p.asked(),
        Some(super::Params::BenchThreads(p)) => p.asked(),
        Some(super::Params::BenchMutex(p)) => p.asked(),
        _ => params.to_value(),
    };
    let mut m = match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if let (false, Some(n)) = (m.contains_key("max_prime"), m.get("cpu_max_prime")) {
        m.insert("max_prime".into(), n.clone());
    }
    m
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
    use rtlab_engine::bench::Tally;

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
            (&cpu::PROBE, &["max_prime"]),
            (
                &memory::PROBE,
                &["block_size", "total_size", "oper", "access", "scope"],
            ),
            (
                &fileio::PROBE,
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
            (&threads::PROBE, &["yields", "locks"]),
            (&mutex::PROBE, &["mutexes", "locks", "loops"]),
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
            interval_line("cpu", &prev, &now),
            "[   1.5s] events/s 600.00"
        );
        assert_eq!(
            interval_line("fileio", &prev, &now),
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
        let old = RunParams::Recorded(serde_json::json!({
            "max_prime": 2000, "threads": 2, "time_ns": 1_000_000_000u64,
        }));
        let a = asked(&old);
        assert_eq!(
            (a["max_prime"].as_u64(), a["threads"].as_u64()),
            (Some(2000), Some(2))
        );
        let sysbench = RunParams::Recorded(serde_json::json!({
            "source": "sysbench", "cpu_max_prime": 20000, "threads": 4,
        }));
        assert_eq!(asked(&sysbench)["max_prime"], 20000);
        assert!(asked(&RunParams::Recorded(Value::Null)).is_empty());
    }
}
