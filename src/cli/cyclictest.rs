//! `rtlab cyclictest ARGS`: cyclictest's command line, handed whole to the
//! personality (which reads its own `--help`).

use super::common::Context;
use anyhow::Result;
use clap::Args;

/// cyclictest's options, as given.
#[derive(Debug, Args)]
pub struct CyclictestArgs {
    /// cyclictest's options (rtlab cyclictest --help lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<String>,
}

/// Runs `rtlab cyclictest`.
pub fn run(ctx: &Context, a: CyclictestArgs) -> Result<i32> {
    crate::compat::cyclictest::main(ctx, &a.args)
}
