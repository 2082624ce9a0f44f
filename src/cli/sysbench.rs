//! `rtlab sysbench ARGS`: the sysbench personality (`crate::compat::sysbench`).

use super::common::Context;
use anyhow::Result;
use clap::Args;

/// sysbench's own arguments, passed on as they are.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct SysbenchArgs {
    /// `[--no-store] [options]... TEST [options]... COMMAND`, as sysbench 1.0 (or 0.4) takes them.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// Runs `rtlab sysbench`.
pub fn run(ctx: &Context, a: SysbenchArgs) -> Result<i32> {
    crate::compat::sysbench::main(ctx, &a.args)
}
