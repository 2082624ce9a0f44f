//! What `prio set`/`prio apply` changed, kept in a journal so `prio restore` can
//! put every thread back: `$XDG_STATE_HOME/rtlab/prio-restore.json`, else
//! `~/.local/state/rtlab/prio-restore.json`.
//!
//! Several changes before a restore accumulate; a thread changed twice keeps its
//! original setting, so one restore returns the system to where it was.
//!
//! The journal is locked and replaced atomically as every journal of rtlab
//! ([`crate::tune::journal`]): two `prio set` at once, or one killed half-way,
//! lose no record.

use super::task::Setting;
use crate::tune::journal::{self, Record};
use anyhow::Result;
use rtlab_engine::rt::sched::ThreadSched;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::tune::journal::LOCK_WAIT;

/// The journal of `prio`, locked.
pub type Journal = journal::Journal<State>;

/// One changed thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Thread name when changed.
    pub name: String,
    /// Start time (clock ticks after boot), to recognise a reused tid.
    pub starttime: u64,
    /// The setting before rtlab changed it (policy, priority, CPUs).
    pub before: Setting,
    /// Policy, RT priority, nice and reset-on-fork before rtlab changed them, what
    /// restore puts back (absent in journals of older rtlab versions, which then
    /// get the policy and priority of `before` back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<ThreadSched>,
    /// Whether the affinity was changed (else only policy/priority).
    pub affinity_changed: bool,
    /// Whether the policy/priority was changed.
    pub policy_changed: bool,
}

impl Entry {
    fn same_thread(&self, other: &Entry) -> bool {
        self.tid == other.tid && self.starttime == other.starttime
    }
}

/// The journal's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The changed threads.
    pub entries: Vec<Entry>,
}

/// Where the journal lives.
pub fn path() -> Result<PathBuf> {
    Ok(journal::state_dir()?.join("prio-restore.json"))
}

impl Record for State {
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl State {
    /// Reads the journal without taking the lock (for looking only: the file is
    /// always whole); a missing file is an empty state.
    pub fn load(path: &Path) -> Result<State> {
        journal::read(path)
    }

    /// Records a change; a thread already recorded keeps its original setting
    /// and only adds what else was changed.
    pub fn record(&mut self, e: Entry) {
        match self.entries.iter_mut().find(|x| x.same_thread(&e)) {
            Some(x) => {
                x.affinity_changed |= e.affinity_changed;
                x.policy_changed |= e.policy_changed;
            }
            None => self.entries.push(e),
        }
    }

    /// Puts the record of thread (`tid`, `starttime`) back to what it is in
    /// `earlier` (removed when `earlier` has none): for a change that was
    /// recorded ahead and then failed.
    pub fn revert(&mut self, tid: i32, starttime: u64, earlier: &State) {
        let key = |e: &Entry| e.tid == tid && e.starttime == starttime;
        let old = earlier.entries.iter().find(|e| key(e)).cloned();
        match (self.entries.iter().position(key), old) {
            (Some(i), Some(old)) => self.entries[i] = old,
            (Some(i), None) => {
                self.entries.remove(i);
            }
            (None, Some(old)) => self.entries.push(old),
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    fn entry(tid: i32, policy: Policy, aff: bool) -> Entry {
        Entry {
            pid: 1,
            tid,
            name: "t".into(),
            starttime: 7,
            before: Setting {
                policy: Some(policy),
                priority: 0,
                affinity: "0-1".into(),
            },
            sched: Some(ThreadSched {
                policy: policy.raw(),
                priority: 0,
                nice: 3,
                reset_on_fork: true,
            }),
            affinity_changed: aff,
            policy_changed: !aff,
        }
    }

    #[test]
    fn the_first_before_survives_and_files_round_trip() {
        let mut s = State::default();
        s.record(entry(10, Policy::Other, false));
        s.record(entry(10, Policy::Fifo, true));
        s.record(entry(11, Policy::Batch, false));
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.entries[0].before.policy, Some(Policy::Other));
        assert_eq!(s.entries[0].sched.unwrap().policy, Policy::Other.raw());
        assert!(s.entries[0].affinity_changed && s.entries[0].policy_changed);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/state.json");
        let j = Journal::lock(&p, LOCK_WAIT).unwrap();
        j.store(&s).unwrap();
        assert_eq!(j.load().unwrap(), s);
        assert_eq!(State::load(&p).unwrap(), s);
        j.store(&State::default()).unwrap();
        assert!(!p.exists());
        assert_eq!(j.load().unwrap(), State::default());
        std::fs::write(&p, "{").unwrap();
        assert!(j.load().unwrap_err().to_string().contains("damaged"));
    }

    #[test]
    fn a_journal_of_an_older_rtlab_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prio-restore.json");
        std::fs::write(
            &p,
            r#"{"entries":[{"pid":5,"tid":6,"name":"x","starttime":9,
                "before":{"policy":"batch","priority":0,"affinity":"0"},
                "affinity_changed":true,"policy_changed":false}]}"#,
        )
        .unwrap();
        let s = State::load(&p).unwrap();
        assert_eq!(s.entries[0].sched, None);
        assert_eq!(s.entries[0].before.policy, Some(Policy::Batch));
    }

    #[test]
    fn revert_undoes_only_the_failed_threads_record() {
        let mut earlier = State::default();
        earlier.record(entry(10, Policy::Other, true));
        let mut now = earlier.clone();
        now.record(entry(10, Policy::Fifo, false)); // adds policy_changed
        now.record(entry(11, Policy::Other, false));
        let mut a = now.clone();
        a.revert(11, 7, &earlier);
        a.revert(10, 7, &earlier);
        assert_eq!(a, earlier);
        let mut b = now.clone();
        b.revert(12, 7, &earlier); // never recorded: nothing happens
        assert_eq!(b, now);
    }

    #[test]
    fn the_lock_excludes_and_gives_up_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prio-restore.json");
        let held = Journal::lock(&p, LOCK_WAIT).unwrap();
        let t = Instant::now();
        let err = Journal::lock(&p, Duration::from_millis(100)).unwrap_err();
        assert!(err.to_string().contains("another rtlab"), "{err:#}");
        assert!(t.elapsed() >= Duration::from_millis(100));
        drop(held);
        Journal::lock(&p, Duration::ZERO).unwrap();
    }

    /// Threads of one process open the lock file each, so they exclude each
    /// other as processes do (flock(2) locks belong to the open file).
    #[test]
    fn concurrent_writers_lose_no_record_and_keep_the_first_original() {
        let dir = tempfile::tempdir().unwrap();
        let p = Arc::new(dir.path().join("state/prio-restore.json"));
        const WRITERS: i32 = 8;
        const ROUNDS: i32 = 25;
        let start = Arc::new(Barrier::new(WRITERS as usize));
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (p, start) = (Arc::clone(&p), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    for r in 0..ROUNDS {
                        let j = Journal::lock(&p, LOCK_WAIT).unwrap();
                        let mut s = j.load().unwrap();
                        // Own thread, and one that every writer records: only
                        // the first original of that one may survive.
                        let mut own = entry(1000 + w * ROUNDS + r, Policy::Other, false);
                        own.name = format!("w{w}");
                        s.record(own);
                        let mut shared = entry(1, Policy::Fifo, w % 2 == 0);
                        shared.before.priority = 1 + w * ROUNDS + r;
                        s.record(shared);
                        std::thread::yield_now();
                        j.store(&s).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let s = State::load(&p).unwrap();
        assert_eq!(s.entries.len() as i32, 1 + WRITERS * ROUNDS, "lost records");
        let shared: Vec<&Entry> = s.entries.iter().filter(|e| e.tid == 1).collect();
        assert_eq!(shared.len(), 1);
        // The first writer to get the lock recorded its own round 0.
        assert_eq!((shared[0].before.priority - 1) % ROUNDS, 0);
        assert!(shared[0].affinity_changed && shared[0].policy_changed);
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != "prio-restore.json" && n != "prio-restore.lock")
            .collect();
        assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    }

    /// A reader that does not lock (`prio restore --dry-run`, `State::load`)
    /// sees a whole journal at every moment while writers replace it.
    #[test]
    fn readers_never_see_a_partial_journal() {
        let dir = tempfile::tempdir().unwrap();
        let p = Arc::new(dir.path().join("prio-restore.json"));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (p, done) = (Arc::clone(&p), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut s = State::default();
                for i in 0..200 {
                    let j = Journal::lock(&p, LOCK_WAIT).unwrap();
                    s.record(entry(i, Policy::Other, false));
                    j.store(&s).unwrap();
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let mut reads = 0;
        let mut last = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let n = State::load(&p).unwrap().entries.len();
            assert!(
                n >= last,
                "the journal went back from {last} to {n} entries"
            );
            last = n;
            reads += 1;
        }
        writer.join().unwrap();
        assert_eq!(State::load(&p).unwrap().entries.len(), 200);
        assert!(reads > 0);
    }

    #[test]
    fn links_planted_beside_the_journal_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prio-restore.json");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // The temporary name of older rtlab versions, predictable.
        let old_tmp = dir.path().join("prio-restore.json.tmp");
        std::os::unix::fs::symlink(&victim, &old_tmp).unwrap();
        let j = Journal::lock(&p, LOCK_WAIT).unwrap();
        let mut s = State::default();
        s.record(entry(1, Policy::Other, false));
        j.store(&s).unwrap();
        assert_eq!(j.load().unwrap(), s);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        drop(j);
        // A link at the lock's name is refused, not followed.
        let lock = dir.path().join("prio-restore.lock");
        std::fs::remove_file(&lock).unwrap();
        std::os::unix::fs::symlink(dir.path().join("made-elsewhere"), &lock).unwrap();
        let err = Journal::lock(&p, LOCK_WAIT).unwrap_err();
        assert!(format!("{err:#}").contains("prio-restore.lock"), "{err:#}");
        assert!(!dir.path().join("made-elsewhere").exists());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "temporary files left: {names:?}");
    }
}
