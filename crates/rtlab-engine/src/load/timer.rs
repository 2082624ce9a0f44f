//! `timer`: many periodic timers (`timerfd`s, staggered over one period) firing
//! at a high rate, read through one epoll instance.

use super::sys;
use super::{Ctx, LoadError};
use std::io::Read;

/// Runs `timers` timers of period `period_ns` until stopped.
pub fn run(
    timers: u32,
    period_ns: u64,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) -> Result<(), LoadError> {
    if !(1..=10_000).contains(&timers) {
        return Err(LoadError::Input(format!(
            "timer count {timers} is outside 1-10000"
        )));
    }
    if period_ns < 1_000 {
        return Err(LoadError::Input(format!(
            "timer period {period_ns} ns is below 1us"
        )));
    }
    let fds = (0..timers as u64)
        .map(|i| sys::periodic_timer(period_ns, period_ns * (i + 1) / timers as u64))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            LoadError::System(format!(
                "cannot create a timer: {}",
                crate::rt::errno_text(e)
            ))
        })?;
    let ep = sys::epoll_of(&fds).map_err(|e| {
        LoadError::System(format!(
            "cannot watch the timers: {}",
            crate::rt::errno_text(e)
        ))
    })?;
    let files: Vec<std::fs::File> = fds.into_iter().map(std::fs::File::from).collect();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    ready();
    while !ctx.stopped() {
        let n = sys::epoll_wait(&ep, &mut events, 100);
        for ev in &events[..n] {
            let mut buf = [0u8; 8];
            if let Ok(8) = (&files[ev.u64 as usize]).read(&mut buf) {
                ctx.counters.add(u64::from_ne_bytes(buf), 0);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};

    #[test]
    fn timers_fire() {
        let c = run_for(
            &Load::Timer {
                timers: 8,
                period_ns: 200_000,
            },
            50,
        );
        assert!(c.ops > 0, "{c:?}");
    }
}
