//! The sysbench personality: `sysbench cpu|memory|fileio|threads|mutex
//! [options] prepare|run|cleanup|help` as sysbench 1.0 takes it (and the 0.4
//! spellings it still takes), run by rtlab's benches and printed in sysbench
//! 1.0's layout, so that scripts and parsers written for sysbench keep working
//! and `rtlab results import` reads the output back.
//!
//! A run is stored like any rtlab run, with the command line as typed, unless
//! `--no-store` comes before sysbench's own arguments or `RTLAB_NO_STORE=1`.
//! As in sysbench, the fileio files are made by `prepare` in the current
//! directory, used by `run` and removed by `cleanup`.

mod args;
mod files;
mod help;
mod histogram;
mod params;
mod report;
#[cfg(test)]
mod spellings;

use super::Session;
use crate::error::{UsageError, EXIT_FAILED};
use crate::record::{Run, Status, Warning};
use crate::step::bench::{cpu, memory, mutex, prepared, threads, Rates};
use crate::step::{Machine, Observer, Params};
use anyhow::Result;
use args::{Command, Test};
use params::{in_sysbench_terms, Plan};
use rtlab_engine::bench::Snapshot;
use std::io::Write;

/// Runs sysbench's command line `args` (the words after the program's name),
/// as `rtlab sysbench ARGS` and as rtlab called through a link named
/// `sysbench`; returns the exit code.
pub fn main(session: &Session, args: &[String]) -> Result<i32> {
    let inv = args::parse(args)?;
    for w in &inv.warnings {
        eprintln!("WARNING: {w}");
    }
    for n in &inv.notices {
        println!("WARNING: {n}");
    }
    if inv.version {
        println!(
            "sysbench {} (using rtlab {})",
            report::VERSION,
            env!("CARGO_PKG_VERSION")
        );
        return Ok(0);
    }
    let Some(test) = inv.test else {
        if inv.help {
            print!("{}", help::general());
            return Ok(0);
        }
        return Err(UsageError(
            "name a test: cpu, memory, fileio, threads or mutex (e.g. rtlab sysbench cpu --time=10 run)"
                .into(),
        )
        .into());
    };
    let command = match (inv.help, inv.command) {
        (true, _) => Command::Help,
        (false, Some(c)) => c,
        (false, None) => {
            return Err(UsageError(format!(
                "the '{0}' test requires a command argument: prepare, run, cleanup or help. See 'rtlab sysbench {0} help'",
                test.name()
            ))
            .into())
        }
    };
    if command == Command::Help {
        print!("{}", help::test(test));
        return Ok(0);
    }
    let plan = params::plan(test, &inv)?;
    match (command, test) {
        (Command::Run, _) => run(session, &plan),
        (Command::Prepare, Test::Fileio) => files::prepare(&plan),
        (Command::Cleanup, Test::Fileio) => files::cleanup(&plan),
        (c, t) => Err(UsageError(format!(
            "'{}' test does not implement the '{}' command (only fileio prepares and cleans up files)",
            t.name(),
            match c {
                Command::Prepare => "prepare",
                _ => "cleanup",
            }
        ))
        .into()),
    }
}

/// What prints the `--report-interval` lines, in sysbench's layout.
struct Lines<'a>(&'a Plan);

impl Observer for Lines<'_> {
    fn bench_interval(&mut self, _rates: Rates, prev: &Snapshot, now: &Snapshot) {
        if !self.0.quiet {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", report::interval(self.0, prev, now));
            let _ = out.flush();
        }
    }

    fn interval_percentile(&self) -> f64 {
        f64::from(self.0.percentile)
    }

    /// sysbench skips its latency histogram with `--percentile=0`.
    fn latency_histogram(&self) -> bool {
        self.0.percentile > 0
    }
}

/// `run`: every check first, then the options, the measuring with its
/// interval lines, and the report; the run is stored before the report is
/// printed.
fn run(session: &Session, plan: &Plan) -> Result<i32> {
    let t = plan.test;
    let checked = match &plan.step {
        Params::BenchFileio(p) => prepared::check(p),
        step => step.step().check(&Machine::this()),
    };
    checked.map_err(|e| in_sysbench_terms(t, e))?;
    if !plan.quiet {
        let mut out = std::io::stdout().lock();
        if plan.endless {
            let _ = writeln!(
                out,
                "WARNING: Both event and time limits are disabled, running an endless test"
            );
        }
        let _ = out.write_all(report::header(plan).as_bytes());
        let _ = out.flush();
    }
    let obs = &mut Lines(plan);
    let mut run = match &plan.step {
        Params::BenchCpu(p) => cpu::measure(p, obs),
        Params::BenchMemory(p) => memory::measure(p, obs),
        Params::BenchFileio(p) => prepared::measure(p, obs),
        Params::BenchThreads(p) => threads::measure(p, obs),
        Params::BenchMutex(p) => mutex::measure(p, obs),
        _ => unreachable!("the personality plans bench steps only"),
    }
    .map_err(|e| in_sysbench_terms(t, e))?;
    if plan.validate {
        validate(plan, &mut run);
    }
    session.save(&mut run)?;
    if !plan.quiet {
        crate::cli::common::print(&report::report(&run, plan));
    }
    Ok(run.exit_code)
}

/// `--validate`: what can be checked of a run. cpu: every event found the
/// primes below the limit; mutex: the counters add up to the locks taken.
/// sysbench checks nothing of memory and threads, nor does this. A failed
/// check is a warning of the run and exit 1.
fn validate(plan: &Plan, run: &mut Run) {
    let failed = match &plan.step {
        Params::BenchCpu(p) => {
            let want = rtlab_engine::bench::cpu::count_primes(p.max_prime) as f64;
            let got = run.metrics.get("primes").copied();
            (got.is_some_and(|g| g != want)).then(|| {
                format!(
                    "an event found {got:?} primes below {} on average, not {want}",
                    p.max_prime
                )
            })
        }
        Params::BenchMutex(p) => {
            let events = run.metrics.get("total_events").copied().unwrap_or(0.0);
            let want = events * p.locks as f64;
            let got = run.metrics.get("total_ops").copied().unwrap_or(0.0);
            (run.status == Status::Complete && got != want)
                .then(|| format!("the mutexes' counters add up to {got}, not {want}"))
        }
        _ => None,
    };
    if let Some(why) = failed {
        eprintln!("FATAL: validation failed: {why}");
        run.warnings.push(Warning::new("validation_failed", why));
        run.exit_code = EXIT_FAILED;
    }
}
