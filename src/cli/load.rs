//! `rtlab load`: run load generators on their own, and the hidden entry point of
//! load worker processes.

use super::common::{self, Context};
use super::probe::ProbeArgs;
use crate::error::{BadValue, UsageError};
use crate::loads::set::WORKER_COMMAND;
use crate::loads::spec;
use crate::step::load::Params;
use anyhow::{Context as _, Result};
use clap::Args;
use rtlab_engine::load::{Ctx, Load, LoadError, SharedCounters};
use rtlab_engine::rt::signals;
use std::io::Write;

/// Run a load generator: busy CPUs, page faults, memory bandwidth, disk writes,
/// file-system walks, /proc reads, messages, forks, timers, UDP, or a command.
///
/// Prints what each worker achieved (ops/s, MB/s, CPU, page faults, context
/// switches, RSS) at the end and saves it as a run of kind "load". Workers are
/// separate processes, SCHED_OTHER unless --load-policy says otherwise. Bare
/// numbers for -D are seconds.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab load --list
  rtlab load cpu:2 -D 10s
  rtlab load dohell -D 30s --load-cpus 1 --json")]
pub struct LoadCmdArgs {
    /// The load: a kind or a whole spec ("cpu", "vm:2:256M", "msg threads", "dohell",
    /// "exec:make -j4"). See --list [default: none; required unless --list].
    #[arg(value_name = "SPEC", required_unless_present = "list")]
    spec: Vec<String>,
    /// List the load kinds with their keys, and the mixes with their parts.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    probe: ProbeArgs<Params>,
}

/// Runs `rtlab load`: its SPEC words are one spec.
pub fn run(ctx: &Context, a: LoadCmdArgs) -> Result<i32> {
    if a.list {
        common::print(&spec::listing());
        return Ok(0);
    }
    let mut probe = a.probe;
    probe.params.load = vec![a.spec.join(" ")];
    probe.run(ctx).map_err(spec_words)
}

/// The command line gives the spec as words, not as `--load`: a bad spec is said
/// without the flag.
fn spec_words(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<BadValue>() {
        Ok(bad) if bad.flag == "--load" => UsageError(bad.message).into(),
        Ok(bad) => bad.into(),
        Err(e) => e,
    }
}

/// The hidden worker subcommand (started by [`LoadSet`], not by users).
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The inherited shared-counter descriptor.
    #[arg(long)]
    fd: i32,
    /// Slots in the counter block.
    #[arg(long)]
    slots: usize,
    /// This worker's slot.
    #[arg(long)]
    slot: usize,
    /// The load, as JSON.
    #[arg(long)]
    load: String,
}

/// Runs one load worker: reports `ready` (or `error input|system MSG`) on stdout,
/// then works until SIGTERM.
pub fn worker(a: WorkerArgs) -> Result<i32> {
    let stop = signals::install();
    let load: Load = serde_json::from_str(&a.load).context("the load spec JSON")?;
    if a.slot >= a.slots {
        return Err(UsageError(format!("slot {} of {}", a.slot, a.slots)).into());
    }
    // SAFETY: the supervisor passes a memfd it created for exactly this purpose;
    // nothing else in this process owns the descriptor.
    let counters = unsafe { SharedCounters::from_inherited(a.fd, a.slots) }.map_err(|e| {
        UsageError(format!(
            "{WORKER_COMMAND} is started by rtlab itself (counter descriptor {}: {})",
            a.fd,
            rtlab_engine::rt::errno_text(e)
        ))
    })?;
    let ctx = Ctx {
        counters: counters.slot(a.slot),
        stop,
    };
    let mut out = std::io::stdout();
    let result = load.run(&ctx, &mut || {
        let _ = out.write_all(b"ready\n");
        let _ = out.flush();
    });
    let mut out = std::io::stdout();
    let code = match result {
        Ok(()) => 0,
        Err(LoadError::Input(m)) => {
            let _ = writeln!(out, "error input {m}");
            2
        }
        Err(LoadError::System(m)) => {
            let _ = writeln!(out, "error system {m}");
            3
        }
    };
    let _ = out.flush();
    Ok(code)
}
