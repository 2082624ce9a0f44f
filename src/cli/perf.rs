//! `rtlab perf -- CMD ARGS`: a command under performance counters, as
//! `perf stat` runs it, stored as a run of kind `perf`.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::format::text::perf;
use anyhow::Result;
use clap::Args;

/// Run a command under performance counters, as perf stat does.
///
/// Counts the command and every thread and process it starts (task-clock,
/// context switches, voluntary and involuntary, CPU migrations, page faults,
/// and cycles, instructions, branches, branch and cache misses where the
/// machine has them; those it lacks are "not supported", never 0), prints them
/// on stderr as perf stat does (--json: the run on stdout), and stores the run.
/// The exit code is the command's (128 + N when signal N ended it). Everything
/// after `--` is the command.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab perf -- make -j2
  rtlab perf --json -- stress-ng --cpu 1 --timeout 2s")]
pub struct PerfCmdArgs {
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Runs `rtlab perf`.
pub fn run(ctx: &Context, a: PerfCmdArgs) -> Result<i32> {
    let mut run = crate::step::perf::measure_command(&a.command)?;
    a.save.apply(&mut run);
    let code = common::finish(ctx, &a.save, &a.out, &mut run, |_| String::new())?;
    if let (false, Some(p)) = (a.out.json, &run.perf) {
        eprint!("\n{}", perf::render(p, Some(&a.command.join(" "))));
    }
    Ok(code)
}
