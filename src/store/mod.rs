//! The results store. SQLite (bundled) is the embedded default: one file, WAL, a
//! busy timeout so that several rtlab processes can open, create and write one
//! store at once, a versioned and marked schema with migrations ([`schema`]), and
//! one immediate transaction per write so that a crash or Ctrl-C never leaves half
//! a run behind. A `postgres://` or `postgresql://` URL names a PostgreSQL
//! database instead (a fleet's store): the same schema, the same queries
//! ([`db`] holds both backends), one transaction per write.
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
//!   [`MAX_STORED_TRACE_POINTS`](crate::record::MAX_STORED_TRACE_POINTS) are
//!   decimated (block maxima, no peak lost); `blob.rs` says how a series is stored.
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
//! - [`Store::add_campaign_run`]`(campaign, &CampaignStep)` maps a saved run to
//!   a step (its plan index, name, base name and repeat) and sets the run's
//!   `campaign`;
//! - [`Store::set_campaign_status`]`(campaign, status)` (`ended_at` is set when
//!   the status is final);
//! - [`Store::load_campaign`]`(id)` and [`Store::list_campaigns`]`()`.

mod backup;
mod blob;
mod campaign;
pub mod damage;
mod db;
mod fleet;
mod open;
mod query;
mod schema;
mod transfer;
mod windows;

pub use backup::Backed;
pub use campaign::{Campaign, CampaignRow, CampaignStatus, CampaignStep};
pub use damage::Checked;
pub use db::url::split_password;
pub use fleet::{Count, Evidence, HostRow};
pub use transfer::{write_bundle, Bundle, Tally};
pub use windows::{Level, Retention, Window, WindowFilter, PASS_ROWS};

use crate::error::UsageError;
use crate::record::{Run, Series, Status};
use anyhow::{bail, Context, Result};
use db::{args, url, Conn, Row, Value};
use rtlab_engine::stats::trace::TracePoint;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Environment variable naming the database file (or PostgreSQL URL).
pub const DB_ENV: &str = "RTLAB_DB";

/// Where the HTML report of `campaign` goes by default: `reports/` next to the
/// store `db`; for a PostgreSQL store, `reports/` in the local data directory
/// (`~/.local/share/rtlab/reports`), else in the current directory.
pub fn report_path(db: &Path, campaign: i64) -> PathBuf {
    let dir = if is_url(db) {
        data_dir().map_or_else(|_| PathBuf::from("."), |d| d.join("rtlab"))
    } else {
        db.parent().unwrap_or(Path::new(".")).to_path_buf()
    };
    dir.join("reports")
        .join(format!("campaign-{campaign}.html"))
}

/// Whether `db` names a PostgreSQL store rather than a file.
pub fn is_url(db: &Path) -> bool {
    db.to_str().is_some_and(url::is_postgres)
}

/// Whether the store `db` exists: a file, or any PostgreSQL database (whose
/// schema opening creates when it is empty).
pub fn exists(db: &Path) -> bool {
    is_url(db) || db.exists()
}

/// What may be shown of the store `db`: its path, or its URL without the
/// password.
pub fn shown(db: &Path) -> String {
    match db.to_str().filter(|p| url::is_postgres(p)) {
        Some(u) => url::redact(u),
        None => db.display().to_string(),
    }
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

/// The database: `--db`, else `$RTLAB_DB`, else
/// `$XDG_DATA_HOME/rtlab/rtlab.db`, else `~/.local/share/rtlab/rtlab.db`. A
/// `postgres://` URL is kept as it is; another URL (`scheme://…`) is refused
/// rather than taken for a file path.
pub fn default_path(flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = flag {
        refuse_url(p, "--db")?;
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(DB_ENV).filter(|p| !p.is_empty()) {
        refuse_url(Path::new(&p), DB_ENV)?;
        return Ok(PathBuf::from(p));
    }
    Ok(data_dir()?.join("rtlab").join("rtlab.db"))
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
fn data_dir() -> Result<PathBuf> {
    Ok(match std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local/share"),
            None => bail!(crate::error::UsageError(
                "no place for the results database: set HOME, XDG_DATA_HOME or RTLAB_DB, or pass --db PATH".into()
            )),
        },
    })
}

/// A store named by `flag` (`--to`, `--from`): its path or PostgreSQL URL;
/// another URL is refused.
pub fn other_store(flag: &str, p: &Path) -> Result<PathBuf> {
    refuse_url(p, flag)?;
    Ok(p.to_path_buf())
}

/// Refuses a database given (by `source`, `--db` or `RTLAB_DB`) as a URL that
/// is not PostgreSQL's, as libpq's `host=… dbname=…` form, or as
/// `postgres:` without its two slashes: none of them becomes a file name.
/// Only the scheme or the keywords are repeated, never the rest (it may hold
/// a password).
fn refuse_url(p: &Path, source: &str) -> Result<()> {
    let text = p.to_string_lossy();
    let sep = if source == DB_ENV { "=" } else { " " };
    let as_url = "write it as a URL, postgres://USER@HOST:PORT/DATABASE (the password in PGPASSWORD or in a password file of mode 0600: ~/.pgpass, or PGPASSFILE); nothing was written";
    if let Some(words) = url::libpq_keywords(&text) {
        bail!(UsageError(format!(
            "{source} names a PostgreSQL connection in libpq's keyword form ({}): {as_url}",
            words.join(" ")
        )));
    }
    if let Some(scheme) = url::slashless_postgres(&text) {
        bail!(UsageError(format!(
            "{source}{sep}{scheme}:… is not a PostgreSQL URL (it needs two slashes after '{scheme}:'): {as_url}"
        )));
    }
    let Some(scheme) = p.to_str().and_then(url::scheme) else {
        return Ok(());
    };
    if url::is_postgres(&format!("{scheme}://")) {
        return Ok(());
    }
    bail!(UsageError(format!(
        "{source} names {scheme}://…, a URL rtlab cannot store runs in: give a file's path (e.g. {source}{sep}~/rtlab.db) or a postgres://USER@HOST/DATABASE URL; nothing was written"
    )))
}

/// An open results store.
pub struct Store {
    conn: Box<dyn Conn>,
    /// The file, or the URL without its password.
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
    /// The campaign step it was saved as (a step of `rtlab run`, a file of
    /// an import), when it is one.
    pub step: Option<String>,
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

impl ListFilter {
    /// Whether it selects every run.
    pub fn is_everything(&self) -> bool {
        let none = [&self.label, &self.kind, &self.since, &self.tag, &self.until]
            .iter()
            .all(|f| f.is_none());
        none && self.campaign.is_none()
            && self.hosts.is_empty()
            && self.kernels.is_empty()
            && self.limit.is_none()
            && self.offset == 0
    }
}

/// How `column` matches `value`: `(before, after)` the placeholder, `=` or,
/// when `value` is a pattern (holds `%`), `LIKE` ignoring ASCII case (as
/// SQLite's LIKE does; lower() makes PostgreSQL agree).
fn match_op(column: &str, value: &str) -> (String, &'static str) {
    match value.contains('%') {
        true => (format!("lower({column}) LIKE lower("), ")"),
        false => (format!("{column} = "), ""),
    }
}

const ROW_COLUMNS: &str = "r.id, r.started_at, r.kind, r.label, r.status, r.samples, r.p99_ns,
    r.max_ns, r.misses, r.campaign, r.metrics,
    (SELECT string_agg(tag, '\n' ORDER BY tag) FROM tags t WHERE t.run_id = r.id),
    r.hostname, r.kernel_release,
    (SELECT m.step_name FROM campaign_runs m WHERE m.run_id = r.id)";

fn run_row(r: &Row) -> Result<RunRow> {
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
        step: r.get(14)?,
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
    /// The database file, or the PostgreSQL URL without its password: what
    /// messages show.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves a run in one transaction and returns its id.
    pub fn save(&mut self, run: &Run) -> Result<i64> {
        self.save_ready(Ready::of(run)?)
    }

    /// Saves a run made [`Ready`] in one transaction and returns its id.
    pub fn save_ready(&mut self, ready: Ready<'_>) -> Result<i64> {
        let (run, path) = (ready.run, self.path.display().to_string());
        // Numbers no measurement gives (percentiles out of order, counts that
        // disagree with their histogram) never reach the store.
        run.check_numbers()
            .with_context(|| format!("{path}: the run was not saved"))?;
        self.write(|c| {
            if let Some(id) = run.campaign {
                campaign::require(c, id, &path)?;
            }
            insert_run(c, run, None, ready.blobs)
        })
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
        let head = self.conn.query_opt(
            "SELECT record, label, status, campaign FROM runs WHERE id = ?1",
            args![id],
        )?;
        let Some(head) = head else {
            return Err(self.no_run(id));
        };
        let (record, label, status): (String, String, String) =
            (head.get(0)?, head.get(1)?, head.get(2)?);
        let campaign: Option<i64> = head.get(3)?;
        let mut run: Run = serde_json::from_str(&record)
            .with_context(|| format!("run {id} is damaged in {}", self.path.display()))?;
        run.id = Some(id);
        run.label = label;
        run.campaign = campaign;
        if let Some(s) = parse_status(&status) {
            run.status = s;
        }
        run.tags = self.tags(id)?;
        for row in self.conn.query(sql, args![id])? {
            let idx: i64 = row.get(0)?;
            let s = blob::from_column(&row.get(1)?)
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
        self.conn
            .query(
                "SELECT tag FROM tags WHERE run_id = ?1 ORDER BY tag",
                args![id],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// Runs matching every field of `f`, newest first.
    pub fn list_where(&self, f: &ListFilter) -> Result<Vec<RunRow>> {
        let mut sql = format!("SELECT {ROW_COLUMNS} FROM runs r WHERE 1 = 1");
        let mut args: Vec<Value> = Vec::new();
        let mut arg = |sql: &mut String, cond: &str, v: Value, close: &str| {
            args.push(v);
            sql.push_str(&format!(" AND {cond}?{}{close}", args.len()));
        };
        if let Some(l) = &f.label {
            let (op, close) = match_op("r.label", l);
            arg(&mut sql, &op, l.into(), close);
        }
        match f.kind.as_deref() {
            Some("bench") => sql.push_str(" AND r.kind LIKE 'bench.%'"),
            Some(k) => arg(&mut sql, "r.kind = ", k.into(), ""),
            None => {}
        }
        if let Some(s) = &f.since {
            arg(&mut sql, "r.started_at >= ", s.into(), "");
        }
        if let Some(t) = &f.tag {
            let cond = "EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = ";
            arg(&mut sql, cond, t.into(), ")");
        }
        if let Some(c) = f.campaign {
            arg(&mut sql, "r.campaign = ", c.into(), "");
        }
        if let Some(u) = &f.until {
            arg(&mut sql, "r.started_at < ", u.into(), "");
        }
        for (column, values) in [("r.hostname", &f.hosts), ("r.kernel_release", &f.kernels)] {
            if values.is_empty() {
                continue;
            }
            // Any one of the values: (c = ?1 OR lower(c) LIKE lower(?2) ...).
            let mut any = Vec::new();
            for v in values {
                args.push(v.into());
                let (op, close) = match_op(column, v);
                any.push(format!("{op}?{}{close}", args.len()));
            }
            sql.push_str(&format!(" AND ({})", any.join(" OR ")));
        }
        sql.push_str(" ORDER BY r.id DESC");
        let mut page = |clause: &str, n: usize| {
            args.push(i64::try_from(n).unwrap_or(i64::MAX).into());
            sql.push_str(&format!(" {clause} ?{}", args.len()));
        };
        if let Some(n) = f.limit {
            page("LIMIT", n);
            if f.offset > 0 {
                page("OFFSET", f.offset);
            }
        }
        self.conn.query(&sql, &args)?.iter().map(run_row).collect()
    }

    /// Checks that every id exists; names the first that does not.
    fn require_runs(c: &dyn Conn, ids: &[i64], path: &str) -> Result<()> {
        for &id in ids {
            if c.query_opt("SELECT id FROM runs WHERE id = ?1", args![id])?
                .is_none()
            {
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
        self.write(|c| {
            Self::require_runs(c, ids, &path)?;
            let mut n = 0;
            for &id in ids {
                n += c.execute("DELETE FROM runs WHERE id = ?1", args![id])?;
            }
            Ok(n as usize)
        })
    }

    /// Adds tags to a run (tags it already has are kept once).
    pub fn add_tags(&mut self, id: i64, tags: &[String]) -> Result<()> {
        let path = self.path.display().to_string();
        self.write(|c| {
            Self::require_runs(c, &[id], &path)?;
            tags.iter().try_for_each(|t| add_tag(c, id, t))
        })
    }

    /// Removes tags from a run; returns how many it had.
    pub fn remove_tags(&mut self, id: i64, tags: &[String]) -> Result<usize> {
        let path = self.path.display().to_string();
        self.write(|c| {
            Self::require_runs(c, &[id], &path)?;
            let mut n = 0;
            for t in tags {
                n += c.execute(
                    "DELETE FROM tags WHERE run_id = ?1 AND tag = ?2",
                    args![id, t],
                )?;
            }
            Ok(n as usize)
        })
    }

    /// Gives a run a new label.
    pub fn set_label(&mut self, id: i64, label: &str) -> Result<()> {
        let path = self.path.display().to_string();
        self.write(|c| {
            Self::require_runs(c, &[id], &path)?;
            set_record_field(c, id, "label", label.into())?;
            c.execute("UPDATE runs SET label = ?2 WHERE id = ?1", args![id, label])?;
            Ok(())
        })
    }
}

/// Tags run `id` with `tag`, once.
fn add_tag(c: &dyn Conn, id: i64, tag: &str) -> Result<()> {
    c.execute(
        "INSERT INTO tags (run_id, tag) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        args![id, tag],
    )?;
    Ok(())
}

/// Sets `field` of run `id`'s stored record (its JSON) to `value`.
fn set_record_field(c: &dyn Conn, id: i64, field: &str, value: serde_json::Value) -> Result<()> {
    let record: String = c
        .query_one("SELECT record FROM runs WHERE id = ?1", args![id])?
        .get(0)?;
    let mut json: serde_json::Value =
        serde_json::from_str(&record).with_context(|| format!("run {id} has a damaged record"))?;
    if let Some(o) = json.as_object_mut() {
        o.insert(field.to_string(), value);
    }
    c.execute(
        "UPDATE runs SET record = ?2 WHERE id = ?1",
        args![id, serde_json::to_string(&json)?],
    )?;
    Ok(())
}

/// A run ready to be saved: its series in their stored form (see
/// [`series_blobs`]). Made before the store is opened, so that the memory of
/// encoding them and the store's own are never held at once.
pub struct Ready<'a> {
    run: &'a Run,
    blobs: Vec<Vec<u8>>,
}

impl<'a> Ready<'a> {
    /// Encodes the series of `run`.
    pub fn of(run: &'a Run) -> Result<Ready<'a>> {
        Ok(Ready {
            run,
            blobs: series_blobs(run)?,
        })
    }
}

/// The stored form of each series of `run`, its threads' then its total.
fn series_blobs(run: &Run) -> Result<Vec<Vec<u8>>> {
    run.series
        .iter()
        .chain(&run.total)
        .map(blob::to_blob)
        .collect()
}

/// Inserts `run` (header, tags, series as `blobs`, from [`series_blobs`]) with
/// `uuid`, or a new one, and returns its id. Its campaign, if any, must exist.
fn insert_run(c: &dyn Conn, run: &Run, uuid: Option<&str>, blobs: Vec<Vec<u8>>) -> Result<i64> {
    let total = run.total.as_ref();
    let mut header = run.clone();
    header.id = None;
    header.series = Vec::new();
    header.total = None;
    let uuid = match uuid {
        Some(u) => u.to_string(),
        None => db::new_uuid()?,
    };
    let id: i64 = c
        .query_one(
            "INSERT INTO runs (kind, label, status, exit_code, campaign, started_at, ended_at,
                duration_ns, kernel_release, preempt, hostname, samples, p99_ns, max_ns,
                misses, record, metrics, uuid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18)
             RETURNING id",
            args![
                &run.kind,
                &run.label,
                run.status.name(),
                i64::from(run.exit_code),
                run.campaign,
                &run.started_at,
                &run.ended_at,
                run.duration_ns as i64,
                &run.fingerprint.kernel_release,
                run.fingerprint.preempt.name(),
                &run.fingerprint.hostname,
                total.map(|t| t.counters.samples as i64),
                total
                    .filter(|_| crate::step::reports(run, "p99_ns"))
                    .map(|t| t.summary.p99_ns as i64),
                total.map(|t| t.summary.max_ns as i64),
                total
                    .filter(|_| crate::step::reports(run, "deadline_misses"))
                    .map(|t| t.counters.deadline_misses as i64),
                serde_json::to_string(&header)?,
                serde_json::to_string(&run.metrics)?,
                uuid,
            ],
        )?
        .get(0)?;
    for tag in &run.tags {
        add_tag(c, id, tag)?;
    }
    let all = run.series.iter().enumerate().map(|(i, s)| (i as i64, s));
    for ((idx, s), blob) in all.chain(total.map(|t| (-1, t))).zip(blobs) {
        insert_series(c, id, idx, s, blob)?;
    }
    Ok(id)
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

fn insert_series(c: &dyn Conn, run: i64, idx: i64, s: &Series, data: Vec<u8>) -> Result<()> {
    let m = &s.summary;
    c.execute(
        "INSERT INTO series (run_id, idx, name, samples, overruns, misses, overflows,
            min_ns, mean_ns, stddev_ns, p50_ns, p90_ns, p95_ns, p99_ns, p999_ns, p9999_ns, max_ns, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        args![
            run,
            idx,
            &s.name,
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

// Shared with the integration tests, which use all of it.
#[cfg(all(test, feature = "postgres"))]
#[allow(dead_code)]
#[path = "../../tests/cli/pg_cluster.rs"]
mod pg_cluster;
#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
