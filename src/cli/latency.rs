//! `rtlab latency`: the cyclic timer-latency probe.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::record::Run;
use crate::report::{self, histfile};
use crate::step::latency::{self, Params};
use anyhow::{Context as _, Result};
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
    let mut run = latency::measure(p, &mut common::LiveObserver::new(out))?;
    save.apply(&mut run);
    if let Some(path) = histfile {
        write_histfile(path, &run)?;
    }
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| {
        let loads = super::load::loads_table(&r.loads);
        let sep = if loads.is_empty() { "" } else { "\nloads:\n" };
        report::latency::render(r, unit) + sep + &loads
    })
}

/// Writes the cyclictest-layout histogram next to its final name, then renames it,
/// so a reader never sees half a file.
fn write_histfile(path: &Path, run: &Run) -> Result<()> {
    let cols: Vec<histfile::HistColumn> = run
        .series
        .iter()
        .filter_map(|s| {
            let us = s.us_histogram.as_ref()?;
            Some(histfile::HistColumn::from_series(
                us,
                s.summary.min_ns,
                s.summary.mean_ns,
                s.summary.max_ns,
            ))
        })
        .collect();
    let tmp = path.with_extension("rtlab-tmp");
    std::fs::write(&tmp, histfile::render(&cols))
        .with_context(|| format!("--histfile: cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("--histfile: cannot write {}", path.display()))?;
    Ok(())
}
