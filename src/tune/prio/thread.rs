//! One thread's scheduling state: read with system calls, changed, put back.

use super::task::Setting;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy, SchedError, ThreadSched};
use rtlab_engine::rt::{EINVAL, EPERM, ESRCH};

/// A thread's setting read back with `sched_getscheduler(2)`/`sched_getaffinity(2)`
/// (cheaper than `/proc`, used to confirm a change).
pub fn current_setting(tid: i32) -> Option<Setting> {
    snapshot(tid).ok().map(|s| s.setting())
}

/// Everything about a thread's scheduling that rtlab changes and puts back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Policy, RT priority, nice, reset-on-fork.
    pub sched: ThreadSched,
    /// Allowed CPUs.
    pub affinity: CpuList,
}

impl Snapshot {
    /// The policy, priority and CPUs, as listed and compared with a [`Target`](super::target::Target).
    pub fn setting(&self) -> Setting {
        Setting {
            policy: self.sched.known_policy(),
            priority: self.sched.priority,
            affinity: self.affinity.to_string(),
        }
    }
}

/// `fifo/20 nice -5 reset-on-fork`, `policy 7/0 nice 0`: a scheduling state as
/// shown in messages.
pub fn sched_text(s: &ThreadSched) -> String {
    let policy = match s.known_policy() {
        Some(p) if p.is_realtime() => format!("{p}/{}", s.priority),
        Some(p) => p.to_string(),
        None => format!("policy {}/{}", s.policy, s.priority),
    };
    let flag = if s.reset_on_fork {
        " reset-on-fork"
    } else {
        ""
    };
    format!("{policy} nice {}{flag}", s.nice)
}

/// Reads a thread's scheduling state with `sched_getscheduler(2)`,
/// `sched_getparam(2)`, `getpriority(2)` and `sched_getaffinity(2)`.
pub fn snapshot(tid: i32) -> Result<Snapshot, SchedError> {
    Ok(Snapshot {
        sched: sched::thread_sched(tid)?,
        affinity: CpuList::from_cpus(sched::thread_affinity(tid)?),
    })
}

/// Why changing a thread failed.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The refusal.
    pub error: SchedError,
    /// What was being set.
    pub what: &'static str,
}

impl Failure {
    /// A readable reason with the way out.
    pub fn message(&self) -> String {
        match self.error.errno {
            EPERM => format!(
                "{}: permission denied (needs root or CAP_SYS_NICE, or an RLIMIT_RTPRIO at least the priority for own processes)",
                self.what
            ),
            ESRCH => format!("{}: the thread exited", self.what),
            EINVAL => format!("{}: invalid for this thread or system ({})", self.what, self.error),
            _ => format!("{}: {}", self.what, self.error),
        }
    }
}

/// Applies a setting to one thread: affinity first, then policy (so an RT thread
/// never runs a moment on a CPU it should leave). The nice value and the
/// reset-on-fork flag stay as they are.
pub fn apply(
    tid: i32,
    policy: Option<(Policy, i32)>,
    affinity: Option<&CpuList>,
) -> Result<(), Failure> {
    let sched = match policy {
        Some((p, prio)) => {
            let now = sched::thread_sched(tid).map_err(|error| Failure {
                error,
                what: "policy",
            })?;
            Some(ThreadSched {
                policy: p.raw(),
                priority: prio,
                ..now
            })
        }
        None => None,
    };
    put_back(tid, sched.as_ref(), affinity)
}

/// Gives one thread exactly these scheduling state and CPUs (each when given):
/// affinity first, then policy, priority, nice and reset-on-fork.
pub fn put_back(
    tid: i32,
    sched: Option<&ThreadSched>,
    affinity: Option<&CpuList>,
) -> Result<(), Failure> {
    if let Some(cpus) = affinity {
        sched::set_thread_affinity(tid, cpus.cpus()).map_err(|error| Failure {
            error,
            what: "affinity",
        })?;
    }
    if let Some(s) = sched {
        sched::set_thread_sched(tid, s).map_err(|error| Failure {
            error,
            what: "policy",
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::task::{proc_dir, read_task};
    use super::*;

    #[test]
    fn a_snapshot_of_this_thread_matches_proc() {
        let s = snapshot(0).unwrap();
        let me = std::process::id() as i32;
        let t = read_task(proc_dir(), me, rtlab_engine::rt::gettid(), "", "").unwrap();
        assert_eq!(s.setting(), t.setting);
        assert_eq!(current_setting(0), Some(t.setting));
    }

    #[test]
    fn sched_text_shows_every_field() {
        let s = ThreadSched {
            policy: Policy::Fifo.raw(),
            priority: 20,
            nice: -5,
            reset_on_fork: true,
        };
        assert_eq!(sched_text(&s), "fifo/20 nice -5 reset-on-fork");
        let odd = ThreadSched {
            policy: 7,
            priority: 0,
            nice: 0,
            reset_on_fork: false,
        };
        assert_eq!(sched_text(&odd), "policy 7/0 nice 0");
    }
}
