//! Scheduling policy, priority and CPU affinity of threads.

pub mod deadline;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A Linux scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// `SCHED_FIFO`: real-time, runs until it blocks or a higher priority preempts.
    #[default]
    Fifo,
    /// `SCHED_RR`: real-time with a time slice among equal priorities.
    Rr,
    /// `SCHED_OTHER`: the normal time-sharing policy (priority must be 0).
    Other,
    /// `SCHED_BATCH`: time-sharing for CPU-bound batch work.
    Batch,
    /// `SCHED_IDLE`: runs only when nothing else wants the CPU.
    Idle,
    /// `SCHED_DEADLINE` (only reported, never set by rtlab).
    Deadline,
}

impl Policy {
    /// The raw policy number for `sched_setscheduler(2)`.
    pub fn raw(self) -> i32 {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
            Policy::Batch => libc::SCHED_BATCH,
            Policy::Idle => libc::SCHED_IDLE,
            Policy::Deadline => 6,
        }
    }

    /// The policy for a raw number, as read from `sched_getscheduler(2)` or
    /// `/proc/PID/stat` (the `SCHED_RESET_ON_FORK` flag is ignored).
    pub fn from_raw(raw: i32) -> Option<Policy> {
        match raw & !SCHED_RESET_ON_FORK {
            libc::SCHED_FIFO => Some(Policy::Fifo),
            libc::SCHED_RR => Some(Policy::Rr),
            libc::SCHED_OTHER => Some(Policy::Other),
            libc::SCHED_BATCH => Some(Policy::Batch),
            libc::SCHED_IDLE => Some(Policy::Idle),
            6 => Some(Policy::Deadline),
            _ => None,
        }
    }

    /// True for the real-time policies (FIFO, RR).
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Deadline => "deadline",
        }
    }

    /// The valid priority range for the policy (1..=99 for FIFO/RR, 0 otherwise).
    pub fn priority_range(self) -> (i32, i32) {
        if self.is_realtime() {
            (1, 99)
        } else {
            (0, 0)
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A refused scheduling call: the errno, kept small and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedError {
    /// The errno returned by the kernel (`EPERM`, `EINVAL`, `ESRCH`).
    pub errno: i32,
}

impl SchedError {
    /// True when the refusal is a permission problem.
    pub fn is_permission(self) -> bool {
        self.errno == libc::EPERM
    }
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::errno_text(self.errno))
    }
}

/// Sets the policy and priority of thread `tid` (0 = the calling thread) with
/// `sched_setscheduler(2)`, which on Linux acts on a single thread.
pub fn set_thread_policy(tid: i32, policy: Policy, priority: i32) -> Result<(), SchedError> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler(2) reads one sched_param through a valid pointer.
    let rc = unsafe { libc::sched_setscheduler(tid, policy.raw(), &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(SchedError {
            errno: super::errno(),
        })
    }
}

/// Reads the policy of thread `tid` (0 = the calling thread): one system call,
/// where [`thread_policy`] makes two. `None`: a policy this crate does not name.
pub fn policy_of(tid: i32) -> Result<Option<Policy>, SchedError> {
    // SAFETY: sched_getscheduler(2) takes a tid only.
    let raw = unsafe { libc::sched_getscheduler(tid) };
    if raw < 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    Ok(Policy::from_raw(raw))
}

/// Reads the policy and priority of thread `tid` (0 = the calling thread).
pub fn thread_policy(tid: i32) -> Result<(Option<Policy>, i32), SchedError> {
    let policy = policy_of(tid)?;
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_getparam(2) writes one sched_param through a valid pointer.
    let rc = unsafe { libc::sched_getparam(tid, &mut param) };
    if rc != 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    Ok((policy, param.sched_priority))
}

/// Pins thread `tid` (0 = the calling thread) to the given CPUs with
/// `sched_setaffinity(2)`.
pub fn set_thread_affinity(tid: i32, cpus: &[usize]) -> Result<(), SchedError> {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(SchedError {
                errno: libc::EINVAL,
            });
        }
        // SAFETY: `cpu` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: sched_setaffinity(2) reads `size_of::<cpu_set_t>()` bytes from `set`.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(SchedError {
            errno: super::errno(),
        })
    }
}

/// Reads the CPU affinity of thread `tid` (0 = the calling thread).
pub fn thread_affinity(tid: i32) -> Result<Vec<usize>, SchedError> {
    // SAFETY: as in `set_thread_affinity`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity(2) writes at most `size_of::<cpu_set_t>()` bytes.
    let rc =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Sets the nice value of thread `tid` (0 = the calling thread).
pub fn set_thread_nice(tid: i32, nice: i32) -> Result<(), SchedError> {
    // SAFETY: setpriority(2) takes integers only; on Linux PRIO_PROCESS with a tid
    // acts on that thread.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(SchedError {
            errno: super::errno(),
        })
    }
}

/// `SCHED_RESET_ON_FORK`: or-ed into the policy by `sched_getscheduler(2)` and
/// `sched_setscheduler(2)`; children of such a thread start with a normal policy.
pub const SCHED_RESET_ON_FORK: i32 = 0x4000_0000;

/// What the kernel keeps about a thread's scheduling, besides its CPU affinity:
/// everything `prio set` may change and `prio restore` must put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSched {
    /// The raw policy number (`SCHED_*`, without the reset flag), raw so that a
    /// policy rtlab has no name for is put back too.
    pub policy: i32,
    /// RT priority (0 for the normal policies).
    pub priority: i32,
    /// Nice value, -20 to 19 (the kernel keeps it while the policy is real-time).
    pub nice: i32,
    /// `SCHED_RESET_ON_FORK`: children start with the normal policy and nice 0.
    pub reset_on_fork: bool,
}

impl ThreadSched {
    /// The policy, when rtlab knows it.
    pub fn known_policy(&self) -> Option<Policy> {
        Policy::from_raw(self.policy)
    }
}

/// Reads policy, reset-on-fork flag, RT priority and nice of thread `tid`
/// (0 = the calling thread).
pub fn thread_sched(tid: i32) -> Result<ThreadSched, SchedError> {
    // SAFETY: sched_getscheduler(2) takes a tid only; the result carries
    // SCHED_RESET_ON_FORK when the thread has it.
    let raw = unsafe { libc::sched_getscheduler(tid) };
    if raw < 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_getparam(2) writes one sched_param through a valid pointer.
    if unsafe { libc::sched_getparam(tid, &mut param) } != 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    Ok(ThreadSched {
        policy: raw & !SCHED_RESET_ON_FORK,
        priority: param.sched_priority,
        nice: thread_nice(tid)?,
        reset_on_fork: raw & SCHED_RESET_ON_FORK != 0,
    })
}

/// Reads the nice value of thread `tid` (0 = the calling thread).
pub fn thread_nice(tid: i32) -> Result<i32, SchedError> {
    // SAFETY: getpriority(2) takes integers only. The raw system call is used
    // because it is unambiguous: it returns 20 - nice (1 to 40) or -1 with errno
    // ("C library/kernel differences" in getpriority(2)), where the libc wrapper
    // returns -1 both for nice -1 and for an error.
    let raw = unsafe {
        libc::syscall(
            libc::SYS_getpriority,
            libc::PRIO_PROCESS as libc::c_long,
            tid as libc::c_long,
        )
    };
    if raw < 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    // 20 - raw fits an i32: the kernel returns 1 to 40.
    Ok(20 - raw as i32)
}

/// Gives thread `tid` (0 = the calling thread) exactly `s`: policy, RT priority
/// and reset-on-fork flag with `sched_setscheduler(2)` (which keeps the nice value
/// and, on kernels that have one, a custom time slice), then the nice value with
/// `setpriority(2)` when it differs.
pub fn set_thread_sched(tid: i32, s: &ThreadSched) -> Result<(), SchedError> {
    let param = libc::sched_param {
        sched_priority: s.priority,
    };
    let policy = if s.reset_on_fork {
        s.policy | SCHED_RESET_ON_FORK
    } else {
        s.policy
    };
    // SAFETY: sched_setscheduler(2) reads one sched_param through a valid pointer;
    // the policy may carry SCHED_RESET_ON_FORK.
    if unsafe { libc::sched_setscheduler(tid, policy, &param) } != 0 {
        return Err(SchedError {
            errno: super::errno(),
        });
    }
    if thread_nice(tid)? != s.nice {
        set_thread_nice(tid, s.nice)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_numbers_round_trip() {
        for p in [
            Policy::Fifo,
            Policy::Rr,
            Policy::Other,
            Policy::Batch,
            Policy::Idle,
            Policy::Deadline,
        ] {
            assert_eq!(Policy::from_raw(p.raw()), Some(p));
        }
        assert_eq!(
            Policy::from_raw(libc::SCHED_FIFO | 0x4000_0000),
            Some(Policy::Fifo)
        );
    }

    #[test]
    fn affinity_round_trip_on_this_thread() {
        let before = thread_affinity(0).unwrap();
        assert!(!before.is_empty());
        set_thread_affinity(0, &before[..1]).unwrap();
        assert_eq!(thread_affinity(0).unwrap(), &before[..1]);
        set_thread_affinity(0, &before).unwrap();
    }

    #[test]
    fn other_policy_is_always_allowed() {
        set_thread_policy(0, Policy::Other, 0).unwrap();
        assert_eq!(thread_policy(0).unwrap(), (Some(Policy::Other), 0));
    }

    #[test]
    fn the_policy_alone_is_read_as_with_the_priority() {
        // A thread of its own, set to batch (no privilege needed), so that the
        // answer is not the default a wrong call might also give.
        std::thread::spawn(|| {
            set_thread_policy(0, Policy::Batch, 0).unwrap();
            assert_eq!(policy_of(0).unwrap(), Some(Policy::Batch));
            assert_eq!(thread_policy(0).unwrap().0, policy_of(0).unwrap());
        })
        .join()
        .unwrap();
        assert_eq!(policy_of(-1).unwrap_err().errno, libc::EINVAL);
    }

    #[test]
    fn sched_round_trips_nice_and_reset_on_fork_in_a_thread() {
        // A thread of its own: the nice value and flag must not leak into the
        // other tests. Raising nice and setting the flag need no privilege.
        std::thread::spawn(|| {
            let before = thread_sched(0).unwrap();
            assert_eq!(before.known_policy(), Some(Policy::Other));
            assert_eq!(thread_nice(0).unwrap(), before.nice);
            let want = ThreadSched {
                policy: libc::SCHED_BATCH,
                priority: 0,
                nice: (before.nice + 3).min(19),
                reset_on_fork: true,
            };
            set_thread_sched(0, &want).unwrap();
            assert_eq!(thread_sched(0).unwrap(), want);
            assert_eq!(thread_policy(0).unwrap(), (Some(Policy::Batch), 0));
            // A policy change through sched_setscheduler(2) keeps the nice value.
            let other = ThreadSched {
                policy: libc::SCHED_OTHER,
                ..want
            };
            set_thread_sched(0, &other).unwrap();
            assert_eq!(thread_sched(0).unwrap(), other);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_does_not_exist_is_esrch() {
        // PIDs are at most 2^22 on Linux (pid_max); this tid cannot exist.
        assert_eq!(thread_sched(i32::MAX).unwrap_err().errno, libc::ESRCH);
        assert_eq!(thread_nice(i32::MAX).unwrap_err().errno, libc::ESRCH);
    }
}
