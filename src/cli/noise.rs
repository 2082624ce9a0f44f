//! `rtlab noise`: OS noise seen by a spinning thread per CPU.

use super::common::Context;
use super::probe::ProbeArgs;
use crate::step::noise::Params;
use anyhow::Result;
use clap::Args;

/// Measure the OS noise a busy thread sees, per CPU (what oslat and rtla
/// osnoise measure).
///
/// One pinned thread per CPU (SCHED_FIFO 90 by default; every usable CPU but
/// the first) reads the clock in a tight loop for --duration and records every
/// gap between two reads above --threshold: the time the CPU was taken away by
/// interrupts, other threads, the hypervisor or RT throttling. Prints noise in
/// ppm of the time and per second, gaps per second, the largest gap and when it
/// came, the loop's own cost, and the gap histogram. Bare numbers are µs for
/// --threshold and --max-gap, seconds for --duration, ppm for --max-noise.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab noise -D 10s
  rtlab noise -a 1 -D 60s --max-noise 100ppm --max-gap 50us
  rtlab noise --policy other -a 0 -D 5s --perf
  rtlab noise -a 1 -D 1s --trace --trace-threshold 20us")]
pub struct NoiseArgs {
    #[command(flatten)]
    probe: ProbeArgs<Params>,
}

/// Runs `rtlab noise`.
pub fn run(ctx: &Context, a: NoiseArgs) -> Result<i32> {
    a.probe.run(ctx)
}
