//! Command-line definitions and thin handlers, one file per subcommand.

mod audit;
mod bench;
pub mod common;
mod compare;
mod kconfig;
mod latency;
pub mod load;
mod net;
mod presets;
mod prio;
mod report;
mod reportargs;
mod results;
mod run;
mod step;
mod sysbench;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Measure, compare and tune Linux real-time behaviour.
///
/// Exit codes: 0 ok; 1 a requirement or threshold failed; 2 usage or input error;
/// 3 the system refused (permissions, missing kernel feature); 130 interrupted
/// (what was gathered is still printed and saved).
#[derive(Debug, Parser)]
#[command(name = "rtlab", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// Results database (default: $RTLAB_DB, else $XDG_DATA_HOME/rtlab/rtlab.db).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. Parsed once per run, so the size of the largest variant does
/// not matter.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run a campaign: the quick check of this machine, a preset or a scenario file.
    Run(run::RunArgs),
    /// List or print the built-in scenarios.
    Presets(presets::PresetsArgs),
    /// Timer wake-up latency of periodic RT threads (what cyclictest measures).
    Latency(latency::LatencyArgs),
    /// The results store: list, show, delete, tag, label, export, import.
    Results(results::ResultsArgs),
    /// Compare stored runs side by side; verdicts against deadlines (--require).
    Compare(compare::CompareArgs),
    /// Report one stored run in depth, as text or HTML.
    Report(report::ReportArgs),
    /// Load generators: cpu, vm, memcopy, io, fswalk, procfs, msg, fork, timer, net,
    /// exec, and the dohell mix (--list shows them all).
    Load(load::LoadCmdArgs),
    /// One step of a campaign (started by `rtlab run`).
    #[command(name = "__step", hide = true)]
    Step(step::StepArgs),
    /// A load worker process (started by rtlab itself).
    #[command(name = "__load-worker", hide = true)]
    LoadWorker(load::WorkerArgs),
    /// Check the system's real-time readiness: one row per setting, with the fix.
    Audit(audit::AuditArgs),
    /// Thread priorities: list, set by pattern, run, profiles, systemd units, restore.
    Prio(prio::PrioArgs),
    /// Compare kernel configurations by subsystem; check one for latency.
    Kconfig(kconfig::KconfigArgs),
    /// Application response time over the network: `net serve` and `net ping`.
    Net(net::NetArgs),
    /// Throughput benchmarks with sysbench's workloads: cpu, memory, fileio, threads, mutex, suite.
    Bench(bench::BenchArgs),
    /// sysbench's command line and output (cpu, memory, fileio, threads, mutex), run by rtlab.
    Sysbench(sysbench::SysbenchArgs),
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let ctx = common::Context { db: cli.db };
    match cli.command {
        Command::Run(args) => run::run(&ctx, args),
        Command::Presets(args) => presets::run(args),
        Command::Latency(args) => latency::run(&ctx, args),
        Command::Results(args) => results::run(&ctx, args),
        Command::Compare(args) => compare::run(&ctx, args),
        Command::Report(args) => report::run(&ctx, args),
        Command::Load(args) => load::run(&ctx, args),
        Command::Step(args) => step::run(&ctx, args),
        Command::LoadWorker(args) => load::worker(args),
        Command::Audit(args) => audit::run(args),
        Command::Kconfig(args) => kconfig::run(args),
        Command::Prio(args) => prio::run(args),
        Command::Net(args) => net::run(&ctx, args),
        Command::Bench(args) => bench::run(&ctx, args),
        Command::Sysbench(args) => sysbench::run(&ctx, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }
}
