//! sysbench's options as the typed parameters of rtlab's bench steps, with
//! sysbench's defaults; an option rtlab cannot honour is refused with the
//! reason, and a value the step refuses is named by sysbench's option.

use super::args::{spec_of, Invocation, Kind, Test};
use crate::error::{BadValue, UsageError};
use crate::step::bench::{cpu, fileio, memory, mutex, threads, Common};
use crate::step::value::Dur;
use crate::step::Params;
use crate::units::parse_size;
use anyhow::Result;
use std::path::PathBuf;

/// What `sysbench TEST ... run` asks of rtlab: the step, and how to report.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub test: Test,
    pub step: Params,
    /// `--percentile` (0: none).
    pub percentile: u32,
    /// `--histogram`.
    pub histogram: bool,
    /// `--verbosity` below 3: print nothing but errors.
    pub quiet: bool,
    /// `--validate`.
    pub validate: bool,
    /// `--rand-seed` (0: from the time).
    pub seed: u64,
    /// `--threads`.
    pub threads: usize,
    /// `--report-interval` in seconds (0: none).
    pub report_every: u64,
    /// `--time=0 --events=0`: only a signal (or the test's own work) ends it.
    pub endless: bool,
}

/// A long enough time for "no time limit" where only a signal ends the run
/// (`--time=0 --events=0`, as in sysbench): 100 years.
const NO_TIME_LIMIT: &str = "876000h";

fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// The options given, read by type; an option not given has sysbench's default.
pub struct Values<'a>(pub &'a Invocation);

impl Values<'_> {
    /// The text of option `name`, given or default.
    pub fn text(&self, name: &str) -> &str {
        match self.0.values.get(name) {
            Some(v) => v,
            None => spec_of(name).map_or("", |s| s.default),
        }
    }

    /// Whether option `name` was given.
    pub fn given(&self, name: &str) -> bool {
        self.0.values.contains_key(name)
    }

    fn invalid(&self, name: &str, what: &str) -> anyhow::Error {
        usage(format!(
            "invalid value for --{name}: '{}' ({what})",
            self.text(name)
        ))
    }

    /// A whole number.
    pub fn int(&self, name: &str) -> Result<u64> {
        debug_assert_eq!(spec_of(name).map(|s| s.kind), Some(Kind::Int));
        self.text(name)
            .parse()
            .map_err(|_| self.invalid(name, "a whole number, 0 or more"))
    }

    /// A size in bytes (K, M, G and T are powers of 1024, as in sysbench).
    pub fn size(&self, name: &str) -> Result<u64> {
        parse_size(self.text(name)).map_err(|e| self.invalid(name, &e))
    }

    fn float(&self, name: &str) -> Result<f64> {
        self.text(name)
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.invalid(name, "a number"))
    }

    /// A boolean (parsed already).
    pub fn on(&self, name: &str) -> bool {
        self.text(name) == "on"
    }

    /// One of `words`.
    fn word(&self, name: &str, words: &[&str]) -> Result<String> {
        let v = self.text(name);
        if words.contains(&v) {
            Ok(v.to_string())
        } else {
            Err(self.invalid(name, &format!("one of {}", words.join(", "))))
        }
    }

    /// Refuses option `name` unless its value is one of `fine`: rtlab cannot
    /// do what the others ask, for `why`.
    fn only(&self, name: &str, fine: &[&str], why: &str) -> Result<()> {
        let v = self.text(name);
        if fine.contains(&v) {
            return Ok(());
        }
        Err(usage(format!("--{name}={v}: not supported: {why}")))
    }

    /// Refuses option `name` if given at all, for `why`.
    fn never(&self, name: &str, why: &str) -> Result<()> {
        match self.given(name) {
            true => Err(usage(format!(
                "--{name}={}: not supported: {why}",
                self.text(name)
            ))),
            false => Ok(()),
        }
    }
}

/// What `rtlab bench` calls the flags sysbench names so, by test.
const FLAGS: &[(Test, &str, &str)] = &[
    (Test::Cpu, "--max-prime", "--cpu-max-prime"),
    (Test::Memory, "--block-size", "--memory-block-size"),
    (Test::Memory, "--total-size", "--memory-total-size"),
    (Test::Memory, "--scope", "--memory-scope"),
    (Test::Memory, "--hugetlb", "--memory-hugetlb"),
    (Test::Fileio, "--total-size", "--file-total-size"),
    (Test::Fileio, "--block-size", "--file-block-size"),
    (Test::Fileio, "--files", "--file-num"),
    (Test::Fileio, "--rw-ratio", "--file-rw-ratio"),
    (Test::Fileio, "--dir", "the current directory"),
    (Test::Threads, "--yields", "--thread-yields"),
    (Test::Threads, "--locks", "--thread-locks"),
    (Test::Mutex, "--mutexes", "--mutex-num"),
    (Test::Mutex, "--locks", "--mutex-locks"),
    (Test::Mutex, "--loops", "--mutex-loops"),
];

/// `text` with rtlab's flag names of test `t` replaced by sysbench's.
pub fn sysbench_names(t: Test, text: &str) -> String {
    let re = regex::Regex::new(r"--[a-z][a-z-]*").expect("a valid pattern");
    re.replace_all(text, |c: &regex::Captures| {
        let flag = &c[0];
        FLAGS
            .iter()
            .find(|(test, ours, _)| *test == t && *ours == flag)
            .map_or(flag.to_string(), |(_, _, theirs)| theirs.to_string())
    })
    .into_owned()
}

/// An error of a step, as a sysbench user reads it: its flags in sysbench's
/// names.
pub fn in_sysbench_terms(t: Test, e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<BadValue>() {
        Some(b) => usage(sysbench_names(t, &b.to_string())),
        None => e,
    }
}

/// The plan of `sysbench TEST [options] run` (and of prepare and cleanup,
/// which read the same options).
pub fn plan(t: Test, inv: &Invocation) -> Result<Plan> {
    let v = Values(inv);
    common_refusals(&v)?;
    let percentile = v.int("percentile")?;
    if percentile > 100 {
        return Err(v.invalid("percentile", "1 to 100, or 0 for none"));
    }
    let verbosity = v.int("verbosity")?;
    if verbosity > 5 {
        return Err(v.invalid("verbosity", "0 to 5"));
    }
    v.only(
        "verbosity",
        &["0", "1", "2", "3"],
        "rtlab prints sysbench's reports (3) or only errors (0-2); it has no debugging messages",
    )?;
    let validate = v.on("validate");
    if validate && t == Test::Fileio {
        return Err(usage("--validate=on: not supported for fileio: rtlab's fileio writes blocks of zeros and does not checksum them".into()));
    }
    let seed = v.int("rand-seed")?;
    if seed != 0 && matches!(t, Test::Memory | Test::Fileio | Test::Mutex) {
        return Err(usage(format!(
            "--rand-seed={seed}: not supported for {}: rtlab seeds each thread's generator from the clock",
            t.name()
        )));
    }
    let common = common(t, &v)?;
    let threads = common.threads;
    let step = match t {
        Test::Cpu => Params::BenchCpu(cpu::Params {
            max_prime: v.int("cpu-max-prime")?,
            common,
        }),
        Test::Memory => Params::BenchMemory(memory_params(&v, common)?),
        Test::Fileio => Params::BenchFileio(fileio_params(&v, common)?),
        Test::Threads => Params::BenchThreads(threads::Params {
            yields: u32::try_from(v.int("thread-yields")?)
                .map_err(|_| v.invalid("thread-yields", "at most 4294967295"))?,
            locks: v.int("thread-locks")? as usize,
            common,
        }),
        Test::Mutex => Params::BenchMutex(mutex::Params {
            mutexes: v.int("mutex-num")? as usize,
            locks: v.int("mutex-locks")?,
            loops: v.int("mutex-loops")?,
            common,
        }),
    };
    Ok(Plan {
        test: t,
        step,
        percentile: percentile as u32,
        histogram: v.on("histogram"),
        quiet: verbosity < 3,
        validate,
        seed,
        threads,
        report_every: v.int("report-interval")?,
        endless: v.int("time")? == 0 && v.int("events")? == 0,
    })
}

/// The general options rtlab cannot honour.
fn common_refusals(v: &Values) -> Result<()> {
    v.only(
        "forced-shutdown",
        &["off", "0"],
        "rtlab ends a run at --time once the events under way are done; it does not abandon them",
    )?;
    v.never(
        "thread-stack-size",
        "rtlab's worker threads have the system's default stack",
    )?;
    v.only(
        "rate",
        &["0"],
        "rtlab runs events as fast as it can; it has no rate limit",
    )?;
    v.only(
        "report-checkpoints",
        &[""],
        "rtlab prints one report at the end (and --report-interval lines)",
    )?;
    v.only("debug", &["off"], "rtlab has no debugging messages")?;
    if v.given("rand-type") {
        v.only(
            "rand-type",
            &["uniform"],
            "rtlab's random choices (memory rnd, fileio rnd*, mutex) are uniform; give --rand-type=uniform or leave it out",
        )?;
    }
    for name in [
        "rand-spec-iter",
        "rand-spec-pct",
        "rand-spec-res",
        "rand-pareto-h",
    ] {
        v.never(name, "rtlab's random choices are uniform")?;
    }
    v.never("config-file", "give the options on the command line")
}

/// Threads, time, events and the report interval. Time and events of 0 mean
/// no limit; mutex, as in sysbench, runs until its locks are taken whatever
/// --time says (its one event per thread is never cut), and memory, as in
/// sysbench, counts its own events (its share of --memory-total-size) and
/// does not take --events.
fn common(t: Test, v: &Values) -> Result<Common> {
    let threads = v.int("threads")?;
    if threads == 0 {
        return Err(v.invalid("threads", "1 or more"));
    }
    let (time, mut events) = (v.int("time")?, v.int("events")?);
    if t == Test::Memory {
        events = 0;
    }
    let time = match (t, time, events) {
        (Test::Mutex, _, _) => None,
        (_, 0, 0) => Some(NO_TIME_LIMIT.into()),
        (_, 0, _) => None,
        (_, s, _) => Some(Dur::new(format!("{s}s"))),
    };
    let interval = v.int("report-interval")?;
    Ok(Common {
        threads: usize::try_from(threads).unwrap_or(usize::MAX),
        time,
        events: (events > 0).then_some(events),
        report_interval: (interval > 0).then(|| Dur::new(format!("{interval}s"))),
        perf: Default::default(),
    })
}

fn memory_params(v: &Values, common: Common) -> Result<memory::Params> {
    let oper = v.word("memory-oper", &["read", "write", "none"])?;
    let block = v.size("memory-block-size")?;
    if block < 8 || !block.is_power_of_two() {
        return Err(v.invalid("memory-block-size", "a power of two, 8 bytes or more"));
    }
    v.size("memory-total-size")?;
    Ok(memory::Params {
        block_size: v.text("memory-block-size").into(),
        total_size: v.text("memory-total-size").into(),
        oper: match oper.as_str() {
            "read" => memory::OperArg::Read,
            "none" => memory::OperArg::None,
            _ => memory::OperArg::Write,
        },
        access: match v.word("memory-access-mode", &["seq", "rnd"])?.as_str() {
            "rnd" => memory::AccessArg::Rnd,
            _ => memory::AccessArg::Seq,
        },
        scope: match v.word("memory-scope", &["global", "local"])?.as_str() {
            "local" => memory::ScopeArg::Local,
            _ => memory::ScopeArg::Global,
        },
        mode: memory::ModeArg::Sysbench,
        hugetlb: v.on("memory-hugetlb"),
        common,
    })
}

/// The fileio modes, sysbench's names.
pub const FILE_MODES: [&str; 6] = ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];

fn fileio_params(v: &Values, common: Common) -> Result<fileio::Params> {
    v.only(
        "file-io-mode",
        &["sync"],
        "rtlab's fileio makes synchronous requests (pread/pwrite)",
    )?;
    v.only(
        "file-fsync-all",
        &["off"],
        "rtlab syncs every --file-fsync-freq requests and at the end",
    )?;
    v.only("file-fsync-mode", &["fsync"], "rtlab syncs with fsync")?;
    v.only(
        "file-merged-requests",
        &["0"],
        "rtlab makes every request on its own",
    )?;
    let mut direct = false;
    for flag in v
        .text("file-extra-flags")
        .split(',')
        .filter(|f| !f.is_empty())
    {
        match flag {
            "direct" => direct = true,
            "sync" | "dsync" => {
                return Err(usage(format!("--file-extra-flags={flag}: not supported: rtlab opens the files without O_SYNC or O_DSYNC (direct is supported)")))
            }
            _ => return Err(v.invalid("file-extra-flags", "a list of sync, dsync, direct")),
        }
    }
    // The mode matters to run only (which requires it); prepare and cleanup
    // take any.
    let mode = match v.given("file-test-mode") {
        true => v.word("file-test-mode", &FILE_MODES)?,
        false => "rndrw".into(),
    };
    v.size("file-total-size")?;
    v.size("file-block-size")?;
    let files = v.int("file-num")?;
    let rw_ratio = v.float("file-rw-ratio")?;
    Ok(fileio::Params {
        dir: PathBuf::from("."),
        total_size: v.text("file-total-size").into(),
        files: u32::try_from(files).map_err(|_| v.invalid("file-num", "at most 4294967295"))?,
        block_size: v.text("file-block-size").into(),
        mode: match mode.as_str() {
            "seqwr" => fileio::ModeArg::Seqwr,
            "seqrewr" => fileio::ModeArg::Seqrewr,
            "seqrd" => fileio::ModeArg::Seqrd,
            "rndrd" => fileio::ModeArg::Rndrd,
            "rndwr" => fileio::ModeArg::Rndwr,
            _ => fileio::ModeArg::Rndrw,
        },
        rw_ratio,
        fsync_freq: v.int("file-fsync-freq")?,
        fsync_end: v.on("file-fsync-end"),
        direct,
        common,
    })
}
