//! The threads rtlab must not change, and why: PID 1 and the kernel's per-CPU
//! threads unless forced, SCHED_DEADLINE threads always.

use super::target::Target;
use super::task::Task;
use crate::error::UsageError;
use rtlab_engine::rt::sched::Policy;
use std::collections::BTreeMap;

/// Why a thread is left alone unless forced, `None` when rtlab may change it.
/// PID 1 and the kernel's own per-CPU machinery keep the system alive: a
/// mistaken pattern must not reach them.
pub fn protection(t: &Task) -> Option<&'static str> {
    if t.pid == 1 {
        return Some(
            "PID 1 is init: every service it starts inherits its policy and CPUs, and if it starves the system cannot be managed or shut down",
        );
    }
    if !t.kernel {
        return None;
    }
    let n = t.name.as_str();
    let per_cpu = |prefix: &str| {
        n.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|cpu| !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()))
    };
    Some(if per_cpu("migration") {
        "migration/N is the CPU's stopper thread: it moves tasks off the CPU and runs stop_machine and CPU hotplug at the top priority; below another thread they stall"
    } else if per_cpu("ksoftirqd") {
        "ksoftirqd/N runs the CPU's pending softirqs (network, timers, block I/O); starved, they pile up and the CPU's I/O stalls"
    } else if n.starts_with("rcu_") || per_cpu("rcuc") {
        "RCU threads end grace periods: starved, freed memory is never reclaimed and the kernel reports RCU stalls until the system hangs"
    } else if per_cpu("idle_inject") {
        "idle_inject/N forces idle time for thermal and power capping: changed, the CPU can overheat or miss its power limit"
    } else if per_cpu("cpuhp") {
        "cpuhp/N brings its CPU up and down (hotplug, suspend): changed, hotplug can deadlock"
    } else if per_cpu("watchdog") || n == "watchdogd" {
        "the watchdog threads detect lockups: changed, they report false lockups (or reboot the machine) or miss real ones"
    } else {
        return None;
    })
}

const DEADLINE: &str = "SCHED_DEADLINE threads are never changed: rtlab could not put back their runtime, deadline and period";

/// The threads that may be changed, and what was left out.
pub struct Guarded<'a> {
    /// The threads to change, with their targets.
    pub kept: Vec<(&'a Task, Target)>,
    /// How many threads were left out.
    pub protected: usize,
    /// One warning per reason, naming the threads left out for it.
    pub warnings: Vec<String>,
}

impl<'a> Guarded<'a> {
    /// The threads to change; when every thread was left out, a usage error
    /// (exit 2): nothing changed.
    pub fn kept(self) -> anyhow::Result<Vec<(&'a Task, Target)>> {
        if self.kept.is_empty() && self.protected > 0 {
            return Err(UsageError(format!(
                "nothing changed: every matching thread ({}) is protected (see the warnings)",
                self.protected
            ))
            .into());
        }
        Ok(self.kept)
    }
}

/// Leaves out the threads rtlab must not change: PID 1 and the kernel's per-CPU
/// threads unless `force` (see [`protection`]), SCHED_DEADLINE threads always
/// (their runtime, deadline and period could not be put back), with one warning
/// per reason, naming the threads.
pub fn guard(items: Vec<(&Task, Target)>, force: bool) -> Guarded<'_> {
    let mut left: BTreeMap<&'static str, Vec<&Task>> = BTreeMap::new();
    let mut kept = Vec::new();
    for (t, target) in items {
        let reason = if t.setting.policy == Some(Policy::Deadline) {
            Some(DEADLINE)
        } else {
            protection(t).filter(|_| !force)
        };
        match reason {
            Some(r) => left.entry(r).or_default().push(t),
            None => kept.push((t, target)),
        }
    }
    let protected: usize = left.values().map(Vec::len).sum();
    let warnings = left
        .iter()
        .map(|(reason, tasks)| {
            let mut names: Vec<String> = tasks
                .iter()
                .take(4)
                .map(|t| format!("{} (pid {}, tid {})", t.name, t.pid, t.tid))
                .collect();
            if tasks.len() > 4 {
                names.push(format!("and {} more", tasks.len() - 4));
            }
            let how = if *reason == DEADLINE {
                ""
            } else {
                "; --force changes them anyway"
            };
            format!("left alone: {}: {reason}{how}", names.join(", "))
        })
        .collect();
    Guarded {
        kept,
        protected,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: i32, name: &str, kernel: bool) -> Task {
        Task::for_test(pid, name, kernel, Policy::Other)
    }

    #[test]
    fn pid_1_and_the_kernels_per_cpu_threads_are_protected() {
        assert!(protection(&task(1, "systemd", false))
            .unwrap()
            .contains("PID 1 is init"));
        for name in [
            "migration/0",
            "migration/17",
            "ksoftirqd/3",
            "rcu_preempt",
            "rcu_tasks_kthread",
            "rcuc/2",
            "idle_inject/1",
            "cpuhp/0",
            "watchdog/5",
            "watchdogd",
        ] {
            assert!(protection(&task(50, name, true)).is_some(), "{name}");
            // The same name on a user process is not the kernel's.
            assert!(protection(&task(50, name, false)).is_none(), "{name}");
        }
        for name in [
            "irq/24-eth0",
            "rcuop/0",
            "kworker/0:1",
            "ksoftirqd",
            "migration/",
            "migration/x",
            "kthreadd",
        ] {
            assert!(protection(&task(50, name, true)).is_none(), "{name}");
        }
    }

    #[test]
    fn guard_leaves_out_protected_threads_unless_forced() {
        let tasks = [
            Task::for_test(1, "init", false, Policy::Other),
            Task::for_test(18, "migration/0", true, Policy::Fifo),
            Task::for_test(40, "irq/9-acpi", true, Policy::Fifo),
            Task::for_test(500, "app", false, Policy::Other),
            Task::for_test(600, "dl", false, Policy::Deadline),
        ];
        let target = Target {
            policy: Some((Policy::Fifo, 10)),
            affinity: None,
        };
        let items = || {
            tasks
                .iter()
                .map(|t| (t, target.clone()))
                .collect::<Vec<_>>()
        };
        let pids = |kept: &[(&Task, Target)]| kept.iter().map(|(t, _)| t.pid).collect::<Vec<_>>();
        let g = guard(items(), false);
        assert_eq!((pids(&g.kept), g.protected), (vec![40, 500], 3));
        assert_eq!(g.warnings.len(), 3);
        assert!(g
            .warnings
            .iter()
            .any(|w| w.starts_with("left alone: dl (pid 600, tid 600): SCHED_DEADLINE")));
        // --force reaches PID 1 and the per-CPU threads, never a deadline thread.
        let g = guard(items(), true);
        assert_eq!((pids(&g.kept), g.protected), (vec![1, 18, 40, 500], 1));
        // Nothing left to change: a usage error, exit 2.
        let err = guard(vec![(&tasks[0], target.clone())], false)
            .kept()
            .unwrap_err();
        assert!(
            err.is::<UsageError>() && err.to_string().contains("protected"),
            "{err}"
        );
    }
}
