//! `msg`: hackbench-like message passing. A group is `fds` senders and `fds`
//! receivers; each receiver owns one channel (a socket pair or a pipe) and every
//! sender writes `size`-byte messages to every receiver in turn, while each
//! receiver reads one message per `read(2)`. Senders and receivers are processes
//! (forked from the worker, with a parent-death signal) or threads.

use super::sys::{self, Forked};
use super::{Ctx, LoadError};
use crate::rt::process::{end_with_parent, SIGKILL};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// One group's shape.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Senders, and receivers, per group.
    pub fds: u32,
    /// Message size in bytes.
    pub size: u32,
    /// Pipes instead of socket pairs.
    pub pipe: bool,
    /// Threads instead of processes.
    pub threads: bool,
}

fn receive(r: &File, size: usize, ctx: &Ctx) {
    let mut buf = vec![0u8; size];
    let mut pending = 0u64;
    let mut r = r;
    while !ctx.stopped() {
        match r.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                pending += n as u64;
                let msgs = pending / size as u64;
                pending %= size as u64;
                if msgs > 0 {
                    ctx.counters.add(msgs, msgs * size as u64);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn send(writers: &[File], size: usize, ctx: &Ctx) {
    let msg = vec![0x6du8; size];
    while !ctx.stopped() {
        for mut w in writers {
            let mut done = 0;
            while done < size {
                if ctx.stopped() {
                    return;
                }
                match w.write(&msg[done..]) {
                    Ok(n) => done += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        }
    }
}

/// Runs one group until stopped.
pub fn run(g: &Group, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    if !(1..=1000).contains(&g.fds) {
        return Err(LoadError::Input(format!(
            "msg fds {} is outside 1-1000",
            g.fds
        )));
    }
    if !(1..=65536).contains(&g.size) {
        return Err(LoadError::Input(format!(
            "msg size {} is outside 1-65536 bytes",
            g.size
        )));
    }
    let size = g.size as usize;
    let mut readers = Vec::new();
    let mut writers = Vec::new();
    for _ in 0..g.fds {
        let (r, w) = sys::channel(g.pipe).map_err(|e| {
            LoadError::System(format!(
                "cannot create a channel: {}",
                crate::rt::errno_text(e)
            ))
        })?;
        readers.push(File::from(r));
        writers.push(File::from(w));
    }
    if g.threads {
        run_threads(&readers, &writers, size, ctx, ready);
        return Ok(());
    }
    let me = std::process::id() as i32;
    let mut pids = Vec::new();
    let roles = readers.iter().map(Some).chain((0..g.fds).map(|_| None));
    for role in roles {
        match sys::fork() {
            Ok(Forked::Child) => {
                if end_with_parent(SIGKILL, me).is_err() {
                    sys::exit_now(1);
                }
                match role {
                    Some(r) => receive(r, size, ctx),
                    None => send(&writers, size, ctx),
                }
                sys::exit_now(0);
            }
            Ok(Forked::Parent(pid)) => pids.push(pid),
            Err(e) => {
                sys::end_children(&pids, Duration::from_millis(300));
                return Err(LoadError::System(format!(
                    "cannot fork a msg process: {}",
                    crate::rt::errno_text(e)
                )));
            }
        }
    }
    ready();
    while !ctx.stopped() {
        std::thread::sleep(Duration::from_millis(20));
    }
    sys::end_children(&pids, Duration::from_millis(300));
    Ok(())
}

/// The thread flavour: the calling thread supervises and, on stop, wakes every
/// thread blocked in `read`/`write` with a signal until all have returned.
fn run_threads(
    readers: &[File],
    writers: &[File],
    size: usize,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) {
    sys::install_wake_handler();
    let n = readers.len() * 2;
    let ids: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let done: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    std::thread::scope(|s| {
        for i in 0..n {
            let (ids, done) = (&ids, &done);
            s.spawn(move || {
                // SAFETY: pthread_self(3) cannot fail.
                ids[i].store(unsafe { libc::pthread_self() } as u64, Relaxed);
                if i < readers.len() {
                    receive(&readers[i], size, ctx);
                } else {
                    send(writers, size, ctx);
                }
                done[i].store(true, Relaxed);
            });
        }
        ready();
        while !ctx.stopped() {
            std::thread::sleep(Duration::from_millis(20));
        }
        while done.iter().any(|d| !d.load(Relaxed)) {
            for (id, d) in ids.iter().zip(&done) {
                let t = id.load(Relaxed);
                if t != 0 && !d.load(Relaxed) {
                    sys::wake_thread(t as libc::pthread_t);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};

    #[test]
    fn thread_groups_pass_messages_over_sockets_and_pipes() {
        for pipe in [false, true] {
            let c = run_for(
                &Load::Msg {
                    fds: 4,
                    size: 100,
                    pipe,
                    threads: true,
                },
                60,
            );
            assert!(c.ops > 0, "pipe={pipe}: {c:?}");
            assert_eq!(c.bytes, c.ops * 100);
        }
    }
}
