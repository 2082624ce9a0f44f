//! Opening a store: a SQLite file (WAL, busy timeout, identity checked before
//! anything is written) or a PostgreSQL database named by a URL (identity in
//! `rtlab_meta`, schema created under an advisory lock), for writing or for
//! reading only, and the errors of both said as what they are.

use super::db::{url, Conn, Kind, Sqlite};
use super::schema::{self, Identity, Refusal};
use super::{damage, Store};
use crate::error::{SystemError, UsageError};
use anyhow::{bail, Context, Result};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for another process's transaction before giving up.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a read waits for a writer that holds the file (a monitor or a run
/// writing at the same time reads as the last committed state under WAL).
const READ_PATIENCE: Duration = Duration::from_secs(5);

/// A store of an older schema (or none yet: an empty file or database)
/// opened for reading, which cannot migrate it.
#[derive(Debug)]
pub struct OlderSchema {
    shown: String,
    empty: bool,
}

impl OlderSchema {
    fn of(shown: String, found: schema::Found) -> OlderSchema {
        OlderSchema {
            shown,
            empty: found == schema::Found::Empty,
        }
    }
}

impl std::fmt::Display for OlderSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = &self.shown;
        let what = match self.empty {
            true => "holds no rtlab store yet".to_string(),
            false => format!(
                "is a store of an older rtlab (schema version {} is needed)",
                schema::SCHEMA_VERSION
            ),
        };
        write!(
            f,
            "{shown} {what}, and this user may not bring it up to date: run rtlab once on it as a user who may write it (e.g. rtlab --db {shown} results list as its owner)"
        )
    }
}

impl std::error::Error for OlderSchema {}

impl Store {
    /// Opens (creating if needed) the store at `path`, a file or a
    /// `postgres://` URL, and brings its schema up to date. Another program's
    /// database and a schema this rtlab does not know are refused (exit 2)
    /// with nothing written; a SQLite file other processes hold for longer
    /// than [`BUSY_TIMEOUT`] (30 s) is reported as locked (exit 3); a server
    /// that cannot be reached, or refuses the URL's role, is exit 2.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(u) = path.to_str().filter(|p| url::is_postgres(p)) {
            return Self::open_pg(u, false);
        }
        super::refuse_url(path, "--db")?;
        Self::open_waiting(path, BUSY_TIMEOUT)
    }

    #[cfg(not(feature = "postgres"))]
    pub(super) fn open_pg(u: &str, _read_only: bool) -> Result<Store> {
        bail!(UsageError(format!(
            "{} names a PostgreSQL store, and this rtlab was built without them (cargo feature \"postgres\"); give a file's path, or use an rtlab built with the feature; nothing was written",
            url::redact(u)
        )))
    }

    /// A PostgreSQL store; `read_only`: its schema must be current (nothing
    /// is created or migrated) and the session refuses every write.
    #[cfg(feature = "postgres")]
    pub(super) fn open_pg(u: &str, read_only: bool) -> Result<Store> {
        let parsed = url::parse(u)?;
        let conn = super::db::pg::connect(&parsed)?;
        let shown = parsed.shown;
        let found = schema::Identity::of(&conn)
            .and_then(|id| Ok(id.judge()?))
            .map_err(|e| pg_error(&shown, e))?;
        if read_only {
            if !found.is_current() {
                bail!(OlderSchema::of(shown, found));
            }
            conn.batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
        } else if !found.is_current() {
            schema::migrate(&conn).map_err(|e| pg_error(&shown, e))?;
        }
        Ok(Store {
            conn: Box::new(conn),
            path: std::path::PathBuf::from(shown),
        })
    }

    /// Opens an existing store for reading only: SQLite opens the file
    /// read-only (nothing is created, migrated or checkpointed; another
    /// user's store can be read); a PostgreSQL session is made read-only. A
    /// store of an older rtlab is refused ([`OlderSchema`]: a read-only store
    /// cannot be migrated), as are what [`Store::open`] refuses.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if let Some(u) = path.to_str().filter(|p| url::is_postgres(p)) {
            return Self::open_pg(u, true);
        }
        super::refuse_url(path, "--db")?;
        let fail = |e: anyhow::Error| store_error(path, READ_PATIENCE, e);
        let mut conn = read_only(path, false).map_err(fail)?;
        let mut found = Identity::read(&conn);
        if found.as_ref().is_err_and(needs_shared_memory) {
            // A WAL store whose reader may not create its -shm beside it (the
            // directory is another user's) and with no log of changes left
            // to read: the file is the whole store, read as it is.
            if wal_holds_changes(path) {
                bail!(UsageError(format!(
                    "cannot read {}: its write-ahead log {}-wal holds changes, and this user may not create {}-shm beside it to read them; read it as a user who may write {}, or once its writer has finished",
                    path.display(),
                    path.display(),
                    path.display(),
                    crate::files::dir_of(path).display()
                )));
            }
            conn = read_only(path, true).map_err(fail)?;
            found = Identity::read(&conn);
        }
        let found = found
            .map_err(|e| fail(e.into()))?
            .judge()
            .map_err(|r| fail(r.into()))?;
        if !found.is_current() {
            return Err(OlderSchema::of(path.display().to_string(), found).into());
        }
        Ok(Store {
            conn: Box::new(Sqlite::new(conn, path.to_path_buf())),
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing store to read it: read-only ([`Store::open_read_only`]);
    /// one of an older rtlab is brought up to date first when this user may
    /// write it.
    pub fn open_reading(path: &Path) -> Result<Store> {
        match Self::open_read_only(path) {
            Err(e) if e.is::<OlderSchema>() => Self::open(path).map_err(|_| e),
            other => other,
        }
    }

    /// [`Store::open`] of a file, waiting at most `patience` in all for other
    /// processes.
    pub(super) fn open_waiting(path: &Path, patience: Duration) -> Result<Store> {
        damage::refuse_writes(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the store directory {}", dir.display()))?;
        }
        if path.is_dir() {
            bail!(UsageError(format!(
                "{} is a directory; give the database file, e.g. --db {}",
                path.display(),
                path.join("rtlab.db").display()
            )));
        }
        let mut conn = Connection::open(path)
            .with_context(|| format!("cannot open the results database {}", path.display()))?;
        // Before any statement, so that each one waits for other processes.
        conn.busy_timeout(patience)?;
        // Until the file is known to be an rtlab store, closing must not write to
        // it: the checkpoint SQLite does on close would, in a WAL-mode database.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        retry_while_busy(&mut conn, patience, prepare)
            .map_err(|e| store_error(path, patience, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)?;
        // With WAL, NORMAL still never corrupts the database or keeps half a
        // transaction; it spares an fsync per run (a power cut may lose the
        // last runs written, a crash of rtlab loses nothing committed).
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(Store {
            conn: Box::new(Sqlite::new(conn, path.to_path_buf())),
            path: path.to_path_buf(),
        })
    }

    /// Runs `f` in one write transaction; another process holding a SQLite
    /// store too long is said as such (exit 3).
    pub(super) fn write<T>(&mut self, f: impl FnOnce(&dyn Conn) -> Result<T>) -> Result<T> {
        if self.conn.kind() == Kind::Sqlite {
            damage::refuse_writes(&self.path)?;
        }
        let done = self.conn.in_tx(f);
        match done {
            Err(e) if self.conn.kind() == Kind::Sqlite && is_busy(&e) => {
                Err(store_error(&self.path, BUSY_TIMEOUT, e))
            }
            other => other,
        }
    }
}

/// Opens the SQLite file `path` read-only; `whole`: as a file nothing else
/// writes (`immutable=1`: no locks, no -shm).
fn read_only(path: &Path, whole: bool) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if whole {
        Connection::open_with_flags(
            format!("file:{}?immutable=1", uri_path(path)),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )?
    } else {
        Connection::open_with_flags(path, flags)?
    };
    conn.busy_timeout(READ_PATIENCE)?;
    Ok(conn)
}

/// `path`, absolute, as the path of a `file:` URI: every byte but letters,
/// digits, `/` and `-._~` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether SQLite could not read a WAL store because it may not create the
/// shared-memory file beside it.
fn needs_shared_memory(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_READONLY_DIRECTORY
            || f.code == rusqlite::ErrorCode::CannotOpen)
}

/// Whether the write-ahead log of `path` holds anything.
fn wal_holds_changes(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).is_ok_and(|m| m.len() > 0)
}

/// A refusal of a PostgreSQL database, said for a server.
#[cfg(feature = "postgres")]
fn pg_error(shown: &str, e: anyhow::Error) -> anyhow::Error {
    const LEFT: &str =
        "nothing was written; give rtlab a database of its own (createdb -O ROLE rtlab) in --db";
    match e.downcast_ref::<Refusal>() {
        Some(Refusal::OtherApplication(id)) => UsageError(format!(
            "{shown} is a database of another application (its rtlab_meta marks it {id:#010x}, not rtlab's); {LEFT}"
        ))
        .into(),
        Some(Refusal::OtherTables { tables, .. }) => UsageError(format!(
            "{shown} is a database of another application: it has the tables {} and no rtlab marker; {LEFT}",
            tables.join(", ")
        ))
        .into(),
        Some(Refusal::Newer(v)) => UsageError(format!(
            "{shown} has schema version {v}: made by a newer rtlab, upgrade or use another --db (this rtlab, {}, reads versions up to {}); nothing was written",
            env!("CARGO_PKG_VERSION"),
            schema::SCHEMA_VERSION
        ))
        .into(),
        Some(Refusal::UnknownVersion(v)) => UsageError(format!(
            "{shown} has schema version {v} in rtlab_meta, which no rtlab writes; {LEFT}"
        ))
        .into(),
        None => e,
    }
}

/// Judges what `conn` is open on and, if it is (or may become) an rtlab store,
/// switches it to WAL and creates, migrates or marks its schema. Writes nothing
/// to a file it refuses.
fn prepare(conn: &mut Connection) -> Result<()> {
    let found = schema::Identity::read(conn)?.judge()?;
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        // Where WAL is impossible (no shared memory on the filesystem) SQLite
        // keeps the old mode and the store still works, one writer at a time.
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
    }
    if !found.is_current() {
        schema::migrate(conn)?;
    }
    Ok(())
}

/// Longest pause between two tries of [`retry_while_busy`].
const MAX_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Runs `step` until it succeeds, fails otherwise than busy, or `patience` has
/// passed since the first try. SQLite's busy handler already waits for locks, but
/// not everywhere: a connection that would deadlock another (changing the
/// journal mode while others read, a new database being created) gets "database
/// is locked" at once. Each try waits at most what is left of `patience`.
fn retry_while_busy<T>(
    conn: &mut Connection,
    patience: Duration,
    mut step: impl FnMut(&mut Connection) -> Result<T>,
) -> Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let left = patience.saturating_sub(start.elapsed());
        conn.busy_timeout(left)?;
        match step(conn) {
            Err(e) if is_busy(&e) && !left.is_zero() => {
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(MAX_RETRY_PAUSE);
            }
            done => return done,
        }
    }
}

/// Whether SQLite said "database is locked" (busy or locked) anywhere in `e`.
fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}

/// An error opening or writing the database at `path`, said as what it is: busy
/// or not writable by this user (exit 3), not a database or not rtlab's (exit
/// 2), or SQLite's own message with the path.
pub(super) fn store_error(path: &Path, waited: Duration, e: anyhow::Error) -> anyhow::Error {
    let shown = path.display();
    if let Some(r) = e.downcast_ref::<Refusal>() {
        return UsageError(format!("{shown} {r}")).into();
    }
    if is_busy(&e) {
        return SystemError(format!(
            "{shown} is locked: another rtlab process (or another program using it) holds it, and rtlab waited up to {} s; try again when it has finished, or give another --db",
            waited.as_secs_f64()
        ))
        .into();
    }
    let code = e
        .downcast_ref::<rusqlite::Error>()
        .and_then(rusqlite::Error::sqlite_error_code);
    if code == Some(rusqlite::ErrorCode::ReadOnly) {
        return SystemError(format!(
            "{shown} cannot be written by this user ({e}): commands that only read it work (results list, report, compare); change it as a user who may write it and its directory"
        ))
        .into();
    }
    if code == Some(rusqlite::ErrorCode::NotADatabase) {
        return UsageError(format!(
            "{shown} is not an rtlab results database ({e}); it was left unchanged, give another --db"
        ))
        .into();
    }
    e.context(format!("results database {shown}"))
}
