//! `rtlab net serve` and `rtlab net ping`: application response time over the
//! network, with a mock server that separates network jitter from application
//! jitter.

use super::common::{self, Context};
use super::probe::ProbeArgs;
use crate::format::text::net as text;
use crate::step::net::{serve, Params};
use anyhow::Result;
use clap::{Args, Subcommand};

/// Application response time over the network: a mock echo server and a client
/// that times request/echo round trips on a fixed schedule.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab net serve --bind 0.0.0.0:7700 -p 80
  rtlab net ping board.local --period 10ms -n 3000 --max-latency 5ms")]
pub struct NetArgs {
    #[command(subcommand)]
    command: NetCommand,
}

#[derive(Debug, Subcommand)]
enum NetCommand {
    Serve(Box<ServeArgs>),
    Ping(Box<PingArgs>),
}

/// Run the echo server that `rtlab net ping` measures against.
///
/// Answers valid requests with a reply of the same size; counts and drops anything
/// malformed (never answers it, never crashes on it). Over TCP no client can hold
/// it: one that does not read its answers is dropped, idle ones are closed, and
/// connections beyond --max-clients are refused. Prints a summary when it stops
/// (Ctrl-C, SIGTERM or --duration, within a second whatever the clients do);
/// stopping is its normal end (exit 0). Bare numbers are ms for --delay and
/// --idle-timeout, seconds for --duration.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab net serve
  rtlab net serve --bind 0.0.0.0:7700 --tcp -p 80 --cpus 1
  rtlab net serve -D 60s --json")]
struct ServeArgs {
    #[command(flatten)]
    params: serve::Params,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Time request/echo round trips to an `rtlab net serve` on a fixed schedule.
///
/// Every --period a message starts (absolute schedule: a slow message does not
/// delay later ones; slots it overran are counted as overruns), made of
/// --round-trips request/echo exchanges. The whole message and each leg are timed;
/// a message not fully answered within --timeout is lost. Bare numbers are ms.
#[derive(Debug, Args)]
#[command(mut_arg("target", |a| a.required(true)))]
#[command(after_long_help = "Examples:
  rtlab net ping 127.0.0.1
  rtlab net ping board.local:7700 --period 10ms -D 30s --max-latency 5ms
  rtlab net ping 10.0.0.2 --tcp -p 80 --load cpu:2")]
struct PingArgs {
    #[command(flatten)]
    probe: ProbeArgs<Params>,
}

/// Runs `rtlab net ...`.
pub fn run(ctx: &Context, a: NetArgs) -> Result<i32> {
    match a.command {
        NetCommand::Serve(s) => serve(*s),
        NetCommand::Ping(p) => p.probe.run(ctx),
    }
}

fn serve(a: ServeArgs) -> Result<i32> {
    let server = serve::Server::open(&a.params)?;
    for line in server.banner() {
        eprintln!("rtlab net serve: {line}");
    }
    let done = server.run()?;
    let out = if a.json {
        crate::format::json::document(&done.to_json())?
    } else {
        text::served_text(&done, a.params.tcp)
    };
    common::write_output("--json", None, &out)?;
    Ok(0)
}
