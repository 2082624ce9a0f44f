//! How `rtlab serve` holds its connections: hyper's HTTP/1 server on a tokio
//! runtime of one thread, which accepts and reads and writes every connection,
//! while the pages are made on a few blocking threads. No client, slow or
//! idle, can hold more than one connection's slot for a bounded time:
//!
//! - its request head must arrive within `--read-timeout` of the connection's
//!   start, even byte by byte (hyper's header read timeout; then it is
//!   closed). A body is refused at once (413), so the head is the whole
//!   request: that deadline is the request's;
//! - hyper reads into a buffer of at most [`MAX_BUFFER`] bytes, and refuses a
//!   head over [`MAX_HEAD`] (431) or of more than [`MAX_HEADERS`] lines;
//! - the answer is made within `--read-timeout`, or is a 503;
//! - the connection is closed `--connection-time` after it was accepted,
//!   whatever it is doing (a client that reads the answer slowly, too);
//! - at most `--max-connections` are open at once. Past that a connection is
//!   answered 503 by a task of its own, which has [`SHED_TIME`] to read the
//!   request and write the answer; past [`SHED`] of those it is closed at
//!   once. Accepting never waits for a client.
//!
//! One request per connection (`Connection: close`).

use super::http::{self, Request, Response, MAX_HEAD};
use super::routes::Site;
use crate::units::exact;
use anyhow::Result;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::poll_fn;
use std::io::ErrorKind;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::time::{timeout, Interval, MissedTickBehavior};

/// Lines in a request head: more is 431.
pub const MAX_HEADERS: usize = 100;
/// A connection's read buffer, at most: a whole head and a little more.
pub const MAX_BUFFER: usize = MAX_HEAD + 8 * 1024;
/// Threads that make pages at once; more requests wait for one.
const WORKERS: usize = 4;
/// Connections being answered 503 at once.
const SHED: usize = 64;
/// How long a connection answered 503 may take in all.
const SHED_TIME: Duration = Duration::from_secs(1);
/// How often the accept loop looks at the stop flag.
const TICK: Duration = Duration::from_millis(50);

/// The bounds of every connection.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `--read-timeout`: the request head arrives, and the answer is made,
    /// each within this.
    pub request: Duration,
    /// `--connection-time`: a connection is closed this long after it was accepted.
    pub connection: Duration,
    /// `--max-connections`: connections open at once.
    pub connections: usize,
}

/// Serves `listener` until `stop` is raised, then lets the answers under way
/// finish for up to `limits.request`.
pub fn serve(
    listener: std::net::TcpListener,
    site: Site,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(WORKERS)
        .thread_name("rtlab-serve")
        .build()?;
    let served = rt.block_on(accept(listener, Arc::new(site), limits, stop));
    // What is still being made after that wait is abandoned.
    rt.shutdown_timeout(Duration::ZERO);
    served
}

/// The accept loop, then the wait for the connections under way.
async fn accept(
    listener: std::net::TcpListener,
    site: Arc<Site>,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let slots = Arc::new(Semaphore::new(limits.connections));
    let shed = Arc::new(Semaphore::new(SHED));
    let graceful = GracefulShutdown::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    while let Some(accepted) = next(&listener, &mut tick, stop).await {
        let stream = match accepted {
            Ok((stream, _)) => TokioIo::new(stream),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionAborted | ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(e) => {
                // Out of file descriptors, most likely: wait rather than spin.
                eprintln!("rtlab serve: accept: {e}");
                tokio::time::sleep(TICK).await;
                continue;
            }
        };
        let t0 = Instant::now();
        if let Ok(slot) = Arc::clone(&slots).try_acquire_owned() {
            let site = Arc::clone(&site);
            let service = service_fn(move |req| answer(Arc::clone(&site), req, limits.request));
            let conn = graceful.watch(http(limits.request).serve_connection(stream, service));
            tokio::spawn(async move {
                let mut conn = pin!(timeout(limits.connection, conn));
                if let Some((what, why)) = ended_early(conn.as_mut().await, &limits) {
                    eprintln!("- {what} {} {why}", millis(t0));
                }
                drop(slot);
                // The socket goes last: a client that sees its connection
                // closed finds it logged and its slot free.
            });
        } else if let Ok(slot) = Arc::clone(&shed).try_acquire_owned() {
            let service = service_fn(move |req| busy(req, t0));
            let conn = graceful.watch(http(SHED_TIME).serve_connection(stream, service));
            tokio::spawn(async move {
                let _ = timeout(SHED_TIME, conn).await;
                drop(slot);
            });
        }
    }
    drop(listener);
    let _ = timeout(limits.request, graceful.shutdown()).await;
    Ok(())
}

/// The next connection, or None once `stop` is raised (looked at every tick).
async fn next(
    listener: &tokio::net::TcpListener,
    tick: &mut Interval,
    stop: &AtomicBool,
) -> Option<std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)>> {
    poll_fn(|cx| {
        if stop.load(Ordering::SeqCst) {
            return Poll::Ready(None);
        }
        if let Poll::Ready(accepted) = listener.poll_accept(cx) {
            return Poll::Ready(Some(accepted));
        }
        while tick.poll_tick(cx).is_ready() {}
        Poll::Pending
    })
    .await
}

/// hyper's HTTP/1 server with the bounds of this module; the request head
/// within `head`.
fn http(head: Duration) -> http1::Builder {
    let mut b = http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(head)
        .keep_alive(false)
        .half_close(true)
        .title_case_headers(true)
        .max_headers(MAX_HEADERS)
        .max_header_size(MAX_HEAD)
        .max_buf_size(MAX_BUFFER);
    b
}

/// Answers one request: the page made on a blocking thread within `within`,
/// and a line in the log.
async fn answer(
    site: Arc<Site>,
    req: hyper::Request<Incoming>,
    within: Duration,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let t0 = Instant::now();
    let checked = http::request(&req);
    let what = described(&checked);
    let resp = match checked {
        Ok(req) => {
            let made = tokio::task::spawn_blocking(move || site.answer(&req));
            match timeout(within, made).await {
                Ok(Ok(resp)) => resp,
                Ok(Err(_)) => Response::text(500, "the page could not be made"),
                Err(_) => Response::text(
                    503,
                    &format!("the answer took over {} (--read-timeout)", exact_of(within)),
                )
                .with("Retry-After", "1"),
            }
        }
        Err(refused) => refused,
    };
    eprintln!("{what} {} {}", resp.status, millis(t0));
    Ok(resp.into_hyper())
}

/// The answer past `--max-connections`.
async fn busy(
    req: hyper::Request<Incoming>,
    t0: Instant,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let what = described(&http::request(&req));
    eprintln!("{what} 503 {} busy (--max-connections)", millis(t0));
    Ok(Response::text(503, "busy: too many connections, try again")
        .with("Retry-After", "1")
        .into_hyper())
}

/// A request as the log shows it: method and path (never the query, which
/// may hold the token), or `-` for a refused one.
fn described(req: &Result<Request, Response>) -> String {
    match req {
        Ok(r) => format!("{} {}", r.method, escaped(&r.path)),
        Err(_) => "-".into(),
    }
}

/// Why a connection ended before its answer was written, if it did: closed
/// at a deadline, refused by hyper (400, 431), or left by the client. As the
/// log shows it: what happened, then why, after the time.
fn ended_early(
    ended: Result<hyper::Result<()>, tokio::time::error::Elapsed>,
    limits: &Limits,
) -> Option<(String, String)> {
    let closed = |why: String| Some(("closed".to_string(), why));
    let e = match ended {
        Ok(Ok(())) => return None,
        Err(_) => {
            return closed(format!(
                "open for {} (--connection-time)",
                exact_of(limits.connection)
            ))
        }
        Ok(Err(e)) => e,
    };
    if e.is_timeout() {
        closed(format!(
            "no whole request head within {} (--read-timeout)",
            exact_of(limits.request)
        ))
    } else if e.is_parse_too_large() {
        Some((
            "431".into(),
            format!(
                "request head over {} KiB or {MAX_HEADERS} lines",
                MAX_HEAD / 1024
            ),
        ))
    } else if e.is_parse() {
        Some(("400".into(), e.to_string()))
    } else {
        closed(e.to_string())
    }
}

fn exact_of(d: Duration) -> String {
    exact(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn millis(t0: Instant) -> String {
    format!("{:.1}ms", t0.elapsed().as_secs_f64() * 1e3)
}

/// `text` as the log shows it: control characters as `\xNN`, the line and
/// paragraph separators and bidirectional controls as `\u{NNNN}`, and `\` as
/// `\\`, so that a request cannot write lines of its own in the log, nor make
/// a line read as another.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            '\u{2028}'
            | '\u{2029}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => out.push_str(&format!("\\u{{{:04x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_paths_cannot_forge_lines() {
        assert_eq!(escaped("/run/1"), "/run/1");
        assert_eq!(
            escaped("/x 200 1.0ms\nGET /forged\r\x1b[2J"),
            "/x 200 1.0ms\\x0aGET /forged\\x0d\\x1b[2J"
        );
        assert_eq!(escaped("/a\\x0a\u{85}"), "/a\\\\x0a\\x85");
        assert_eq!(escaped("/\u{202e}gpj.exe"), "/\\u{202e}gpj.exe");
        assert_eq!(escaped("/höst"), "/höst");
    }
}
