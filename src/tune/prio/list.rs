//! What `prio list` shows: the threads with their policy, priority, CPUs and
//! context switches.

use super::select::{select, Selector};
use super::task::Task;
use crate::format::text::table::Table;
use rtlab_engine::rt::sched::Policy;

/// The threads of `tasks` that `selector` picks (all without one), only those
/// with a real-time policy (fifo, rr, deadline) when `rt_only`.
pub fn shown<'a>(tasks: &'a [Task], selector: Option<&Selector>, rt_only: bool) -> Vec<&'a Task> {
    let selected: Vec<&Task> = match selector {
        Some(s) => select(tasks, s).0,
        None => tasks.iter().collect(),
    };
    selected
        .into_iter()
        .filter(|t| {
            !rt_only
                || t.setting
                    .policy
                    .is_some_and(|p| p.is_realtime() || p == Policy::Deadline)
        })
        .collect()
}

/// The table of threads and the count under it.
pub fn table(shown: &[&Task]) -> String {
    let mut t = Table::new(&[
        "pid", "tid", "process", "thread", "policy", "prio", "affinity", "vol-cs", "invol-cs",
    ]);
    for x in shown {
        t.row(vec![
            x.pid.to_string(),
            x.tid.to_string(),
            if x.kernel {
                format!("[{}]", x.process)
            } else {
                x.process.clone()
            },
            x.name.clone(),
            x.setting.policy.map_or("?".into(), |p| p.to_string()),
            x.setting.priority.to_string(),
            x.setting.affinity.clone(),
            x.voluntary_ctxt_switches.to_string(),
            x.nonvoluntary_ctxt_switches.to_string(),
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!("{} threads\n", shown.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_only_keeps_real_time_threads_and_kernel_ones_are_bracketed() {
        let tasks = [
            Task::for_test(2, "kthreadd", true, Policy::Other),
            Task::for_test(40, "irq/9-acpi", true, Policy::Fifo),
            Task::for_test(600, "dl", false, Policy::Deadline),
        ];
        let pids = |v: Vec<&Task>| v.iter().map(|t| t.pid).collect::<Vec<_>>();
        assert_eq!(pids(shown(&tasks, None, false)), [2, 40, 600]);
        assert_eq!(pids(shown(&tasks, None, true)), [40, 600]);
        let s = Selector::new("^irq", false, None, true).unwrap();
        let one = shown(&tasks, Some(&s), false);
        let text = table(&one);
        assert!(
            text.contains("[irq/9-acpi]") && text.ends_with("1 threads\n"),
            "{text}"
        );
    }
}
