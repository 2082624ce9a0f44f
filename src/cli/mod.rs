//! Command-line definitions and thin handlers, one file per subcommand.

mod bench;
mod common;
mod latency;

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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Timer wake-up latency of periodic RT threads (what cyclictest measures).
    Latency(latency::LatencyArgs),
    /// Throughput benchmarks with sysbench's workloads: cpu, memory, fileio, threads, mutex, suite.
    Bench(bench::BenchArgs),
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let ctx = common::Context { db: cli.db };
    match cli.command {
        Command::Latency(args) => latency::run(&ctx, args),
        Command::Bench(args) => bench::run(&ctx, args),
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
