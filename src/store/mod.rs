//! The results store. SQLite (bundled) is the embedded default: one file, WAL, a
//! busy timeout so that several rtlab processes can open, create and write one
//! store at once, a versioned and marked schema with migrations ([`schema`]), and
//! one immediate transaction per write so that a crash or Ctrl-C never leaves half
//! a run behind.
//!
//! # API
//! Runs:
//! - [`Store::open`] opens or creates a database and migrates it. Another
//!   program's database, and a schema version this rtlab does not know (newer, or
//!   one no rtlab writes), are refused with nothing written (exit 2); a database
//!   another process holds for longer than the busy timeout is reported as
//!   locked (exit 3).
//! - [`Store::save`] writes a whole [`Run`] (header, tags, every series with its
//!   summary columns and serialized histograms) and returns its id. A run whose
//!   `campaign` is set must name an existing campaign. Time series longer than
//!   [`MAX_STORED_TRACE_POINTS`] are decimated (block maxima, no peak lost).
//! - [`Store::load`] reads it back, equal field by field (plus `id`, with the
//!   current label, tags, status and campaign).
//! - [`Store::list_where`] gives [`RunRow`]s, newest first, with
//!   the headline numbers, without reading series.
//! - [`Store::delete`], [`Store::add_tags`], [`Store::remove_tags`],
//!   [`Store::set_label`] change stored runs, all or nothing.
//!
//! Copying (in `transfer.rs`): [`Store::run_uuid`], [`Store::copy_runs`] (runs of
//! another store not here yet, by UUID, one transaction each), [`Bundle`] (a store
//! file opened read-only to import from) and [`write_bundle`].
//!
//! Campaigns (one invocation of a scenario: its steps and the runs they made),
//! in `campaign.rs`:
//! - [`Store::create_campaign`]`(name, scenario_text, &fingerprint) -> id`, status
//!   `running`;
//! - [`Store::add_campaign_run`]`(campaign, step_index, step_name, run_id)` maps a
//!   saved run to a step and sets the run's `campaign`;
//! - [`Store::set_campaign_status`]`(campaign, status)` (`ended_at` is set when
//!   the status is final);
//! - [`Store::load_campaign`]`(id)` and [`Store::list_campaigns`]`()`.

mod campaign;
mod fleet;
mod query;
mod schema;
mod transfer;
mod windows;

pub use campaign::{Campaign, CampaignRow, CampaignStatus};
pub use fleet::HostRow;
pub use transfer::{write_bundle, Bundle, Tally};
pub use windows::{Level, Retention, Window, WindowFilter, PASS_ROWS};

use crate::error::{SystemError, UsageError};
use crate::record::{Run, Series, Status, MAX_STORED_TRACE_POINTS};
use anyhow::{bail, Context, Result};
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use rtlab_engine::stats::trace::TracePoint;
use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, TransactionBehavior};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Environment variable naming the database file.
pub const DB_ENV: &str = "RTLAB_DB";

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the HTML report of `campaign` goes by default: `reports/` next to the
/// store `db`.
pub fn report_path(db: &Path, campaign: i64) -> PathBuf {
    db.parent()
        .unwrap_or(Path::new("."))
        .join("reports")
        .join(format!("campaign-{campaign}.html"))
}

/// Creates the `reports/` directory of a [`report_path`].
pub fn make_reports_dir(report: &Path) -> Result<()> {
    match report.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
        }
        None => Ok(()),
    }
}

/// The database path: `--db`, else `$RTLAB_DB`, else
/// `$XDG_DATA_HOME/rtlab/rtlab.db`, else `~/.local/share/rtlab/rtlab.db`.
/// A URL (`scheme://…`) is refused rather than taken for a file path.
pub fn default_path(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        refuse_url(p, "--db")?;
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(DB_ENV).filter(|p| !p.is_empty()) {
        refuse_url(Path::new(&p), DB_ENV)?;
        return Ok(PathBuf::from(p));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local/share"),
            None => bail!(crate::error::UsageError(
                "no place for the results database: set HOME, XDG_DATA_HOME or RTLAB_DB, or pass --db PATH".into()
            )),
        },
    };
    Ok(data.join("rtlab").join("rtlab.db"))
}

/// A store named by `flag` (`--to`, `--from`): its path; a URL is refused.
pub fn other_store(flag: &str, p: &Path) -> Result<PathBuf> {
    refuse_url(p, flag)?;
    Ok(p.to_path_buf())
}

/// The scheme of `p` when it is a URL (`scheme://…`, RFC 3986 scheme letters).
fn url_scheme(p: &Path) -> Option<&str> {
    let (scheme, _) = p.to_str()?.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Refuses a database given (by `source`, `--db` or `RTLAB_DB`) as a URL: the
/// store is a SQLite file, named by its path. Only the scheme is repeated, never
/// the rest of the URL (it may hold a password).
fn refuse_url(p: &Path, source: &str) -> Result<()> {
    let Some(scheme) = url_scheme(p) else {
        return Ok(());
    };
    let what =
        if scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql") {
            "a PostgreSQL store; this rtlab keeps runs in a SQLite file only"
        } else {
            "a URL; the results store is a SQLite file"
        };
    bail!(UsageError(format!(
        "{source} names {scheme}://…, {what}: give the file's path instead (e.g. {source}{}~/rtlab.db); nothing was written",
        if source == DB_ENV { "=" } else { " " }
    )))
}

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// One line of `rtlab results list`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Id.
    pub id: i64,
    /// Start time.
    pub started_at: String,
    /// Kind.
    pub kind: String,
    /// Label.
    pub label: String,
    /// Status.
    pub status: String,
    /// The host it was measured on.
    pub host: String,
    /// The kernel release it was measured on.
    pub kernel: String,
    /// Samples of the total series.
    pub samples: Option<i64>,
    /// p99 of the total series (ns).
    pub p99_ns: Option<i64>,
    /// Max of the total series (ns).
    pub max_ns: Option<i64>,
    /// Deadline misses of the total series.
    pub misses: Option<i64>,
    /// Campaign the run belongs to.
    pub campaign: Option<i64>,
    /// Tags, sorted.
    pub tags: Vec<String>,
    /// Scalar results (`events_per_s`, ...), for benchmark runs.
    pub metrics: BTreeMap<String, f64>,
}

/// Which runs [`Store::list_where`] returns; every set field must match.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// The label, exactly, or an SQL `LIKE` pattern when it contains `%`.
    pub label: Option<String>,
    /// The kind (`latency`, `bench.cpu`); `bench` matches every `bench.*`.
    pub kind: Option<String>,
    /// Started at or after this RFC 3339 UTC time.
    pub since: Option<String>,
    /// Carries this tag.
    pub tag: Option<String>,
    /// Belongs to this campaign.
    pub campaign: Option<i64>,
    /// Ran on one of these hosts (each exact, or a `LIKE` pattern with `%`);
    /// empty: any.
    pub hosts: Vec<String>,
    /// Ran on one of these kernel releases (each exact, or a `LIKE` pattern
    /// with `%`); empty: any.
    pub kernels: Vec<String>,
    /// Started before this RFC 3339 UTC time.
    pub until: Option<String>,
    /// Only the newest this many, after skipping the newest `offset`.
    pub limit: Option<usize>,
    /// How many of the newest to skip (a page of `rtlab serve`).
    pub offset: usize,
}

/// `column = ?` or `column LIKE ?` when `value` is a pattern (holds `%`).
fn match_op(column: &str, value: &str) -> String {
    let op = if value.contains('%') { "LIKE" } else { "=" };
    format!("{column} {op} ")
}

const ROW_COLUMNS: &str = "r.id, r.started_at, r.kind, r.label, r.status, r.samples, r.p99_ns,
    r.max_ns, r.misses, r.campaign, r.metrics,
    (SELECT group_concat(tag, char(10)) FROM (SELECT tag FROM tags t WHERE t.run_id = r.id ORDER BY tag)),
    r.hostname, r.kernel_release";

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let metrics: String = r.get(10)?;
    let tags: Option<String> = r.get(11)?;
    Ok(RunRow {
        id: r.get(0)?,
        started_at: r.get(1)?,
        kind: r.get(2)?,
        label: r.get(3)?,
        status: r.get(4)?,
        host: r.get(12)?,
        kernel: r.get(13)?,
        samples: r.get(5)?,
        p99_ns: r.get(6)?,
        max_ns: r.get(7)?,
        misses: r.get(8)?,
        campaign: r.get(9)?,
        // Written by `save` from a BTreeMap<String, f64>; an unreadable value
        // (hand-edited database) shows as no metrics rather than failing the list.
        metrics: serde_json::from_str(&metrics).unwrap_or_default(),
        tags: tags
            .map(|t| t.split('\n').map(str::to_string).collect())
            .unwrap_or_default(),
    })
}

/// A status name as stored back into a [`Status`].
fn parse_status(name: &str) -> Option<Status> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to
    /// date. Another program's database and a schema this rtlab does not know are
    /// refused (exit 2) with nothing written; a database other processes hold for
    /// longer than [`BUSY_TIMEOUT`] (30 s) is reported as locked (exit 3).
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_waiting(path, BUSY_TIMEOUT)
    }

    /// [`Store::open`], waiting at most `patience` in all for other processes.
    fn open_waiting(path: &Path, patience: Duration) -> Result<Store> {
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
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_tx(&mut self) -> Result<rusqlite::Transaction<'_>> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| store_error(&self.path, BUSY_TIMEOUT, e.into()))
    }

    /// Saves a run in one transaction and returns its id.
    pub fn save(&mut self, run: &Run) -> Result<i64> {
        let path = self.path.display().to_string();
        // Numbers no measurement gives (percentiles out of order, counts that
        // disagree with their histogram) never reach the store.
        run.check_numbers()
            .with_context(|| format!("{path}: the run was not saved"))?;
        let tx = self.write_tx()?;
        if let Some(c) = run.campaign {
            campaign::require(&tx, c, &path)?;
        }
        let id = insert_run(&tx, run, None)?;
        tx.commit()?;
        Ok(id)
    }

    /// Loads a whole run.
    pub fn load(&self, id: i64) -> Result<Run> {
        self.load_series(
            id,
            "SELECT idx, data FROM series WHERE run_id = ?1 ORDER BY idx",
        )
    }

    /// Loads a run with only the series that stand for it: its total, or its
    /// threads' series when it has no total. What merging runs needs, without
    /// reading and decoding every thread's histogram and time series.
    pub fn load_primary(&self, id: i64) -> Result<Run> {
        self.load_series(
            id,
            "SELECT idx, data FROM series WHERE run_id = ?1 AND (idx < 0 OR NOT EXISTS
                (SELECT 1 FROM series t WHERE t.run_id = ?1 AND t.idx < 0)) ORDER BY idx",
        )
    }

    /// Loads a run with the series `sql` selects (`?1`: the run's id; columns
    /// idx and data).
    fn load_series(&self, id: i64, sql: &str) -> Result<Run> {
        let head: Option<(String, String, String, Option<i64>)> = self
            .conn
            .query_row(
                "SELECT record, label, status, campaign FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        let Some((record, label, status, campaign)) = head else {
            return Err(self.no_run(id));
        };
        let mut run: Run = serde_json::from_str(&record)
            .with_context(|| format!("run {id} is damaged in {}", self.path.display()))?;
        run.id = Some(id);
        run.label = label;
        run.campaign = campaign;
        if let Some(s) = parse_status(&status) {
            run.status = s;
        }
        run.tags = self.tags(id)?;
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query([id])?;
        while let Some(row) = rows.next()? {
            let idx: i64 = row.get(0)?;
            let s = series_from_column(row.get_ref(1)?)
                .with_context(|| format!("series {idx} of run {id} is damaged"))?;
            if idx < 0 {
                run.total = Some(s);
            } else {
                run.series.push(s);
            }
        }
        Ok(run)
    }

    fn no_run(&self, id: i64) -> anyhow::Error {
        UsageError(format!(
            "no run with id {id} in {} (see 'rtlab results list')",
            self.path.display()
        ))
        .into()
    }

    /// The tags of a run.
    pub fn tags(&self, id: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT tag FROM tags WHERE run_id = ?1 ORDER BY tag")?;
        let tags = stmt
            .query_map([id], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(tags)
    }

    /// Runs matching every field of `f`, newest first.
    pub fn list_where(&self, f: &ListFilter) -> Result<Vec<RunRow>> {
        let mut sql = format!("SELECT {ROW_COLUMNS} FROM runs r WHERE 1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let mut arg = |sql: &mut String, cond: &str, v: rusqlite::types::Value| {
            args.push(v);
            sql.push_str(&format!(" AND {cond}?{}", args.len()));
        };
        if let Some(l) = &f.label {
            arg(&mut sql, &match_op("r.label", l), l.clone().into());
        }
        match f.kind.as_deref() {
            Some("bench") => sql.push_str(" AND r.kind LIKE 'bench.%'"),
            Some(k) => arg(&mut sql, "r.kind = ", k.to_string().into()),
            None => {}
        }
        if let Some(s) = &f.since {
            arg(&mut sql, "r.started_at >= ", s.clone().into());
        }
        if let Some(t) = &f.tag {
            arg(
                &mut sql,
                "EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = ",
                t.clone().into(),
            );
            sql.push(')');
        }
        if let Some(c) = f.campaign {
            arg(&mut sql, "r.campaign = ", c.into());
        }
        if let Some(u) = &f.until {
            arg(&mut sql, "r.started_at < ", u.clone().into());
        }
        for (column, values) in [("r.hostname", &f.hosts), ("r.kernel_release", &f.kernels)] {
            if values.is_empty() {
                continue;
            }
            // Any one of the values: (c = ?1 OR c LIKE ?2 ...).
            let mut any = Vec::new();
            for v in values {
                args.push(v.clone().into());
                any.push(format!("{}?{}", match_op(column, v), args.len()));
            }
            sql.push_str(&format!(" AND ({})", any.join(" OR ")));
        }
        sql.push_str(" ORDER BY r.id DESC");
        if let Some(n) = f.limit {
            args.push(i64::try_from(n).unwrap_or(i64::MAX).into());
            sql.push_str(&format!(" LIMIT ?{}", args.len()));
            if f.offset > 0 {
                args.push(i64::try_from(f.offset).unwrap_or(i64::MAX).into());
                sql.push_str(&format!(" OFFSET ?{}", args.len()));
            }
        }
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt
            .query_map(params_from_iter(args), run_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Checks that every id exists; names the first that does not.
    fn require_runs(tx: &rusqlite::Transaction<'_>, ids: &[i64], path: &str) -> Result<()> {
        for &id in ids {
            let found: Option<i64> = tx
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()?;
            if found.is_none() {
                bail!(UsageError(format!(
                    "no run with id {id} in {path} (see 'rtlab results list'); nothing was changed"
                )));
            }
        }
        Ok(())
    }

    /// Deletes runs with their series, tags and campaign entries; all or none.
    pub fn delete(&mut self, ids: &[i64]) -> Result<usize> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        Self::require_runs(&tx, ids, &path)?;
        let mut n = 0;
        for &id in ids {
            n += tx.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Adds tags to a run (tags it already has are kept once).
    pub fn add_tags(&mut self, id: i64, tags: &[String]) -> Result<()> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        Self::require_runs(&tx, &[id], &path)?;
        for t in tags {
            tx.execute(
                "INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?1, ?2)",
                params![id, t],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Removes tags from a run; returns how many it had.
    pub fn remove_tags(&mut self, id: i64, tags: &[String]) -> Result<usize> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        Self::require_runs(&tx, &[id], &path)?;
        let mut n = 0;
        for t in tags {
            n += tx.execute(
                "DELETE FROM tags WHERE run_id = ?1 AND tag = ?2",
                params![id, t],
            )?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Gives a run a new label.
    pub fn set_label(&mut self, id: i64, label: &str) -> Result<()> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        Self::require_runs(&tx, &[id], &path)?;
        tx.execute(
            "UPDATE runs SET label = ?2, record = json_set(record, '$.label', ?2) WHERE id = ?1",
            params![id, label],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// Inserts `run` (header, tags, series) in `tx` with `uuid`, or a new one, and
/// returns its id. Its campaign, if any, must exist.
fn insert_run(tx: &rusqlite::Transaction<'_>, run: &Run, uuid: Option<&str>) -> Result<i64> {
    let total = run.total.as_ref();
    let mut header = run.clone();
    header.id = None;
    header.series = Vec::new();
    header.total = None;
    tx.execute(
        concat!(
            "INSERT INTO runs (kind, label, status, exit_code, campaign, started_at, ended_at,
                    duration_ns, kernel_release, preempt, hostname, samples, p99_ns, max_ns,
                    misses, record, metrics, uuid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, COALESCE(?18, ",
            schema::new_uuid_sql!(),
            "))"
        ),
        params![
            run.kind,
            run.label,
            run.status.name(),
            run.exit_code,
            run.campaign,
            run.started_at,
            run.ended_at,
            run.duration_ns as i64,
            run.fingerprint.kernel_release,
            run.fingerprint.preempt.name(),
            run.fingerprint.hostname,
            total.map(|t| t.counters.samples as i64),
            total
                .filter(|_| run.reports("p99_ns"))
                .map(|t| t.summary.p99_ns as i64),
            total.map(|t| t.summary.max_ns as i64),
            total
                .filter(|_| run.reports("deadline_misses"))
                .map(|t| t.counters.deadline_misses as i64),
            serde_json::to_string(&header)?,
            serde_json::to_string(&run.metrics)?,
            uuid,
        ],
    )?;
    let id = tx.last_insert_rowid();
    for tag in &run.tags {
        tx.execute(
            "INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?1, ?2)",
            params![id, tag],
        )?;
    }
    let all = run.series.iter().enumerate().map(|(i, s)| (i as i64, s));
    for (idx, s) in all.chain(total.map(|t| (-1, t))) {
        insert_series(tx, id, idx, s)?;
    }
    Ok(id)
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
fn store_error(path: &Path, waited: Duration, e: anyhow::Error) -> anyhow::Error {
    let shown = path.display();
    if let Some(r) = e.downcast_ref::<schema::Refusal>() {
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

/// Block maxima of `points` with at most `limit` points (at least 2): adjacent
/// points are merged pairwise, keeping the larger maximum and the earlier first
/// sample, until the series fits. The largest value is never lost.
pub fn decimate(points: &[TracePoint], limit: usize) -> Vec<TracePoint> {
    let limit = limit.max(2);
    let mut out = points.to_vec();
    while out.len() > limit {
        out = out
            .chunks(2)
            .map(|pair| {
                let keep = match pair {
                    [a, b] if b.max_ns > a.max_ns => *b,
                    _ => pair[0],
                };
                TracePoint {
                    first_sample: pair[0].first_sample,
                    ..keep
                }
            })
            .collect();
    }
    out
}

/// A series as stored: its JSON, zlib-compressed (histogram buckets and time
/// series shrink about tenfold). Version 1 stored plain JSON text, which
/// [`series_from_column`] still reads.
fn series_to_blob(s: &Series) -> Result<Vec<u8>> {
    let json = if s.trace.len() > MAX_STORED_TRACE_POINTS {
        let mut bounded = s.clone();
        bounded.trace = decimate(&s.trace, MAX_STORED_TRACE_POINTS);
        serde_json::to_vec(&bounded)?
    } else {
        serde_json::to_vec(s)?
    };
    // One write: the encoder zeroes its output buffer on every write call, so
    // serde_json's many small writes straight into it cost 100 times more.
    let mut z = ZlibEncoder::new(Vec::with_capacity(json.len() / 4), Compression::fast());
    z.write_all(&json)?;
    Ok(z.finish()?)
}

/// Reads a stored series: compressed JSON, or plain JSON text (version 1).
fn series_from_column(v: ValueRef<'_>) -> Result<Series> {
    Ok(match v {
        ValueRef::Blob(b) => {
            let mut json = Vec::with_capacity(b.len() * 8);
            ZlibDecoder::new(b).read_to_end(&mut json)?;
            serde_json::from_slice(&json)?
        }
        ValueRef::Text(t) => serde_json::from_slice(t)?,
        other => bail!("a series is stored as {:?}", other.data_type()),
    })
}

fn insert_series(tx: &rusqlite::Transaction<'_>, run: i64, idx: i64, s: &Series) -> Result<()> {
    let m = &s.summary;
    let data = series_to_blob(s)?;
    tx.execute(
        "INSERT INTO series (run_id, idx, name, samples, overruns, misses, overflows,
            min_ns, mean_ns, stddev_ns, p50_ns, p90_ns, p95_ns, p99_ns, p999_ns, p9999_ns, max_ns, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            run,
            idx,
            s.name,
            s.counters.samples as i64,
            s.counters.overruns as i64,
            s.counters.deadline_misses as i64,
            s.counters.overflows as i64,
            m.min_ns as i64,
            m.mean_ns,
            m.stddev_ns,
            m.p50_ns as i64,
            m.p90_ns as i64,
            m.p95_ns as i64,
            m.p99_ns as i64,
            m.p999_ns as i64,
            m.p9999_ns as i64,
            m.max_ns as i64,
            data,
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BreakRecord, Counters, LoadRecord, Warning};
    use proptest::prelude::*;
    use rtlab_engine::stats::hist::{LatencyHistogram, UsBuckets};
    use rtlab_engine::stats::Moments;
    use rtlab_engine::stats::Summary;
    use rtlab_engine::sysinfo::{Fingerprint, PreemptModel};

    fn series(name: &str, values: &[u64]) -> Series {
        let (mut m, mut h, mut us) = (
            Moments::default(),
            LatencyHistogram::new(),
            UsBuckets::new(100),
        );
        for (i, &v) in values.iter().enumerate() {
            m.record(v);
            h.record(v);
            us.record(v, i as u64);
        }
        Series {
            name: name.into(),
            thread: Some(0),
            cpu: Some(1),
            tid: Some(1234),
            interval_ns: Some(200_000),
            counters: Counters {
                samples: m.count,
                overruns: 2,
                deadline_misses: 1,
                overflows: us.overflow(),
            },
            summary: Summary::new(&m, &h),
            max_at: Some(7),
            histogram: h.to_data(),
            us_histogram: Some(us.to_data()),
            trace: (0..10)
                .map(|i| TracePoint {
                    first_sample: i,
                    offset_ns: i * 1000,
                    max_ns: values[i as usize % values.len()],
                })
                .collect(),
        }
    }

    /// A run with every field set.
    fn sample_run(threads: usize) -> Run {
        let values: Vec<u64> = (1..500).map(|i| i * 997 % 150_000).collect();
        Run {
            format: crate::record::FORMAT.into(),
            id: None,
            kind: "latency".into(),
            label: "6.1.0-rt PREEMPT_RT".into(),
            tags: vec!["a".into(), "b".into()],
            campaign: None,
            status: Status::Interrupted,
            exit_code: 130,
            started_at: "2026-01-02T03:04:05.000001Z".into(),
            ended_at: "2026-01-02T03:04:06.000001Z".into(),
            duration_ns: 1_000_000_123,
            rtlab_version: "0.1.0".into(),
            command_line: vec!["rtlab".into(), "latency".into()],
            params: crate::record::RunParams::Recorded(
                serde_json::json!({"interval_ns": 200000, "threads": threads}),
            ),
            fingerprint: Fingerprint {
                hostname: "bbb".into(),
                kernel_release: "6.1.0-rt".into(),
                preempt: PreemptModel::Rt,
                hz: Some(1000),
                governors: vec!["performance".into()],
                cpu_count: 4,
                ..Fingerprint::default()
            },
            audit: None,
            // From JSON, so that fields added to the load record later take
            // their defaults here.
            loads: vec![serde_json::from_value::<LoadRecord>(serde_json::json!({
                "spec": "cpu:2", "kind": "cpu", "workers": 2,
                "params": {"x": 1}, "achieved": {"ops_per_s": 12.5}
            }))
            .unwrap()],
            series: (0..threads)
                .map(|t| series(&format!("cpu{t}"), &values[t..]))
                .collect(),
            total: Some(series("all", &values)),
            metrics: [("events_per_s".to_string(), 1234.5)].into(),
            breaktrace: Some(BreakRecord {
                thread: 1,
                tid: 99,
                cycle: 5,
                latency_ns: 149_000,
                trace_marker: false,
            }),
            why: Some(crate::record::why::Why {
                threshold_ns: 100_000,
                available: vec!["sched".into(), "irq".into()],
                missing: vec!["idle exit: no power:cpu_idle event".into()],
                resolution_ns: 1,
                events: 4200,
                events_lost: 0,
                spikes_total: 1,
                spikes: vec![crate::record::why::Spike {
                    cpu: 1,
                    thread: 1,
                    cycle: 5,
                    latency_ns: 149_000,
                    timer_irq_delay_ns: Some(2_000),
                    irqs: Vec::new(),
                    softirqs: vec![crate::record::why::Softirq {
                        vector: "NET_RX".into(),
                        ns: 140_000,
                    }],
                    threads: Vec::new(),
                    idle: None,
                    nmi_ns: 0,
                    unexplained_ns: 7_000,
                }],
                causes: vec![crate::record::why::Cause {
                    kind: crate::record::why::CauseKind::Softirq,
                    name: "NET_RX".into(),
                    cpu: Some(1),
                    ns: 140_000,
                    share: 0.94,
                    spikes: 1,
                }],
                timerlat: None,
                subject: Default::default(),
            }),
            page_faults: Some(crate::record::PageFaults { minor: 2, major: 1 }),
            sweep: None,
            // From JSON: a counted value and one the machine lacks.
            perf: Some(
                serde_json::from_value(serde_json::json!({
                    "elapsed_ns": 5, "scope": "threads",
                    "total": [{"event": "page-faults", "value": 3},
                              {"event": "cycles", "not": "not supported"}],
                    "threads": [{"name": "cpu0", "tid": 7,
                                 "counters": [{"event": "page-faults", "value": 3}]}]
                }))
                .unwrap(),
            ),
            warnings: vec![Warning::new("vm", "virtual")],
        }
    }

    fn temp_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("x.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn only_scheme_colon_slash_slash_is_a_url() {
        for (p, scheme) in [
            ("postgres://u:p@h/db", Some("postgres")),
            ("svn+ssh://h/x", Some("svn+ssh")),
            ("./a://b", None),
            ("1x://h", None),
            ("/var/lib/rtlab.db", None),
            ("c:/x.db", None),
        ] {
            assert_eq!(url_scheme(Path::new(p)), scheme, "{p}");
        }
        let e = refuse_url(Path::new("postgres://u:pw@h/db"), "--db").unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(!e.to_string().contains("pw"), "{e}");
    }

    /// The total alone, or every series of a run without one.
    #[test]
    fn load_primary_reads_what_stands_for_the_run() {
        let (_d, mut store) = temp_store();
        let mut run = sample_run(3);
        let with_total = store.save(&run).unwrap();
        let total = run.total.take();
        let without = store.save(&run).unwrap();
        let back = store.load_primary(with_total).unwrap();
        assert_eq!((back.total, back.series.len()), (total, 0));
        let back = store.load_primary(without).unwrap();
        assert_eq!((back.total, back.series), (None, run.series));
    }

    #[test]
    fn every_field_survives_save_and_load() {
        let (_d, mut store) = temp_store();
        let run = sample_run(3);
        let id = store.save(&run).unwrap();
        let back = store.load(id).unwrap();
        assert_eq!(
            back,
            Run {
                id: Some(id),
                ..run
            }
        );
        let rows = store
            .list_where(&ListFilter {
                kind: Some("latency".into()),
                ..ListFilter::default()
            })
            .unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.samples, Some(499));
        assert_eq!(
            r.max_ns,
            Some(back.total.as_ref().unwrap().summary.max_ns as i64)
        );
        assert_eq!(r.tags, vec!["a", "b"]);
        assert_eq!(r.metrics["events_per_s"], 1234.5);
    }

    #[test]
    fn a_failed_write_leaves_no_half_run() {
        let (_d, mut store) = temp_store();
        let first = store.save(&sample_run(1)).unwrap();
        // Make the third series insert fail, as a crash or a full disk would.
        store
            .conn
            .execute_batch(
                "CREATE TRIGGER boom BEFORE INSERT ON series WHEN NEW.idx = 2
                 BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
            )
            .unwrap();
        let err = store.save(&sample_run(4)).unwrap_err();
        assert!(format!("{err:#}").contains("disk full"));
        let count = |t: &str| -> i64 {
            store
                .conn
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(count("runs"), 1);
        assert_eq!(count("series"), 2, "run {first}: one thread and the total");
        assert_eq!(count("tags"), 2);
    }

    /// Writes `run` as run 1 of a store laid out and filled as the first rtlab
    /// did: schema version 1, no application_id.
    fn write_v1_store(path: &Path, run: &Run) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(schema::V1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let mut header = run.clone();
        header.series.clear();
        header.total = None;
        conn.execute(
            "INSERT INTO runs (kind, label, status, exit_code, campaign, started_at, ended_at,
                duration_ns, kernel_release, preempt, hostname, samples, p99_ns, max_ns, misses, record)
             VALUES ('latency', ?1, 'interrupted', 130, NULL, ?2, ?3, 1000000123, '6.1.0-rt',
                'PREEMPT_RT', 'bbb', 499, 1, 2, 3, ?4)",
            params![run.label, run.started_at, run.ended_at, serde_json::to_string(&header).unwrap()],
        )
        .unwrap();
        conn.execute("INSERT INTO tags VALUES (1, 'a'), (1, 'b')", [])
            .unwrap();
        let all = run.series.iter().enumerate().map(|(i, s)| (i as i64, s));
        for (idx, s) in all.chain(run.total.as_ref().map(|t| (-1, t))) {
            let m = &s.summary;
            conn.execute(
                "INSERT INTO series VALUES (1, ?1, ?2, ?3, 0, 0, 0, ?4, ?5, ?6, 0, 0, 0, ?7, 0, 0, ?8, ?9)",
                params![
                    idx,
                    s.name,
                    s.counters.samples as i64,
                    m.min_ns as i64,
                    m.mean_ns,
                    m.stddev_ns,
                    m.p99_ns as i64,
                    m.max_ns as i64,
                    serde_json::to_string(s).unwrap()
                ],
            )
            .unwrap();
        }
    }

    /// `PRAGMA name` of the database at `path`, read by a separate connection.
    fn pragma(path: &Path, name: &str) -> i64 {
        Connection::open(path)
            .unwrap()
            .pragma_query_value(None, name, |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_version_1_database_is_migrated_with_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let run = sample_run(2);
        write_v1_store(&path, &run);
        let mut store = Store::open(&path).unwrap();
        let version: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, schema::SCHEMA_VERSION);
        assert_eq!(store.load(1).unwrap(), Run { id: Some(1), ..run });
        assert_eq!(
            store.list_where(&ListFilter::default()).unwrap()[0].metrics["events_per_s"],
            1234.5
        );
        // The new tables work on the migrated database.
        let c = store
            .create_campaign("old", "", &Fingerprint::default())
            .unwrap();
        store.add_campaign_run(c, 0, "step", 1).unwrap();
        assert_eq!(store.load(1).unwrap().campaign, Some(c));
        // The run stored before UUIDs got one; a new run gets another.
        let old = store.run_uuid(1).unwrap();
        let new = store.save(&sample_run(1)).unwrap();
        let new = store.run_uuid(new).unwrap();
        for u in [&old, &new] {
            let groups: Vec<usize> = u.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{u}");
            assert!(
                u.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f' | '-')),
                "{u}"
            );
            assert_eq!(&u[14..15], "4", "version 4: {u}");
            assert!("89ab".contains(&u[19..20]), "RFC variant: {u}");
        }
        assert_ne!(old, new);
        drop(store);
        // Migrated stores are marked as rtlab's.
        assert_eq!(
            pragma(&path, "application_id"),
            i64::from(schema::APPLICATION_ID)
        );
    }

    #[test]
    fn newer_and_unknown_schema_versions_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        Store::open(&path).unwrap();
        for (version, expected) in [
            (
                schema::SCHEMA_VERSION + 1,
                "made by a newer rtlab, upgrade or use another --db",
            ),
            (-1, "has schema version -1, which no rtlab writes"),
            (0, "has schema version 0, which no rtlab writes"),
        ] {
            Connection::open(&path)
                .unwrap()
                .pragma_update(None, "user_version", version)
                .unwrap();
            let before = std::fs::read(&path).unwrap();
            let err = Store::open(&path).err().unwrap();
            let msg = format!("{err:#}");
            assert!(msg.contains(expected), "{msg}");
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert_eq!(crate::error::exit_code(&err), 2);
            assert!(
                std::fs::read(&path).unwrap() == before,
                "{msg}: file changed"
            );
            assert_eq!(pragma(&path, "user_version"), version);
        }
    }

    #[test]
    fn another_programs_database_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &str); 4] = [
            (
                "tables",
                "CREATE TABLE notes (x); INSERT INTO notes VALUES (1);",
            ),
            ("id", "PRAGMA application_id = 1234;"),
            (
                "id_and_rtlab_tables",
                &format!(
                    "{}; PRAGMA user_version = 2; PRAGMA application_id = 7;",
                    schema::V1
                ),
            ),
            (
                "rtlab_tables_and_more",
                &format!(
                    "{}; CREATE TABLE notes (x); PRAGMA user_version = 1;",
                    schema::V1
                ),
            ),
        ];
        for (name, sql) in cases {
            let path = dir.path().join(format!("{name}.db"));
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            let before = std::fs::read(&path).unwrap();
            let err = Store::open(&path).err().unwrap();
            let msg = format!("{err:#}");
            assert!(
                msg.contains("is not an rtlab results database"),
                "{name}: {msg}"
            );
            assert_eq!(crate::error::exit_code(&err), 2, "{name}: {msg}");
            assert!(
                std::fs::read(&path).unwrap() == before,
                "{name}: file changed"
            );
        }
        // Nothing beside the files either (no journal, no WAL).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), cases.len());
    }

    #[test]
    fn an_empty_file_becomes_a_marked_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.db");
        std::fs::write(&path, b"").unwrap();
        let mut store = Store::open(&path).unwrap();
        store.save(&sample_run(1)).unwrap();
        drop(store);
        assert_eq!(
            pragma(&path, "application_id"),
            i64::from(schema::APPLICATION_ID)
        );
        assert_eq!(pragma(&path, "user_version"), schema::SCHEMA_VERSION);
    }

    /// Whether `err` says, with the path, that another process holds the store.
    fn assert_locked(err: &anyhow::Error, path: &Path) {
        let msg = format!("{err:#}");
        assert!(msg.contains("is locked: another rtlab process"), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(!msg.contains("not an rtlab"), "{msg}");
        assert_eq!(crate::error::exit_code(err), 3, "{msg}");
    }

    #[test]
    fn a_locked_database_is_reported_as_locked_never_as_foreign() {
        let dir = tempfile::tempdir().unwrap();
        // Opening: another connection holds the whole (new) file.
        let path = dir.path().join("held.db");
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let err = Store::open_waiting(&path, Duration::from_millis(20))
            .err()
            .unwrap();
        assert_locked(&err, &path);
        holder.execute_batch("ROLLBACK").unwrap();
        let mut store = Store::open(&path).unwrap();
        // Writing: another writer holds the store.
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        store.conn.busy_timeout(Duration::from_millis(20)).unwrap();
        let err = store.save(&sample_run(1)).unwrap_err();
        assert_locked(&err, &path);
        holder.execute_batch("ROLLBACK").unwrap();
        store.save(&sample_run(1)).unwrap();
    }

    /// Opens the store at `path` from `n` threads at once (separate connections,
    /// as separate processes would), each saving one run; every result.
    fn open_at_once(path: &Path, n: usize) -> Vec<Result<i64>> {
        let gate = std::sync::Barrier::new(n);
        std::thread::scope(|s| {
            let all: Vec<_> = (0..n)
                .map(|_| {
                    s.spawn(|| {
                        gate.wait();
                        Store::open(path)?.save(&sample_run(1))
                    })
                })
                .collect();
            all.into_iter().map(|t| t.join().unwrap()).collect()
        })
    }

    #[test]
    fn eight_connections_creating_one_store_at_once_all_succeed() {
        for round in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("new.db");
            for r in open_at_once(&path, 8) {
                if let Err(e) = r {
                    panic!("round {round}: {e:#}");
                }
            }
            let store = Store::open(&path).unwrap();
            assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 8);
        }
    }

    #[test]
    fn an_old_store_opened_by_many_at_once_is_migrated_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let run = sample_run(2);
        write_v1_store(&path, &run);
        for r in open_at_once(&path, 8) {
            if let Err(e) = r {
                panic!("{e:#}");
            }
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 9);
        assert_eq!(store.load(1).unwrap(), Run { id: Some(1), ..run });
        drop(store);
        assert_eq!(pragma(&path, "user_version"), schema::SCHEMA_VERSION);
    }

    #[test]
    fn campaigns_map_steps_to_runs() {
        let (_d, mut store) = temp_store();
        let fp = sample_run(1).fingerprint;
        let c = store.create_campaign("drone", "steps: []", &fp).unwrap();
        let a = store.save(&sample_run(1)).unwrap();
        let b = store
            .save(&Run {
                campaign: Some(c),
                ..sample_run(1)
            })
            .unwrap();
        store.add_campaign_run(c, 0, "idle", a).unwrap();
        store.add_campaign_run(c, 1, "cpu load", b).unwrap();
        assert!(store.add_campaign_run(c, 2, "again", a).is_err());
        assert!(store.add_campaign_run(c + 1, 0, "x", a).is_err());
        assert!(store
            .save(&Run {
                campaign: Some(c + 1),
                ..sample_run(1)
            })
            .is_err());
        store
            .set_campaign_status(c, CampaignStatus::Interrupted)
            .unwrap();
        let got = store.load_campaign(c).unwrap();
        assert_eq!(
            (got.name.as_str(), got.scenario.as_str()),
            ("drone", "steps: []")
        );
        assert_eq!(got.fingerprint, fp);
        assert_eq!(got.status, CampaignStatus::Interrupted);
        assert!(got.ended_at.is_some());
        let steps: Vec<(i64, &str, i64)> = got
            .steps
            .iter()
            .map(|s| (s.step_index, s.step_name.as_str(), s.run_id))
            .collect();
        assert_eq!(steps, vec![(0, "idle", a), (1, "cpu load", b)]);
        assert_eq!(store.load(a).unwrap().campaign, Some(c));
        let listed = store.list_campaigns().unwrap();
        assert_eq!((listed[0].id, listed[0].runs), (c, 2));
        let filter = ListFilter {
            campaign: Some(c),
            ..ListFilter::default()
        };
        assert_eq!(store.list_where(&filter).unwrap().len(), 2);
        // Deleting a run removes it from its campaign.
        store.delete(&[a]).unwrap();
        assert_eq!(store.load_campaign(c).unwrap().steps.len(), 1);
    }

    #[test]
    fn edits_are_all_or_nothing_and_visible_on_load() {
        let (_d, mut store) = temp_store();
        let a = store.save(&sample_run(1)).unwrap();
        let b = store.save(&sample_run(2)).unwrap();
        store.set_label(a, "vanilla").unwrap();
        store.add_tags(a, &["x".into(), "a".into()]).unwrap();
        assert_eq!(store.remove_tags(a, &["b".into(), "zz".into()]).unwrap(), 1);
        let run = store.load(a).unwrap();
        assert_eq!(run.label, "vanilla");
        assert_eq!(run.tags, vec!["a", "x"]);
        let err = store.delete(&[b, 999]).unwrap_err();
        assert!(err.to_string().contains("no run with id 999"), "{err}");
        assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 2);
        assert_eq!(store.delete(&[a, b]).unwrap(), 2);
        assert!(store.list_where(&ListFilter::default()).unwrap().is_empty());
        let count: i64 = store
            .conn
            .query_row("SELECT count(*) FROM series", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, 0);
    }

    #[test]
    fn list_filters_combine() {
        let (_d, mut store) = temp_store();
        let mut r = sample_run(1);
        store.save(&r).unwrap();
        r.label = "4.19.127 PREEMPT".into();
        r.kind = "bench.cpu".into();
        r.started_at = "2026-03-01T00:00:00.000000Z".into();
        r.tags = vec!["kconfig-trim".into()];
        let id = store.save(&r).unwrap();
        let ids = |f: ListFilter| -> Vec<i64> {
            store.list_where(&f).unwrap().iter().map(|r| r.id).collect()
        };
        let f =
            |label: Option<&str>, kind: Option<&str>, since: Option<&str>, tag: Option<&str>| {
                ListFilter {
                    label: label.map(Into::into),
                    kind: kind.map(Into::into),
                    since: since.map(Into::into),
                    tag: tag.map(Into::into),
                    ..ListFilter::default()
                }
            };
        assert_eq!(ids(f(Some("4.19%"), None, None, None)), vec![id]);
        assert_eq!(ids(f(None, Some("bench"), None, None)), vec![id]);
        assert_eq!(
            ids(f(None, None, Some("2026-02-01T00:00:00Z"), None)),
            vec![id]
        );
        assert_eq!(ids(f(None, None, None, Some("kconfig-trim"))), vec![id]);
        assert_eq!(
            ids(f(Some("4.19%"), Some("latency"), None, None)),
            Vec::<i64>::new()
        );
        assert_eq!(ids(f(None, None, None, None)).len(), 2);
    }

    /// Hosts and kernels: any one of the values (exact, or a pattern with
    /// `%`); `until` excludes its own instant; `limit` keeps the newest.
    #[test]
    fn list_filters_by_host_kernel_until_and_limit() {
        let (_d, mut store) = temp_store();
        let mut r = sample_run(1);
        let mut saved = Vec::new();
        for (host, kernel, day) in [
            ("bbb", "6.1.0-rt", 1),
            ("pi4", "6.1.0-rt", 2),
            ("pi4", "6.6.0-rt", 3),
            ("x86", "6.6.0", 4),
        ] {
            r.fingerprint.hostname = host.into();
            r.fingerprint.kernel_release = kernel.into();
            r.started_at = format!("2026-03-0{day}T00:00:00.000000Z");
            saved.push(store.save(&r).unwrap());
        }
        let ids = |f: ListFilter| -> Vec<i64> {
            store.list_where(&f).unwrap().iter().map(|r| r.id).collect()
        };
        let hosts = |h: &[&str]| ListFilter {
            hosts: h.iter().map(|s| s.to_string()).collect(),
            ..ListFilter::default()
        };
        assert_eq!(ids(hosts(&["pi4"])), [saved[2], saved[1]]);
        assert_eq!(ids(hosts(&["bbb", "x86"])), [saved[3], saved[0]]);
        assert_eq!(ids(hosts(&["p%"])), [saved[2], saved[1]]);
        assert_eq!(ids(hosts(&["nowhere"])), Vec::<i64>::new());
        let kernels = ListFilter {
            kernels: vec!["6.6%".into(), "6.1.0-rt".into()],
            hosts: vec!["pi4".into(), "x86".into()],
            ..ListFilter::default()
        };
        assert_eq!(ids(kernels), [saved[3], saved[2], saved[1]]);
        let window = ListFilter {
            since: Some("2026-03-02T00:00:00.000000Z".into()),
            until: Some("2026-03-04T00:00:00.000000Z".into()),
            ..ListFilter::default()
        };
        assert_eq!(ids(window), [saved[2], saved[1]]);
        let newest = ListFilter {
            limit: Some(3),
            ..hosts(&["%"])
        };
        assert_eq!(ids(newest), [saved[3], saved[2], saved[1]]);
    }

    #[test]
    fn long_traces_are_stored_decimated() {
        let (_d, mut store) = temp_store();
        let mut run = sample_run(1);
        run.series[0].trace = (0..10_000u64)
            .map(|i| TracePoint {
                first_sample: i,
                offset_ns: i,
                max_ns: if i == 7777 { 1_000_000 } else { i % 100 },
            })
            .collect();
        let id = store.save(&run).unwrap();
        let trace = &store.load(id).unwrap().series[0].trace;
        assert!(trace.len() <= MAX_STORED_TRACE_POINTS);
        assert!(trace
            .iter()
            .any(|p| p.max_ns == 1_000_000 && p.offset_ns == 7777));
    }

    proptest! {
        #[test]
        fn decimation_is_bounded_ordered_and_keeps_the_peak(
            values in proptest::collection::vec(0u64..1_000_000, 1..3000),
            limit in 2usize..300,
        ) {
            let points: Vec<TracePoint> = values.iter().enumerate()
                .map(|(i, &v)| TracePoint { first_sample: i as u64, offset_ns: i as u64, max_ns: v })
                .collect();
            let d = decimate(&points, limit);
            prop_assert!(d.len() <= limit.max(2));
            prop_assert!(!d.is_empty());
            prop_assert_eq!(d.iter().map(|p| p.max_ns).max(), values.iter().copied().max());
            prop_assert_eq!(d[0].first_sample, 0);
            for w in d.windows(2) { prop_assert!(w[0].first_sample < w[1].first_sample); }
            for p in &d { prop_assert_eq!(values[p.offset_ns as usize], p.max_ns); }
            if points.len() <= limit { prop_assert_eq!(d, points); }
        }
    }
}
