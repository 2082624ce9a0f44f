//! Putting back what `prio set` and `prio apply` changed, as the journal
//! recorded it.

use super::outcome::{setting_text, Outcome};
use super::state::{self, Entry, Journal, State};
use super::task::{proc_dir, read_task, Setting, Task};
use super::thread::{self, Failure, Snapshot};
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{Policy, ThreadSched};
use rtlab_engine::rt::ESRCH;
use std::path::PathBuf;

/// What [`restore`] did.
pub enum Restored {
    /// The journal is empty or absent (its path).
    Nothing(PathBuf),
    /// A row per recorded thread.
    Done(Outcome),
}

/// Puts every recorded thread back, under the journal's lock: policy, priority,
/// nice and reset-on-fork flag as recorded, and the CPUs, each read back to
/// confirm. What could not be restored stays in the journal for the next try.
/// With `dry_run`, only says what it would do.
pub fn restore(dry_run: bool) -> Result<Restored> {
    let path = state::path()?;
    if State::load(&path)?.entries.is_empty() {
        return Ok(Restored::Nothing(path));
    }
    let journal = if dry_run {
        None
    } else {
        Some(Journal::lock(&path, state::LOCK_WAIT)?)
    };
    let st = match &journal {
        Some(j) => j.load()?,
        None => State::load(&path)?,
    };
    let mut left = State::default();
    let mut o = Outcome::default();
    for e in &st.entries {
        if dry_run {
            match current(e) {
                Some(t) => {
                    let (_, _, want) = restore_target(e, &t.setting);
                    o.changed += 1;
                    o.row(&t, &t.setting, setting_text(&want), "would restore".into());
                }
                None => o.gone += 1,
            }
            continue;
        }
        match put_back(e) {
            Put::Restored { task, want } => {
                o.changed += 1;
                o.row(&task, &task.setting, setting_text(&want), "restored".into());
            }
            Put::Gone => o.gone += 1,
            Put::Failed { task, now, reason } => {
                o.failed += 1;
                o.row(
                    &task,
                    &task.setting,
                    setting_text(&now),
                    format!("FAILED {reason}"),
                );
                left.entries.push(e.clone());
            }
        }
    }
    if let Some(j) = &journal {
        j.store(&left)?;
    }
    Ok(Restored::Done(o))
}

/// What putting one recorded thread back did.
pub enum Put {
    /// Set back, and read back as recorded: the thread as it was before, and
    /// the setting it has now.
    Restored {
        /// The thread before it was put back.
        task: Task,
        /// Its setting now.
        want: Setting,
    },
    /// The thread has exited (or its tid belongs to another thread now).
    Gone,
    /// Refused, or the kernel kept something else.
    Failed {
        /// The thread before it was put back.
        task: Task,
        /// Its setting now.
        now: Setting,
        /// Why, readable.
        reason: String,
    },
}

/// The recorded thread, if it still runs (a tid reused since belongs to
/// another thread).
fn current(e: &Entry) -> Option<Task> {
    read_task(proc_dir(), e.pid, e.tid, &e.name, "").filter(|t| t.starttime == e.starttime)
}

/// Puts one recorded thread back (policy, priority, nice and reset-on-fork
/// flag as recorded, and the CPUs) and reads it back to confirm.
pub fn put_back(e: &Entry) -> Put {
    let Some(t) = current(e) else {
        return Put::Gone;
    };
    let (sched, affinity, want) = restore_target(e, &t.setting);
    let done = thread::put_back(e.tid, sched.as_ref(), affinity.as_ref()).and_then(|()| {
        thread::snapshot(e.tid).map_err(|error| Failure {
            error,
            what: "reading back",
        })
    });
    match done {
        Ok(now) => {
            let misses = restore_misses(sched.as_ref(), affinity.as_ref(), &now);
            if misses.is_empty() {
                Put::Restored { task: t, want }
            } else {
                Put::Failed {
                    task: t,
                    now: now.setting(),
                    reason: format!("the kernel kept {}", misses.join(", ")),
                }
            }
        }
        Err(f) if f.error.errno == ESRCH => Put::Gone,
        Err(f) => {
            let now = t.setting.clone();
            Put::Failed {
                task: t,
                now,
                reason: f.message(),
            }
        }
    }
}

/// What restore gives a recorded thread, and the setting that results.
fn restore_target(e: &Entry, now: &Setting) -> (Option<ThreadSched>, Option<CpuList>, Setting) {
    let affinity = if e.affinity_changed {
        CpuList::parse(&e.before.affinity).ok()
    } else {
        None
    };
    let sched = match (e.policy_changed, e.sched) {
        (false, _) => None,
        (true, Some(s)) => Some(s),
        // A journal of an older rtlab: the policy and priority it recorded, with
        // the nice value and reset-on-fork flag the thread has now.
        (true, None) => e
            .before
            .policy
            .filter(|p| *p != Policy::Deadline)
            .and_then(|p| {
                let now = rtlab_engine::rt::sched::thread_sched(e.tid).ok()?;
                Some(ThreadSched {
                    policy: p.raw(),
                    priority: e.before.priority,
                    ..now
                })
            }),
    };
    let want = Setting {
        policy: sched.map_or(now.policy, |s| s.known_policy()),
        priority: sched.map_or(now.priority, |s| s.priority),
        affinity: affinity
            .as_ref()
            .map_or(now.affinity.clone(), |a| a.to_string()),
    };
    (sched, affinity, want)
}

/// What differs between what restore asked for and what the thread has now,
/// empty when it has exactly that.
fn restore_misses(
    sched: Option<&ThreadSched>,
    affinity: Option<&CpuList>,
    now: &Snapshot,
) -> Vec<String> {
    let mut d = Vec::new();
    if let Some(s) = sched {
        if *s != now.sched {
            d.push(format!(
                "{} (wanted {})",
                thread::sched_text(&now.sched),
                thread::sched_text(s)
            ));
        }
    }
    if let Some(a) = affinity {
        if *a != now.affinity {
            d.push(format!("CPUs {} (wanted {a})", now.affinity));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_changed_is_put_back() {
        let now = Setting {
            policy: Some(Policy::Fifo),
            priority: 50,
            affinity: "2".into(),
        };
        let sched = ThreadSched {
            policy: Policy::Other.raw(),
            priority: 0,
            nice: 3,
            reset_on_fork: false,
        };
        let mut e = Entry {
            pid: 9,
            tid: 9,
            name: "a".into(),
            starttime: 1,
            before: Setting {
                policy: Some(Policy::Other),
                priority: 0,
                affinity: "0-1".into(),
            },
            sched: Some(sched),
            affinity_changed: false,
            policy_changed: true,
        };
        let (s, a, want) = restore_target(&e, &now);
        assert_eq!((s, a), (Some(sched), None));
        assert_eq!(
            (want.policy_text(), want.affinity.as_str()),
            ("other".into(), "2")
        );
        (e.affinity_changed, e.policy_changed) = (true, false);
        let (s, a, want) = restore_target(&e, &now);
        assert_eq!((s, a), (None, CpuList::parse("0-1").ok()));
        assert_eq!(setting_text(&want), "fifo/50 cpus 0-1");

        let kept = Snapshot {
            sched: ThreadSched {
                policy: Policy::Fifo.raw(),
                priority: 50,
                nice: 0,
                reset_on_fork: false,
            },
            affinity: CpuList::parse("2").unwrap(),
        };
        let cpus = CpuList::parse("0-1").unwrap();
        assert_eq!(
            restore_misses(Some(&sched), Some(&cpus), &kept),
            [
                "fifo/50 nice 0 (wanted other nice 3)",
                "CPUs 2 (wanted 0-1)"
            ]
        );
        assert!(restore_misses(None, None, &kept).is_empty());
    }
}
