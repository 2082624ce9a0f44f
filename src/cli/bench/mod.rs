//! `rtlab bench`: throughput micro-benchmarks with sysbench's workloads, every
//! event timed. The benches are steps (`crate::step::bench`); `bench suite` is
//! the `suite` preset run as a campaign.

mod suite;

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::cli::observer::LiveObserver;
use crate::error::EXIT_INTERRUPTED;
use crate::record::Run;
use crate::step::bench::{cpu, fileio, memory, mutex, threads, Interrupted};
use crate::step::{Observer, Step};
use anyhow::Result;
use clap::{Args, Subcommand};

/// Throughput benchmarks with sysbench's workloads, timed per event.
///
/// Each prints throughput (events/s and the workload's own rates), per-event
/// time per thread and in total (min, mean, p50, p95, p99, max, stddev), the
/// stability spreads (max−min, p95−mean, coefficient of variation), thread
/// fairness and the timing overhead per event; `--json` gives the run record.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab bench cpu --threads 2 --time 10s
  rtlab bench memory --block-size 64M --json
  rtlab bench suite --time 60s --dir /mnt/usb")]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Debug, Subcommand)]
enum Which {
    /// Prime search by trial division (sysbench cpu).
    #[command(after_long_help = "Examples:
  rtlab bench cpu
  rtlab bench cpu --threads 2 --max-prime 20000 --time 30s
  rtlab bench cpu --events 10000 --report-interval 1s --json")]
    Cpu(One<cpu::Params>),
    /// Memory block reads or writes (sysbench memory).
    #[command(after_long_help = "Examples:
  rtlab bench memory
  rtlab bench memory --block-size 64M --oper read --access rnd
  rtlab bench memory --threads 2 --total-size 10G --time 30s")]
    Memory(One<memory::Params>),
    /// File reads, writes and fsyncs in --dir: prepare, run, clean up (sysbench fileio).
    #[command(after_long_help = "Examples:
  rtlab bench fileio --dir /var/tmp --total-size 512M --time 30s
  rtlab bench fileio --dir /mnt/usb --mode seqwr --direct")]
    Fileio(One<fileio::Params>),
    /// Lock, sched_yield, unlock among threads (sysbench threads).
    #[command(after_long_help = "Examples:
  rtlab bench threads
  rtlab bench threads --threads 4 --locks 16 --time 10s")]
    Threads(One<threads::Params>),
    /// Contention on randomly chosen mutexes (sysbench mutex).
    #[command(after_long_help = "Examples:
  rtlab bench mutex
  rtlab bench mutex --threads 2 --mutexes 1024 --locks 20000")]
    Mutex(One<mutex::Params>),
    /// All five with the satellite report's parameters, within a time budget.
    #[command(after_long_help = "Examples:
  rtlab bench suite
  rtlab bench suite --time 5m --dir /mnt/usb --fileio-size 1G --label stock")]
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
        Which::Cpu(a) => a.timed("bench cpu", |o| cpu::measure(&a.params, o), ctx),
        Which::Memory(a) => a.timed("bench memory", |o| memory::measure(&a.params, o), ctx),
        Which::Fileio(a) => a.timed("bench fileio", |o| fileio::measure(&a.params, o), ctx),
        Which::Threads(a) => a.timed("bench threads", |o| threads::measure(&a.params, o), ctx),
        Which::Mutex(a) => a.timed("bench mutex", |o| mutex::measure(&a.params, o), ctx),
        Which::Suite(a) => suite::run(ctx, a),
    }
}

impl<P: Args + Step> One<P> {
    /// Measures with `measure` as [`execute`] does, with a progress line.
    fn timed(
        &self,
        what: &str,
        measure: impl FnOnce(&mut dyn Observer) -> Result<Run>,
        ctx: &Context,
    ) -> Result<i32> {
        let live = LiveObserver::new(&self.out).with_progress(what, self.params.planned_ns());
        measured(ctx, &self.out, &self.save, live, measure)
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
    measured(ctx, out, save, LiveObserver::new(out), measure)
}

fn measured(
    ctx: &Context,
    out: &OutputArgs,
    save: &SaveArgs,
    mut live: LiveObserver,
    measure: impl FnOnce(&mut dyn Observer) -> Result<Run>,
) -> Result<i32> {
    let result = common::audited(|| measure(&mut live));
    drop(live);
    let mut run = match result {
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
