//! The threads rtlab must not change, and why.

use super::task::Task;

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

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

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
}
