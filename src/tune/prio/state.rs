//! What `prio set`/`prio apply` changed, kept in a state file so `prio restore`
//! can put every thread back: `$XDG_STATE_HOME/rtlab/prio-restore.json`, else
//! `~/.local/state/rtlab/prio-restore.json`.
//!
//! Several changes before a restore accumulate; a thread changed twice keeps its
//! original setting, so one restore returns the system to where it was.

use super::Setting;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// The setting before rtlab changed it.
    pub before: Setting,
    /// Whether the affinity was changed (else only policy/priority).
    pub affinity_changed: bool,
    /// Whether the policy/priority was changed.
    pub policy_changed: bool,
}

/// The state file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The changed threads.
    pub entries: Vec<Entry>,
}

/// Where the state file lives.
pub fn path() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).context(
                "neither XDG_STATE_HOME nor HOME is set: cannot place the prio state file",
            )?;
            PathBuf::from(home).join(".local/state")
        }
    };
    Ok(base.join("rtlab/prio-restore.json"))
}

impl State {
    /// Loads the state; a missing file is an empty state.
    pub fn load(path: &Path) -> Result<State> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
                format!("{} is damaged; remove it to start afresh", path.display())
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes the state (atomically: a temp file renamed over it), or removes the
    /// file when nothing is left to restore.
    pub fn store(&self, path: &Path) -> Result<()> {
        if self.entries.is_empty() {
            return match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("cannot remove {}", path.display()))
                }
                _ => Ok(()),
            };
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Records a change; a thread already recorded keeps its original setting.
    pub fn record(&mut self, e: Entry) {
        match self
            .entries
            .iter_mut()
            .find(|x| x.tid == e.tid && x.starttime == e.starttime)
        {
            Some(x) => {
                x.affinity_changed |= e.affinity_changed;
                x.policy_changed |= e.policy_changed;
            }
            None => self.entries.push(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

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
        assert!(s.entries[0].affinity_changed && s.entries[0].policy_changed);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/state.json");
        s.store(&p).unwrap();
        assert_eq!(State::load(&p).unwrap(), s);
        State::default().store(&p).unwrap();
        assert!(!p.exists());
        assert_eq!(State::load(&p).unwrap(), State::default());
        std::fs::write(&p, "{").unwrap();
        assert!(State::load(&p).unwrap_err().to_string().contains("damaged"));
    }
}
