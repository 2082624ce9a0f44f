//! The echo server: answers valid requests, counts and drops everything else.
//!
//! Hardening: every received message goes through [`proto::parse`]; anything
//! malformed, of the wrong kind or version is counted by reason and never answered.
//! Answers are never longer than the request (no amplification). Memory is fixed:
//! one 64 KiB datagram buffer for UDP; for TCP one message buffer per connection and
//! at most `max_connections` connections, each closed after `idle_timeout_ns`
//! without a complete request, or at the first malformed header (a stream cannot be
//! resynchronised).

use super::client::{SetupError, ThreadSetup};
use crate::proto::{self, Kind, Reject, HEADER_LEN, MAX_MESSAGE};
use crate::rt::clock::{Clock, ClockId, SystemClock};
use serde::{Deserialize, Serialize};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// How often blocked loops look at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// The largest UDP datagram plus one: anything longer than [`MAX_MESSAGE`] is seen
/// as such and counted as oversized.
const DATAGRAM_BUF: usize = 65_536;

/// How the server runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Extra processing time per request, for testing (ns).
    pub delay_ns: u64,
    /// Stop after this long (ns; 0: until the stop flag).
    pub duration_ns: u64,
    /// Pinning and policy of the serving threads.
    pub setup: ThreadSetup,
    /// The settings sent in answer to an info request, as `key=value` lines.
    pub info: Vec<u8>,
    /// Most TCP connections served at once; more are accepted and closed.
    pub max_connections: usize,
    /// A TCP connection without a complete request for this long is closed (ns).
    pub idle_timeout_ns: u64,
}

/// The server's counters, shared by its threads.
#[derive(Debug, Default)]
pub struct ServerCounters {
    served: AtomicU64,
    info: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    rejected: [AtomicU64; Reject::ALL.len()],
    connections: AtomicU64,
    connections_refused: AtomicU64,
    idle_closed: AtomicU64,
    io_errors: AtomicU64,
}

/// A copy of the counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ServerSummary {
    /// Requests answered.
    pub served: u64,
    /// Info requests answered.
    pub info: u64,
    /// Bytes received in requests (valid or not).
    pub bytes_in: u64,
    /// Bytes sent in answers.
    pub bytes_out: u64,
    /// Messages refused, by reason ([`Reject::name`]).
    pub rejected: Vec<(String, u64)>,
    /// TCP connections accepted and served.
    pub connections: u64,
    /// TCP connections closed at once because `max_connections` were open.
    pub connections_refused: u64,
    /// TCP connections closed for idling.
    pub idle_closed: u64,
    /// Socket errors while receiving or sending.
    pub io_errors: u64,
}

impl ServerSummary {
    /// All refused messages.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().map(|(_, n)| n).sum()
    }
}

impl ServerCounters {
    fn reject(&self, r: Reject) {
        self.rejected[r.index()].fetch_add(1, Relaxed);
    }

    /// Reads every counter.
    pub fn summary(&self) -> ServerSummary {
        ServerSummary {
            served: self.served.load(Relaxed),
            info: self.info.load(Relaxed),
            bytes_in: self.bytes_in.load(Relaxed),
            bytes_out: self.bytes_out.load(Relaxed),
            rejected: Reject::ALL
                .iter()
                .map(|r| (r.name().to_string(), self.rejected[r.index()].load(Relaxed)))
                .collect(),
            connections: self.connections.load(Relaxed),
            connections_refused: self.connections_refused.load(Relaxed),
            idle_closed: self.idle_closed.load(Relaxed),
            io_errors: self.io_errors.load(Relaxed),
        }
    }
}

/// What the server listens on, bound by the caller.
#[derive(Debug)]
pub enum Listener {
    /// One UDP socket: one datagram per message.
    Udp(UdpSocket),
    /// A TCP listener: messages back to back on each connection.
    Tcp(TcpListener),
}

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeEnd {
    /// The stop flag was raised.
    Stopped,
    /// `duration_ns` passed.
    DurationDone,
}

/// Serves until `stop` is raised or the duration passes. The calling thread (and,
/// for TCP, each connection's thread) takes `cfg.setup`'s pinning and policy.
pub fn serve(
    listener: &Listener,
    cfg: &ServeConfig,
    counters: &ServerCounters,
    stop: &AtomicBool,
) -> Result<ServeEnd, SetupError> {
    cfg.setup.apply()?;
    let clock = SystemClock::new(ClockId::Monotonic);
    let end_at = (cfg.duration_ns > 0).then(|| clock.now().saturating_add(cfg.duration_ns));
    let ctx = Ctx {
        clock,
        cfg,
        counters,
        stop,
        end_at,
    };
    Ok(match listener {
        Listener::Udp(sock) => serve_udp(&ctx, sock),
        Listener::Tcp(l) => serve_tcp(&ctx, l),
    })
}

/// What every serving loop needs.
struct Ctx<'a> {
    clock: SystemClock,
    cfg: &'a ServeConfig,
    counters: &'a ServerCounters,
    stop: &'a AtomicBool,
    end_at: Option<u64>,
}

impl Ctx<'_> {
    /// Why to stop now, if it is time.
    fn should_end(&self) -> Option<ServeEnd> {
        if self.stop.load(Relaxed) {
            Some(ServeEnd::Stopped)
        } else if self.end_at.is_some_and(|e| self.clock.now() >= e) {
            Some(ServeEnd::DurationDone)
        } else {
            None
        }
    }

    /// Checks the message in `buf` (received at `t_recv`) and turns it into its
    /// answer in place; returns the answer's length, or `None` after counting why
    /// it is refused.
    fn answer(&self, buf: &mut [u8], t_recv: u64) -> Option<usize> {
        let c = self.counters;
        c.bytes_in.fetch_add(buf.len() as u64, Relaxed);
        let h = match proto::parse(buf) {
            Ok(h) if matches!(h.kind, Kind::Request | Kind::InfoRequest) => h,
            Ok(_) => {
                // Replies are never answered: two servers cannot be made to
                // bounce messages between them.
                c.reject(Reject::BadKind);
                return None;
            }
            Err(r) => {
                c.reject(r);
                return None;
            }
        };
        if self.cfg.delay_ns > 0 {
            // An interrupted sleep just answers early; the stop flag is checked
            // by the caller.
            let _ = self
                .clock
                .sleep_until(t_recv.saturating_add(self.cfg.delay_ns));
        }
        let server_ns = self.clock.now().saturating_sub(t_recv);
        let n = proto::make_answer(buf, &h, server_ns, &self.cfg.info);
        if h.kind == Kind::InfoRequest {
            c.info.fetch_add(1, Relaxed);
        } else {
            c.served.fetch_add(1, Relaxed);
        }
        c.bytes_out.fetch_add(n as u64, Relaxed);
        Some(n)
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

fn serve_udp(ctx: &Ctx, sock: &UdpSocket) -> ServeEnd {
    let mut buf = vec![0u8; DATAGRAM_BUF];
    if sock.set_read_timeout(Some(POLL)).is_err() {
        ctx.counters.io_errors.fetch_add(1, Relaxed);
    }
    loop {
        if let Some(end) = ctx.should_end() {
            return end;
        }
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                let t_recv = ctx.clock.now();
                if let Some(len) = ctx.answer(&mut buf[..n], t_recv) {
                    if sock.send_to(&buf[..len], from).is_err() {
                        ctx.counters.io_errors.fetch_add(1, Relaxed);
                    }
                }
            }
            Err(e) if is_timeout(&e) => {}
            Err(_) => {
                ctx.counters.io_errors.fetch_add(1, Relaxed);
            }
        }
    }
}

fn serve_tcp(ctx: &Ctx, listener: &TcpListener) -> ServeEnd {
    let active = AtomicUsize::new(0);
    if listener.set_nonblocking(true).is_err() {
        ctx.counters.io_errors.fetch_add(1, Relaxed);
    }
    std::thread::scope(|s| loop {
        if let Some(end) = ctx.should_end() {
            return end;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                if active.load(Relaxed) >= ctx.cfg.max_connections {
                    ctx.counters.connections_refused.fetch_add(1, Relaxed);
                    drop(stream);
                    continue;
                }
                active.fetch_add(1, Relaxed);
                ctx.counters.connections.fetch_add(1, Relaxed);
                let active = &active;
                let spawned = std::thread::Builder::new()
                    .name("rtlab-serve".into())
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        // The policy was accepted for the listening thread; a
                        // refusal here can only come from a changed limit, and the
                        // connection is still served.
                        let _ = ctx.cfg.setup.apply();
                        serve_connection(ctx, stream);
                        active.fetch_sub(1, Relaxed);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Relaxed);
                    ctx.counters.io_errors.fetch_add(1, Relaxed);
                }
            }
            Err(e) if is_timeout(&e) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => {
                // Out of descriptors or similar: count, back off, keep serving.
                ctx.counters.io_errors.fetch_add(1, Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    })
}

fn serve_connection(ctx: &Ctx, mut stream: TcpStream) {
    let c = ctx.counters;
    if stream.set_nonblocking(false).is_err()
        || stream.set_nodelay(true).is_err()
        || stream.set_read_timeout(Some(POLL)).is_err()
    {
        c.io_errors.fetch_add(1, Relaxed);
        return;
    }
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut have = 0usize;
    let mut t_recv = ctx.clock.now();
    let mut last_answer = t_recv;
    loop {
        if ctx.should_end().is_some() {
            return;
        }
        if have >= HEADER_LEN {
            let h = match proto::parse_header(&buf[..HEADER_LEN]) {
                Ok(h) => h,
                Err(r) => {
                    c.bytes_in.fetch_add(have as u64, Relaxed);
                    c.reject(r);
                    return;
                }
            };
            let need = HEADER_LEN + h.payload_len as usize;
            if have >= need {
                if let Some(len) = ctx.answer(&mut buf[..need], t_recv) {
                    if stream.write_all(&buf[..len]).is_err() {
                        c.io_errors.fetch_add(1, Relaxed);
                        return;
                    }
                } else {
                    return;
                }
                buf.copy_within(need..have, 0);
                have -= need;
                last_answer = ctx.clock.now();
                continue;
            }
        }
        match stream.read(&mut buf[have..]) {
            Ok(0) => {
                if have > 0 {
                    c.bytes_in.fetch_add(have as u64, Relaxed);
                    c.reject(if have < HEADER_LEN {
                        Reject::Short
                    } else {
                        Reject::Truncated
                    });
                }
                return;
            }
            Ok(n) => {
                have += n;
                t_recv = ctx.clock.now();
            }
            Err(e) if is_timeout(&e) => {
                if ctx.clock.now().saturating_sub(last_answer) > ctx.cfg.idle_timeout_ns {
                    c.idle_closed.fetch_add(1, Relaxed);
                    return;
                }
            }
            Err(_) => {
                c.io_errors.fetch_add(1, Relaxed);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{write_header, Header};
    use crate::rt::sched::Policy;

    fn cfg() -> ServeConfig {
        ServeConfig {
            delay_ns: 0,
            duration_ns: 0,
            setup: ThreadSetup {
                cpus: vec![],
                policy: Policy::Other,
                priority: 0,
            },
            info: b"transport=test\n".to_vec(),
            max_connections: 2,
            idle_timeout_ns: 60_000_000_000,
        }
    }

    fn request(kind: Kind, payload: u16) -> Vec<u8> {
        let mut b = vec![3u8; HEADER_LEN + payload as usize];
        write_header(
            &mut b,
            &Header {
                kind,
                leg: 0,
                legs: 1,
                session: 5,
                payload_len: payload,
                seq: 9,
                client_ns: 1,
                server_ns: 0,
            },
        );
        b
    }

    #[test]
    fn answers_requests_and_counts_refusals() {
        let counters = ServerCounters::default();
        let stop = AtomicBool::new(false);
        let c = cfg();
        let ctx = Ctx {
            clock: SystemClock::new(ClockId::Monotonic),
            cfg: &c,
            counters: &counters,
            stop: &stop,
            end_at: None,
        };
        let mut req = request(Kind::Request, 20);
        assert_eq!(ctx.answer(&mut req, ctx.clock.now()), Some(HEADER_LEN + 20));
        assert_eq!(proto::parse(&req).unwrap().kind, Kind::Reply);
        // A reply is refused (no ping-pong between servers), as is garbage.
        assert_eq!(ctx.answer(&mut req, 0), None);
        assert_eq!(ctx.answer(&mut [1, 2, 3], 0), None);
        let mut info = request(Kind::InfoRequest, 4);
        assert_eq!(ctx.answer(&mut info, ctx.clock.now()), Some(HEADER_LEN + 4));
        assert_eq!(&info[HEADER_LEN..], b"tran");
        let s = counters.summary();
        assert_eq!((s.served, s.info, s.rejected_total()), (1, 1, 2));
        assert!(s.rejected.contains(&("bad_kind".to_string(), 1)));
        assert!(s.rejected.contains(&("short".to_string(), 1)));
        assert_eq!(s.bytes_out, (2 * HEADER_LEN + 24) as u64);
    }

    #[test]
    fn tcp_server_closes_on_garbage_and_counts_truncation() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let l = Listener::Tcp(listener);
        let counters = ServerCounters::default();
        let stop = AtomicBool::new(false);
        let c = cfg();
        std::thread::scope(|s| {
            s.spawn(|| serve(&l, &c, &counters, &stop).unwrap());
            // A valid request is answered with the same bytes count.
            let mut conn = TcpStream::connect(addr).unwrap();
            let req = request(Kind::Request, 10);
            conn.write_all(&req).unwrap();
            let mut back = vec![0u8; req.len()];
            conn.read_exact(&mut back).unwrap();
            assert_eq!(proto::parse(&back).unwrap().kind, Kind::Reply);
            // Garbage closes the connection.
            conn.write_all(&[0xFFu8; 64]).unwrap();
            let mut one = [0u8; 1];
            assert!(matches!(conn.read(&mut one), Ok(0) | Err(_)));
            // Half a message, then close: truncated.
            let mut conn = TcpStream::connect(addr).unwrap();
            conn.write_all(&req[..HEADER_LEN + 3]).unwrap();
            drop(conn);
            // Wait for the server threads to count, bounded.
            for _ in 0..100 {
                if counters.summary().rejected_total() >= 2 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Relaxed);
        });
        let s = counters.summary();
        assert_eq!(s.served, 1);
        assert!(s.rejected.contains(&("bad_magic".to_string(), 1)), "{s:?}");
        assert!(s.rejected.contains(&("truncated".to_string(), 1)), "{s:?}");
        assert_eq!(s.connections, 2);
    }
}
