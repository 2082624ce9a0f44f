//! Journals of what rtlab changed on the system, so that it can be put back:
//! `prio`'s thread settings ([`super::prio::state`]) and `tune`'s system values
//! ([`super::trial::journal`]). Both live in rtlab's state directory
//! ([`state_dir`]: `$XDG_STATE_HOME/rtlab`, else `~/.local/state/rtlab`).
//!
//! Several rtlab processes may change the system at once, so every
//! read-change-write of a journal happens under an exclusive `flock(2)` on a
//! `.lock` file beside it ([`Journal::lock`]), and the journal is replaced
//! atomically ([`crate::files::NewFile`]: a new file with a random name in the
//! same directory, written, synced, renamed over it, the directory synced): a
//! reader sees the old or the new journal, never a mix, even after a crash or
//! power loss. The kernel
//! drops the lock of a process that dies, even by SIGKILL, so a lock that can
//! be taken at once ([`Journal::try_lock`]) says that no live process holds it.

use anyhow::{bail, Context, Result};
use rtlab_engine::rt::flock;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::File;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a journal holds: serialisable, empty by default, and removed from disk
/// when empty.
pub trait Record: Serialize + DeserializeOwned + Default {
    /// Whether nothing is left to put back.
    fn is_empty(&self) -> bool;
}

/// rtlab's state directory: `$XDG_STATE_HOME/rtlab`, else
/// `~/.local/state/rtlab`.
pub fn state_dir() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).context(
                "neither XDG_STATE_HOME nor HOME is set: cannot place rtlab's state files",
            )?;
            PathBuf::from(home).join(".local/state")
        }
    };
    Ok(base.join("rtlab"))
}

/// Reads the journal at `path` without taking the lock (for looking only: the
/// file is always whole); a missing file is an empty journal.
pub fn read<T: Record>(path: &Path) -> Result<T> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is damaged; remove it to start afresh", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// How long [`Journal::lock`] waits for another rtlab to finish with a journal
/// (it holds it for a few system calls per change).
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// A journal, locked: only one process at a time holds one, from reading the
/// journal to writing it back. Dropping it releases the lock.
#[derive(Debug)]
pub struct Journal<T> {
    path: PathBuf,
    _lock: File,
    _content: PhantomData<fn() -> T>,
}

impl<T: Record> Journal<T> {
    /// Creates the directory if needed and takes the exclusive lock on the
    /// `.lock` file beside the journal at `path`, waiting up to `wait`.
    pub fn lock(path: &Path, wait: Duration) -> Result<Journal<T>> {
        let (file, lock_path) = open_lock(path)?;
        let deadline = Instant::now() + wait;
        while !flock::try_lock_exclusive(&file)
            .with_context(|| format!("cannot lock {}", lock_path.display()))?
        {
            if Instant::now() >= deadline {
                bail!(
                    "another rtlab has held {} for over {} s; wait for it to finish (or find it with `fuser {}`)",
                    lock_path.display(),
                    wait.as_secs(),
                    lock_path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(Journal::new(path, file))
    }

    /// The lock when no other process holds it at this moment, else `None`.
    pub fn try_lock(path: &Path) -> Result<Option<Journal<T>>> {
        let (file, lock_path) = open_lock(path)?;
        let taken = flock::try_lock_exclusive(&file)
            .with_context(|| format!("cannot lock {}", lock_path.display()))?;
        Ok(taken.then(|| Journal::new(path, file)))
    }

    fn new(path: &Path, lock: File) -> Journal<T> {
        Journal {
            path: path.to_path_buf(),
            _lock: lock,
            _content: PhantomData,
        }
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The journal's content.
    pub fn load(&self) -> Result<T> {
        read(&self.path)
    }

    /// Replaces the journal with `state` atomically and durably, or removes it
    /// when nothing is left to put back.
    pub fn store(&self, state: &T) -> Result<()> {
        if state.is_empty() {
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("cannot remove {}", self.path.display()))
                }
                _ => {}
            }
            return sync_dir(parent(&self.path));
        }
        crate::files::NewFile::at(&self.path)
            .durable()
            .write(&serde_json::to_vec_pretty(state)?)
            .with_context(|| format!("cannot replace {}", self.path.display()))
    }
}

/// Opens (creating the directory and the file if needed) the lock file of the
/// journal at `path`.
fn open_lock(path: &Path) -> Result<(File, PathBuf)> {
    let dir = parent(path);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let lock_path = path.with_extension("lock");
    // The lock file is never removed: a process waiting on a removed file
    // would lock a file nobody else sees.
    let file = flock::open_lock_file(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    Ok((file, lock_path))
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename or removal in `dir` durable (fsync(2) of the directory).
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Notes(Vec<String>);

    impl Record for Notes {
        fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }

    #[test]
    fn try_lock_says_whether_a_live_holder_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.json");
        let held = Journal::<Notes>::lock(&p, LOCK_WAIT).unwrap();
        assert!(Journal::<Notes>::try_lock(&p).unwrap().is_none());
        held.store(&Notes(vec!["a".into()])).unwrap();
        drop(held);
        let j = Journal::<Notes>::try_lock(&p).unwrap().expect("free");
        assert_eq!(j.load().unwrap(), Notes(vec!["a".into()]));
        assert_eq!(read::<Notes>(&p).unwrap(), Notes(vec!["a".into()]));
        j.store(&Notes::default()).unwrap();
        assert!(!p.exists());
    }
}
