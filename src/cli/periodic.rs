//! `rtlab periodic`: a periodic task toggling an output, and the highest
//! frequency it holds.

use super::common::Context;
use super::probe::ProbeArgs;
use crate::step::periodic::Params;
use anyhow::Result;
use clap::Args;

/// Toggle an output once a period and measure every real period.
///
/// A SCHED_FIFO thread (priority 90, memory locked, stack prefaulted, pinned
/// to the last CPU) toggles nothing, a file (--output) or a GPIO line (--gpio)
/// at --frequency, and times each period from its own clock readings:
/// achieved frequency, period jitter, missed periods (a period longer than
/// 1.5 × nominal misses its length in periods, rounded, minus one). --sweep
/// searches the highest frequency each method holds within --tolerance, idle
/// and under --load.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab periodic --frequency 10kHz -D 5s
  rtlab periodic --sweep 1kHz..1MHz --method all --load cpu:1
  rtlab periodic --frequency 1kHz --output /tmp/pin --policy deadline --dl-runtime 100us")]
pub struct PeriodicArgs {
    #[command(flatten)]
    probe: ProbeArgs<Params>,
}

/// Runs `rtlab periodic`.
pub fn run(ctx: &Context, a: PeriodicArgs) -> Result<i32> {
    a.probe.run(ctx)
}
