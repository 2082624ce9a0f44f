//! `rtlab bench`: throughput micro-benchmarks with sysbench's workloads, every
//! event timed (see the engine's `bench` module for the workload semantics next
//! to sysbench's).

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::error::{bad_flag, SystemError, UsageError, EXIT_INTERRUPTED, EXIT_OK};
use crate::format::text::series::{self, Col};
use crate::format::text::table::Table;
use crate::limits;
use crate::record::{self, Counters, Run, Series, Status, Warning};
use crate::system;
use crate::units::{parse_positive_duration, parse_size, DefaultUnit, Human, TimeUnit};
use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use rtlab_engine::bench::fileio::{self, Fileio, FileioConfig, Mode, PrepareError};
use rtlab_engine::bench::memory::{self, Access, Memory, MemoryConfig, Oper, Scope};
use rtlab_engine::bench::{
    self, cpu::Cpu, mutex::MutexBench, threads::Threads, EventError, Limits, Outcome, Snapshot,
    ThreadStats, Workload,
};
use rtlab_engine::rt::{self, signals};
use rtlab_engine::sysinfo::Fingerprint;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;

/// Throughput benchmarks with sysbench's workloads, timed per event.
///
/// Each prints throughput (events/s and the workload's own rates), per-event
/// time per thread and in total (min, mean, p50, p95, p99, max, stddev), the
/// stability spreads (max−min, p95−mean, coefficient of variation), thread
/// fairness and the timing overhead per event; `--json` gives the run record.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Debug, Subcommand)]
enum Which {
    /// Prime search by trial division (sysbench cpu).
    Cpu(CpuArgs),
    /// Memory block reads or writes (sysbench memory).
    Memory(MemoryArgs),
    /// File reads, writes and fsyncs in --dir: prepare, run, clean up (sysbench fileio).
    Fileio(FileioArgs),
    /// Lock, sched_yield, unlock among threads (sysbench threads).
    Threads(ThreadsArgs),
    /// Contention on randomly chosen mutexes (sysbench mutex).
    Mutex(MutexArgs),
    /// All five with the satellite report's parameters, within a time budget.
    Suite(SuiteArgs),
}

/// Options of every bench.
#[derive(Debug, Args)]
struct Common {
    /// Worker threads.
    #[arg(short, long, default_value_t = 1, value_name = "N")]
    threads: usize,
    /// Stop after this long (e.g. 10s, 1m; a bare number is seconds). Default
    /// 10s, or no time limit when --events is given.
    #[arg(long, value_name = "DUR")]
    time: Option<String>,
    /// Stop after this many events over all threads.
    #[arg(long, value_name = "N")]
    events: Option<u64>,
    /// Print the rates of each interval of this length while running (e.g. 1s).
    #[arg(long, value_name = "DUR")]
    report_interval: Option<String>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

#[derive(Debug, Args)]
struct CpuArgs {
    /// Check the numbers below this for primality, once per event.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    max_prime: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OperArg {
    Read,
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AccessArg {
    Seq,
    Rnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScopeArg {
    Global,
    Local,
}

#[derive(Debug, Args)]
struct MemoryArgs {
    #[command(flatten)]
    opts: MemoryOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Clone, Args)]
struct MemoryOpts {
    /// Bytes moved per event (the default fits in L1; try 64M to measure RAM).
    #[arg(long, default_value = "1K", value_name = "SIZE")]
    block_size: String,
    /// Stop after moving this much over all threads.
    #[arg(long, default_value = "100G", value_name = "SIZE")]
    total_size: String,
    /// Load or store the words.
    #[arg(long, value_enum, default_value_t = OperArg::Write)]
    oper: OperArg,
    /// Word order within a block.
    #[arg(long, value_enum, default_value_t = AccessArg::Seq)]
    access: AccessArg,
    /// One block shared by all threads, or one per thread.
    #[arg(long, value_enum, default_value_t = ScopeArg::Global)]
    scope: ScopeArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Seqwr,
    Seqrewr,
    Seqrd,
    Rndrd,
    Rndwr,
    Rndrw,
}

#[derive(Debug, Args)]
struct FileioArgs {
    #[command(flatten)]
    opts: FileioOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Clone, Args)]
struct FileioOpts {
    /// Directory for the test files (e.g. a USB stick's mount point); they go in
    /// a private subdirectory that is always removed.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// Size of the whole file set.
    #[arg(long, default_value = "2G", value_name = "SIZE")]
    total_size: String,
    /// Number of files.
    #[arg(long, default_value_t = 128, value_name = "N")]
    files: u32,
    /// Bytes per request.
    #[arg(long, default_value = "16K", value_name = "SIZE")]
    block_size: String,
    /// Test mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Rndrw)]
    mode: ModeArg,
    /// Reads per write in rndrw.
    #[arg(long, default_value_t = 1.5, value_name = "RATIO")]
    rw_ratio: f64,
    /// fsync every N requests once something was written (0: never).
    #[arg(long, default_value_t = 100, value_name = "N")]
    fsync_freq: u64,
    /// fsync all files at the end (in the timed window); --fsync-end=false to skip.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    fsync_end: bool,
    /// Open the files with O_DIRECT (bypass the page cache).
    #[arg(long)]
    direct: bool,
}

#[derive(Debug, Args)]
struct ThreadsArgs {
    /// Lock/yield/unlock rounds per event.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    yields: u32,
    /// Number of mutexes the threads share.
    #[arg(long, default_value_t = 8, value_name = "N")]
    locks: usize,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
struct MutexArgs {
    /// Number of mutexes.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    mutexes: usize,
    /// Locks taken by each thread.
    #[arg(long, default_value_t = 50_000, value_name = "N")]
    locks: u64,
    /// Empty-loop iterations before each lock.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    loops: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
struct SuiteArgs {
    /// Time budget for the whole suite, split evenly over the five benches
    /// (fileio's preparing comes on top).
    #[arg(long, default_value = "60s", value_name = "DUR")]
    time: String,
    /// Directory for the fileio part.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// fileio set size (the satellite report used 3G).
    #[arg(long, default_value = "3G", value_name = "SIZE")]
    fileio_size: String,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// When to stop, and how often to report.
#[derive(Debug, Clone, Copy)]
struct Lim {
    limits: Limits,
    interval: Duration,
}

const DEFAULT_TIME_NS: u64 = 10_000_000_000;

impl Common {
    /// The limits; `default_time` applies when neither --time nor --events is given.
    fn lim(&self, default_time: u64) -> Result<Lim> {
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
        Ok(Lim {
            limits: Limits {
                threads: self.threads,
                time_ns,
                events: self.events.unwrap_or(0),
            },
            interval,
        })
    }
}

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
fn bytes(n: u64) -> String {
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

/// A signal stopped the work before anything was measured (fileio's preparing):
/// nothing to print or save, exit 130.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "interrupted while preparing the fileio files; they were removed, nothing was measured",
        )
    }
}

impl std::error::Error for Interrupted {}

/// What every bench run shares while it is built.
struct Env<'a> {
    fp: &'a Fingerprint,
    save: &'a SaveArgs,
    stop: &'static AtomicBool,
    /// Interval lines go to stderr when stdout carries JSON.
    lines_to_stderr: bool,
}

/// A bench run before kind-specific metrics: the record and the raw outcome.
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

/// Prints one interval line: the rates since the previous line.
fn interval_line(kind: &str, prev: &Snapshot, now: &Snapshot) -> String {
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

/// A `bench.<kind>` run that measured nothing yet: label and tags as asked, this
/// system's fingerprint, rtlab's version and command line.
fn new_run(env: &Env, kind: &str, started_at: String, params: serde_json::Value) -> Run {
    env.save
        .new_run(&format!("bench.{kind}"), env.fp.clone(), started_at, params)
}

/// Runs a workload and builds its record with the metrics every bench has.
fn measure<W: Workload>(
    env: &Env,
    kind: &str,
    w: &W,
    lim: Lim,
    params: serde_json::Value,
    warnings: Vec<Warning>,
) -> Measured {
    let overhead = bench::timing_overhead();
    let started_at = record::now_rfc3339();
    let mut prev = Snapshot::default();
    let to_stderr = env.lines_to_stderr;
    let outcome = bench::run(w, lim.limits, env.stop, lim.interval, &mut |snap| {
        let line = interval_line(kind, &prev, snap);
        prev = *snap;
        if to_stderr {
            eprintln!("{line}");
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    });
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
    let mut warnings = warnings;
    warnings.extend(system::fingerprint_warnings(env.fp));
    let mut run = new_run(env, kind, started_at, params);
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
    run.warnings = warnings;
    Measured {
        run,
        outcome,
        total,
    }
}

fn limit_params(lim: &Lim) -> serde_json::Value {
    json!({
        "threads": lim.limits.threads,
        "time_ns": lim.limits.time_ns,
        "events": lim.limits.events,
        "report_interval_ns": lim.interval.as_nanos() as u64,
    })
}

fn with_limits(mut params: serde_json::Value, lim: &Lim) -> serde_json::Value {
    if let (Some(p), serde_json::Value::Object(l)) = (params.as_object_mut(), limit_params(lim)) {
        p.extend(l);
    }
    params
}

/// Sets `name` to `count / total_time_s` (the record's own figures).
fn rate(run: &mut Run, name: &str, count: f64) {
    let secs = run.metrics["total_time_s"];
    if secs > 0.0 {
        run.metrics.insert(name.to_string(), count / secs);
    }
}

// ---- the five benches ----

fn run_cpu(env: &Env, max_prime: u64, lim: Lim) -> Result<Run> {
    if max_prime < 3 {
        return Err(bad_flag(
            "--max-prime",
            format!("{max_prime} leaves no number to check; give 3 or more (sysbench's default is 10000)"),
        ));
    }
    let w = Cpu { max_prime };
    let params = with_limits(json!({ "max_prime": max_prime }), &lim);
    let mut m = measure(env, "cpu", &w, lim, params, Vec::new());
    if m.total.events() > 0 {
        let primes = m.total.tally.ops as f64 / m.total.events() as f64;
        m.run.metrics.insert("primes".into(), primes);
    }
    Ok(m.run)
}

#[derive(Debug, Clone, Copy)]
struct MemoryParams {
    cfg: MemoryConfig,
}

fn memory_params(a: &MemoryOpts) -> Result<MemoryParams> {
    let block_size = size_flag("--block-size", &a.block_size)?;
    if block_size % memory::WORD != 0 {
        return Err(bad_flag(
            "--block-size",
            format!(
                "{} is not a multiple of the {}-byte word; use e.g. 1K or 64M",
                a.block_size,
                memory::WORD
            ),
        ));
    }
    let total_size = size_flag("--total-size", &a.total_size)?;
    Ok(MemoryParams {
        cfg: MemoryConfig {
            block_size,
            total_size,
            oper: match a.oper {
                OperArg::Read => Oper::Read,
                OperArg::Write => Oper::Write,
            },
            access: match a.access {
                AccessArg::Seq => Access::Seq,
                AccessArg::Rnd => Access::Rnd,
            },
            scope: match a.scope {
                ScopeArg::Global => Scope::Global,
                ScopeArg::Local => Scope::Local,
            },
        },
    })
}

/// Memory the blocks take: one block (global scope) or one per thread.
fn memory_need(c: &MemoryConfig, threads: usize) -> (u64, String) {
    match c.scope {
        Scope::Global => (c.block_size, format!("one {} block", bytes(c.block_size))),
        Scope::Local => (
            c.block_size.saturating_mul(threads as u64),
            format!(
                "{threads} thread(s) × one {} block (--scope local)",
                bytes(c.block_size)
            ),
        ),
    }
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

fn run_memory(env: &Env, p: MemoryParams, lim: Lim) -> Result<Run> {
    let c = p.cfg;
    let threads = lim.limits.threads as u64;
    if c.total_size / c.block_size < threads {
        return Err(bad_flag(
            "--total-size",
            format!(
                "{} is less than one {} block per thread ({threads} threads); raise --total-size",
                bytes(c.total_size),
                bytes(c.block_size)
            ),
        ));
    }
    let mut warnings = Vec::new();
    let caches = memory::caches();
    if let Some(cache) = memory::fits_in(&caches, c.block_size) {
        warnings.push(Warning::new(
            "in_cache",
            format!(
                "the {} block fits in the {} cache ({}): this measures the cache, not RAM; --block-size {} fits in no cache",
                bytes(c.block_size),
                cache.name(),
                bytes(cache.size),
                bytes(memory::block_beyond_caches(&caches)).replace("iB", ""),
            ),
        ));
    }
    let w = Memory::new(c, lim.limits.threads).map_err(|e| bad_flag("--block-size", e))?;
    let params = with_limits(
        json!({
            "block_size": c.block_size,
            "total_size": c.total_size,
            "oper": format!("{:?}", c.oper).to_lowercase(),
            "access": format!("{:?}", c.access).to_lowercase(),
            "scope": format!("{:?}", c.scope).to_lowercase(),
        }),
        &lim,
    );
    let mut m = measure(env, "memory", &w, lim, params, warnings);
    let t = m.total.tally;
    let moved = (t.bytes_read + t.bytes_written) as f64;
    m.run.metrics.insert("total_mib".into(), moved / MIB);
    rate(&mut m.run, "mib_per_s", moved / MIB);
    rate(&mut m.run, "ops_per_s", t.ops as f64);
    Ok(m.run)
}

#[derive(Debug, Clone)]
struct FileioParams {
    dir: PathBuf,
    cfg: FileioConfig,
    /// How the caller spells --total-size, for messages.
    size_flag: String,
}

/// Validates the fileio options; `size_flag_name` is how the caller spells
/// --total-size.
fn fileio_params(o: &FileioOpts, size_flag_name: &str) -> Result<FileioParams> {
    let (dir, files, mode) = (&o.dir, o.files, o.mode);
    let (total_text, block_text, rw_ratio) = (&o.total_size, &o.block_size, o.rw_ratio);
    if !dir.is_dir() {
        return Err(bad_flag(
            "--dir",
            format!(
                "{} is not a directory; create it or mount the device there first",
                dir.display()
            ),
        ));
    }
    let total = size_flag(size_flag_name, total_text)?;
    let block = size_flag("--block-size", block_text)?;
    if files == 0 {
        return Err(bad_flag(
            "--files",
            "0 files leaves nothing to test; give 1 or more",
        ));
    }
    if o.direct && block % 512 != 0 {
        return Err(bad_flag(
            "--block-size",
            format!("{block_text} is not a multiple of 512 bytes, which --direct needs"),
        ));
    }
    let file_size = total / u64::from(files) / block * block;
    if file_size == 0 {
        return Err(bad_flag(
            size_flag_name,
            format!(
                "{total_text} is less than --files {files} × --block-size {block_text}; raise --total-size or lower --files"
            ),
        ));
    }
    if !(rw_ratio.is_finite() && rw_ratio > 0.0) {
        return Err(bad_flag(
            "--rw-ratio",
            format!("{rw_ratio} must be a number above 0 (reads per write, e.g. 1.5)"),
        ));
    }
    Ok(FileioParams {
        dir: dir.to_path_buf(),
        cfg: FileioConfig {
            files,
            file_size,
            block_size: block,
            mode: match mode {
                ModeArg::Seqwr => Mode::SeqWr,
                ModeArg::Seqrewr => Mode::SeqRewr,
                ModeArg::Seqrd => Mode::SeqRd,
                ModeArg::Rndrd => Mode::RndRd,
                ModeArg::Rndwr => Mode::RndWr,
                ModeArg::Rndrw => Mode::RndRw,
            },
            rw_ratio,
            fsync_freq: o.fsync_freq,
            fsync_end: o.fsync_end,
            direct: o.direct,
        },
        size_flag: size_flag_name.to_string(),
    })
}

/// Refuses a directory that is read-only or too small, naming the numbers.
fn check_space(p: &FileioParams) -> Result<()> {
    let flag = &p.size_flag;
    let need = p.cfg.total_size();
    let sp = fileio::space(&p.dir).map_err(|e| {
        SystemError(format!(
            "--dir: cannot inspect {}: {}",
            p.dir.display(),
            rtlab_engine::rt::errno_text(e)
        ))
    })?;
    if sp.read_only {
        return Err(SystemError(format!(
            "--dir: {} is on a read-only file system; remount it read-write or choose another --dir",
            p.dir.display()
        ))
        .into());
    }
    let margin = fileio::space_margin(need);
    if need.saturating_add(margin) > sp.available {
        return Err(UsageError(format!(
            "{flag}: {} does not fit in {}: {} available, {} needed with a {} margin; lower {flag} or choose another --dir",
            bytes(need),
            p.dir.display(),
            bytes(sp.available),
            bytes(need + margin),
            bytes(margin),
        ))
        .into());
    }
    Ok(())
}

fn io_failure(dir: &Path, e: EventError) -> anyhow::Error {
    let what = rt::errno_text(e.errno);
    let hint = match e.errno {
        rt::ENOSPC => "the file system filled up; lower --total-size or free space",
        rt::EROFS => "the file system is read-only; remount it read-write or choose another --dir",
        rt::EACCES | rt::EPERM => "no permission to write there; choose another --dir or run as a user who may",
        rt::EINVAL => "the file system refused the request (with --direct: it does not support O_DIRECT; drop --direct)",
        _ => "check the device (dmesg) and the directory",
    };
    SystemError(format!(
        "fileio: {} of test_file.{} in {} failed: {what}; {hint}. The test files were removed.",
        e.op.name(),
        e.file,
        dir.display()
    ))
    .into()
}

fn run_fileio(env: &Env, p: &FileioParams, lim: Lim, quiet: bool) -> Result<Run> {
    check_space(p)?;
    let c = p.cfg;
    let prep_clock = std::time::Instant::now();
    if !quiet && std::io::stderr().is_terminal() {
        eprintln!(
            "preparing {} files of {} ({}) in {} ...",
            c.files,
            bytes(c.file_size),
            bytes(c.total_size()),
            p.dir.display()
        );
    }
    let set = match fileio::prepare(&c, &p.dir, env.stop) {
        Ok(s) => s,
        Err(PrepareError::Io(e)) => return Err(io_failure(&p.dir, e)),
        Err(PrepareError::Interrupted) => return Err(Interrupted.into()),
    };
    let prepare_s = prep_clock.elapsed().as_secs_f64();
    let w = Fileio::open(c, &set).map_err(|e| io_failure(&p.dir, e))?;
    let params = with_limits(
        json!({
            "dir": p.dir.display().to_string(),
            "total_size": c.total_size(),
            "files": c.files,
            "file_size": c.file_size,
            "block_size": c.block_size,
            "mode": c.mode.name(),
            "rw_ratio": c.rw_ratio,
            "fsync_freq": c.fsync_freq,
            "fsync_end": c.fsync_end,
            "direct": c.direct,
        }),
        &lim,
    );
    let mut m = measure(env, "fileio", &w, lim, params, Vec::new());
    drop(w);
    drop(set);
    if let Some(e) = m.outcome.error {
        return Err(io_failure(&p.dir, e));
    }
    let t = m.total.tally;
    m.run.metrics.insert("prepare_time_s".into(), prepare_s);
    m.run.metrics.insert("total_reads".into(), t.reads as f64);
    m.run.metrics.insert("total_writes".into(), t.writes as f64);
    m.run.metrics.insert("total_fsyncs".into(), t.fsyncs as f64);
    rate(&mut m.run, "reads_per_s", t.reads as f64);
    rate(&mut m.run, "writes_per_s", t.writes as f64);
    rate(&mut m.run, "fsyncs_per_s", t.fsyncs as f64);
    rate(&mut m.run, "read_mib_per_s", t.bytes_read as f64 / MIB);
    rate(
        &mut m.run,
        "written_mib_per_s",
        t.bytes_written as f64 / MIB,
    );
    Ok(m.run)
}

fn run_threads(env: &Env, yields: u32, locks: usize, lim: Lim) -> Result<Run> {
    check_mutexes("--locks", locks)?;
    if yields == 0 {
        return Err(bad_flag(
            "--yields",
            "0 yields makes empty events; give 1 or more",
        ));
    }
    if locks == 0 {
        return Err(bad_flag("--locks", "give at least 1 mutex"));
    }
    let w = Threads::new(yields, locks);
    let params = with_limits(json!({ "yields": yields, "locks": locks }), &lim);
    let mut m = measure(env, "threads", &w, lim, params, Vec::new());
    let ops = m.total.tally.ops as f64;
    m.run.metrics.insert("total_ops".into(), ops);
    rate(&mut m.run, "ops_per_s", ops);
    Ok(m.run)
}

fn run_mutex(env: &Env, mutexes: usize, locks: u64, loops: u64, lim: Lim) -> Result<Run> {
    if mutexes == 0 {
        return Err(bad_flag("--mutexes", "give at least 1 mutex"));
    }
    check_mutexes("--mutexes", mutexes)?;
    if locks == 0 {
        return Err(bad_flag(
            "--locks",
            "0 locks measures nothing; give 1 or more",
        ));
    }
    let w = MutexBench::new(mutexes, locks, loops);
    let params = with_limits(
        json!({ "mutexes": mutexes, "locks": locks, "loops": loops }),
        &lim,
    );
    let mut m = measure(env, "mutex", &w, lim, params, Vec::new());
    let taken = m.total.tally.ops;
    let planned = locks.saturating_mul(lim.limits.threads as u64);
    debug_assert_eq!(w.increments(), taken);
    m.run.metrics.insert("total_ops".into(), taken as f64);
    rate(&mut m.run, "ops_per_s", taken as f64);
    if taken < planned && m.run.status == Status::Complete {
        m.run.warnings.push(Warning::new(
            "cut_short",
            format!(
                "the time limit ended the run after {taken} of {planned} locks: compare ops_per_s, not total_time_s"
            ),
        ));
    }
    Ok(m.run)
}

// ---- output ----

fn metric_cell(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// What the parameters say, in one line.
fn describe(run: &Run) -> String {
    let p = &run.params.to_value();
    let u = |k: &str| p[k].as_u64().unwrap_or(0);
    let s = |k: &str| p[k].as_str().unwrap_or("?").to_string();
    let what = match run.kind.as_str() {
        "bench.cpu" => format!("max prime {}", u("max_prime")),
        "bench.memory" => format!(
            "block {}, {} {} {}, total {}",
            bytes(u("block_size")),
            s("access"),
            s("oper"),
            s("scope"),
            bytes(u("total_size"))
        ),
        "bench.fileio" => format!(
            "{} in {}: {} files × {}, block {}{}",
            s("mode"),
            s("dir"),
            u("files"),
            bytes(u("file_size")),
            bytes(u("block_size")),
            if p["direct"].as_bool() == Some(true) {
                ", O_DIRECT"
            } else {
                ""
            }
        ),
        "bench.threads" => format!("{} yields, {} locks", u("yields"), u("locks")),
        "bench.mutex" => format!(
            "{} mutexes, {} locks × {} loops",
            u("mutexes"),
            u("locks"),
            u("loops")
        ),
        _ => String::new(),
    };
    format!("{what}, {} thread(s)", u("threads"))
}

fn render(run: &Run, unit: TimeUnit) -> String {
    let mut out = format!(
        "rtlab {}  {}  [{}]\n{}\n{} events in {}; timing overhead {:.0}ns per event\n\n",
        run.kind.replace('.', " "),
        run.label,
        run.status.name(),
        describe(run),
        run.metrics.get("total_events").copied().unwrap_or(0.0),
        Human(run.duration_ns),
        run.metrics
            .get("timing_overhead_ns")
            .copied()
            .unwrap_or(0.0),
    );
    let mut t = Table::new(&["metric", "value"]);
    for (k, v) in &run.metrics {
        t.row(vec![k.clone(), metric_cell(*v)]);
    }
    out.push_str(&t.render());
    out.push_str(&format!("\nper-event time ({})\n", unit.symbol()));
    let cols = [
        Col::Count("events"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::P95,
        Col::P99,
        Col::Max,
        Col::Stddev,
        Col::MaxMin,
        Col::P95Mean,
        Col::Cv,
    ];
    out.push_str(&series::table(
        run.series.iter().chain(run.total.as_ref()),
        "thread",
        &cols,
        unit,
    ));
    for w in &run.warnings {
        out.push_str(&format!("warning ({}): {}\n", w.code, w.message));
    }
    out
}

// ---- entry points ----

fn env<'a>(fp: &'a Fingerprint, save: &'a SaveArgs, out: &OutputArgs) -> Env<'a> {
    Env {
        fp,
        save,
        stop: signals::install(),
        lines_to_stderr: out.json,
    }
}

fn single(ctx: &Context, c: &Common, run: impl FnOnce(&Env, Lim) -> Result<Run>) -> Result<i32> {
    single_with_default(ctx, c, DEFAULT_TIME_NS, run)
}

fn single_with_default(
    ctx: &Context,
    c: &Common,
    default_time: u64,
    run: impl FnOnce(&Env, Lim) -> Result<Run>,
) -> Result<i32> {
    let lim = c.lim(default_time)?;
    let fp = system::fingerprint();
    let e = env(&fp, &c.save, &c.out);
    let mut r = run(&e, lim)?;
    let unit = c.out.unit;
    common::finish(ctx, &c.save, &c.out, &mut r, |r| render(r, unit))
}

/// Runs `rtlab bench`.
pub fn run(ctx: &Context, a: BenchArgs) -> Result<i32> {
    match dispatch(ctx, a) {
        Err(e) if e.is::<Interrupted>() => {
            eprintln!("rtlab: {e}");
            Ok(EXIT_INTERRUPTED)
        }
        other => other,
    }
}

fn dispatch(ctx: &Context, a: BenchArgs) -> Result<i32> {
    match a.which {
        Which::Cpu(a) => single(ctx, &a.common, |e, l| run_cpu(e, a.max_prime, l)),
        Which::Memory(a) => {
            let p = memory_params(&a.opts)?;
            let (bytes, what) = memory_need(&p.cfg, a.common.threads);
            let need = limits::Need {
                bytes,
                what: &what,
                fix: "give a smaller --block-size (or fewer --threads with --scope local)",
            };
            limits::check_memory("--block-size", &need, limits::memory_budget())?;
            single(ctx, &a.common, |e, l| run_memory(e, p, l))
        }
        Which::Fileio(a) => {
            let p = fileio_params(&a.opts, "--total-size")?;
            let threads = a.common.threads;
            let what = format!(
                "{threads} thread(s) × one {} buffer",
                bytes(p.cfg.block_size)
            );
            let need = limits::Need {
                bytes: p.cfg.block_size.saturating_mul(threads as u64),
                what: &what,
                fix: "give a smaller --block-size or fewer --threads",
            };
            limits::check_memory("--block-size", &need, limits::memory_budget())?;
            let quiet = a.common.out.quiet;
            single(ctx, &a.common, |e, l| run_fileio(e, &p, l, quiet))
        }
        Which::Threads(a) => single(ctx, &a.common, |e, l| run_threads(e, a.yields, a.locks, l)),
        // sysbench's mutex test runs to its end; --time only caps it.
        Which::Mutex(a) => single_with_default(ctx, &a.common, 0, |e, l| {
            run_mutex(e, a.mutexes, a.locks, a.loops, l)
        }),
        Which::Suite(a) => suite(ctx, a),
    }
}

/// The satellite report's five benches, each given a fifth of the budget.
fn suite(ctx: &Context, a: SuiteArgs) -> Result<i32> {
    let budget = parse_positive_duration(&a.time, DefaultUnit::Seconds)
        .map_err(|e| bad_flag("--time", e))?;
    let part = (budget / 5).max(1);
    let fio = fileio_params(
        &FileioOpts {
            dir: a.dir.clone(),
            total_size: a.fileio_size.clone(),
            files: 128,
            block_size: "16K".into(),
            mode: ModeArg::Rndrw,
            rw_ratio: 1.5,
            fsync_freq: 100,
            fsync_end: true,
            direct: false,
        },
        "--fileio-size",
    )?;
    check_space(&fio)?;
    let lim = |threads: usize| Lim {
        limits: Limits {
            threads,
            time_ns: part,
            events: 0,
        },
        interval: Duration::ZERO,
    };
    let fp = system::fingerprint();
    let mut save = a.save.clone();
    save.tags.push("suite".into());
    let e = env(&fp, &save, &a.out);
    let mem = memory_params(&MemoryOpts {
        block_size: "1K".into(),
        total_size: "100G".into(),
        oper: OperArg::Write,
        access: AccessArg::Seq,
        scope: ScopeArg::Global,
    })?;
    let parts: [&dyn Fn() -> Result<Run>; 5] = [
        &|| run_cpu(&e, 2000, lim(1)),
        &|| run_memory(&e, mem, lim(1)),
        &|| run_fileio(&e, &fio, lim(16), a.out.quiet),
        &|| run_threads(&e, 1000, 1, lim(1)),
        &|| run_mutex(&e, 4096, 50_000, 10_000, lim(64)),
    ];
    // A part that fails (fileio out of space, Ctrl-C while preparing) ends the
    // suite, but the parts before it are still saved and printed.
    let mut runs = Vec::new();
    let mut failure = None;
    for p in parts {
        if e.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        match p() {
            Ok(r) => {
                let interrupted = r.status == Status::Interrupted;
                runs.push(r);
                if interrupted {
                    break;
                }
            }
            Err(err) => {
                failure = Some(err);
                break;
            }
        }
    }
    let mut saved = None;
    if !save.no_save {
        let mut store = ctx.open_store()?;
        for r in &mut runs {
            r.id = Some(store.save(r)?);
        }
        saved = Some(store.path().display().to_string());
    }
    let text = if a.out.json {
        let doc = json!({ "format": record::FORMAT, "kind": "bench.suite", "runs": runs });
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        render_suite(&runs, a.out.unit)
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if let Some(path) = saved {
        let ids: Vec<String> = runs
            .iter()
            .filter_map(|r| r.id)
            .map(|i| i.to_string())
            .collect();
        eprintln!("saved as runs {} in {path}", ids.join(", "));
    }
    if let Some(err) = failure {
        return Err(err);
    }
    Ok(if runs.iter().any(|r| r.status == Status::Interrupted) {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

fn render_suite(runs: &[Run], unit: TimeUnit) -> String {
    let mut t = Table::new(&[
        "bench",
        "status",
        "events/s",
        "throughput",
        "min",
        "mean",
        "p95",
        "max",
        "max-min",
        "p95-mean",
        "cv",
    ]);
    let c = |ns: f64| unit.cell(ns);
    for r in runs {
        let get = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
        let throughput = match r.kind.as_str() {
            "bench.memory" => format!("{:.1} MiB/s", get("mib_per_s")),
            "bench.fileio" => format!(
                "{:.0} r/s {:.0} w/s",
                get("reads_per_s"),
                get("writes_per_s")
            ),
            "bench.mutex" => format!("{:.0} locks/s", get("ops_per_s")),
            "bench.threads" => format!("{:.0} locks/s", get("ops_per_s")),
            _ => format!("{:.0} primes", get("primes")),
        };
        let m = r.total.as_ref().map(|t| t.summary).unwrap_or_default();
        t.row(vec![
            r.kind.trim_start_matches("bench.").to_string(),
            r.status.name().to_string(),
            format!("{:.2}", get("events_per_s")),
            throughput,
            c(m.min_ns as f64),
            c(m.mean_ns),
            c(m.p95_ns as f64),
            c(m.max_ns as f64),
            c(m.spread_max_min() as f64),
            c(m.spread_p95_mean()),
            format!("{:.3}", get("cv")),
        ]);
    }
    let mut out = format!(
        "rtlab bench suite  {}\nper-event time in {}; each bench's parameters are in its saved run\n\n",
        runs.first().map(|r| r.label.as_str()).unwrap_or(""),
        unit.symbol()
    );
    out.push_str(&t.render());
    // The same warning (the VM, the governor) comes with every run: print it once,
    // naming the benches when not all of them have it.
    let mut seen: Vec<(&Warning, Vec<&str>)> = Vec::new();
    for r in runs {
        let name = r.kind.trim_start_matches("bench.");
        for w in &r.warnings {
            match seen.iter_mut().find(|(v, _)| *v == w) {
                Some((_, names)) => names.push(name),
                None => seen.push((w, vec![name])),
            }
        }
    }
    for (w, names) in seen {
        let which = if names.len() == runs.len() {
            String::new()
        } else {
            format!(" [{}]", names.join(", "))
        };
        out.push_str(&format!("warning ({}){which}: {}\n", w.code, w.message));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::bench::Tally;

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
            tally: Tally::default(),
        };
        let now = Snapshot {
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
}
