//! `rtlab __step`: one campaign step, run in its own process from its
//! serialised parameters.

use super::common::{Context, OutputArgs, SaveArgs};
use crate::error::UsageError;
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
    super::probe::run(ctx, params.step(), &a.out, &a.save)
}
