//! Work counters in shared memory: a `memfd` holding one [`Counters`] block per
//! worker, mapped by the supervisor and by each worker process (which inherits the
//! descriptor across `exec`). The blocks outlive a crashed worker, so the work it
//! did is never lost.

use super::Counters;
use crate::rt::errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A shared array of [`Counters`].
pub struct SharedCounters {
    ptr: *mut Counters,
    slots: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is only accessed through `&Counters`, whose fields are
// atomics; the pointer stays valid until drop.
unsafe impl Send for SharedCounters {}
// SAFETY: as above.
unsafe impl Sync for SharedCounters {}

fn bytes_for(slots: usize) -> usize {
    slots.max(1) * std::mem::size_of::<Counters>()
}

impl SharedCounters {
    /// Creates a zeroed block of `slots` counters (`memfd_create(2)`, `ftruncate(2)`,
    /// `mmap(2)`). The descriptor is close-on-exec: pass it to a child by clearing
    /// that flag there (see [`clear_cloexec`]).
    pub fn create(slots: usize) -> Result<SharedCounters, i32> {
        // SAFETY: memfd_create(2) reads a NUL-terminated name.
        let fd = unsafe { libc::memfd_create(c"rtlab-load-counters".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: a descriptor just created and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: ftruncate(2) on our own memfd; new bytes read as zero.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), bytes_for(slots) as libc::off_t) } != 0 {
            return Err(errno());
        }
        Self::map(fd, slots)
    }

    /// Maps a block created by [`SharedCounters::create`] in another process, from
    /// the inherited descriptor `fd` (taken over: closed on drop).
    ///
    /// # Safety
    /// `fd` must be an open memfd of at least `slots` counters that nothing else in
    /// this process owns.
    pub unsafe fn from_inherited(fd: RawFd, slots: usize) -> Result<SharedCounters, i32> {
        // SAFETY: fcntl(2) F_GETFD takes integers only; it fails on a closed fd,
        // which must not be wrapped in an OwnedFd.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(errno());
        }
        // SAFETY: the descriptor is open and the caller guarantees it is ours.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat(2) writes one stat struct through a valid pointer.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(errno());
        }
        if (st.st_size as usize) < bytes_for(slots) {
            return Err(libc::EINVAL);
        }
        Self::map(fd, slots)
    }

    fn map(fd: OwnedFd, slots: usize) -> Result<SharedCounters, i32> {
        // SAFETY: a shared read-write mapping of the whole memfd, checked against
        // MAP_FAILED; zero bytes are valid `Counters` (all atomics).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes_for(slots),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(errno());
        }
        Ok(SharedCounters {
            ptr: ptr.cast(),
            slots,
            fd,
        })
    }

    /// The counters of worker `i`.
    pub fn slot(&self, i: usize) -> &Counters {
        assert!(i < self.slots, "counter slot {i} out of {}", self.slots);
        // SAFETY: `i` is in bounds and the mapping lives as long as `self`.
        unsafe { &*self.ptr.add(i) }
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The memfd, to hand to a worker process.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl Drop for SharedCounters {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped; no reference outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), bytes_for(self.slots)) };
    }
}

/// Clears `FD_CLOEXEC` on `fd` (`fcntl(2)`) so that it survives `exec`.
/// Async-signal-safe: meant for the child between fork and exec.
pub fn clear_cloexec(fd: RawFd) -> Result<(), i32> {
    // SAFETY: fcntl(2) F_SETFD takes integers only.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn slots_start_at_zero_and_are_shared_between_mappings() {
        let a = SharedCounters::create(3).unwrap();
        assert_eq!(a.slot(2).snapshot(), Default::default());
        // SAFETY: dup(2) gives a second descriptor of the same memfd for the test.
        let dup = unsafe { libc::dup(a.raw_fd()) };
        // SAFETY: `dup` is a fresh descriptor of a 3-slot memfd.
        let b = unsafe { SharedCounters::from_inherited(dup, 3) }.unwrap();
        a.slot(1).add(5, 7);
        b.slot(1).errors.fetch_add(1, Relaxed);
        let v = b.slot(1).snapshot();
        assert_eq!((v.ops, v.bytes), (5, 7));
        assert_eq!(a.slot(1).snapshot().errors, 1);
        assert_eq!(a.slot(0).snapshot(), Default::default());
    }

    #[test]
    fn refuses_a_block_smaller_than_asked() {
        let a = SharedCounters::create(1).unwrap();
        // SAFETY: as above.
        let dup = unsafe { libc::dup(a.raw_fd()) };
        // SAFETY: `dup` is fresh; the size check must refuse it.
        assert!(unsafe { SharedCounters::from_inherited(dup, 1000) }.is_err());
    }
}
