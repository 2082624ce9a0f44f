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

/// A new SQLite file (a backup, a bundle) to be made at `to`: SQLite writes
/// it by name (and its journal beside it) in a new private directory beside
/// `to`, where no one can plant a link; [`NewStoreFile::place`] moves it to
/// `to` when whole, never over a file: `to` is whole or absent.
pub(super) struct NewStoreFile<'a> {
    to: &'a Path,
    /// What messages call it: `backup`, `bundle`.
    noun: &'static str,
    /// How messages name it: `b.db`, `--bundle b.rtlab`.
    shown: String,
    dir: tempfile::TempDir,
}

impl<'a> NewStoreFile<'a> {
    /// Refuses a URL (`url_fix` says what to do instead) and a file already
    /// at `to`; `flag`, when given, names it in messages.
    pub(super) fn new(
        to: &'a Path,
        noun: &'static str,
        flag: Option<&str>,
        url_fix: &str,
    ) -> Result<Self> {
        let named = |p: String| flag.map_or(p.clone(), |f| format!("{f} {p}"));
        if super::is_url(to) {
            bail!(UsageError(format!(
                "{} is a URL; a {noun} is a file: give a file name{url_fix}",
                named(super::shown(to))
            )));
        }
        let shown = named(to.display().to_string());
        if to.symlink_metadata().is_ok() {
            bail!(exists(&shown, noun));
        }
        Ok(NewStoreFile {
            to,
            noun,
            shown,
            dir: files::private_dir_in(files::dir_of(to), &format!(".rtlab-{noun}-"))
                .with_context(|| format!("cannot write the {noun} {}", to.display()))?,
        })
    }

    /// Where SQLite makes it.
    pub(super) fn part(&self) -> std::path::PathBuf {
        self.dir.path().join(format!("{}.db", self.noun))
    }

    /// Moves it, whole, to its name.
    pub(super) fn place(self) -> Result<()> {
        files::place(&self.part(), self.to, false).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => exists(&self.shown, self.noun).into(),
            _ => anyhow::Error::from(e).context(format!(
                "cannot write the {} {}",
                self.noun,
                self.to.display()
            )),
        })
    }
}

/// The refusal of a new file `shown` where one is already.
fn exists(shown: &str, noun: &str) -> UsageError {
    UsageError(format!(
        "{shown} already exists; give a new file name (a {noun} never replaces a file)"
    ))
}

/// What SQLite's `pragma` check (`integrity_check(N)`, `quick_check(N)`)
/// reports of `conn`: nothing when all is well.
pub(super) fn problems(conn: &Connection, pragma: &str) -> Vec<String> {
    conn.prepare(&format!("PRAGMA {pragma}"))
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_else(|e| vec![e.to_string()])
        .into_iter()
        .filter(|p| p != "ok")
        .collect()
}

impl Store {
    /// Copies this store into the new file `to`. A PostgreSQL store is
    /// refused (exit 2) with the server's tool to use instead.
    pub fn backup(&self, to: &Path) -> Result<Backed> {
        let Some(from) = self.conn.as_sqlite() else {
            bail!(UsageError(format!(
                "{} is a PostgreSQL database: back it up with the server's own tool, e.g. pg_dump --format=custom --file=FILE DATABASE (results backup copies SQLite stores)",
                self.path.display()
            )));
        };
        let new = NewStoreFile::new(to, "backup", None, "")?;
        let part = new.part();
        let cannot = || format!("cannot write the backup {}", to.display());
        let mut copy = Connection::open(&part).with_context(cannot)?;
        copy_all(from, &mut copy)
            .map_err(|e| super::damage::named(&self.path, e))
            .with_context(cannot)?;
        // One file: the copy of a WAL store is set back to a plain journal.
        copy.pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get::<_, String>(0))
            .with_context(cannot)?;
        let problems = problems(&copy, "quick_check(20)");
        let runs = copy
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .ok();
        drop(copy);
        let bytes = std::fs::metadata(&part).with_context(cannot)?.len();
        new.place()?;
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
