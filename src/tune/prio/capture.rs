//! Capturing the current settings of threads as a profile (`prio save`).

use super::profile::{Profile, Rule};
use super::task::Task;
use rtlab_engine::rt::sched::Policy;
use std::collections::BTreeSet;

/// The threads captured when no pattern is given: every thread of the processes
/// (other than rtlab) that have a real-time thread; kernel threads only with
/// `kernel_threads`.
pub fn rt_processes(tasks: &[Task], kernel_threads: bool) -> Vec<&Task> {
    let rt_pids: BTreeSet<i32> = tasks
        .iter()
        .filter(|t| {
            (kernel_threads || !t.kernel) && t.setting.policy.is_some_and(Policy::is_realtime)
        })
        .map(|t| t.pid)
        .collect();
    let own = std::process::id() as i32;
    tasks
        .iter()
        .filter(|t| rt_pids.contains(&t.pid) && t.pid != own)
        .collect()
}

/// A profile that gives `selected` the settings they have now: a rule per
/// process, and one per thread whose setting differs from its main thread's
/// (SCHED_DEADLINE threads are left out: a profile cannot set them).
pub fn capture(selected: &[&Task]) -> Profile {
    let all_cpus = rtlab_engine::sysinfo::SysRoot::default()
        .read("/sys/devices/system/cpu/online")
        .unwrap_or_default();
    profile_of(selected, &all_cpus)
}

/// [`capture`] on a system whose online CPUs are `all_cpus` (a rule names the
/// CPUs only when they are not all of them).
fn profile_of(selected: &[&Task], all_cpus: &str) -> Profile {
    let mut profile = Profile::default();
    for t in selected {
        let Some(policy) = t.setting.policy.filter(|p| *p != Policy::Deadline) else {
            continue;
        };
        let main = selected.iter().find(|m| m.tid == t.pid).map(|m| &m.setting);
        let is_main = t.tid == t.pid;
        if !is_main && main == Some(&t.setting) {
            continue;
        }
        let rule = Rule {
            pattern: format!("^{}$", regex::escape(&t.process)),
            full: false,
            threads: (!is_main).then(|| format!("^{}$", regex::escape(&t.name))),
            kernel_threads: t.kernel,
            policy,
            priority: t.setting.priority,
            affinity: (t.setting.affinity != all_cpus).then(|| t.setting.affinity.clone()),
            unit: None,
        };
        if !profile.rule.contains(&rule) {
            profile.rule.push(rule);
        }
    }
    profile
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_per_process_and_per_thread_that_differs() {
        let mut main = Task::for_test(500, "my.app", false, Policy::Fifo);
        main.setting.priority = 50;
        let mut same = main.clone();
        (same.tid, same.name) = (501, "worker".into());
        let mut rx = main.clone();
        (rx.tid, rx.name, rx.setting.affinity) = (502, "rx".into(), "1".into());
        let dl = Task::for_test(600, "dl", false, Policy::Deadline);
        let other = Task::for_test(700, "logger", false, Policy::Other);
        let tasks = vec![main, same, rx, dl, other];
        assert_eq!(
            rt_processes(&tasks, false)
                .iter()
                .map(|t| t.tid)
                .collect::<Vec<_>>(),
            [500, 501, 502]
        );
        let all: Vec<&Task> = tasks.iter().collect();
        let p = profile_of(&all, "0-1");
        let rules: Vec<(&str, Option<&str>, Option<&str>)> = p
            .rule
            .iter()
            .map(|r| {
                (
                    r.pattern.as_str(),
                    r.threads.as_deref(),
                    r.affinity.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            rules,
            [
                ("^my\\.app$", None, None),
                ("^my\\.app$", Some("^rx$"), Some("1")),
                ("^logger$", None, None),
            ]
        );
    }
}
