//! `fork`: fork a child that exits at once, wait for it, repeat.

use super::sys::{self, Forked};
use super::{Ctx, LoadError};

/// Forks until stopped.
pub fn run(ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    ready();
    while !ctx.stopped() {
        match sys::fork() {
            Ok(Forked::Child) => sys::exit_now(0),
            Ok(Forked::Parent(pid)) => {
                // The child exits at once; EINTR just means wait again.
                while sys::wait_child(pid, false) == Err(libc::EINTR) {}
                ctx.counters.add(1, 0);
            }
            Err(_) => {
                ctx.counters
                    .errors
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
    Ok(())
}
