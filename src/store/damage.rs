//! A damaged SQLite store. Once SQLite reports damage (SQLITE_CORRUPT,
//! SQLITE_NOTADB) on a store's file, whatever rtlab command met it notes it
//! in a file beside the store (`STORE.damaged`), and every later write to
//! that store is refused with what to do, until `rtlab results check` finds
//! the file whole again or the file is replaced (the note names the file by
//! device and inode). Writing on into a damaged file would bury the runs
//! still readable under new damage.
//!
//! `rtlab results check` ([`Store::check`]) runs SQLite's integrity check and
//! says which runs can still be read.

use super::Store;
use crate::files::NewFile;
use anyhow::Result;
use rusqlite::ErrorCode;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A store found damaged: what SQLite said, and what to do.
#[derive(Debug)]
pub struct Damaged {
    shown: String,
    said: String,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let db = &self.shown;
        write!(
            f,
            "{db} is damaged (SQLite: {}); rtlab writes nothing more to it. See which runs can still be read: rtlab --db {db} results check; copy them into a new store: rtlab --db {db} results push --to NEW.db (the runs that cannot be read are named and left out), then put NEW.db in its place: rm -f {db}-wal {db}-shm && mv NEW.db {db}",
            self.said
        )
    }
}

impl std::error::Error for Damaged {}

/// Whether SQLite said, anywhere in `e`, that a file is damaged.
pub fn is_damage(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<Damaged>()
            || matches!(
                c.downcast_ref::<rusqlite::Error>()
                    .and_then(rusqlite::Error::sqlite_error_code),
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
            )
    })
}

/// What SQLite said of the damage in `e` ("database disk image is
/// malformed"), else the innermost cause.
pub fn said(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| match c.downcast_ref::<rusqlite::Error>() {
            Some(rusqlite::Error::SqliteFailure(_, Some(msg))) => Some(msg.clone()),
            Some(other) => Some(other.to_string()),
            None => c.downcast_ref::<Damaged>().map(|d| d.said.clone()),
        })
        .unwrap_or_else(|| e.root_cause().to_string())
}

/// An error of the store file `path`, said as what it is: damage noted beside
/// the file and said as [`Damaged`]; another error of SQLite's with the
/// file's name; any other as it is.
pub fn named(path: &Path, e: anyhow::Error) -> anyhow::Error {
    if e.chain().any(|c| c.is::<Damaged>()) {
        return e;
    }
    if is_damage(&e) {
        let said = said(&e);
        note(path, &said);
        return Damaged {
            shown: path.display().to_string(),
            said,
        }
        .into();
    }
    if e.chain().any(|c| c.is::<rusqlite::Error>()) {
        e.context(format!("results database {}", path.display()))
    } else {
        e
    }
}

/// The note beside the store `path`.
fn marker(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".damaged");
    PathBuf::from(name)
}

/// The file `path` is (device and inode), if it is there.
fn identity(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    Some(format!("{}:{}", m.dev(), m.ino()))
}

/// Notes that the store `path` is damaged (SQLite said `said`). Best effort:
/// a reader who may not write beside the store notes nothing, and the
/// damage is found again by the next command that meets it.
pub fn note(path: &Path, said: &str) {
    let Some(id) = identity(path) else { return };
    let text = format!(
        "rtlab found this store damaged; writes to it are refused until 'rtlab results check' finds it whole.\nfile: {id}\nwhen: {}\nsqlite: {}\n",
        crate::record::now_rfc3339(),
        said.replace('\n', " ")
    );
    let _ = NewFile::at(&marker(path)).write(text.as_bytes());
}

/// Removes the note of damage of the store `path`, if any.
pub fn clear(path: &Path) -> Result<()> {
    match std::fs::remove_file(marker(path)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow::Error::from(e).context(format!("cannot remove {}", marker(path).display())))
        }
        _ => Ok(()),
    }
}

/// Refuses to write to the store `path` when its damage was noted and the
/// file is still the one found damaged (a note of a file since replaced is
/// removed).
pub fn refuse_writes(path: &Path) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(marker(path)) else {
        return Ok(());
    };
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    if field("file: ") != identity(path) {
        let _ = std::fs::remove_file(marker(path));
        return Ok(());
    }
    let said = field("sqlite: ").unwrap_or_else(|| "damaged".into());
    let when = field("when: ").unwrap_or_default();
    Err(Damaged {
        shown: path.display().to_string(),
        said: format!("{said}, found {when}"),
    }
    .into())
}

/// What [`Store::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// What SQLite's integrity check reported (empty: the file is whole).
    pub problems: Vec<String>,
    /// Runs that can be read whole.
    pub readable: Vec<i64>,
    /// Runs that are there but cannot be read.
    pub lost: Vec<i64>,
    /// Whether the list of runs itself could not be read whole (then only the
    /// ids up to the highest were tried).
    pub probed: bool,
    /// Monitor windows, when they can be counted.
    pub windows: Option<i64>,
}

impl Checked {
    /// Whether nothing is damaged.
    pub fn is_whole(&self) -> bool {
        self.problems.is_empty() && self.lost.is_empty() && !self.probed && self.windows.is_some()
    }
}

/// The most problems the integrity check reports.
const MAX_PROBLEMS: i64 = 100;

impl Store {
    /// Runs SQLite's integrity check and reads every run, noting the damage
    /// found (or clearing the note when the file is whole). A PostgreSQL
    /// store is refused: its server checks its own storage.
    pub fn check(&self) -> Result<Checked> {
        let Some(sqlite) = self.conn.as_sqlite() else {
            anyhow::bail!(crate::error::UsageError(format!(
                "{} is a PostgreSQL database: the server checks its own storage (pg_amcheck --all); results check reads SQLite stores",
                self.path.display()
            )));
        };
        let problems = super::backup::problems(sqlite, &format!("integrity_check({MAX_PROBLEMS})"));
        let (ids, probed) = self.run_ids();
        let mut readable = Vec::new();
        let mut lost = Vec::new();
        for id in ids {
            match self
                .conn
                .query_opt("SELECT id FROM runs WHERE id = ?1", super::db::args![id])
            {
                Ok(None) => continue,
                Ok(Some(_)) if self.load(id).is_ok() => readable.push(id),
                _ => lost.push(id),
            }
        }
        let windows = self
            .conn
            .query_one("SELECT count(*) FROM windows", &[])
            .and_then(|r| r.get(0))
            .ok();
        let found = Checked {
            problems,
            readable,
            lost,
            probed,
            windows,
        };
        if found.is_whole() {
            clear(&self.path)?;
        } else {
            let said = found
                .problems
                .first()
                .map_or("runs that cannot be read", String::as_str);
            note(&self.path, said);
        }
        Ok(found)
    }

    /// The ids of the stored runs, oldest first; when the list cannot be read
    /// whole, every id up to the highest (found by one seek), and `true`.
    pub fn run_ids(&self) -> (Vec<i64>, bool) {
        let listed = self
            .conn
            .query("SELECT id FROM runs ORDER BY id", &[])
            .and_then(|rows| rows.iter().map(|r| r.get(0)).collect::<Result<Vec<i64>>>());
        match listed {
            Ok(ids) => (ids, false),
            Err(_) => {
                let max: i64 = self
                    .conn
                    .query_one("SELECT max(id) FROM runs", &[])
                    .and_then(|r| r.get::<Option<i64>>(0))
                    .ok()
                    .flatten()
                    .unwrap_or(0);
                ((1..=max).collect(), true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_refuses_writes_until_cleared_or_the_file_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("r.db");
        std::fs::write(&db, "x").unwrap();
        refuse_writes(&db).unwrap();
        note(&db, "database disk image is malformed");
        let e = refuse_writes(&db).unwrap_err().to_string();
        assert!(
            e.contains("r.db is damaged (SQLite: database disk image is malformed, found "),
            "{e}"
        );
        assert!(
            e.contains("results check") && e.contains("results push --to NEW.db"),
            "{e}"
        );
        clear(&db).unwrap();
        refuse_writes(&db).unwrap();
        note(&db, "malformed");
        // A new file in its place (a recovered store) is not the damaged one.
        let new = d.path().join("new.db");
        std::fs::write(&new, "y").unwrap();
        std::fs::rename(&new, &db).unwrap();
        refuse_writes(&db).unwrap();
        assert!(!marker(&db).exists());
    }
}
