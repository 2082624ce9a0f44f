//! The network response-time probe: a client that sends timed request/echo
//! exchanges on a fixed schedule ([`client`]) and the hardened echo server it talks
//! to ([`server`]), over UDP or TCP, speaking the format of [`crate::proto`].

pub mod client;
pub mod server;
mod tcp;
pub mod transport;

use std::net::{SocketAddr, ToSocketAddrs};

/// The port `rtlab net serve` listens on and `net ping` talks to by default.
pub const DEFAULT_PORT: u16 = 7700;

/// Most messages in one client run: the per-message bookkeeping is allocated
/// up front.
pub const MAX_MESSAGES: u64 = 10_000_000;

/// Resolves HOST:PORT, or HOST with [`DEFAULT_PORT`] (IPv6 literals with or
/// without brackets), preferring an IPv4 address, as servers bind 127.0.0.1
/// or 0.0.0.0 by default. The error says what was wrong and what to write.
pub fn resolve(target: &str) -> Result<SocketAddr, String> {
    let with_port = if target.parse::<SocketAddr>().is_ok()
        || target.rsplit_once(':').is_some_and(|(h, p)| {
            !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok() && !h.contains(':')
        }) {
        target.to_string()
    } else if target.contains(':') && !target.starts_with('[') {
        format!("[{target}]:{DEFAULT_PORT}")
    } else {
        format!("{target}:{DEFAULT_PORT}")
    };
    let addrs = with_port.to_socket_addrs().map_err(|e| {
        format!("cannot resolve '{target}': {e} (write e.g. 192.168.1.10:7700 or server.local)")
    })?;
    let mut addrs: Vec<SocketAddr> = addrs.collect();
    addrs.sort_by_key(|a| !a.is_ipv4());
    addrs
        .into_iter()
        .next()
        .ok_or_else(|| format!("'{target}' resolves to no address"))
}

/// CPU time consumed by the calling thread so far (`CLOCK_THREAD_CPUTIME_ID`), in ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes one timespec through a valid pointer; the
    // per-thread CPU clock exists on every Linux kernel since 2.6.12.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (ts.tv_sec as u64) * crate::rt::clock::NS_PER_SEC + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_with_and_without_port() {
        assert_eq!(resolve("127.0.0.1:9").unwrap().port(), 9);
        assert_eq!(resolve("127.0.0.1").unwrap().port(), DEFAULT_PORT);
        assert_eq!(resolve("[::1]:5").unwrap().port(), 5);
        assert_eq!(resolve("::1").unwrap().port(), DEFAULT_PORT);
        assert_eq!(resolve("localhost:7").unwrap().port(), 7);
        assert!(resolve("no such host!:1").is_err());
    }
}
