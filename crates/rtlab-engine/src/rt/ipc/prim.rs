//! The primitives under the links: a pthread mutex that does not move, the
//! futex gate, and the calls that make and use each mechanism's objects.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub(super) const FUTEX_WAIT_PRIVATE: i32 = libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG;
pub(super) const FUTEX_WAKE_PRIVATE: i32 = libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG;

/// A pthread mutex at a fixed address, priority-inheriting or not.
pub struct RawMutex(pub(super) UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be shared between threads; it never moves
// (it is only handed out boxed).
unsafe impl Sync for RawMutex {}
// SAFETY: as above.
unsafe impl Send for RawMutex {}

impl RawMutex {
    /// A new mutex (`PTHREAD_PRIO_INHERIT` when `pi`); the error is the errno.
    pub fn new(pi: bool) -> Result<Box<RawMutex>, i32> {
        let m = Box::new(RawMutex(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)));
        // SAFETY: pthread_mutexattr_* (3) write into a zeroed attribute object,
        // and pthread_mutex_init(3) into the boxed mutex, which never moves.
        let rc = unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            let protocol = if pi {
                libc::PTHREAD_PRIO_INHERIT
            } else {
                libc::PTHREAD_PRIO_NONE
            };
            let mut rc = libc::pthread_mutexattr_setprotocol(&mut attr, protocol);
            if rc == 0 {
                rc = libc::pthread_mutex_init(m.0.get(), &attr);
            }
            libc::pthread_mutexattr_destroy(&mut attr);
            rc
        };
        if rc == 0 {
            Ok(m)
        } else {
            Err(rc)
        }
    }

    /// Locks it; the error is the errno `pthread_mutex_lock` returned.
    #[inline]
    pub fn lock(&self) -> Result<(), i32> {
        // SAFETY: the mutex was initialised in `new` and lives at a fixed address.
        rc(unsafe { libc::pthread_mutex_lock(self.0.get()) })
    }

    /// Unlocks it (the caller holds it).
    #[inline]
    pub fn unlock(&self) -> Result<(), i32> {
        // SAFETY: as in `lock`; the callers only unlock what they locked.
        rc(unsafe { libc::pthread_mutex_unlock(self.0.get()) })
    }
}

impl Drop for RawMutex {
    fn drop(&mut self) {
        // SAFETY: no thread holds or waits on it any more (the link is dropped).
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

/// A counter threads wait on until it reaches a value (a futex word).
#[derive(Debug, Default)]
pub struct Gate(AtomicU32);

impl Gate {
    /// Sets the counter to `n` and wakes every thread waiting on it.
    pub fn open(&self, n: u32) {
        self.0.store(n, Ordering::Release);
        let _ = futex(&self.0, FUTEX_WAKE_PRIVATE, i32::MAX as u32);
    }

    /// Waits until the counter is at least `n`; returns it.
    pub fn wait_for(&self, n: u32) -> u32 {
        loop {
            let v = self.0.load(Ordering::Acquire);
            if v >= n {
                return v;
            }
            let _ = futex(&self.0, FUTEX_WAIT_PRIVATE, v);
        }
    }
}

/// A mutex, a condition variable and a flag.
pub(super) struct CondSlot {
    pub(super) mutex: Box<RawMutex>,
    pub(super) cond: UnsafeCell<libc::pthread_cond_t>,
    pub(super) flag: AtomicBool,
}

pub(super) fn rc(rc: i32) -> Result<(), i32> {
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

/// `ret` of a call that sets errno on failure (−1).
pub(super) fn checked(ret: isize) -> Result<(), i32> {
    if ret < 0 {
        Err(crate::rt::errno())
    } else {
        Ok(())
    }
}

pub(super) fn cond_slot(pi: bool) -> Result<CondSlot, i32> {
    let slot = CondSlot {
        mutex: RawMutex::new(pi)?,
        cond: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER),
        flag: AtomicBool::new(false),
    };
    Ok(slot)
}

pub(super) fn sem_op(id: i32, num: usize, op: i16) -> Result<(), i32> {
    let mut b = libc::sembuf {
        sem_num: num as u16,
        sem_op: op,
        sem_flg: 0,
    };
    // SAFETY: semop(2) reads one sembuf through a valid pointer.
    checked(unsafe { libc::semop(id, &mut b, 1) } as isize)
}

pub(super) fn futex(word: &AtomicU32, op: i32, val: u32) -> Result<i64, i32> {
    // SAFETY: futex(2) on the address of a live aligned u32, with a null timeout.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            val,
            std::ptr::null::<libc::timespec>(),
        )
    };
    if r < 0 {
        Err(crate::rt::errno())
    } else {
        Ok(r)
    }
}

pub(super) fn make_pipe() -> Result<[i32; 2], i32> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2(2) writes two fds into a valid array.
    checked(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } as isize)?;
    Ok(fds)
}

pub(super) fn make_eventfd() -> Result<i32, i32> {
    // SAFETY: eventfd(2) takes plain values.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    checked(fd as isize)?;
    Ok(fd)
}

/// A new queue of 8-byte messages, open for reading and writing, already
/// unlinked so that nothing is left behind however the run ends.
pub(super) fn open_queue(dir: usize) -> Result<libc::mqd_t, i32> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "/rtlab-ipc-{}-{}-{dir}\0",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    // SAFETY: mq_attr is a plain C struct, valid zeroed; mq_open(3) reads the
    // NUL-terminated name and the attributes; mq_unlink(3) reads the name.
    unsafe {
        let mut attr: libc::mq_attr = std::mem::zeroed();
        attr.mq_maxmsg = 1;
        attr.mq_msgsize = 8;
        let q = libc::mq_open(
            name.as_ptr().cast(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
            &attr as *const libc::mq_attr,
        );
        if q < 0 {
            return Err(crate::rt::errno());
        }
        libc::mq_unlink(name.as_ptr().cast());
        Ok(q)
    }
}
