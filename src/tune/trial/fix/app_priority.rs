//! The application's threads at a real-time priority (`--app PATTERN`,
//! `--app-priority`), as `rtlab prio set` does. The measuring threads stand
//! for the application's: in the baseline they run at the policy and priority
//! its threads have now, in the changed arm at the one tried.

use super::{thread_want, Ctx, Fix, Plan};
use crate::tune::prio::profile::Rule;
use crate::tune::prio::select::{select, Selector};
use crate::tune::prio::task::{proc_dir, tasks_of};

/// The candidate.
pub const FIX: Fix = Fix {
    name: "app_priority",
    title: "the application's threads at RT priority",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    let Some(app) = c.app else {
        return Err("no application named: give --app PATTERN (its process name)".into());
    };
    let sel = Selector::new(&app.pattern, false, None, false).map_err(|e| format!("--app: {e}"))?;
    let tasks = tasks_of(proc_dir(), false, |pid, name, cmd| {
        sel.matches_process(pid, name, cmd)
    });
    let (threads, _) = select(&tasks, &sel);
    let Some(first) = threads.first() else {
        return Err(format!(
            "no running process matches --app '{}'",
            app.pattern
        ));
    };
    let (policy, prio) = app.policy;
    let todo: Vec<_> = threads
        .iter()
        .copied()
        .filter(|t| t.setting.policy != Some(policy) || t.setting.priority != prio)
        .collect();
    if todo.is_empty() {
        return Err(format!(
            "already {policy}/{prio} ({} threads)",
            threads.len()
        ));
    }
    let now = (
        first
            .setting
            .policy
            .unwrap_or(rtlab_engine::rt::sched::Policy::Other),
        first.setting.priority,
    );
    Ok(Plan {
        wants: todo
            .iter()
            .map(|t| thread_want(t, Some(app.policy), None))
            .collect(),
        change: format!(
            "{} ({} thread{}) {} → {policy}/{prio}, the measuring threads likewise",
            first.process,
            todo.len(),
            if todo.len() == 1 { "" } else { "s" },
            first.setting.policy_text()
        ),
        by_hand: format!(
            "rtlab prio set '{}' --policy {policy} --priority {prio}",
            app.pattern
        ),
        rules: vec![Rule {
            pattern: app.pattern.clone(),
            full: false,
            threads: None,
            kernel_threads: false,
            policy,
            priority: prio,
            affinity: None,
            unit: None,
        }],
        probe: Some([now, app.policy]),
        ..Plan::default()
    })
}
