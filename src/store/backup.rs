//! `rtlab results backup FILE`: a copy of a SQLite store made with SQLite's
//! online backup, consistent however long it takes while monitors and runs
//! go on writing (one read transaction, which under WAL blocks no writer).
//! The copy is made in a new private directory beside FILE, checked, then
//! moved to FILE, which it never replaces: FILE is a whole copy or absent.
//! It is a store like any other (`--db FILE`), one file (no write-ahead log).

use super::open::BUSY_TIMEOUT;
use super::Store;
use crate::error::{SystemError, UsageError};
use crate::files;
use anyhow::{bail, Context, Result};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::Connection;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backed {
    /// Runs in the copy (none when they cannot be counted).
    pub runs: Option<i64>,
    /// Its size in bytes.
    pub bytes: u64,
    /// What SQLite's quick check of the copy reported (empty: whole).
    pub problems: Vec<String>,
}

impl Store {
    /// Copies this store into the new file `to`. A PostgreSQL store is
    /// refused (exit 2) with the server's tool to use instead.
    pub fn backup(&self, to: &Path) -> Result<Backed> {
        let shown = self.path.display();
        let Some(from) = self.conn.as_sqlite() else {
            bail!(UsageError(format!(
                "{shown} is a PostgreSQL database: back it up with the server's own tool, e.g. pg_dump --format=custom --file=FILE DATABASE (results backup copies SQLite stores)"
            )));
        };
        if super::is_url(to) {
            bail!(UsageError(format!(
                "{} is a URL; a backup is a file: give a file name",
                super::shown(to)
            )));
        }
        let exists = || {
            UsageError(format!(
                "{} already exists; give a new file name (a backup never replaces a file)",
                to.display()
            ))
        };
        if to.symlink_metadata().is_ok() {
            bail!(exists());
        }
        let cannot = || format!("cannot write the backup {}", to.display());
        let dir =
            files::private_dir_in(files::dir_of(to), ".rtlab-backup-").with_context(cannot)?;
        let part = dir.path().join("backup.db");
        let mut copy = Connection::open(&part).with_context(cannot)?;
        copy_all(from, &mut copy)
            .map_err(|e| super::damage::named(&self.path, e))
            .with_context(cannot)?;
        // One file: the copy of a WAL store is set back to a plain journal.
        copy.pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get::<_, String>(0))
            .with_context(cannot)?;
        let problems: Vec<String> = copy
            .prepare("PRAGMA quick_check(20)")
            .and_then(|mut s| {
                s.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap_or_else(|e| vec![e.to_string()])
            .into_iter()
            .filter(|p| p != "ok")
            .collect();
        let runs = copy
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .ok();
        drop(copy);
        let bytes = std::fs::metadata(&part).with_context(cannot)?.len();
        files::place(&part, to, false).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => exists().into(),
            _ => anyhow::Error::from(e).context(cannot()),
        })?;
        Ok(Backed {
            runs,
            bytes,
            problems,
        })
    }
}

/// Copies every page of `from` into `to` in one step (one read transaction:
/// a consistent copy), waiting up to [`BUSY_TIMEOUT`] for a writer that
/// holds the file.
fn copy_all(from: &Connection, to: &mut Connection) -> Result<()> {
    let backup = Backup::new(from, to)?;
    let start = Instant::now();
    loop {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            StepResult::Busy | StepResult::Locked if start.elapsed() >= BUSY_TIMEOUT => {
                bail!(SystemError(format!(
                    "the store stayed locked by another process for {} s; try again when it has finished",
                    BUSY_TIMEOUT.as_secs()
                )))
            }
            StepResult::Busy | StepResult::Locked => {
                std::thread::sleep(Duration::from_millis(20));
            }
            // More pages: the next step copies them.
            _ => {}
        }
    }
}
