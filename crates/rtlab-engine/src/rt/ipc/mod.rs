//! Wake-up mechanisms between two threads of one process: POSIX message queues,
//! pthread mutexes (optionally priority-inheriting), condition variables,
//! thread-directed signals, SysV semaphores, pipes, eventfds and futexes.
//!
//! A [`Link`] joins two threads, the *sender* and the *receiver*, in both
//! directions ([`Dir`]): one side [`wake`](Link::wake)s, the other returns from
//! [`wait`](Link::wait). Each call is the mechanism's own system call and nothing
//! else: no allocation, no lock of the link's own. Errors are the errno, `Copy`.

mod prim;

pub use prim::{Gate, RawMutex};

use prim::{
    checked, cond_slot, futex, make_eventfd, make_pipe, open_queue, rc, sem_op, CondSlot,
    FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE,
};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// A way one thread wakes another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// `mq_send` / `mq_receive` on a POSIX message queue.
    Mqueue,
    /// A pthread mutex handed over (`pthread_mutex_unlock` / `_lock`).
    Mutex,
    /// `pthread_cond_signal` / `pthread_cond_wait` with a flag.
    Condvar,
    /// `pthread_kill` / `sigwait` (SIGUSR1 there, SIGUSR2 back).
    Signal,
    /// `semop` on a SysV semaphore.
    Sem,
    /// A byte through a pipe.
    Pipe,
    /// `write` / `read` on an eventfd.
    Eventfd,
    /// `FUTEX_WAKE` / `FUTEX_WAIT` on a private futex word.
    Futex,
}

/// Which way a wake-up goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Sender to receiver.
    There = 0,
    /// Receiver to sender.
    Back = 1,
}

/// Which thread of a link is calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The thread that wakes [`Dir::There`].
    Sender = 0,
    /// The thread that wakes [`Dir::Back`].
    Receiver = 1,
}

enum Kind {
    Mqueue([libc::mqd_t; 2]),
    /// `mutexes[i]` is held by `side` when `held[side][i]`.
    Mutex([Box<RawMutex>; 3], [[AtomicBool; 3]; 2]),
    Condvar(Box<[CondSlot; 2]>),
    Signal([AtomicU64; 2]),
    Sem(i32),
    /// `[read, write]` for each direction.
    Pipe([[i32; 2]; 2]),
    Eventfd([i32; 2]),
    Futex([AtomicU32; 2]),
}

/// Two threads joined by one mechanism, both ways.
pub struct Link {
    kind: Kind,
}

// SAFETY: every field is either atomic, a file or IPC id, or a pthread object
// used only through its own thread-safe calls.
unsafe impl Sync for Link {}
// SAFETY: as above; nothing in it belongs to the thread that made it.
unsafe impl Send for Link {}

const SIG_THERE: i32 = libc::SIGUSR1;
const SIG_BACK: i32 = libc::SIGUSR2;

impl Link {
    /// A link of `mech`; `pi` makes its mutexes priority-inheriting (mutex and
    /// condvar). The error is the errno of the call that failed.
    pub fn new(mech: Mechanism, pi: bool) -> Result<Link, i32> {
        let kind = match mech {
            Mechanism::Mqueue => Kind::Mqueue([open_queue(0)?, open_queue(1)?]),
            Mechanism::Mutex => Kind::Mutex(
                [RawMutex::new(pi)?, RawMutex::new(pi)?, RawMutex::new(pi)?],
                Default::default(),
            ),
            Mechanism::Condvar => Kind::Condvar(Box::new([cond_slot(pi)?, cond_slot(pi)?])),
            Mechanism::Signal => Kind::Signal(Default::default()),
            Mechanism::Sem => {
                // SAFETY: semget(2) with IPC_PRIVATE creates a new set of 2.
                let id = unsafe { libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600) };
                checked(id as isize)?;
                Kind::Sem(id)
            }
            Mechanism::Pipe => Kind::Pipe([make_pipe()?, make_pipe()?]),
            Mechanism::Eventfd => Kind::Eventfd([make_eventfd()?, make_eventfd()?]),
            Mechanism::Futex => Kind::Futex(Default::default()),
        };
        Ok(Link { kind })
    }

    /// Called by each side on its own thread before the first wake-up: takes
    /// the mutex it starts holding, or blocks the signals it waits for.
    pub fn prepare(&self, side: Side) -> Result<(), i32> {
        match &self.kind {
            Kind::Mutex(m, held) => {
                let first: &[usize] = match side {
                    Side::Receiver => &[0, 2],
                    Side::Sender => &[1],
                };
                for &i in first {
                    m[i].lock()?;
                    held[side as usize][i].store(true, Ordering::Relaxed);
                }
                Ok(())
            }
            Kind::Signal(targets) => {
                // SAFETY: sigset_t is valid zeroed; pthread_sigmask(3) changes the
                // calling thread's mask; pthread_self(3) cannot fail.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, SIG_THERE);
                    libc::sigaddset(&mut set, SIG_BACK);
                    rc(libc::pthread_sigmask(
                        libc::SIG_BLOCK,
                        &set,
                        std::ptr::null_mut(),
                    ))?;
                    targets[side as usize].store(libc::pthread_self() as u64, Ordering::Release);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Called by each side on its own thread when it is done: lets go of any
    /// mutex it still holds.
    pub fn finish(&self, side: Side) {
        if let Kind::Mutex(m, held) = &self.kind {
            for (i, h) in held[side as usize].iter().enumerate() {
                if h.swap(false, Ordering::Relaxed) {
                    let r = m[i].unlock();
                    debug_assert_eq!(r, Ok(()), "mutex {i} was not held by {side:?}");
                }
            }
        }
    }

    /// Wakes the other side in direction `dir`; `round` counts the exchanges
    /// so far (the mutex link alternates its two mutexes).
    #[inline]
    pub fn wake(&self, dir: Dir, round: u64) -> Result<(), i32> {
        let d = dir as usize;
        match &self.kind {
            Kind::Mqueue(q) => {
                let msg = [0u8; 8];
                // SAFETY: mq_send(3) reads `msg.len()` bytes from a valid buffer.
                let r = unsafe { libc::mq_send(q[d], msg.as_ptr().cast(), msg.len(), 0) };
                checked(r as isize)
            }
            Kind::Mutex(m, held) => {
                // The waker holds the mutex of this hand-over and lets it go.
                let i = mutex_of(dir, round);
                held[dir as usize][i].store(false, Ordering::Relaxed);
                m[i].unlock()
            }
            Kind::Condvar(slots) => {
                let s = &slots[d];
                s.mutex.lock()?;
                s.flag.store(true, Ordering::Relaxed);
                // SAFETY: the condvar was initialised in `cond_slot` and does not move.
                let r = rc(unsafe { libc::pthread_cond_signal(s.cond.get()) });
                s.mutex.unlock()?;
                r
            }
            Kind::Signal(targets) => {
                let (target, sig) = match dir {
                    Dir::There => (
                        targets[Side::Receiver as usize].load(Ordering::Acquire),
                        SIG_THERE,
                    ),
                    Dir::Back => (
                        targets[Side::Sender as usize].load(Ordering::Acquire),
                        SIG_BACK,
                    ),
                };
                // SAFETY: the target thread registered itself in `prepare` and
                // lives until it has seen the last wake-up.
                rc(unsafe { libc::pthread_kill(target as libc::pthread_t, sig) })
            }
            Kind::Sem(id) => sem_op(*id, d, 1),
            Kind::Pipe(p) => {
                let b = [1u8];
                // SAFETY: write(2) reads one byte from a valid buffer.
                checked(unsafe { libc::write(p[d][1], b.as_ptr().cast(), 1) })
            }
            Kind::Eventfd(e) => {
                let one = 1u64.to_ne_bytes();
                // SAFETY: write(2) reads 8 bytes from a valid buffer.
                checked(unsafe { libc::write(e[d], one.as_ptr().cast(), 8) })
            }
            Kind::Futex(w) => {
                w[d].store(1, Ordering::Release);
                futex(&w[d], FUTEX_WAKE_PRIVATE, 1).map(|_| ())
            }
        }
    }

    /// Waits until the other side wakes this one in direction `dir`.
    #[inline]
    pub fn wait(&self, dir: Dir, round: u64) -> Result<(), i32> {
        let d = dir as usize;
        loop {
            let r = self.wait_once(dir, d, round);
            match r {
                Err(libc::EINTR) | Err(libc::EAGAIN) => continue,
                other => return other,
            }
        }
    }

    #[inline]
    fn wait_once(&self, dir: Dir, d: usize, round: u64) -> Result<(), i32> {
        match &self.kind {
            Kind::Mqueue(q) => {
                let mut buf = [0u8; 8];
                let mut prio = 0u32;
                // SAFETY: mq_receive(3) writes at most `buf.len()` (the queue's
                // message size) bytes into a valid buffer.
                let r = unsafe {
                    libc::mq_receive(q[d], buf.as_mut_ptr().cast(), buf.len(), &mut prio)
                };
                checked(r)
            }
            Kind::Mutex(m, held) => {
                let i = mutex_of(dir, round);
                m[i].lock()?;
                held[1 - dir as usize][i].store(true, Ordering::Relaxed);
                Ok(())
            }
            Kind::Condvar(slots) => {
                let s = &slots[d];
                s.mutex.lock()?;
                while !s.flag.load(Ordering::Relaxed) {
                    // SAFETY: the caller holds the slot's mutex, as pthread_cond_wait(3) requires.
                    let r = unsafe { libc::pthread_cond_wait(s.cond.get(), s.mutex.0.get()) };
                    if r != 0 {
                        let _ = s.mutex.unlock();
                        return Err(r);
                    }
                }
                s.flag.store(false, Ordering::Relaxed);
                s.mutex.unlock()
            }
            Kind::Signal(_) => {
                let sig = if dir == Dir::There {
                    SIG_THERE
                } else {
                    SIG_BACK
                };
                let mut got = 0;
                // SAFETY: sigset_t is valid zeroed; sigwait(3) reads the set and
                // writes the signal number through a valid pointer.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, sig);
                    rc(libc::sigwait(&set, &mut got))
                }
            }
            Kind::Sem(id) => sem_op(*id, d, -1),
            Kind::Pipe(p) => {
                let mut b = [0u8; 1];
                // SAFETY: read(2) writes at most one byte into a valid buffer.
                checked(unsafe { libc::read(p[d][0], b.as_mut_ptr().cast(), 1) })
            }
            Kind::Eventfd(e) => {
                let mut b = [0u8; 8];
                // SAFETY: read(2) writes at most 8 bytes into a valid buffer.
                checked(unsafe { libc::read(e[d], b.as_mut_ptr().cast(), 8) })
            }
            Kind::Futex(w) => {
                if w[d].swap(0, Ordering::Acquire) == 1 {
                    return Ok(());
                }
                futex(&w[d], FUTEX_WAIT_PRIVATE, 0)?;
                Err(libc::EAGAIN) // woken: look at the word again
            }
        }
    }
}

/// The mutex handed over in direction `dir` of exchange `round`. An exchange
/// is two hand-overs, back (receiver to sender) then there: hand-over `h`
/// (back: `2·round`, there: `2·round + 1`) passes mutex `h mod 3` from the
/// waker, which holds it, to the waiter, blocked locking it. With three
/// mutexes a waker never takes back the mutex it just let go before the
/// waiter has it (it next locks it at hand-over `h + 3`, after the waiter has
/// woken it at `h + 1`). The receiver starts holding mutexes 0 and 2, the
/// sender mutex 1.
fn mutex_of(dir: Dir, round: u64) -> usize {
    let h = 2 * round + u64::from(dir == Dir::There);
    (h % 3) as usize
}

impl Drop for Link {
    fn drop(&mut self) {
        // SAFETY: both threads have ended; each descriptor and id is closed once.
        unsafe {
            match &self.kind {
                Kind::Mqueue(q) => q.iter().for_each(|&q| {
                    libc::mq_close(q);
                }),
                Kind::Sem(id) => {
                    libc::semctl(*id, 0, libc::IPC_RMID);
                }
                Kind::Pipe(p) => p.iter().flatten().for_each(|&fd| {
                    libc::close(fd);
                }),
                Kind::Eventfd(e) => e.iter().for_each(|&fd| {
                    libc::close(fd);
                }),
                Kind::Condvar(slots) => slots.iter().for_each(|s| {
                    libc::pthread_cond_destroy(s.cond.get());
                }),
                _ => {}
            }
        }
    }
}
