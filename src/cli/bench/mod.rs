//! `rtlab bench`: throughput micro-benchmarks with sysbench's workloads, every
//! event timed. The benches are steps (`crate::step::bench`); `bench suite` is
//! the `suite` preset run as a campaign.

mod suite;

use super::common::Context;
use super::probe::ProbeArgs;
use crate::step::bench::{cpu, fileio, memory, mutex, threads};
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
    Cpu(ProbeArgs<cpu::Params>),
    /// Memory block reads or writes (sysbench memory).
    #[command(after_long_help = "Examples:
  rtlab bench memory
  rtlab bench memory --block-size 64M --oper read --access rnd
  rtlab bench memory --threads 2 --total-size 10G --time 30s")]
    Memory(ProbeArgs<memory::Params>),
    /// File reads, writes and fsyncs in --dir: prepare, run, clean up (sysbench fileio).
    #[command(after_long_help = "Examples:
  rtlab bench fileio --dir /var/tmp --total-size 512M --time 30s
  rtlab bench fileio --dir /mnt/usb --mode seqwr --direct")]
    Fileio(ProbeArgs<fileio::Params>),
    /// Lock, sched_yield, unlock among threads (sysbench threads).
    #[command(after_long_help = "Examples:
  rtlab bench threads
  rtlab bench threads --threads 4 --locks 16 --time 10s")]
    Threads(ProbeArgs<threads::Params>),
    /// Contention on randomly chosen mutexes (sysbench mutex).
    #[command(after_long_help = "Examples:
  rtlab bench mutex
  rtlab bench mutex --threads 2 --mutexes 1024 --locks 20000")]
    Mutex(ProbeArgs<mutex::Params>),
    /// All five with the satellite report's parameters, within a time budget.
    #[command(after_long_help = "Examples:
  rtlab bench suite
  rtlab bench suite --time 5m --dir /mnt/usb --fileio-size 1G --label stock")]
    Suite(suite::SuiteArgs),
}

/// Runs `rtlab bench`.
pub fn run(ctx: &Context, a: BenchArgs) -> Result<i32> {
    match a.which {
        Which::Cpu(a) => a.run(ctx),
        Which::Memory(a) => a.run(ctx),
        Which::Fileio(a) => a.run(ctx),
        Which::Threads(a) => a.run(ctx),
        Which::Mutex(a) => a.run(ctx),
        Which::Suite(a) => suite::run(ctx, a),
    }
}
