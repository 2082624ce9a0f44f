//! `rtlab ipc`: wake-up latency between two threads through an IPC mechanism,
//! and the priority-inversion check.

use super::common::Context;
use super::probe::ProbeArgs;
use crate::step::ipc::Params;
use anyhow::Result;
use clap::Args;

/// The flags of `rtlab ipc` (the text of its help is on `cli::Command::Ipc`).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab ipc -M all -l 2000 -i 500
  rtlab ipc -M mutex --pi -p 80 --placement same -a 1 -D 10s
  rtlab ipc --pi-check")]
pub struct IpcArgs {
    #[command(flatten)]
    probe: ProbeArgs<Params>,
}

/// Runs `rtlab ipc`.
pub fn run(ctx: &Context, a: IpcArgs) -> Result<i32> {
    a.probe.run(ctx)
}
