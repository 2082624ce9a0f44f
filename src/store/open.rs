//! Opening a store: a SQLite file (WAL, busy timeout, identity checked before
//! anything is written) or a PostgreSQL database named by a URL (identity in
//! `rtlab_meta`, schema created under an advisory lock), and the errors of
//! both said as what they are.

use super::db::{url, Conn, Kind};
use super::schema::{self, Refusal};
use super::Store;
use crate::error::{SystemError, UsageError};
use anyhow::{bail, Context, Result};
use rusqlite::config::DbConfig;
use rusqlite::Connection;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for another process's transaction before giving up.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

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
                bail!(not_current(&shown));
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

    /// [`Store::open`] of a file, waiting at most `patience` in all for other
    /// processes.
    pub(super) fn open_waiting(path: &Path, patience: Duration) -> Result<Store> {
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
            conn: Box::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// Runs `f` in one write transaction; another process holding a SQLite
    /// store too long is said as such (exit 3).
    pub(super) fn write<T>(&mut self, f: impl FnOnce(&dyn Conn) -> Result<T>) -> Result<T> {
        let done = self.conn.in_tx(f);
        match done {
            Err(e) if self.conn.kind() == Kind::Sqlite && is_busy(&e) => {
                Err(store_error(&self.path, BUSY_TIMEOUT, e))
            }
            other => other,
        }
    }
}

/// A store of an older schema opened read-only, which cannot migrate it.
pub(super) fn not_current(shown: &str) -> UsageError {
    UsageError(format!(
        "{shown} is not a current rtlab store (schema version {} is needed); open it once for writing (e.g. rtlab --db {shown} results list) to bring it up to date",
        schema::SCHEMA_VERSION
    ))
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
/// (exit 3), not a database or not rtlab's (exit 2), or SQLite's own message
/// with the path.
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
    if code == Some(rusqlite::ErrorCode::NotADatabase) {
        return UsageError(format!(
            "{shown} is not an rtlab results database ({e}); it was left unchanged, give another --db"
        ))
        .into();
    }
    e.context(format!("results database {shown}"))
}
