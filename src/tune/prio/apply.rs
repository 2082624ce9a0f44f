//! Applying a profile: each thread's target over all the rules, the rules' CPUs
//! checked against the online ones, and the drift report of `prio apply --check`.

use super::profile::{Compiled, Profile};
use super::select::{select, tasks_matching, Selector};
use super::target::{check_cpus, is_top, online_cpus, Target};
use super::task::Task;
use crate::error::UsageError;
use crate::tune::text_table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// The threads of the processes any rule matches.
pub fn tasks_for(rules: &[Compiled]) -> Vec<Task> {
    let selectors: Vec<&Selector> = rules.iter().map(|r| &r.selector).collect();
    tasks_matching(&selectors)
}

/// The numbers (from 1) of the rules that ask for the top priority.
pub fn top_priority_rules(profile: &Profile) -> Vec<usize> {
    (1..)
        .zip(&profile.rule)
        .filter(|(_, r)| is_top(r.policy, r.priority))
        .map(|(n, _)| n)
        .collect()
}

/// Refuses a rule naming a CPU that is not online (a usage error naming the
/// profile and the rule).
pub fn check_online(path: &Path, rules: &[Compiled]) -> Result<()> {
    let online = online_cpus();
    for (i, r) in rules.iter().enumerate() {
        if let Some(cpus) = &r.target.affinity {
            check_cpus(cpus, &online).map_err(|e| {
                UsageError(format!("{}: rule {} affinity: {e}", path.display(), i + 1))
            })?;
        }
    }
    Ok(())
}

/// Each thread's final target over all rules (a later rule wins), in tid order,
/// and the numbers (from 1) of the rules that matched nothing.
pub fn resolve<'a>(tasks: &'a [Task], rules: &[Compiled]) -> (Vec<(&'a Task, Target)>, Vec<usize>) {
    let mut by_tid: BTreeMap<i32, (&Task, Target)> = BTreeMap::new();
    let mut unmatched = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let (hits, _) = select(tasks, &r.selector);
        if hits.is_empty() {
            unmatched.push(i + 1);
        }
        for t in hits {
            by_tid.insert(t.tid, (t, r.target.clone()));
        }
    }
    (by_tid.into_values().collect(), unmatched)
}

/// The threads that differ from their targets, as a table (none when every thread
/// is as wanted) and a summary line naming the profile; and how many differ.
pub fn drift_report(items: &[(&Task, Target)], profile: &Path) -> (String, usize) {
    let mut t = text_table(&["pid", "tid", "thread", "drift"]);
    let mut drifting = 0;
    for (task, target) in items {
        let d = target.drift(&task.setting);
        if !d.is_empty() {
            drifting += 1;
            t.row(vec![
                task.pid.to_string(),
                task.tid.to_string(),
                task.name.clone(),
                d.join(", "),
            ]);
        }
    }
    let mut out = String::new();
    if drifting > 0 {
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "{drifting} of {} matching threads differ from {}\n",
        items.len(),
        profile.display()
    ));
    (out, drifting)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

    fn profile(text: &str) -> (Profile, Vec<Compiled>) {
        let p: Profile = toml_edit::de::from_str(text).unwrap();
        let rules = (1..)
            .zip(&p.rule)
            .map(|(n, r)| r.compile(n).unwrap())
            .collect();
        (p, rules)
    }

    #[test]
    fn a_later_rule_wins_and_drift_is_reported() {
        let (p, rules) = profile(
            "[[rule]]\npattern = \"^app$\"\npolicy = \"fifo\"\npriority = 99\n\
             [[rule]]\npattern = \"^app$\"\nthreads = \"^rx$\"\npolicy = \"rr\"\npriority = 20\n\
             [[rule]]\npattern = \"^none$\"\npolicy = \"fifo\"\npriority = 10\n",
        );
        assert_eq!(top_priority_rules(&p), [1]);
        let mut rx = Task::for_test(500, "app", false, Policy::Other);
        (rx.tid, rx.name) = (501, "rx".into());
        let mut main = Task::for_test(500, "app", false, Policy::Fifo);
        main.setting.priority = 99;
        let tasks = [main, rx];
        let (items, unmatched) = resolve(&tasks, &rules);
        assert_eq!(unmatched, [3]);
        let wanted: Vec<_> = items.iter().map(|(t, g)| (t.tid, g.policy)).collect();
        assert_eq!(
            wanted,
            [
                (500, Some((Policy::Fifo, 99))),
                (501, Some((Policy::Rr, 20)))
            ]
        );
        let (text, drifting) = drift_report(&items, Path::new("p.toml"));
        assert_eq!(drifting, 1);
        assert!(text.contains("other (want rr/20)"), "{text}");
        assert!(text.ends_with("1 of 2 matching threads differ from p.toml\n"));
        let (text, _) = drift_report(&items[..1], Path::new("p.toml"));
        assert_eq!(text, "0 of 1 matching threads differ from p.toml\n");
    }

    #[test]
    fn offline_cpus_are_refused_naming_the_rule() {
        let (_, rules) = profile(
            "[[rule]]\npattern = \"a\"\npolicy = \"fifo\"\npriority = 1\naffinity = \"8000\"\n",
        );
        let e = check_online(Path::new("p.toml"), &rules)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml: rule 1 affinity: CPU 8000"), "{e}");
    }
}
