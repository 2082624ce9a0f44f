//! `rtlab serve`: the store, read-only, over HTTP: `/metrics` for Prometheus
//! and a web view (fleet, runs, a run's report, comparisons, a host's plots).

mod http;
mod routes;

use super::common::Context;
use super::reportargs::requirements;
use crate::error::{bad_flag, SystemError, UsageError};
use crate::store::{self, Store};
use crate::units::{parse_positive_duration, DefaultUnit, TimeUnit};
use anyhow::Result;
use clap::Args;
use routes::Site;
use rtlab_engine::rt::signals;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// A client has this long to send its request, and to read the answer
    /// (a bare number is seconds).
    #[arg(long, default_value = "10s", value_name = "DUR")]
    read_timeout: String,
    /// Connections served at once; more are answered 503 at once.
    #[arg(long, default_value_t = 32, value_name = "N")]
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
fn site(ctx: &Context, a: &ServeArgs) -> Result<(Site, Duration)> {
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
    let timeout = parse_positive_duration(&a.read_timeout, DefaultUnit::Seconds)
        .map_err(|e| bad_flag("--read-timeout", e))?;
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
    Ok((site, Duration::from_nanos(timeout)))
}

/// Runs `rtlab serve`.
pub fn run(ctx: &Context, a: ServeArgs) -> Result<i32> {
    let addr = listen_addr(&a)?;
    let (site, timeout) = site(ctx, &a)?;
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
    let site = Arc::new(site);
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(e) => {
                eprintln!("rtlab serve: accept: {e}");
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        if active.load(Ordering::SeqCst) >= a.max_connections {
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let busy = http::Response::text(503, "busy: too many connections, try again")
                .with("Retry-After", "1");
            finish(stream, &busy, false);
            continue;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let (mine, done) = (Arc::clone(&site), Arc::clone(&active));
        let spawned = std::thread::Builder::new()
            .name("rtlab-serve".into())
            .spawn(move || {
                serve_one(&mine, stream, timeout);
                done.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    // Answers under way end within their timeouts; wait for them that long.
    let until = Instant::now() + timeout;
    while active.load(Ordering::SeqCst) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("rtlab serve: stopped");
    Ok(0)
}

/// Reads one request from `stream`, answers it and closes the connection.
fn serve_one(site: &Site, mut stream: TcpStream, timeout: Duration) {
    let _ = stream.set_write_timeout(Some(timeout));
    let t0 = Instant::now();
    let (resp, head_only, what) = match http::read_head(&mut stream, t0 + timeout) {
        Ok(None) => return,
        Ok(Some(head)) => match http::parse(&head) {
            Ok(req) => (
                site.answer(&req),
                req.method == "HEAD",
                format!("{} {}", req.method, req.path),
            ),
            Err(r) => (r, false, "-".into()),
        },
        Err(r) => (r, false, "-".into()),
    };
    eprintln!(
        "{what} {} {:.1}ms",
        resp.status,
        t0.elapsed().as_secs_f64() * 1e3
    );
    finish(stream, &resp, head_only);
}

/// Writes `resp`, then closes: what the client still sends is read (briefly,
/// boundedly) first, so that it gets the answer rather than a reset.
fn finish(mut stream: TcpStream, resp: &http::Response, head_only: bool) {
    if resp.write(&mut stream, head_only).is_err() {
        return;
    }
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 4096];
    let mut left = http::MAX_HEAD * 2;
    while left > 0 {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
    let _ = stream.flush();
}
