//! Command-line definitions and thin handlers, one file per subcommand.

mod audit;
mod bench;
pub mod common;
mod compare;
mod docs;
mod ipc;
mod kconfig;
mod latency;
mod links;
pub mod load;
mod net;
pub mod observer;
mod presets;
mod prio;
mod report;
mod reportargs;
mod results;
mod run;
mod step;

use crate::compat::{self, Personality};
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
    #[command(disable_help_flag = true)]
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
    /// Wake-up latency between two threads through an IPC mechanism; the priority-inversion check.
    ///
    /// What pmqtest, ptsematest, sigwaittest and svsematest measure, and
    /// pi_stress's question. As in those tools, the receiver of each pair keeps
    /// the period: every --interval it wakes (absolute time), tells its sender
    /// it is ready through --mechanism, and waits; the sender reads
    /// CLOCK_MONOTONIC and wakes it the same way; the receiver reads the clock
    /// as soon as its wait returns: the difference is the wake-up latency. From
    /// its ready to its wake-up is the round trip. One series per pair and
    /// mechanism. Bare numbers are µs for
    /// --interval, --distance and --max-latency, seconds for --duration.
    ///
    /// --pi-check instead runs low, medium and high SCHED_FIFO threads around one
    /// mutex on one CPU, without then with priority inheritance, and counts the
    /// rounds in which the high thread was blocked while the medium one ran.
    Ipc(ipc::IpcArgs),
    /// Throughput benchmarks with sysbench's workloads: cpu, memory, fileio, threads, mutex, suite.
    Bench(bench::BenchArgs),
    /// Run as cyclictest, with its options, defaults and output: `rtlab cyclictest [--no-store] ARGS`.
    Cyclictest(compat::RawArgs),
    /// Run as stress, with its own options and output: `rtlab stress [--no-store] ARGS`.
    Stress(compat::RawArgs),
    /// Run as stress-ng, with its options and output: `rtlab stress-ng [--no-store] ARGS`.
    #[command(name = "stress-ng")]
    StressNg(compat::RawArgs),
    /// Make symlinks (cyclictest, stress, stress-ng, sysbench) that run rtlab as those tools.
    ///
    /// A symlink named after every personality, in DIR, pointing at this rtlab: a
    /// script calling `stress` then runs rtlab as stress, with stress's arguments
    /// and output, and the run is stored (not with RTLAB_NO_STORE=1). A name that
    /// is already something else is refused unless --force; a directory is never
    /// replaced.
    InstallLinks(links::InstallLinksArgs),
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionsArgs),
    /// Print the manual page, or write one page per subcommand into a directory.
    Man(docs::ManArgs),
    /// Run as sysbench, with its options and output: `rtlab sysbench [--no-store] ARGS`.
    Sysbench(compat::RawArgs),
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
        Command::Ipc(args) => ipc::run(&ctx, args),
        Command::Bench(args) => bench::run(&ctx, args),
        Command::Cyclictest(raw) => compat::subcommand(Personality::Cyclictest, ctx.db, raw),
        Command::Stress(raw) => compat::subcommand(Personality::Stress, ctx.db, raw),
        Command::StressNg(raw) => compat::subcommand(Personality::StressNg, ctx.db, raw),
        Command::InstallLinks(args) => links::run(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
        Command::Sysbench(raw) => compat::subcommand(Personality::Sysbench, ctx.db, raw),
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
