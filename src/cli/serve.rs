//! `rtlab serve`: the store, read-only, over HTTP: `/metrics` for Prometheus
//! and a web view (fleet, runs, a run's report, comparisons, a host's plots).

mod http;
mod routes;
mod server;

use super::common::Context;
use super::reportargs::requirements;
use crate::error::{bad_flag, SystemError, UsageError};
use crate::store::{self, Store};
use crate::units::{parse_positive_duration, DefaultUnit, TimeUnit};
use anyhow::Result;
use clap::Args;
use routes::Site;
use rtlab_engine::rt::signals;
use server::Limits;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Mutex;
use std::time::Duration;

/// Serve the results store read-only over HTTP: Prometheus metrics and a web view.
///
/// /metrics gives the latest monitor window of every host and CPU and the
/// verdicts of the newest campaigns in the Prometheus text format; / is the
/// fleet (one row per host: kernel, last window, worst of the last day and
/// week, verdicts against --require); /runs lists runs with filters and
/// compares the ones ticked; /run/ID is a run's HTML report; /compare?run=1&run=2
/// a comparison; /host/NAME the long-term plots of a host. The store is opened
/// read-only. Only GET and HEAD; one request per connection. Listens on
/// loopback unless --token is given; then every request needs the token.
/// Stops on SIGTERM or Ctrl-C (exit 0).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab serve
  rtlab serve --db /var/lib/rtlab/fleet.db --listen 127.0.0.1:9000 --require gyro=1ms
  rtlab serve --listen 0.0.0.0:9477 --token \"$(cat /etc/rtlab/token)\"")]
pub struct ServeArgs {
    /// Address and port to listen on (port 0: any free port, printed at start);
    /// an address that is not loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:9477", value_name = "ADDR:PORT")]
    listen: String,
    /// Every request must carry this token, as `Authorization: Bearer TOKEN` or
    /// `?token=TOKEN` (links carry it) [default: none; loopback only].
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Deadline budget the fleet's hosts, runs and comparisons are judged
    /// against: NAME=BUDGET (a bare number is µs) or a preset (drone,
    /// messaging); repeatable. A host passes when its worst maximum of the last
    /// 7 days is within the budget.
    #[arg(
        long = "require",
        value_name = "NAME=BUDGET|PRESET",
        default_value = "deadline=1ms"
    )]
    require: Vec<String>,
    /// Unit of times in the pages.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
    /// A client has this long to send its request head, byte by byte or not
    /// (then it is closed), and the answer is made within as long, or is a
    /// 503 (a bare number is seconds).
    #[arg(long, default_value = "10s", value_name = "DUR")]
    read_timeout: String,
    /// A connection is closed this long after it was accepted, whatever it is
    /// doing: a client that reads the answer slowly too (a bare number is
    /// seconds).
    #[arg(long, default_value = "60s", value_name = "DUR")]
    connection_time: String,
    /// Connections open at once (each one waiting for its request counts);
    /// more are answered 503 at once.
    #[arg(long, default_value_t = 512, value_name = "N")]
    max_connections: usize,
}

/// The address to listen on; one that is not loopback only with a token.
fn listen_addr(a: &ServeArgs) -> Result<SocketAddr> {
    let addr = a
        .listen
        .to_socket_addrs()
        .map_err(|e| {
            bad_flag(
                "--listen",
                format!("'{}': {e} (write e.g. 127.0.0.1:9477)", a.listen),
            )
        })?
        .next()
        .ok_or_else(|| bad_flag("--listen", format!("'{}' names no address", a.listen)))?;
    if !addr.ip().is_loopback() && a.token.is_none() {
        return Err(UsageError(format!(
            "--listen {}: {} is not a loopback address, and anyone who reaches it could read the store; give --token TOKEN (then every request needs it), or listen on 127.0.0.1",
            a.listen,
            addr.ip()
        ))
        .into());
    }
    Ok(addr)
}

/// Checks the options and the store, before listening.
fn site(ctx: &Context, a: &ServeArgs) -> Result<(Site, Limits)> {
    if let Some(t) = &a.token {
        if t.is_empty() || t.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad_flag(
                "--token",
                "give a non-empty token without spaces or control characters",
            ));
        }
    }
    if a.max_connections == 0 || a.max_connections > 1024 {
        return Err(bad_flag("--max-connections", "give 1 to 1024"));
    }
    let duration = |flag: &str, text: &str| {
        parse_positive_duration(text, DefaultUnit::Seconds)
            .map(Duration::from_nanos)
            .map_err(|e| bad_flag(flag, e))
    };
    let limits = Limits {
        request: duration("--read-timeout", &a.read_timeout)?,
        connection: duration("--connection-time", &a.connection_time)?,
        connections: a.max_connections,
    };
    let reqs = requirements(&a.require)?;
    let db = ctx.existing_db()?;
    Store::open_read_only(&db)?;
    let site = Site {
        db,
        token: a.token.clone(),
        reqs,
        unit: a.unit,
        verdicts: Mutex::new(Default::default()),
    };
    Ok((site, limits))
}

/// Runs `rtlab serve`.
pub fn run(ctx: &Context, a: ServeArgs) -> Result<i32> {
    let addr = listen_addr(&a)?;
    let (site, limits) = site(ctx, &a)?;
    let listener = TcpListener::bind(addr).map_err(|e| {
        SystemError(format!(
            "cannot listen on {addr}: {e} (another program on that port? give another --listen)"
        ))
    })?;
    listener.set_nonblocking(true)?;
    let stop = signals::install();
    eprintln!(
        "rtlab serve: {} read-only on http://{}/ ({})",
        store::shown(&site.db),
        listener.local_addr()?,
        if site.token.is_some() {
            "token required"
        } else {
            "no token: loopback only"
        }
    );
    server::serve(listener, site, limits, stop)?;
    eprintln!("rtlab serve: stopped");
    Ok(0)
}
