//! `rtlab net serve` and `rtlab net ping`: application response time over the
//! network, with a mock server that separates network jitter from application
//! jitter.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::format::text::series::{self, Col};
use crate::format::text::table::Table;
use crate::record::Run;
use crate::step::net::{self, serve, Params};
use crate::units::{Human, TimeUnit};
use anyhow::Result;
use clap::{Args, Subcommand};

/// Application response time over the network: a mock echo server and a client
/// that times request/echo round trips on a fixed schedule.
#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    command: NetCommand,
}

#[derive(Debug, Subcommand)]
enum NetCommand {
    Serve(ServeArgs),
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
struct PingArgs {
    #[command(flatten)]
    params: Params,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab net ...`.
pub fn run(ctx: &Context, a: NetArgs) -> Result<i32> {
    match a.command {
        NetCommand::Serve(s) => serve(s),
        NetCommand::Ping(p) => execute(ctx, &p.params, &p.out, &p.save),
    }
}

/// Measures with `p`, saves and prints the run.
pub fn execute(ctx: &Context, p: &Params, out: &OutputArgs, save: &SaveArgs) -> Result<i32> {
    let mut run = net::measure(p, &mut super::observer::LiveObserver::new(out))?;
    save.apply(&mut run);
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| render(r, unit))
}

fn serve(a: ServeArgs) -> Result<i32> {
    let server = serve::Server::open(&a.params)?;
    for line in server.banner() {
        eprintln!("rtlab net serve: {line}");
    }
    let done = server.run()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&done.to_json())?);
    } else {
        print!("{}", served_text(&done, a.params.tcp));
    }
    Ok(0)
}

/// The text summary of a server that stopped.
fn served_text(done: &serve::Served, tcp: bool) -> String {
    let s = &done.summary;
    let mut t = Table::new(&["counter", "value"]);
    let mut row = |k: &str, v: u64| t.row(vec![k.to_string(), v.to_string()]);
    row("served", s.served);
    row("info requests", s.info);
    row("rejected", s.rejected_total());
    for (reason, n) in s.rejected.iter().filter(|(_, n)| *n > 0) {
        row(&format!("  {reason}"), *n);
    }
    row("bytes in", s.bytes_in);
    row("bytes out", s.bytes_out);
    if tcp {
        row("connections", s.connections);
        row("connections refused", s.connections_refused);
        row("connections peak", s.connections_peak);
        row("idle closed", s.idle_closed);
        row("slow readers dropped", s.slow_readers_dropped);
    }
    row("socket errors", s.io_errors);
    format!(
        "rtlab net serve {} ({}) {} after {}\n{}",
        done.local,
        done.transport,
        done.ended,
        Human(done.elapsed_ns),
        t.render()
    )
}

/// The text report of a net run.
fn render(run: &Run, unit: TimeUnit) -> String {
    let a = net::asked(&run.params);
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0) as u64;
    let server_setting = |k: &str| a.server.get(k).and_then(|v| v.as_str()).unwrap_or("?");
    let mut out = format!(
        "rtlab net ping {} ({})  {}  [{}]\n",
        a.address,
        a.transport,
        run.label,
        run.status.name()
    );
    out.push_str(&format!(
        "{} messages every {}, {} round trip(s) of {} bytes each; client {} {}, server {} {} on {} ({})\n",
        a.count,
        Human(a.period_ns),
        a.round_trips,
        a.message_bytes,
        a.policy,
        a.priority,
        server_setting("policy"),
        server_setting("priority"),
        server_setting("hostname"),
        server_setting("kernel"),
    ));
    out.push_str(&format!(
        "sent {}, answered {}, lost {}, overruns {}, deadline misses {} (deadline {}), duplicates {}, reordered {}, late {}\n\n",
        m("messages_sent"),
        m("messages_completed"),
        m("messages_lost"),
        m("overruns"),
        m("deadline_misses"),
        Human(a.deadline_ns),
        m("duplicates"),
        m("reordered"),
        m("late_replies"),
    ));
    let cols = [
        Col::Count("samples"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::P90,
        Col::P99,
        Col::P999,
        Col::Max,
        Col::Stddev,
        Col::Misses,
    ];
    out.push_str(&series::table(
        run.series.iter().chain(&run.total),
        "series",
        &cols,
        unit,
    ));
    out.push_str(&format!(
        "(times in {}; legN: one round trip; server: time inside the server per message; message: all round trips)\n",
        unit.symbol()
    ));
    out.push_str(&format!(
        "client CPU per message {}, start lag max {}\n",
        Human(m("client_cpu_ns_per_message")),
        Human(m("start_lag_max_ns"))
    ));
    if let Some(limit) = a.max_latency_ns {
        let max = run.total.as_ref().map(|t| t.summary.max_ns).unwrap_or(0);
        let lost = m("messages_lost");
        let verdict = if max > limit || lost > 0 {
            "FAIL"
        } else {
            "PASS"
        };
        out.push_str(&format!(
            "\nmax-latency {}: {verdict} (observed max {}, {lost} lost)\n",
            Human(limit),
            Human(max)
        ));
    }
    if !run.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &run.warnings {
            out.push_str(&format!("  ! {}: {}\n", w.code, w.message));
        }
    }
    out
}
