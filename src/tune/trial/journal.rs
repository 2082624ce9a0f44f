//! What `rtlab tune` has changed, so that it is always put back.
//!
//! Two journals in rtlab's state directory ([`crate::tune::journal`]):
//!
//! - `tune-journal.json`: the changes of the candidate being tried. It exists
//!   only while a change is on. The `rtlab tune` that made them holds its lock
//!   for as long as it runs; the kernel drops the lock when that process ends,
//!   however it ends (kill -9 included). A lock that can be taken while the
//!   file exists therefore means an `rtlab tune` ended without putting its
//!   changes back: the next rtlab command puts them back ([`recover`]: one
//!   `stat(2)` when there is nothing to do, so a probe's start stays light).
//!   Changes made before the last reboot are gone with it and are dropped, not
//!   written back over what the system booted with.
//! - `tune-applied.json`: what `rtlab tune --apply` kept, and the files it
//!   wrote; `rtlab tune --restore` puts the values back and removes the files.

use super::change::{self, Change, Refused, Want};
use crate::error::SystemError;
use crate::tune::journal::{self, Journal, Record};
use anyhow::Result;
use rtlab_engine::rt::dma::DmaLatencyGuard;
use rtlab_engine::sysinfo::SysRoot;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The changes of the candidate being tried.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The `rtlab tune` that made them.
    pub pid: u32,
    /// The boot they were made in (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: String,
    /// The changes, in the order they were made.
    pub changes: Vec<Change>,
}

impl Record for Trial {
    fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// A file `rtlab tune --apply` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// Where.
    pub path: PathBuf,
    /// What it wrote (a file changed since is left in place).
    pub content: String,
}

/// What `rtlab tune --apply` kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    /// The changes left on, in the order they were made.
    pub changes: Vec<Change>,
    /// The files written.
    pub files: Vec<Written>,
}

impl Record for Kept {
    fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.files.is_empty()
    }
}

/// Where the changes being tried are recorded, in the state directory `state`.
pub fn trial_path(state: &Path) -> PathBuf {
    state.join("tune-journal.json")
}

/// Where what `--apply` kept is recorded, in the state directory `state`.
pub fn kept_path(state: &Path) -> PathBuf {
    state.join("tune-applied.json")
}

/// This boot's id.
pub fn boot_id() -> String {
    rtlab_engine::sysinfo::read_text("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Puts `changes` back, the last first; returns what was put back (readable)
/// and the changes that could not be, with why.
pub fn put_back_all(changes: &[Change]) -> (Vec<String>, Vec<(Change, Refused)>) {
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for c in changes.iter().rev() {
        match change::undo(c) {
            Ok(()) => done.push(c.text()),
            Err(e) => failed.push((c.clone(), e)),
        }
    }
    // Kept in the order they were made, for the next try.
    failed.reverse();
    (done, failed)
}

/// What [`recover`] found.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Changes put back, readable.
    pub restored: Vec<String>,
    /// Changes that could not be put back (they stay in the journal), with why.
    pub failed: Vec<String>,
    /// Changes of an earlier boot, dropped.
    pub dropped: usize,
    /// The process that made them.
    pub pid: u32,
}

impl Recovered {
    /// Lines for stderr, empty when there was nothing to do.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.dropped > 0 {
            out.push(format!(
                "rtlab: note: an rtlab tune (pid {}) ended before the last reboot with {} change(s) on; the reboot undid them",
                self.pid, self.dropped
            ));
        }
        if !self.restored.is_empty() {
            out.push(format!(
                "rtlab: an rtlab tune (pid {}) ended with {} change(s) on; put back and read back: {}",
                self.pid,
                self.restored.len(),
                self.restored.join("; ")
            ));
        }
        for f in &self.failed {
            out.push(format!(
                "rtlab: warning: could not put back what an ended rtlab tune changed: {f}; try 'rtlab tune --restore'"
            ));
        }
        out
    }
}

/// Puts back what the journal at `j` holds, when the process that made it has
/// ended (the caller holds its lock); the changes of another boot are dropped.
fn recover_locked(j: &Journal<Trial>) -> Result<Recovered> {
    let left = j.load()?;
    let mut r = Recovered {
        pid: left.pid,
        ..Recovered::default()
    };
    if left.changes.is_empty() {
        return Ok(r);
    }
    if left.boot_id != boot_id() {
        r.dropped = left.changes.len();
        j.store(&Trial::default())?;
        return Ok(r);
    }
    let (done, failed) = put_back_all(&left.changes);
    r.restored = done;
    r.failed = failed
        .iter()
        .map(|(c, e)| format!("{}: {e}", c.text()))
        .collect();
    j.store(&Trial {
        changes: failed.into_iter().map(|(c, _)| c).collect(),
        ..left
    })?;
    Ok(r)
}

/// The check every rtlab command makes as it starts: when an `rtlab tune`
/// ended (crashed, killed) with changes on, they are put back. One `stat(2)`
/// when there is no journal in the state directory `state`; a live `rtlab
/// tune`'s journal is left alone.
pub fn recover(state: &Path) -> Result<Recovered> {
    let path = trial_path(state);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Recovered::default());
    }
    match Journal::<Trial>::try_lock(&path)? {
        Some(j) => recover_locked(&j),
        None => Ok(Recovered::default()),
    }
}

/// What [`Session::apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Changes made.
    pub made: usize,
    /// Optional changes the kernel refused, with why.
    pub skipped: Vec<String>,
}

/// The changes of one `rtlab tune`: the journal, locked for as long as it
/// runs, and the hold on `/dev/cpu_dma_latency`. Dropping it puts every change
/// back.
pub struct Session {
    journal: Journal<Trial>,
    trial: Trial,
    held: Vec<DmaLatencyGuard>,
    cgroup: Option<PathBuf>,
    root: SysRoot,
}

impl Session {
    /// Takes the journal in the state directory `state`, for the files below
    /// `root` (`/`, or a fake tree in tests); refused
    /// while another `rtlab tune` runs. What an ended one left is put back
    /// first, and said.
    pub fn open(root: SysRoot, state: &Path) -> Result<(Session, Recovered)> {
        let path = trial_path(state);
        let Some(journal) = Journal::<Trial>::try_lock(&path)? else {
            let who = journal::read::<Trial>(&path)
                .ok()
                .filter(|t| t.pid != 0)
                .map_or_else(String::new, |t| format!(" (pid {})", t.pid));
            return Err(SystemError(format!(
                "another rtlab tune{who} is running and holds {}: wait for it to end",
                path.display()
            ))
            .into());
        };
        let recovered = recover_locked(&journal)?;
        if !journal.load()?.changes.is_empty() {
            return Err(SystemError(format!(
                "an ended rtlab tune left changes that cannot be put back ({}); see {} and fix them by hand",
                recovered.failed.join("; "),
                path.display()
            ))
            .into());
        }
        let session = Session {
            journal,
            trial: Trial {
                pid: std::process::id(),
                boot_id: boot_id(),
                changes: Vec::new(),
            },
            held: Vec::new(),
            cgroup: None,
            root,
        };
        Ok((session, recovered))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        self.journal.path()
    }

    /// Whether a change is on.
    pub fn changed(&self) -> bool {
        !self.trial.changes.is_empty() || !self.held.is_empty() || self.cgroup.is_some()
    }

    /// Records `c` in the journal, durably, before it is made.
    fn record(&mut self, c: Change) -> Result<(), Refused> {
        self.trial.changes.push(c);
        self.journal
            .store(&self.trial)
            .map_err(|e| Refused(format!("cannot record the change: {e:#}")))
    }

    /// Takes back the record of the last change (it was refused).
    fn unrecord(&mut self) {
        self.trial.changes.pop();
        // A record that stays is harmless: putting it back finds the value
        // as it was.
        let _ = self.journal.store(&self.trial);
    }

    /// Makes `wants`, each recorded before it is made and read back after. A
    /// refusal of a change that is not optional puts back what this call made
    /// and is returned.
    pub fn apply(&mut self, wants: &[Want]) -> Result<Applied, Refused> {
        let mark = self.trial.changes.len();
        let held = self.held.len();
        let mut a = Applied::default();
        for w in wants {
            match self.make(w) {
                Ok(true) => a.made += 1,
                Ok(false) => {}
                Err(e) if optional(w) => a.skipped.push(e.0),
                Err(e) => {
                    self.back_to(mark, held);
                    return Err(e);
                }
            }
        }
        Ok(a)
    }

    /// Makes one change; false when there was nothing to do.
    fn make(&mut self, w: &Want) -> Result<bool, Refused> {
        match w {
            Want::Value {
                path, value, form, ..
            } => {
                let p = self.root.path(path);
                let Some(before) = change::pending(&p, value, *form)? else {
                    return Ok(false);
                };
                self.record(Change::Value {
                    path: p.clone(),
                    before: before.clone(),
                    after: value.clone(),
                    form: *form,
                })?;
                change::set_value(&p, &before, value, *form).inspect_err(|_| {
                    // Put back whatever half-change the refusal left.
                    if let Some(c) = self.trial.changes.last() {
                        let _ = change::undo(c);
                    }
                    self.unrecord();
                })?;
                Ok(true)
            }
            Want::Thread {
                pid,
                tid,
                starttime,
                policy,
                affinity,
                ..
            } => {
                let Some(entry) =
                    change::thread_entry(*pid, *tid, *starttime, *policy, affinity.as_ref())?
                else {
                    return Ok(false);
                };
                self.record(Change::Thread {
                    entry: entry.clone(),
                })?;
                change::set_thread(&entry, *policy, affinity.as_ref()).inspect_err(|_| {
                    let _ = change::undo(&Change::Thread {
                        entry: entry.clone(),
                    });
                    self.unrecord();
                })?;
                Ok(true)
            }
            Want::Mount { target, fstype } => {
                let t = self.root.path(target);
                if change::mounted(&t) {
                    return Ok(false);
                }
                self.record(Change::Mount { target: t.clone() })?;
                change::mount_tool("mount", &["-t", fstype, "none", &t.to_string_lossy()])
                    .inspect_err(|_| self.unrecord())?;
                Ok(true)
            }
            Want::Dir { path } => {
                let p = self.root.path(path);
                if p.exists() {
                    return Err(Refused(format!(
                        "{} exists already (left by another tool, or by hand): remove it with rmdir",
                        p.display()
                    )));
                }
                self.record(Change::Dir { path: p.clone() })?;
                std::fs::create_dir(&p)
                    .map_err(|e| {
                        Refused(format!("making {}: {}", p.display(), change::io_text(&e)))
                    })
                    .inspect_err(|_| self.unrecord())?;
                Ok(true)
            }
            Want::Cgroup { dir } => {
                self.cgroup = Some(self.root.path(dir));
                Ok(true)
            }
            Want::DmaLatency { us } => {
                let g = DmaLatencyGuard::request(*us).map_err(|e| {
                    Refused(format!(
                        "holding /dev/cpu_dma_latency at {us} µs: {}",
                        change::io_text(&e)
                    ))
                })?;
                self.held.push(g);
                Ok(true)
            }
        }
    }

    /// Moves this process into the cgroup a change asked for, as measuring
    /// starts (after the loads started, before the measuring threads exist):
    /// the measuring threads run there, the loads where they were.
    pub fn enter_cgroup(&mut self) -> Result<(), Refused> {
        let Some(to) = self.cgroup.clone() else {
            return Ok(());
        };
        let pid = std::process::id();
        let mount = to.parent().unwrap_or(Path::new("/")).to_path_buf();
        let from = change::cgroup_of(&mount, pid)
            .ok_or_else(|| Refused(format!("cannot read the cgroup of pid {pid}")))?;
        self.record(Change::Cgroup {
            pid,
            from,
            to: to.clone(),
        })?;
        change::write_value(&to.join("cgroup.procs"), &pid.to_string())
            .inspect_err(|_| self.unrecord())
    }

    /// Puts every change of this session back (the last first), drops the hold
    /// on `/dev/cpu_dma_latency`, and returns what could not be put back; those
    /// stay in the journal for the next rtlab to try.
    pub fn restore(&mut self) -> Vec<(Change, Refused)> {
        self.back_to(0, 0)
    }

    /// Puts back the changes after the first `mark` and the holds after the
    /// first `held`.
    fn back_to(&mut self, mark: usize, held: usize) -> Vec<(Change, Refused)> {
        self.held.truncate(held);
        if mark == 0 {
            self.cgroup = None;
        }
        let later = self
            .trial
            .changes
            .split_off(mark.min(self.trial.changes.len()));
        let (_, failed) = put_back_all(&later);
        self.trial
            .changes
            .extend(failed.iter().map(|(c, _)| c.clone()));
        let _ = self.journal.store(&self.trial);
        failed
    }

    /// Takes the changes on out of the journal, to be kept (`--apply`); the
    /// hold on `/dev/cpu_dma_latency` ends with this process all the same.
    pub fn keep(&mut self) -> Result<Vec<Change>> {
        let kept = std::mem::take(&mut self.trial.changes);
        self.cgroup = None;
        self.journal.store(&self.trial)?;
        Ok(kept)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.changed() {
            self.restore();
        }
    }
}

/// Whether a refusal of `w` skips only it.
fn optional(w: &Want) -> bool {
    matches!(
        w,
        Want::Value { optional: true, .. } | Want::Thread { optional: true, .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::trial::change::Form;

    /// A state directory and a tree of system files, in a new directory.
    fn setup() -> (tempfile::TempDir, PathBuf, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let root = fake_tree(dir.path());
        (dir, state, root)
    }

    fn fake_tree(dir: &Path) -> SysRoot {
        let root = dir.join("root");
        std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
        std::fs::write(root.join("proc/sys/kernel/timer_migration"), "1\n").unwrap();
        std::fs::write(root.join("proc/sys/kernel/watchdog"), "1\n").unwrap();
        SysRoot::new(root)
    }

    fn value(path: &str, v: &str, optional: bool) -> Want {
        Want::Value {
            path: path.into(),
            value: v.into(),
            form: Form::Text,
            optional,
        }
    }

    #[test]
    fn every_change_is_journaled_before_it_is_made_and_put_back_on_drop() {
        let (_dir, state, root) = setup();
        let tm = root.path("/proc/sys/kernel/timer_migration");
        let (mut s, rec) = Session::open(root.clone(), &state).unwrap();
        assert!(rec.lines().is_empty());
        let a = s
            .apply(&[value("/proc/sys/kernel/timer_migration", "0", false)])
            .unwrap();
        assert_eq!(a.made, 1);
        assert_eq!(std::fs::read_to_string(&tm).unwrap(), "0");
        let j: Trial = journal::read(&trial_path(&state)).unwrap();
        assert_eq!(j.changes.len(), 1);
        assert_eq!(j.pid, std::process::id());
        // Another session is refused while this one lives.
        let e = Session::open(root.clone(), &state).err().unwrap();
        assert!(e.to_string().contains("another rtlab tune (pid "), "{e}");
        drop(s);
        assert_eq!(std::fs::read_to_string(&tm).unwrap(), "1");
        assert!(!trial_path(&state).exists(), "no journal once put back");
    }

    #[test]
    fn a_refusal_puts_back_what_the_candidate_made_and_optional_ones_are_skipped() {
        let (_dir, state, root) = setup();
        let (mut s, _) = Session::open(root.clone(), &state).unwrap();
        let e = s
            .apply(&[
                value("/proc/sys/kernel/timer_migration", "0", false),
                value("/proc/sys/kernel/absent", "0", false),
            ])
            .unwrap_err();
        assert!(e.0.contains("absent") && e.0.contains("ENOENT"), "{e}");
        assert_eq!(root.read("/proc/sys/kernel/timer_migration").unwrap(), "1");
        assert!(!s.changed());
        let a = s
            .apply(&[
                value("/proc/sys/kernel/absent", "0", true),
                value("/proc/sys/kernel/watchdog", "0", false),
                value("/proc/sys/kernel/timer_migration", "1", false),
            ])
            .unwrap();
        assert_eq!(
            (a.made, a.skipped.len()),
            (1, 1),
            "already 1: nothing to do"
        );
        assert!(s.restore().is_empty());
        assert_eq!(root.read("/proc/sys/kernel/watchdog").unwrap(), "1");
    }

    #[test]
    fn a_journal_left_by_an_ended_tune_is_put_back_by_the_next_rtlab() {
        let (_dir, state, root) = setup();
        let tm = root.path("/proc/sys/kernel/timer_migration");
        // As a killed rtlab tune leaves it: the value changed, the journal
        // written, its lock released with the process.
        std::fs::write(&tm, "0").unwrap();
        let left = Trial {
            pid: 4_000_000,
            boot_id: boot_id(),
            changes: vec![Change::Value {
                path: tm.clone(),
                before: "1".into(),
                after: "0".into(),
                form: Form::Text,
            }],
        };
        let path = trial_path(&state);
        Journal::<Trial>::lock(&path, journal::LOCK_WAIT)
            .unwrap()
            .store(&left)
            .unwrap();
        let r = recover(&state).unwrap();
        assert_eq!(std::fs::read_to_string(&tm).unwrap(), "1");
        let lines = r.lines().join("\n");
        assert!(
            lines.contains("(pid 4000000) ended with 1 change(s) on"),
            "{lines}"
        );
        assert!(!path.exists());
        // Nothing left: one stat, nothing said.
        assert!(recover(&state).unwrap().lines().is_empty());
        // Changes of another boot went with it.
        std::fs::write(&tm, "0").unwrap();
        let old = Trial {
            boot_id: "another boot".into(),
            ..left
        };
        Journal::<Trial>::lock(&path, journal::LOCK_WAIT)
            .unwrap()
            .store(&old)
            .unwrap();
        let r = recover(&state).unwrap();
        assert_eq!(r.dropped, 1);
        assert_eq!(
            std::fs::read_to_string(&tm).unwrap(),
            "0",
            "not written back"
        );
    }
}
