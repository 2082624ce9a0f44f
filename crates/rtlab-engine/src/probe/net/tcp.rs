//! The TCP side of the echo server: one thread serves every connection through
//! non-blocking sockets and `ppoll(2)`, so that no client can block another
//! client, the stop flag or the end of the duration.
//!
//! Each connection slot holds one message buffer ([`MAX_MESSAGE`] bytes) and one
//! output queue ([`OUTPUT_QUEUE`] bytes), allocated when the slot is first needed
//! and reused by later connections: memory is bounded by `max_clients` whatever
//! the clients send or fail to read. A connection is closed
//! - right after it is accepted when `max_clients` are open (counted as refused);
//! - at its first malformed message, as a stream cannot be resynchronised
//!   (counted by reason);
//! - when an answer no longer fits its output queue, because the client sends
//!   but does not read (counted as a slow reader);
//! - after `idle_timeout_ns` without a complete request (counted as idle).
//!
//! With a processing delay, a request waits in its own connection until its answer
//! is due while the other connections are served: one client's delays never delay
//! another client.

use super::server::{Ctx, ServeEnd, POLL};
use crate::proto::{self, Header, HEADER_LEN, MAX_MESSAGE};
use crate::rt::clock::{Clock, NS_PER_SEC};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

/// Bytes of answers one connection may have waiting for its client to read them,
/// beyond what the kernel's socket buffers already hold; three of the largest
/// answers fit. A client whose answers do not fit is dropped.
pub const OUTPUT_QUEUE: usize = 64 * 1024;
/// Most connections accepted per turn of the loop, so that a storm of connections
/// cannot starve the open ones.
const ACCEPT_BURST: usize = 16;
/// How long accepting pauses after the process ran out of descriptors or memory:
/// the waiting connection would otherwise wake `ppoll` at once, again and again.
const ACCEPT_BACKOFF_NS: u64 = 10_000_000;

/// Serves TCP connections until the stop flag or the end of the duration, which it
/// looks at least every [`POLL`], whatever the clients do.
pub(super) fn serve(ctx: &Ctx, listener: &TcpListener) -> ServeEnd {
    let c = ctx.counters;
    if listener.set_nonblocking(true).is_err() {
        c.io_error();
    }
    let max = ctx.cfg.max_clients.max(1);
    let tick = POLL.as_nanos() as u64;
    // Slots grow up to the most connections open at once, never beyond `max`.
    let mut conns: Vec<Conn> = Vec::new();
    let mut open = 0usize;
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(max.min(1024) + 1);
    let mut slot_of: Vec<usize> = Vec::with_capacity(max.min(1024));
    let mut accept_from = 0u64;
    loop {
        if let Some(end) = ctx.should_end() {
            // Dropping the slots closes every connection.
            return end;
        }
        let now = ctx.clock.now();
        let mut wake = now.saturating_add(tick);
        if let Some(e) = ctx.end_at {
            wake = wake.min(e);
        }
        let accepting = now >= accept_from;
        if !accepting {
            wake = wake.min(accept_from);
        }
        fds.clear();
        slot_of.clear();
        fds.push(pollfd(
            listener.as_raw_fd(),
            if accepting { libc::POLLIN } else { 0 },
        ));
        for (i, conn) in conns.iter().enumerate() {
            if let Some(s) = &conn.stream {
                fds.push(pollfd(s.as_raw_fd(), conn.events()));
                slot_of.push(i);
                wake = wake.min(conn.wake_at(ctx.cfg.idle_timeout_ns));
            }
        }
        match wait(&mut fds, wake.saturating_sub(now)) {
            Ok(_) => {}
            Err(libc::EINTR) => continue,
            Err(_) => {
                // Out of kernel memory: count, back off, keep serving.
                c.io_error();
                let _ = ctx.clock.sleep_until(now.saturating_add(ACCEPT_BACKOFF_NS));
                continue;
            }
        }
        let now = ctx.clock.now();
        // Open connections first: the slots they free can take new ones.
        for (k, &i) in slot_of.iter().enumerate() {
            let conn = &mut conns[i];
            if let Err(why) = conn.turn(ctx, fds[k + 1].revents, now) {
                conn.close();
                open -= 1;
                match why {
                    Close::Idle => c.idle(),
                    Close::SlowReader => c.slow_reader(),
                    Close::Error => c.io_error(),
                    Close::Peer | Close::Rejected => {}
                }
            }
        }
        if fds[0].revents & libc::POLLIN != 0 {
            if let Some(t) = accept_some(ctx, listener, &mut conns, &mut open, max, now) {
                accept_from = t;
            }
        }
    }
}

/// Accepts up to [`ACCEPT_BURST`] waiting connections, closing at once those
/// beyond `max`. Returns when to accept again if the process ran short of
/// descriptors or memory.
fn accept_some(
    ctx: &Ctx,
    listener: &TcpListener,
    conns: &mut Vec<Conn>,
    open: &mut usize,
    max: usize,
    now: u64,
) -> Option<u64> {
    let c = ctx.counters;
    for _ in 0..ACCEPT_BURST {
        match listener.accept() {
            Ok((stream, _)) => {
                if *open >= max {
                    c.refused();
                    continue;
                }
                if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
                    c.io_error();
                    continue;
                }
                let slot = match conns.iter().position(|s| s.stream.is_none()) {
                    Some(i) => i,
                    None => {
                        conns.push(Conn::new());
                        conns.len() - 1
                    }
                };
                conns[slot].open(stream, now);
                *open += 1;
                c.connected(*open);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            // The client gave up before it was accepted.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionAborted | ErrorKind::Interrupted
                ) => {}
            Err(_) => {
                // Out of descriptors (EMFILE, ENFILE) or memory, or a network
                // error pending on the new connection: count and pause accepting.
                c.io_error();
                return Some(now.saturating_add(ACCEPT_BACKOFF_NS));
            }
        }
    }
    None
}

/// Why a connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    /// The client closed or reset it.
    Peer,
    /// A malformed message, already counted by reason.
    Rejected,
    /// No complete request for the idle timeout.
    Idle,
    /// An answer did not fit its output queue: the client does not read.
    SlowReader,
    /// Another socket error.
    Error,
}

fn close_reason(e: &std::io::Error) -> Close {
    match e.kind() {
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
            Close::Peer
        }
        _ => Close::Error,
    }
}

/// One connection slot. Its buffers outlive the connections that use them.
struct Conn {
    stream: Option<TcpStream>,
    /// Received bytes not answered yet: `input[..have]`.
    input: Box<[u8]>,
    have: usize,
    /// Answers the kernel has not taken yet.
    out: OutQueue,
    /// When the last bytes arrived: the receive time of the messages they complete.
    t_read: u64,
    /// When the connection was accepted or last completed a request.
    last_request: u64,
    /// The request at the front of `input`, checked, whose delayed answer is due
    /// at that time. Nothing more is read meanwhile.
    due: Option<(u64, Header)>,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            stream: None,
            input: vec![0u8; MAX_MESSAGE].into_boxed_slice(),
            have: 0,
            out: OutQueue {
                buf: vec![0u8; OUTPUT_QUEUE].into_boxed_slice(),
                start: 0,
                end: 0,
            },
            t_read: 0,
            last_request: 0,
            due: None,
        }
    }

    fn open(&mut self, stream: TcpStream, now: u64) {
        self.stream = Some(stream);
        self.have = 0;
        self.out.clear();
        self.t_read = now;
        self.last_request = now;
        self.due = None;
    }

    fn close(&mut self) {
        self.stream = None;
        self.have = 0;
        self.out.clear();
        self.due = None;
    }

    /// What to wait for: bytes to read unless a delayed answer holds the
    /// connection (or, which cannot happen, the buffer is full: ppoll would then
    /// report them again and again), room to write when answers wait.
    fn events(&self) -> libc::c_short {
        let mut ev = 0;
        if self.due.is_none() && self.have < self.input.len() {
            ev |= libc::POLLIN;
        }
        if !self.out.is_empty() {
            ev |= libc::POLLOUT;
        }
        ev
    }

    /// When the connection needs a turn even if nothing happens on its socket.
    fn wake_at(&self, idle_timeout_ns: u64) -> u64 {
        match self.due {
            Some((t, _)) => t,
            None => self.last_request.saturating_add(idle_timeout_ns),
        }
    }

    /// One turn: write what waits, answer what is due or complete, read what
    /// arrived (once, so that every connection gets its turn), and close for
    /// idling. `revents` is what `ppoll` reported for the socket.
    fn turn(&mut self, ctx: &Ctx, revents: libc::c_short, now: u64) -> Result<(), Close> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        if revents & libc::POLLOUT != 0 {
            self.out.flush(stream)?;
        }
        if let Some((t, h)) = self.due {
            if now < t {
                if revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                    // Nobody is left to answer, and the condition would wake
                    // ppoll at once until the answer is due.
                    return Err(Close::Peer);
                }
                return Ok(());
            }
            self.due = None;
            let need = HEADER_LEN + h.payload_len as usize;
            let n = ctx.reply(&mut self.input[..need], &h, self.t_read);
            self.out.send(stream, &self.input[..n])?;
            self.consume(need);
        }
        self.serve_complete(ctx, now)?;
        if self.due.is_none() && revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0 {
            self.read(ctx, now)?;
            self.serve_complete(ctx, now)?;
        }
        if self.due.is_none() && now.saturating_sub(self.last_request) >= ctx.cfg.idle_timeout_ns {
            return Err(Close::Idle);
        }
        Ok(())
    }

    /// Reads once what the kernel holds for this connection.
    fn read(&mut self, ctx: &Ctx, now: u64) -> Result<(), Close> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        // What is left after answering is less than one message, so there is
        // room; an empty read would look like the end of the stream.
        if self.have == self.input.len() {
            return Ok(());
        }
        match stream.read(&mut self.input[self.have..]) {
            Ok(0) => {
                if self.have > 0 {
                    ctx.counters.add_bytes_in(self.have);
                    ctx.counters.reject(if self.have < HEADER_LEN {
                        proto::Reject::Short
                    } else {
                        proto::Reject::Truncated
                    });
                }
                Err(Close::Peer)
            }
            Ok(n) => {
                self.have += n;
                self.t_read = now;
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(()),
            Err(e) => Err(close_reason(&e)),
        }
    }

    /// Answers the complete messages at the front of `input`, stopping at the
    /// first whose delayed answer is not due yet.
    fn serve_complete(&mut self, ctx: &Ctx, now: u64) -> Result<(), Close> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        let mut start = 0;
        let result = loop {
            let rest = self.have - start;
            if self.due.is_some() || rest < HEADER_LEN {
                break Ok(());
            }
            let msg = &mut self.input[start..self.have];
            let need = match proto::parse_header(&msg[..HEADER_LEN]) {
                Ok(h) => HEADER_LEN + h.payload_len as usize,
                Err(r) => {
                    ctx.counters.add_bytes_in(rest);
                    ctx.counters.reject(r);
                    break Err(Close::Rejected);
                }
            };
            if rest < need {
                break Ok(());
            }
            let msg = &mut msg[..need];
            let Some(h) = ctx.check(msg) else {
                break Err(Close::Rejected);
            };
            self.last_request = now;
            let due = self.t_read.saturating_add(ctx.cfg.delay_ns);
            if due > now {
                self.due = Some((due, h));
                break Ok(());
            }
            let n = ctx.reply(msg, &h, self.t_read);
            if let Err(e) = self.out.send(stream, &msg[..n]) {
                break Err(e);
            }
            start += need;
        };
        self.consume(start);
        result
    }

    /// Drops the first `n` bytes of `input`.
    fn consume(&mut self, n: usize) {
        self.input.copy_within(n..self.have, 0);
        self.have -= n;
    }
}

/// Answers waiting for the kernel to take them: `buf[start..end]`.
struct OutQueue {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl OutQueue {
    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Sends `data` after what already waits; what the kernel does not take now
    /// waits here. Fails when it does not fit: the client is not reading.
    fn send(&mut self, stream: &mut TcpStream, data: &[u8]) -> Result<(), Close> {
        let mut data = data;
        if self.is_empty() {
            // The usual case: straight to the kernel, no copy.
            let n = write_some(stream, data)?;
            data = &data[n..];
            if data.is_empty() {
                return Ok(());
            }
        }
        if self.end - self.start + data.len() > self.buf.len() {
            return Err(Close::SlowReader);
        }
        if self.end + data.len() > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        self.buf[self.end..self.end + data.len()].copy_from_slice(data);
        self.end += data.len();
        Ok(())
    }

    /// Gives the kernel as much of the waiting answers as it takes now.
    fn flush(&mut self, stream: &mut TcpStream) -> Result<(), Close> {
        while !self.is_empty() {
            let n = write_some(stream, &self.buf[self.start..self.end])?;
            if n == 0 {
                break;
            }
            self.start += n;
        }
        if self.is_empty() {
            self.clear();
        }
        Ok(())
    }
}

/// Writes what the kernel takes now without waiting (0 when it takes nothing).
fn write_some(stream: &mut TcpStream, data: &[u8]) -> Result<usize, Close> {
    match stream.write(data) {
        Ok(n) => Ok(n),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(0),
        Err(e) => Err(close_reason(&e)),
    }
}

fn pollfd(fd: libc::c_int, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// Waits at most `timeout_ns` for the events asked in `fds` and returns how many
/// descriptors have some, or the errno (`EINTR` when a signal arrived).
fn wait(fds: &mut [libc::pollfd], timeout_ns: u64) -> Result<usize, i32> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / NS_PER_SEC) as libc::time_t,
        tv_nsec: (timeout_ns % NS_PER_SEC) as libc::c_long,
    };
    // SAFETY: ppoll(2) reads and writes `fds.len()` pollfd structs of a live,
    // exclusively borrowed slice and reads one timespec; a null signal mask keeps
    // the thread's own mask.
    let rc = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if rc < 0 {
        Err(crate::rt::errno())
    } else {
        Ok(rc as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::net::client::ThreadSetup;
    use crate::probe::net::server::{self, Listener, ServeConfig, ServerCounters};
    use crate::proto::{write_header, Kind, MAX_PAYLOAD};
    use crate::rt::sched::Policy;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::time::{Duration, Instant};

    /// A connected pair: (server side, non-blocking; client side).
    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        (server, client)
    }

    #[test]
    fn answers_a_client_does_not_read_fill_the_queue_then_drop_it() {
        let (mut s, mut client) = pair();
        let mut q = Conn::new().out;
        let answer = vec![1u8; MAX_MESSAGE];
        let mut sent = 0usize;
        // Bounded: the kernel's buffers plus the queue hold a few MiB at most.
        let end = (0..100_000).find_map(|_| match q.send(&mut s, &answer) {
            Ok(()) => {
                sent += answer.len();
                None
            }
            Err(e) => Some(e),
        });
        assert_eq!(end, Some(Close::SlowReader), "{sent} bytes taken");
        assert!(!q.is_empty() && q.end - q.start <= OUTPUT_QUEUE);
        // Once the client reads, what waited goes out: everything taken arrives.
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0usize;
        while got < sent {
            got += client.read(&mut buf).unwrap();
            q.flush(&mut s).unwrap();
        }
        assert!(q.is_empty() && q.start == 0);
        assert_eq!(got, sent);
    }

    #[test]
    fn the_loop_ends_on_the_stop_flag_with_a_client_that_never_reads() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // 'static, so that a hung server cannot hang the test as well.
        let l: &'static Listener = Box::leak(Box::new(Listener::Tcp(listener)));
        let counters: &'static ServerCounters = Box::leak(Box::default());
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let cfg: &'static ServeConfig = Box::leak(Box::new(ServeConfig {
            delay_ns: 0,
            duration_ns: 0,
            setup: ThreadSetup {
                cpus: vec![],
                policy: Policy::Other,
                priority: 0,
            },
            info: Vec::new(),
            max_clients: 4,
            idle_timeout_ns: 60 * NS_PER_SEC,
        }));
        let (done_tx, done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(server::serve(l, cfg, counters, stop));
        });
        let mut req = vec![0u8; HEADER_LEN + MAX_PAYLOAD];
        write_header(
            &mut req,
            &Header {
                kind: Kind::Request,
                leg: 0,
                legs: 1,
                session: 1,
                payload_len: MAX_PAYLOAD as u16,
                seq: 0,
                client_ns: 0,
                server_ns: 0,
            },
        );
        // Send until dropped (or a minute, a generous bound), never reading.
        let mut staller = TcpStream::connect(addr).unwrap();
        staller
            .set_write_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(60) && counters.summary().slow_readers_dropped == 0
        {
            let _ = staller.write(&req);
        }
        let _idle = TcpStream::connect(addr).unwrap();
        stop.store(true, Relaxed);
        let end = done.recv_timeout(Duration::from_secs(10));
        assert_eq!(end, Ok(Ok(ServeEnd::Stopped)), "the loop did not end");
        let s = counters.summary();
        assert_eq!(s.slow_readers_dropped, 1, "{s:?}");
        assert!(s.served > 0 && s.bytes_out <= s.bytes_in, "{s:?}");
    }
}
