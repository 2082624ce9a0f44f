//! Command-line definitions and thin handlers, one file per subcommand.

mod audit;
mod bench;
pub mod common;
mod compare;
mod deferred;
mod docs;
mod help;
mod ipc;
mod kconfig;
mod latency;
mod links;
pub mod load;
mod monitor;
mod net;
mod noise;
pub mod observer;
mod perf;
mod periodic;
mod presets;
mod prio;
mod probe;
mod report;
mod reportargs;
mod results;
mod results_import;
mod run;
mod selection;
mod serve;
mod step;
mod transfer;
mod tune;
mod why;
mod windows;

use crate::compat::{self, Personality};
use anyhow::Result;
use clap::{Parser, Subcommand};
use deferred::Deferred;
use std::path::PathBuf;

/// Measure, compare and tune Linux real-time behaviour.
///
/// Exit codes: 0 ok; 1 a requirement or threshold failed; 2 usage or input error;
/// 3 the system refused (permissions, missing kernel feature); 130 interrupted
/// (what was gathered is still printed and saved).
#[derive(Debug, Parser)]
#[command(name = "rtlab", version, about, long_about = None, max_term_width = 100)]
#[command(disable_help_subcommand = true, after_long_help = help::ROOT_AFTER_HELP)]
#[command(
    after_help = "Topics: rtlab help units|exit-codes|loads|scenarios|store; --help adds examples"
)]
pub struct Cli {
    /// Results database [default: $RTLAB_DB, else $XDG_DATA_HOME/rtlab/rtlab.db].
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
    Run(Deferred<run::RunArgs>),
    /// List or print the built-in scenarios.
    Presets(Deferred<presets::PresetsArgs>),
    /// Timer wake-up latency of periodic RT threads (what cyclictest measures).
    #[command(disable_help_flag = true)]
    Latency(Deferred<latency::LatencyArgs>),
    /// Timer latency around the clock, stored per window (OSADL-style long-term plots).
    #[command(disable_help_flag = true)]
    Monitor(Deferred<monitor::MonitorArgs>),
    /// OS noise a spinning thread sees on each CPU (what oslat and osnoise measure).
    Noise(Deferred<noise::NoiseArgs>),
    /// A periodic output task: period jitter, the highest frequency it holds (--sweep).
    Periodic(Deferred<periodic::PeriodicArgs>),
    /// Thread-to-thread wake-up latency over IPC mechanisms; the priority-inversion check.
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
    Ipc(Deferred<ipc::IpcArgs>),
    /// Application response time over the network: `net serve` and `net ping`.
    Net(Deferred<net::NetArgs>),
    /// Throughput benchmarks with sysbench's workloads: cpu, memory, fileio, threads, mutex, suite.
    Bench(Deferred<bench::BenchArgs>),
    /// Load generators: cpu, vm, memcopy, io, fswalk, procfs, msg, fork, timer, net,
    /// exec, and the dohell mix (--list shows them all).
    Load(Deferred<load::LoadCmdArgs>),
    /// Why a stored run's latency spikes happened (runs measured with --trace).
    Why(Deferred<why::WhyArgs>),
    /// The results store: list, show, delete, tag, label, export, import.
    Results(Deferred<results::ResultsArgs>),
    /// Compare stored runs side by side; verdicts against deadlines (--require).
    Compare(Deferred<compare::CompareArgs>),
    /// Report one stored run in depth, as text or HTML.
    Report(Deferred<report::ReportArgs>),
    /// Serve the store read-only over HTTP: Prometheus /metrics and a web view.
    Serve(Deferred<serve::ServeArgs>),
    /// A command under performance counters, as perf stat: `rtlab perf -- CMD ARGS`.
    Perf(Deferred<perf::PerfCmdArgs>),
    /// One step of a campaign (started by `rtlab run`).
    #[command(name = "__step", hide = true)]
    Step(Deferred<step::StepArgs>),
    /// A load worker process (started by rtlab itself).
    #[command(name = "__load-worker", hide = true)]
    LoadWorker(Deferred<load::WorkerArgs>),
    /// Check the system's real-time readiness: one row per setting, with the fix.
    Audit(Deferred<audit::AuditArgs>),
    /// Thread priorities: list, set by pattern, run, profiles, systemd units, restore.
    Prio(Deferred<prio::PrioArgs>),
    /// Compare kernel configurations by subsystem; check one for latency.
    Kconfig(Deferred<kconfig::KconfigArgs>),
    /// Try each run-time fix under your load, keep what helps, put back the rest.
    ///
    /// Every fix of the audit that can be changed while the system runs is a
    /// candidate: timer migration; IRQs, unbound workqueues and RCU threads off
    /// the measured CPUs; IRQ thread priorities (PREEMPT_RT); /dev/cpu_dma_latency;
    /// deep idle states; the frequency governor; THP; KSM; watchdogs; the
    /// preemption mode of a PREEMPT_DYNAMIC kernel; a cpuset partition; your
    /// application's thread priority (--app). For each, the baseline and the
    /// changed system are measured in turn (A B A B ...), --repeat times, by the
    /// latency probe under --load, and judged as `rtlab compare` judges (a figure
    /// is better or worse only when the 95% intervals lie apart by more than
    /// 5%): helps, no real effect, hurts, or not possible here with the kernel's
    /// reason. The winners are then measured together. Every change is journaled
    /// before it is made and put back when its candidate ends, on Ctrl-C and
    /// SIGTERM, and after a crash or kill -9 by the next rtlab command; at the end
    /// every value is read back and compared. Fixes that need a reboot are listed
    /// with their kernel command line, not tried. RT throttling is never turned
    /// off. Needs root; docs/tune.md has the method.
    Tune(Deferred<tune::TuneArgs>),
    /// Run as cyclictest, with its options, defaults and output: `rtlab cyclictest [--no-store] ARGS`.
    #[command(after_long_help = "Examples:
  rtlab cyclictest -m -S -p90 -i200 -D 60 -h 400 -q
  rtlab cyclictest --no-store -t1 -p80 -n -i1000 -l10000")]
    Cyclictest(Deferred<compat::RawArgs>),
    /// Run as stress, with its own options and output: `rtlab stress [--no-store] ARGS`.
    #[command(after_long_help = "Examples:
  rtlab stress --cpu 2 --vm 1 --vm-bytes 128M --timeout 30s
  rtlab stress --no-store --io 1 --timeout 10s")]
    Stress(Deferred<compat::RawArgs>),
    /// Run as stress-ng, with its options and output: `rtlab stress-ng [--no-store] ARGS`.
    #[command(name = "stress-ng")]
    #[command(after_long_help = "Examples:
  rtlab stress-ng --cpu 2 --cpu-method matrixprod --timeout 30s --metrics-brief
  rtlab stress-ng --no-store --hdd 1 --timeout 10s")]
    StressNg(Deferred<compat::RawArgs>),
    /// Make symlinks (cyclictest, stress, stress-ng, sysbench) that run rtlab as those tools.
    ///
    /// A symlink named after every personality, in DIR, pointing at this rtlab: a
    /// script calling `stress` then runs rtlab as stress, with stress's arguments
    /// and output, and the run is stored (not with RTLAB_NO_STORE=1). A name that
    /// is already something else is refused unless --force; a directory is never
    /// replaced.
    InstallLinks(Deferred<links::InstallLinksArgs>),
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell).
    Completions(Deferred<docs::CompletionsArgs>),
    /// Print the manual page, or write one page per subcommand into a directory.
    Man(Deferred<docs::ManArgs>),
    /// Print the help of a subcommand, or a topic: units, exit-codes, loads, scenarios, store.
    Help(Deferred<help::HelpArgs>),
    /// Run as sysbench, with its options and output: `rtlab sysbench [--no-store] ARGS`.
    #[command(after_long_help = "Examples:
  rtlab sysbench cpu --threads=2 --cpu-max-prime=20000 run
  rtlab sysbench --no-store memory --memory-block-size=1M run")]
    Sysbench(Deferred<compat::RawArgs>),
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let ctx = common::Context { db: cli.db };
    tune::recover(&cli.command);
    match cli.command {
        Command::Run(args) => args.run(|a| run::run(&ctx, a)),
        Command::Presets(args) => args.run(presets::run),
        Command::Latency(args) => args.run(|a| latency::run(&ctx, a)),
        Command::Monitor(args) => args.run(|a| monitor::run(&ctx, a)),
        Command::Noise(args) => args.run(|a| noise::run(&ctx, a)),
        Command::Perf(args) => args.run(|a| perf::run(&ctx, a)),
        Command::Results(args) => args.run(|a| results::run(&ctx, a)),
        Command::Compare(args) => args.run(|a| compare::run(&ctx, a)),
        Command::Report(args) => args.run(|a| report::run(&ctx, a)),
        Command::Serve(args) => args.run(|a| serve::run(&ctx, a)),
        Command::Why(args) => args.run(|a| why::run(&ctx, a)),
        Command::Load(args) => args.run(|a| load::run(&ctx, a)),
        Command::Step(args) => args.run(|a| step::run(&ctx, a)),
        Command::LoadWorker(args) => args.run(load::worker),
        Command::Audit(args) => args.run(audit::run),
        Command::Kconfig(args) => args.run(kconfig::run),
        Command::Prio(args) => args.run(prio::run),
        Command::Tune(args) => args.run(|a| tune::run(&ctx, a)),
        Command::Net(args) => args.run(|a| net::run(&ctx, a)),
        Command::Periodic(args) => args.run(|a| periodic::run(&ctx, a)),
        Command::Ipc(args) => args.run(|a| ipc::run(&ctx, a)),
        Command::Bench(args) => args.run(|a| bench::run(&ctx, a)),
        Command::Cyclictest(raw) => {
            raw.run(|a| compat::subcommand(Personality::Cyclictest, ctx.db, a))
        }
        Command::Stress(raw) => raw.run(|a| compat::subcommand(Personality::Stress, ctx.db, a)),
        Command::StressNg(raw) => raw.run(|a| compat::subcommand(Personality::StressNg, ctx.db, a)),
        Command::InstallLinks(args) => args.run(links::run),
        Command::Completions(args) => args.run(docs::completions),
        Command::Man(args) => args.run(docs::man),
        Command::Help(args) => args.run(help::run),
        Command::Sysbench(raw) => raw.run(|a| compat::subcommand(Personality::Sysbench, ctx.db, a)),
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
