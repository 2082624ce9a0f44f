//! `rtlab __step`: one campaign step, run in its own process from its
//! serialised parameters.

use super::common::{Context, OutputArgs, SaveArgs};
use crate::error::UsageError;
use crate::step::bench::{cpu, fileio, memory, mutex, threads};
use crate::step::Params;
use anyhow::Result;
use clap::Args;

/// Runs one step of a campaign (started by `rtlab run`).
#[derive(Debug, Args)]
pub struct StepArgs {
    /// The step's parameters: JSON, tagged with the probe's name.
    #[arg(long, value_name = "JSON")]
    params: String,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab __step`.
pub fn run(ctx: &Context, a: StepArgs) -> Result<i32> {
    let params: Params = serde_json::from_str(&a.params)
        .map_err(|e| UsageError(format!("--params: not a step's parameters: {e}")))?;
    match params {
        Params::Latency(p) => super::latency::execute(ctx, &p, None, &a.out, &a.save),
        Params::Noise(p) => super::noise::execute(ctx, &p, &a.out, &a.save),
        Params::Load(p) => super::load::execute(ctx, &p, &a.out, &a.save),
        Params::Net(p) => super::net::execute(ctx, &p, &a.out, &a.save),
        Params::Periodic(p) => super::periodic::execute(ctx, &p, &a.out, &a.save),
        Params::Ipc(p) => super::ipc::execute(ctx, &p, &a.out, &a.save),
        Params::BenchCpu(p) => super::bench::execute(ctx, &a.out, &a.save, |o| cpu::measure(&p, o)),
        Params::BenchMemory(p) => {
            super::bench::execute(ctx, &a.out, &a.save, |o| memory::measure(&p, o))
        }
        Params::BenchFileio(p) => {
            super::bench::execute(ctx, &a.out, &a.save, |o| fileio::measure(&p, o))
        }
        Params::BenchThreads(p) => {
            super::bench::execute(ctx, &a.out, &a.save, |o| threads::measure(&p, o))
        }
        Params::BenchMutex(p) => {
            super::bench::execute(ctx, &a.out, &a.save, |o| mutex::measure(&p, o))
        }
    }
}
