//! The echo server: answers valid requests, counts and drops everything else.
//!
//! Hardening: every received message goes through [`proto::parse`]; anything
//! malformed, of the wrong kind or version is counted by reason and never answered.
//! Answers are never longer than the request (no amplification). Memory is bounded:
//! one 64 KiB datagram buffer for UDP; for TCP (served by `tcp.rs`) one message
//! buffer and one [`OUTPUT_QUEUE`] per connection and at most `max_clients`
//! connections. No client can hold the server: the TCP side never blocks on a
//! socket, drops a client that does not read its answers, closes idle ones, and
//! every loop looks at the stop flag and the end of `duration_ns` at least every
//! 100 ms.

use super::client::{SetupError, ThreadSetup};
use crate::proto::{self, Header, Kind, Reject};
use crate::rt::clock::{Clock, ClockId, SystemClock};
use serde::{Deserialize, Serialize};
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

pub use super::tcp::OUTPUT_QUEUE;

/// How often blocked loops look at the stop flag.
pub(super) const POLL: Duration = Duration::from_millis(100);
/// The largest UDP datagram plus one: anything longer than [`proto::MAX_MESSAGE`] is seen
/// as such and counted as oversized.
const DATAGRAM_BUF: usize = 65_536;

/// How the server runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Extra processing time per request, for testing (ns).
    pub delay_ns: u64,
    /// Stop after this long (ns; 0: until the stop flag).
    pub duration_ns: u64,
    /// Pinning and policy of the serving thread.
    pub setup: ThreadSetup,
    /// The settings sent in answer to an info request, as `key=value` lines.
    pub info: Vec<u8>,
    /// Most TCP clients served at once; more are accepted and closed at once.
    pub max_clients: usize,
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
    connections_peak: AtomicU64,
    idle_closed: AtomicU64,
    slow_readers_dropped: AtomicU64,
    io_errors: AtomicU64,
}

/// A copy of the counters. Counters missing from a stored summary (written by an
/// older rtlab) read as 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
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
    /// TCP connections closed at once because `max_clients` were open.
    pub connections_refused: u64,
    /// Most TCP connections open at the same time.
    pub connections_peak: u64,
    /// TCP connections closed for sending no complete request for the idle timeout.
    pub idle_closed: u64,
    /// TCP connections dropped because their answers piled up unread beyond
    /// [`OUTPUT_QUEUE`] bytes (the client sends but does not read).
    pub slow_readers_dropped: u64,
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
    pub(super) fn reject(&self, r: Reject) {
        self.rejected[r.index()].fetch_add(1, Relaxed);
    }

    pub(super) fn add_bytes_in(&self, n: usize) {
        self.bytes_in.fetch_add(n as u64, Relaxed);
    }

    pub(super) fn io_error(&self) {
        self.io_errors.fetch_add(1, Relaxed);
    }

    /// A TCP connection was accepted; `open` are open now, this one included.
    pub(super) fn connected(&self, open: usize) {
        self.connections.fetch_add(1, Relaxed);
        self.connections_peak.fetch_max(open as u64, Relaxed);
    }

    pub(super) fn refused(&self) {
        self.connections_refused.fetch_add(1, Relaxed);
    }

    pub(super) fn idle(&self) {
        self.idle_closed.fetch_add(1, Relaxed);
    }

    pub(super) fn slow_reader(&self) {
        self.slow_readers_dropped.fetch_add(1, Relaxed);
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
            connections_peak: self.connections_peak.load(Relaxed),
            idle_closed: self.idle_closed.load(Relaxed),
            slow_readers_dropped: self.slow_readers_dropped.load(Relaxed),
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

/// Serves until `stop` is raised or the duration passes, on the calling thread
/// alone, which takes `cfg.setup`'s pinning and policy. Returns within about
/// 100 ms of either, whatever the clients do (with `delay_ns`, UDP may first
/// finish the current request's delay).
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
        Listener::Tcp(l) => super::tcp::serve(&ctx, l),
    })
}

/// The process's soft limit on open files (`ulimit -n`), if it has one: the TCP
/// server holds one descriptor per client.
pub fn open_file_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes one rlimit through a valid pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// What every serving loop needs.
pub(super) struct Ctx<'a> {
    pub(super) clock: SystemClock,
    pub(super) cfg: &'a ServeConfig,
    pub(super) counters: &'a ServerCounters,
    stop: &'a AtomicBool,
    pub(super) end_at: Option<u64>,
}

impl Ctx<'_> {
    /// Why to stop now, if it is time.
    pub(super) fn should_end(&self) -> Option<ServeEnd> {
        if self.stop.load(Relaxed) {
            Some(ServeEnd::Stopped)
        } else if self.end_at.is_some_and(|e| self.clock.now() >= e) {
            Some(ServeEnd::DurationDone)
        } else {
            None
        }
    }

    /// Checks the message in `buf` (received at `t_recv`), waits out the
    /// configured delay and turns it into its answer in place; returns the answer's
    /// length, or `None` after counting why it is refused.
    fn answer(&self, buf: &mut [u8], t_recv: u64) -> Option<usize> {
        let h = self.check(buf)?;
        if self.cfg.delay_ns > 0 {
            // An interrupted sleep just answers early; the stop flag is checked
            // by the caller.
            let _ = self
                .clock
                .sleep_until(t_recv.saturating_add(self.cfg.delay_ns));
        }
        Some(self.reply(buf, &h, t_recv))
    }

    /// Counts the message in `buf` as received and checks it: its header if it is
    /// a request to answer, or `None` after counting why it is refused.
    pub(super) fn check(&self, buf: &[u8]) -> Option<Header> {
        let c = self.counters;
        c.add_bytes_in(buf.len());
        match proto::parse(buf) {
            Ok(h) if matches!(h.kind, Kind::Request | Kind::InfoRequest) => Some(h),
            Ok(_) => {
                // Replies are never answered: two servers cannot be made to
                // bounce messages between them.
                c.reject(Reject::BadKind);
                None
            }
            Err(r) => {
                c.reject(r);
                None
            }
        }
    }

    /// Turns the checked request `h` in `buf` (received at `t_recv`) into its
    /// answer in place, now, and returns the answer's length.
    pub(super) fn reply(&self, buf: &mut [u8], h: &Header, t_recv: u64) -> usize {
        let c = self.counters;
        let server_ns = self.clock.now().saturating_sub(t_recv);
        let n = proto::make_answer(buf, h, server_ns, &self.cfg.info);
        if h.kind == Kind::InfoRequest {
            c.info.fetch_add(1, Relaxed);
        } else {
            c.served.fetch_add(1, Relaxed);
        }
        c.bytes_out.fetch_add(n as u64, Relaxed);
        n
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{write_header, HEADER_LEN};
    use crate::rt::sched::Policy;
    use std::io::{Read, Write};
    use std::net::TcpStream;

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
            max_clients: 2,
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
            // Wait for the server threads to count, bounded (a minute).
            for _ in 0..6000 {
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
