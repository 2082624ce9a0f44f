//! How the client moves whole messages: one UDP datagram per message, or messages
//! framed back to back on a TCP stream. Both wait at most a given time for the next
//! message and never allocate after construction.

use crate::proto::{self, HEADER_LEN, MAX_MESSAGE};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Why a send or receive did not deliver a message. Small and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetError {
    /// Nothing arrived in the time allowed.
    Timeout,
    /// A signal interrupted the wait.
    Interrupted,
    /// The peer's host answered "port unreachable": nothing listens there.
    Refused,
    /// The TCP connection was closed or reset.
    Closed,
    /// The TCP stream carried bytes that are not a valid header; it cannot be
    /// resynchronised.
    Garbled,
    /// Another socket error (errno).
    Os(i32),
}

fn classify(e: &std::io::Error) -> NetError {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => NetError::Timeout,
        ErrorKind::Interrupted => NetError::Interrupted,
        ErrorKind::ConnectionRefused => NetError::Refused,
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
            NetError::Closed
        }
        _ => NetError::Os(e.raw_os_error().unwrap_or(0)),
    }
}

/// A way to exchange whole messages with one server.
pub trait Transport {
    /// Sends one whole message.
    fn send(&mut self, msg: &[u8]) -> Result<(), NetError>;
    /// Receives one whole message into `buf` (at least [`MAX_MESSAGE`] + 1 bytes),
    /// waiting at most about `wait_ns` (up to [`TIMEOUT_SLACK_NS`] more), and
    /// returns its length.
    fn recv(&mut self, buf: &mut [u8], wait_ns: u64) -> Result<usize, NetError>;
}

/// How much longer than asked a receive may wait. Changing a socket's timeout
/// costs a system call, so it is only changed when it would wait this much too
/// long; the caller checks its own deadline after every receive.
pub const TIMEOUT_SLACK_NS: u64 = 1_000_000;

/// The socket receive timeout currently set, changed only when needed.
#[derive(Debug, Default)]
struct RecvTimeout {
    set_ns: u64,
}

impl RecvTimeout {
    fn ensure(
        &mut self,
        wait_ns: u64,
        apply: impl FnOnce(Option<Duration>) -> std::io::Result<()>,
    ) -> Result<(), NetError> {
        // A zero timeout means "block forever" to the kernel: wait at least 1 µs.
        let want = wait_ns.max(1_000);
        let set = if want > self.set_ns {
            // Round up, so that the next messages' nearly equal timeouts fit.
            want.saturating_add(TIMEOUT_SLACK_NS / 2)
        } else if want.saturating_add(TIMEOUT_SLACK_NS) < self.set_ns {
            want
        } else {
            return Ok(());
        };
        apply(Some(Duration::from_nanos(set))).map_err(|e| classify(&e))?;
        self.set_ns = set;
        Ok(())
    }
}

/// One UDP socket connected to the server.
#[derive(Debug)]
pub struct UdpTransport {
    sock: UdpSocket,
    timeout: RecvTimeout,
}

impl UdpTransport {
    /// Binds an ephemeral local port of the server's address family and connects
    /// it to `server`, so that only the server's datagrams are received and an
    /// ICMP "port unreachable" surfaces as [`NetError::Refused`].
    pub fn connect(server: SocketAddr) -> std::io::Result<UdpTransport> {
        let local: SocketAddr = if server.is_ipv4() {
            "0.0.0.0:0".parse().expect("constant address")
        } else {
            "[::]:0".parse().expect("constant address")
        };
        let sock = UdpSocket::bind(local)?;
        sock.connect(server)?;
        Ok(UdpTransport {
            sock,
            timeout: RecvTimeout::default(),
        })
    }

    /// The local address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.sock.local_addr()
    }
}

impl Transport for UdpTransport {
    fn send(&mut self, msg: &[u8]) -> Result<(), NetError> {
        self.sock.send(msg).map(|_| ()).map_err(|e| classify(&e))
    }

    fn recv(&mut self, buf: &mut [u8], wait_ns: u64) -> Result<usize, NetError> {
        let sock = &self.sock;
        self.timeout.ensure(wait_ns, |d| sock.set_read_timeout(d))?;
        // A datagram longer than `buf` is cut to `buf.len()`, which is above
        // MAX_MESSAGE, so the parser still sees it as oversized.
        self.sock.recv(buf).map_err(|e| classify(&e))
    }
}

/// One TCP connection to the server, with `TCP_NODELAY`.
#[derive(Debug)]
pub struct TcpTransport {
    stream: TcpStream,
    timeout: RecvTimeout,
    pending: Box<[u8]>,
    have: usize,
}

impl TcpTransport {
    /// Connects to `server`, waiting at most `connect_timeout`.
    pub fn connect(server: SocketAddr, connect_timeout: Duration) -> std::io::Result<TcpTransport> {
        let stream = TcpStream::connect_timeout(&server, connect_timeout)?;
        stream.set_nodelay(true)?;
        Ok(TcpTransport {
            stream,
            timeout: RecvTimeout::default(),
            pending: vec![0u8; MAX_MESSAGE].into_boxed_slice(),
            have: 0,
        })
    }

    /// Length of the complete message at the front of `pending`, if there is one.
    fn complete(&self) -> Result<Option<usize>, NetError> {
        if self.have < HEADER_LEN {
            return Ok(None);
        }
        let h = proto::parse_header(&self.pending[..HEADER_LEN]).map_err(|_| NetError::Garbled)?;
        let need = HEADER_LEN + h.payload_len as usize;
        Ok((self.have >= need).then_some(need))
    }
}

impl Transport for TcpTransport {
    fn send(&mut self, msg: &[u8]) -> Result<(), NetError> {
        self.stream.write_all(msg).map_err(|e| classify(&e))
    }

    fn recv(&mut self, buf: &mut [u8], wait_ns: u64) -> Result<usize, NetError> {
        loop {
            match self.complete() {
                Ok(Some(n)) => {
                    buf[..n].copy_from_slice(&self.pending[..n]);
                    self.pending.copy_within(n..self.have, 0);
                    self.have -= n;
                    return Ok(n);
                }
                Ok(None) => {}
                Err(e) => {
                    // Drop what is buffered: the stream has lost its framing.
                    self.have = 0;
                    return Err(e);
                }
            }
            let stream = &self.stream;
            self.timeout
                .ensure(wait_ns, |d| stream.set_read_timeout(d))?;
            match self.stream.read(&mut self.pending[self.have..]) {
                Ok(0) => return Err(NetError::Closed),
                Ok(n) => self.have += n,
                Err(e) => return Err(classify(&e)),
            }
        }
    }
}

/// The socket option that makes the kernel busy-poll the device queue on a
/// blocking receive (`SO_BUSY_POLL`, asm-generic value; not exported by libc for
/// glibc targets).
const SO_BUSY_POLL: libc::c_int = 46;

/// Asks the kernel to busy-poll the network device for up to `usec` µs before
/// sleeping on a receive from `sock` (socket(7), `SO_BUSY_POLL`). Returns the errno
/// on refusal (`EPERM` without `CAP_NET_ADMIN`).
pub fn set_busy_poll(sock: &impl AsRawFd, usec: u32) -> Result<(), i32> {
    let v = usec as libc::c_int;
    // SAFETY: setsockopt(2) reads `size_of::<c_int>()` bytes from a valid pointer
    // on a socket descriptor the caller owns for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_BUSY_POLL,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::rt::errno())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{write_header, Header, Kind};

    fn msg(seq: u64, payload: u16) -> Vec<u8> {
        let mut b = vec![7u8; HEADER_LEN + payload as usize];
        write_header(
            &mut b,
            &Header {
                kind: Kind::Reply,
                leg: 0,
                legs: 1,
                session: 1,
                payload_len: payload,
                seq,
                client_ns: 0,
                server_ns: 0,
            },
        );
        b
    }

    #[test]
    fn the_socket_timeout_changes_only_when_it_is_far_off() {
        let mut t = RecvTimeout::default();
        let mut applied = Vec::new();
        for wait in [
            1_000_000_000,
            999_999_000,
            1_000_000_100,
            999_000_000,
            5_000_000,
            0,
        ] {
            t.ensure(wait, |d| {
                applied.push(d.unwrap().as_nanos() as u64);
                Ok(())
            })
            .unwrap();
            // Never waits less than asked, nor more than the slack beyond it.
            let want = wait.max(1_000);
            assert!(
                t.set_ns >= want && t.set_ns <= want + TIMEOUT_SLACK_NS,
                "{wait}"
            );
        }
        assert_eq!(applied, vec![1_000_500_000, 999_000_000, 5_000_000, 1_000]);
    }

    #[test]
    fn tcp_reassembles_messages_split_and_joined_on_the_stream() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let writer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut all = msg(1, 10);
            all.extend(msg(2, 0));
            all.extend(msg(3, 100));
            // Split in odd places, with pauses so reads see partial messages.
            for chunk in all.chunks(17) {
                s.write_all(chunk).unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let mut t = TcpTransport::connect(addr, Duration::from_secs(1)).unwrap();
        let mut buf = vec![0u8; MAX_MESSAGE + 1];
        for (seq, payload) in [(1, 10), (2, 0), (3, 100)] {
            let n = t.recv(&mut buf, 1_000_000_000).unwrap();
            let h = proto::parse(&buf[..n]).unwrap();
            assert_eq!((h.seq, h.payload_len), (seq, payload));
        }
        writer.join().unwrap();
        assert_eq!(t.recv(&mut buf, 100_000_000), Err(NetError::Closed));
    }

    #[test]
    fn udp_times_out_and_reports_refusal() {
        // A bound socket that never answers: the receive times out.
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut t = UdpTransport::connect(silent.local_addr().unwrap()).unwrap();
        let mut buf = vec![0u8; MAX_MESSAGE + 1];
        t.send(&msg(0, 0)).unwrap();
        assert_eq!(t.recv(&mut buf, 20_000_000), Err(NetError::Timeout));
        // Nobody on the port: loopback answers with port unreachable.
        let port = silent.local_addr().unwrap();
        drop(silent);
        let mut t = UdpTransport::connect(port).unwrap();
        t.send(&msg(0, 0)).unwrap();
        assert_eq!(t.recv(&mut buf, 500_000_000), Err(NetError::Refused));
    }
}
