//! `rtlab latency`: the cyclic timer-latency probe.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::format::{self, Format};
use crate::step::latency::{self, Params};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};

/// Measure how late periodic real-time threads wake up.
///
/// One SCHED_FIFO thread (priority 90) per online CPU, pinned, sleeping on
/// CLOCK_MONOTONIC with absolute deadlines, memory locked and /dev/cpu_dma_latency
/// held at 0, until the loop count or duration is reached or Ctrl-C.
/// Bare numbers are µs for -i/--deadline/--max-latency/--breaktrace/--histogram-max
/// and seconds for -D, as in cyclictest.
#[derive(Debug, Args)]
pub struct LatencyArgs {
    #[command(flatten)]
    params: Params,
    /// Write the 1-µs histogram in cyclictest's -h layout to this file.
    #[arg(long, value_name = "PATH", value_parser = common::output_file, display_order = 15)]
    histfile: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab latency`.
pub fn run(ctx: &Context, a: LatencyArgs) -> Result<i32> {
    execute(ctx, &a.params, a.histfile.as_deref(), &a.out, &a.save)
}

/// Measures with `p`, writes `histfile` if asked, saves and prints the run.
pub fn execute(
    ctx: &Context,
    p: &Params,
    histfile: Option<&Path>,
    out: &OutputArgs,
    save: &SaveArgs,
) -> Result<i32> {
    let mut run = latency::measure(p, &mut super::observer::LiveObserver::new(out))?;
    save.apply(&mut run);
    if let Some(path) = histfile {
        let text = format::export(std::slice::from_ref(&run), Format::Hist)?;
        common::write_output("--histfile", Some(path), &text)?;
    }
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| {
        let loads = crate::format::text::loads::loads_table(&r.loads);
        let sep = if loads.is_empty() { "" } else { "\nloads:\n" };
        format::text::latency::render(r, unit) + sep + &loads
    })
}
