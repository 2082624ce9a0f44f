//! `memcopy`: streaming copies between two buffers larger than the last-level
//! cache, so every pass goes to memory (dohell's `dd if=/dev/zero of=/dev/null`).

use super::{Ctx, LoadError};
use std::sync::atomic::Ordering::Relaxed;

/// Bytes copied per op (and between checks of the stop flag).
pub const CHUNK: usize = 1 << 20;

/// The size of the largest CPU cache in bytes, from sysfs, if known.
pub fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join("size")).ok()?;
            let t = text.trim();
            let (num, mult) = match t.strip_suffix('K') {
                Some(n) => (n, 1 << 10),
                None => match t.strip_suffix('M') {
                    Some(n) => (n, 1 << 20),
                    None => (t, 1),
                },
            };
            num.parse::<u64>().ok().map(|n| n * mult)
        })
        .max()
}

/// Default buffer size: twice the last-level cache, at least 16 MiB.
pub fn default_bytes() -> u64 {
    (last_level_cache_bytes().unwrap_or(0) * 2).max(16 << 20)
}

/// Copies between two `bytes`-sized buffers until stopped.
pub fn run(bytes: u64, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    let len = usize::try_from(bytes)
        .ok()
        .filter(|&b| b >= CHUNK)
        .ok_or_else(|| LoadError::Input(format!("memcopy bytes {bytes} must be at least 1M")))?;
    let len = len - len % CHUNK;
    // Zeroed allocations are lazy (calloc): the worker is ready at once, and the
    // first two passes fault every page in, which is memory work like the rest.
    // The supervisor's memory guard has checked that the two buffers fit.
    let mut src = vec![0u8; len];
    let mut dst = vec![0u8; len];
    ready();
    while !ctx.stopped() {
        let mut off = 0;
        while off < len && !ctx.stopped() {
            dst[off..off + CHUNK].copy_from_slice(&src[off..off + CHUNK]);
            ctx.counters.add(1, CHUNK as u64);
            off += CHUNK;
        }
        std::mem::swap(&mut src, &mut dst);
        std::hint::black_box(&dst);
        if off == len {
            ctx.counters.rounds.fetch_add(1, Relaxed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};
    use super::*;

    #[test]
    fn copies_whole_chunks() {
        let c = run_for(&Load::Memcopy { bytes: 4 << 20 }, 50);
        assert!(c.ops > 0);
        assert_eq!(c.bytes, c.ops * CHUNK as u64);
    }

    #[test]
    fn default_is_at_least_16_mib() {
        assert!(default_bytes() >= 16 << 20);
    }
}
