//! The results store. SQLite (bundled) is the embedded default: one file, WAL, a
//! busy timeout so that two rtlab processes can write at once, a versioned schema
//! with migrations, and one transaction per run so that a crash never leaves half
//! a run behind.

mod query;
mod schema;

use crate::record::{Run, Series};
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variable naming the database file.
pub const DB_ENV: &str = "RTLAB_DB";

/// The database path: `--db`, else `$RTLAB_DB`, else
/// `$XDG_DATA_HOME/rtlab/rtlab.db`, else `~/.local/share/rtlab/rtlab.db`.
pub fn default_path(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(DB_ENV).filter(|p| !p.is_empty()) {
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
    /// Samples of the total series.
    pub samples: Option<i64>,
    /// p99 of the total series (ns).
    pub p99_ns: Option<i64>,
    /// Max of the total series (ns).
    pub max_ns: Option<i64>,
    /// Deadline misses of the total series.
    pub misses: Option<i64>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to
    /// date. A database written by a newer rtlab is refused.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the store directory {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the results database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(|| format!("{} is not an SQLite database", path.display()))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        schema::migrate(&mut store.conn)
            .with_context(|| format!("results database {}", path.display()))?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves a run in one transaction and returns its id.
    pub fn save(&mut self, run: &Run) -> Result<i64> {
        let tx = self.conn.transaction()?;
        let total = run.total.as_ref();
        let mut header = run.clone();
        header.id = None;
        header.series = Vec::new();
        header.total = None;
        tx.execute(
            "INSERT INTO runs (kind, label, status, exit_code, campaign, started_at, ended_at,
                duration_ns, kernel_release, preempt, hostname, samples, p99_ns, max_ns, misses, record)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
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
                total.map(|t| t.summary.p99_ns as i64),
                total.map(|t| t.summary.max_ns as i64),
                total.map(|t| t.counters.deadline_misses as i64),
                serde_json::to_string(&header)?,
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
            insert_series(&tx, id, idx, s)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Loads a whole run.
    pub fn load(&self, id: i64) -> Result<Run> {
        let record: Option<String> = self
            .conn
            .query_row("SELECT record FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        let Some(record) = record else {
            bail!(crate::error::UsageError(format!(
                "no run with id {id} in {} (see 'rtlab results list')",
                self.path.display()
            )));
        };
        let mut run: Run = serde_json::from_str(&record)
            .with_context(|| format!("run {id} is damaged in {}", self.path.display()))?;
        run.id = Some(id);
        run.tags = self.tags(id)?;
        let mut stmt = self
            .conn
            .prepare("SELECT idx, data FROM series WHERE run_id = ?1 ORDER BY idx")?;
        let rows = stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (idx, data) = row?;
            let s: Series = serde_json::from_str(&data)
                .with_context(|| format!("series {idx} of run {id} is damaged"))?;
            if idx < 0 {
                run.total = Some(s);
            } else {
                run.series.push(s);
            }
        }
        Ok(run)
    }

    /// The tags of a run.
    pub fn tags(&self, id: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT tag FROM tags WHERE run_id = ?1 ORDER BY tag")?;
        let tags = stmt
            .query_map([id], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(tags)
    }

    /// Runs, newest first, optionally only those with a label or kind.
    pub fn list(&self, label: Option<&str>, kind: Option<&str>) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, kind, label, status, samples, p99_ns, max_ns, misses FROM runs
             WHERE (?1 IS NULL OR label = ?1) AND (?2 IS NULL OR kind = ?2)
             ORDER BY id DESC",
        )?;
        let rows = stmt
            .query_map(params![label, kind], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    kind: r.get(2)?,
                    label: r.get(3)?,
                    status: r.get(4)?,
                    samples: r.get(5)?,
                    p99_ns: r.get(6)?,
                    max_ns: r.get(7)?,
                    misses: r.get(8)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}

fn insert_series(tx: &rusqlite::Transaction<'_>, run: i64, idx: i64, s: &Series) -> Result<()> {
    let m = &s.summary;
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
            serde_json::to_string(s)?,
        ],
    )?;
    Ok(())
}
