//! `rtlab ipc`: wake-up latency between two threads through an IPC mechanism,
//! and the priority-inversion check.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::format::text::ipc as text;
use crate::step::ipc::{self, Params};
use anyhow::Result;
use clap::Args;

/// Wake-up latency between two threads (what pmqtest, ptsematest, sigwaittest
/// and svsematest measure), and the priority-inversion check (pi_stress's
/// question).
///
/// Every --interval the sender of each pair wakes at an absolute time, reads
/// CLOCK_MONOTONIC and wakes its receiver through --mechanism; the receiver
/// reads the clock as soon as its wait returns: the difference is the wake-up
/// latency. The receiver then wakes the sender back the same way (the round
/// trip). One series per pair and mechanism. Bare numbers are µs for
/// --interval, --distance and --max-latency, seconds for --duration.
///
/// --pi-check instead runs low, medium and high SCHED_FIFO threads around one
/// mutex on one CPU, without then with priority inheritance, and counts the
/// rounds in which the high thread was blocked while the medium one ran.
#[derive(Debug, Args)]
pub struct IpcArgs {
    #[command(flatten)]
    params: Params,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab ipc`.
pub fn run(ctx: &Context, a: IpcArgs) -> Result<i32> {
    execute(ctx, &a.params, &a.out, &a.save)
}

/// Measures with `p`, saves and prints the run.
pub fn execute(ctx: &Context, p: &Params, out: &OutputArgs, save: &SaveArgs) -> Result<i32> {
    let mut run = ipc::measure(p, &mut super::observer::LiveObserver::new(out))?;
    save.apply(&mut run);
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| text::render(r, unit))
}
