//! `net`: a UDP flood over loopback. Each worker sends bursts of datagrams from
//! one socket to another and drains them, all non-blocking.

use super::{Ctx, LoadError};
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;

/// Datagrams sent per burst.
const BURST: usize = 32;

/// Floods loopback with `size`-byte datagrams until stopped.
pub fn run(size: u32, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    if !(1..=65000).contains(&size) {
        return Err(LoadError::Input(format!(
            "net size {size} is outside 1-65000 bytes"
        )));
    }
    let sys_err = |e: std::io::Error| LoadError::System(format!("loopback UDP socket: {e}"));
    let rx = UdpSocket::bind("127.0.0.1:0").map_err(sys_err)?;
    let tx = UdpSocket::bind("127.0.0.1:0").map_err(sys_err)?;
    tx.connect(rx.local_addr().map_err(sys_err)?)
        .map_err(sys_err)?;
    rx.set_nonblocking(true).map_err(sys_err)?;
    tx.set_nonblocking(true).map_err(sys_err)?;
    let msg = vec![0x4eu8; size as usize];
    let mut buf = vec![0u8; size as usize];
    ready();
    while !ctx.stopped() {
        for _ in 0..BURST {
            match tx.send(&msg) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    ctx.counters.errors.fetch_add(1, Relaxed);
                    break;
                }
            }
        }
        while let Ok(n) = rx.recv(&mut buf) {
            ctx.counters.add(1, n as u64);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};

    #[test]
    fn datagrams_go_round() {
        let c = run_for(&Load::Net { size: 64 }, 50);
        assert!(c.ops > 0 && c.bytes == c.ops * 64, "{c:?}");
    }
}
