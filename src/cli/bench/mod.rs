//! `rtlab bench`: throughput micro-benchmarks with sysbench's workloads, every
//! event timed. The benches are steps (`crate::step::bench`); `bench suite` is
//! the `suite` preset run as a campaign.

mod suite;

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::error::EXIT_INTERRUPTED;
use crate::record::Run;
use crate::step::bench::{cpu, fileio, memory, mutex, threads, Interrupted};
use crate::step::Observer;
use anyhow::Result;
use clap::{Args, Subcommand};

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
    Cpu(One<cpu::Params>),
    /// Memory block reads or writes (sysbench memory).
    Memory(One<memory::Params>),
    /// File reads, writes and fsyncs in --dir: prepare, run, clean up (sysbench fileio).
    Fileio(One<fileio::Params>),
    /// Lock, sched_yield, unlock among threads (sysbench threads).
    Threads(One<threads::Params>),
    /// Contention on randomly chosen mutexes (sysbench mutex).
    Mutex(One<mutex::Params>),
    /// All five with the satellite report's parameters, within a time budget.
    Suite(suite::SuiteArgs),
}

/// One bench: its parameters, then the output and saving options.
#[derive(Debug, Args)]
struct One<P: Args> {
    #[command(flatten)]
    params: P,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab bench`.
pub fn run(ctx: &Context, a: BenchArgs) -> Result<i32> {
    match a.which {
        Which::Cpu(a) => execute(ctx, &a.out, &a.save, |o| cpu::measure(&a.params, o)),
        Which::Memory(a) => execute(ctx, &a.out, &a.save, |o| memory::measure(&a.params, o)),
        Which::Fileio(a) => execute(ctx, &a.out, &a.save, |o| fileio::measure(&a.params, o)),
        Which::Threads(a) => execute(ctx, &a.out, &a.save, |o| threads::measure(&a.params, o)),
        Which::Mutex(a) => execute(ctx, &a.out, &a.save, |o| mutex::measure(&a.params, o)),
        Which::Suite(a) => suite::run(ctx, a),
    }
}

/// Measures with `measure` (interval lines and notes through the live
/// observer), saves and prints the run. A signal while fileio prepares its
/// files is exit 130 with nothing measured.
pub fn execute(
    ctx: &Context,
    out: &OutputArgs,
    save: &SaveArgs,
    measure: impl FnOnce(&mut dyn Observer) -> Result<Run>,
) -> Result<i32> {
    let mut run =
        match common::audited(|| measure(&mut crate::cli::observer::LiveObserver::new(out))) {
            Err(e) if e.is::<Interrupted>() => {
                eprintln!("rtlab: {e}");
                return Ok(EXIT_INTERRUPTED);
            }
            other => other?,
        };
    save.apply(&mut run);
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| {
        crate::format::text::bench::render(r, unit)
    })
}
