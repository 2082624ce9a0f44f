//! `vm`: map a block, touch every page, unmap, repeat (what `stress --vm` does:
//! page faults and page zeroing); with `keep`, map once and re-dirty the pages.

use super::sys::{self, Mapping};
use super::{Ctx, LoadError};
use std::sync::atomic::Ordering::Relaxed;

/// Pages touched between two checks of the stop flag.
const PAGES_PER_CHECK: usize = 256;

/// Runs the `vm` loop on `bytes` bytes (per worker) until stopped.
pub fn run(bytes: u64, keep: bool, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    let page = sys::page_size();
    let len = usize::try_from(bytes)
        .ok()
        .filter(|&b| b >= page)
        .ok_or_else(|| {
            LoadError::Input(format!(
                "vm bytes {bytes} must be at least one page ({page})"
            ))
        })?;
    let pages = len / page;
    // Map once before `ready` so that a refusal is a start error, not a silent
    // idle worker.
    let mut kept = Some(Mapping::anonymous(len).map_err(|e| {
        LoadError::System(format!(
            "cannot map {bytes} bytes: {}",
            crate::rt::errno_text(e)
        ))
    })?);
    ready();
    let mut value = 1u8;
    while !ctx.stopped() {
        let mut map = match kept.take() {
            Some(m) => m,
            None => match Mapping::anonymous(len) {
                Ok(m) => m,
                Err(_) => {
                    ctx.counters.errors.fetch_add(1, Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
            },
        };
        let mut p = 0;
        while p < pages && !ctx.stopped() {
            let end = (p + PAGES_PER_CHECK).min(pages);
            for i in p..end {
                map.touch(i, page, value);
            }
            ctx.counters
                .add((end - p) as u64, ((end - p) * page) as u64);
            p = end;
        }
        if p == pages {
            ctx.counters.rounds.fetch_add(1, Relaxed);
        }
        value = value.wrapping_add(1).max(1);
        if keep {
            kept = Some(map);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_until, Load};

    #[test]
    fn touches_pages_with_and_without_keep() {
        for keep in [false, true] {
            let c = run_until(
                &Load::Vm {
                    bytes: 4 << 20,
                    keep,
                },
                60,
                |c| c.rounds > 0,
            );
            assert!(c.ops > 0 && c.rounds > 0, "keep={keep}: {c:?}");
            assert_eq!(c.bytes, c.ops * super::sys::page_size() as u64);
        }
    }

    #[test]
    fn refuses_less_than_a_page() {
        let ctx_counters = super::super::Counters::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let ctx = super::super::Ctx {
            counters: &ctx_counters,
            stop: &stop,
        };
        assert!(super::run(10, false, &ctx, &mut || {}).is_err());
    }
}
