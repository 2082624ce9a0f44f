//! Changing threads to their targets, each change recorded in the journal first
//! so that `prio restore` can undo it.

use super::outcome::{setting_text, Outcome};
use super::state::{self, Entry, Journal};
use super::target::Target;
use super::task::{proc_dir, read_task, Setting, Task};
use super::thread::{self, Failure, Snapshot};
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::ESRCH;

/// What one thread needs, decided under the journal's lock.
enum Step<'a> {
    /// Already as wanted.
    Unchanged(Setting, Setting),
    /// Exited since it was listed.
    Gone,
    /// Could not be read.
    Unreadable(Failure),
    /// To change: (before, policy, affinity).
    Change(Setting, Option<(Policy, i32)>, Option<&'a CpuList>),
}

/// Changes each (thread, target) that drifts.
///
/// Under the journal's lock, each thread is read afresh (another rtlab may have
/// changed it since it was listed: that must not pass for its original), the
/// originals of the threads to change are recorded and the journal written
/// *before* anything changes (a restore finds them even if rtlab is killed
/// midway), then the threads are changed, and the records of changes that failed
/// are taken back out.
pub fn change(items: &[(&Task, Target)], dry_run: bool) -> Result<Outcome> {
    let mut o = Outcome::default();
    if dry_run {
        for (t, target) in items {
            let before = &t.setting;
            let want = setting_text(&target.applied_to(before));
            if target.drift(before).is_empty() {
                o.unchanged += 1;
                o.row(t, before, want, "already".into());
            } else {
                o.changed += 1;
                o.row(t, before, want, "would change".into());
            }
        }
        return Ok(o);
    }
    let journal = Journal::lock(&state::path()?, state::LOCK_WAIT)?;
    let earlier = journal.load()?;
    let mut st = earlier.clone();
    let mut steps = Vec::with_capacity(items.len());
    for (t, target) in items {
        // A tid reused since the listing belongs to another thread.
        let alive = read_task(proc_dir(), t.pid, t.tid, &t.process, "")
            .is_some_and(|now| now.starttime == t.starttime);
        let snap: Snapshot = match alive.then(|| thread::snapshot(t.tid)) {
            Some(Ok(s)) => s,
            None => {
                steps.push(Step::Gone);
                continue;
            }
            Some(Err(e)) if e.errno == ESRCH => {
                steps.push(Step::Gone);
                continue;
            }
            Some(Err(error)) => {
                steps.push(Step::Unreadable(Failure {
                    error,
                    what: "reading",
                }));
                continue;
            }
        };
        let before = snap.setting();
        let want = target.applied_to(&before);
        if target.drift(&before).is_empty() {
            steps.push(Step::Unchanged(before, want));
            continue;
        }
        let policy_changed = want.policy != before.policy || want.priority != before.priority;
        let affinity_changed = want.affinity != before.affinity;
        st.record(Entry {
            pid: t.pid,
            tid: t.tid,
            name: t.name.clone(),
            starttime: t.starttime,
            before: before.clone(),
            sched: Some(snap.sched),
            affinity_changed,
            policy_changed,
        });
        steps.push(Step::Change(
            before,
            target.policy.filter(|_| policy_changed),
            target.affinity.as_ref().filter(|_| affinity_changed),
        ));
    }
    if st != earlier {
        journal.store(&st)?;
    }
    let mut taken_back = false;
    for ((t, target), step) in items.iter().zip(steps) {
        match step {
            Step::Unchanged(before, want) => {
                o.unchanged += 1;
                o.row(t, &before, setting_text(&want), "already".into());
            }
            Step::Gone => {
                o.gone += 1;
                o.row(t, &t.setting, "-".into(), "exited".into());
            }
            Step::Unreadable(f) => {
                o.failed += 1;
                let now = setting_text(&t.setting);
                o.row(t, &t.setting, now, format!("FAILED {}", f.message()));
            }
            Step::Change(before, policy, affinity) => {
                match thread::apply(t.tid, policy, affinity) {
                    Ok(()) => {
                        let after = thread::current_setting(t.tid).map_or_else(
                            || setting_text(&target.applied_to(&before)),
                            |n| setting_text(&n),
                        );
                        o.changed += 1;
                        o.row(t, &before, after, "changed".into());
                    }
                    Err(f) => {
                        st.revert(t.tid, t.starttime, &earlier);
                        taken_back = true;
                        if f.error.errno == ESRCH {
                            o.gone += 1;
                            o.row(t, &before, "-".into(), "exited".into());
                        } else {
                            o.failed += 1;
                            let now = thread::current_setting(t.tid).unwrap_or(before.clone());
                            o.row(
                                t,
                                &before,
                                setting_text(&now),
                                format!("FAILED {}", f.message()),
                            );
                        }
                    }
                }
            }
        }
    }
    if taken_back {
        journal.store(&st)?;
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dry_run_only_says_what_would_change() {
        let (a, b) = (
            Task::for_test(500, "app", false, Policy::Other),
            Task::for_test(600, "rt", false, Policy::Fifo),
        );
        let target = Target {
            policy: Some((Policy::Fifo, 0)),
            affinity: None,
        };
        let o = change(&[(&a, target.clone()), (&b, target)], true).unwrap();
        assert_eq!((o.changed, o.unchanged, o.failed), (1, 1, 0));
        let text = o.render("would change", 0, 0);
        assert!(
            text.contains("other cpus 0-1") && text.contains("already"),
            "{text}"
        );
        assert!(text.ends_with("1 would change, 1 already as wanted, 0 failed\n"));
    }
}
