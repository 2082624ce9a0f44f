//! The network response-time probe: a client that sends timed request/echo
//! exchanges on a fixed schedule ([`client`]) and the hardened echo server it talks
//! to ([`server`]), over UDP or TCP, speaking the format of [`crate::proto`].

pub mod client;
pub mod server;
mod tcp;
pub mod transport;

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
