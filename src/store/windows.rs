//! Monitor windows: one row per closed window of `rtlab monitor` (per CPU), and
//! the hourly and daily rows that retention merges old windows into. Times are
//! Unix ns (UTC); a row's histogram is the probe's HdrHistogram in portable form.

use super::db::{args, Conn, Row, Value};
use super::Store;
use anyhow::Result;
use rtlab_engine::stats::hist::{HistogramData, LatencyHistogram};
use std::collections::BTreeMap;

/// Version 5: monitor windows.
pub(super) const V5: &str = "CREATE TABLE windows (
        id {ID},
        level TEXT NOT NULL,
        session TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        cpu BIGINT NOT NULL,
        start_ns BIGINT NOT NULL,
        end_ns BIGINT NOT NULL,
        partial BIGINT NOT NULL,
        windows BIGINT NOT NULL,
        samples BIGINT NOT NULL,
        overruns BIGINT NOT NULL,
        misses BIGINT NOT NULL,
        min_ns BIGINT NOT NULL,
        p50_ns BIGINT NOT NULL,
        p99_ns BIGINT NOT NULL,
        p999_ns BIGINT NOT NULL,
        max_ns BIGINT NOT NULL,
        max_at_ns BIGINT NOT NULL,
        hist TEXT NOT NULL
    );
    CREATE INDEX windows_series ON windows(level, host, cpu, start_ns);
    CREATE INDEX windows_end ON windows(level, end_ns);";

/// Version 6: one host's windows since a time (`results windows --host H
/// --since T`, the pages of `rtlab serve`) found by an index range.
pub(super) const V6: &str = "CREATE INDEX windows_host_end ON windows(host, end_ns);";

/// Version 8: the rows of a time range by level carry their host and maximum
/// in the index, so that the fleet page's counts per host (the worst of a day,
/// a week's rows within each budget) read the index alone, not the rows and
/// their histograms.
pub(super) const V8: &str = "DROP INDEX windows_end;
    CREATE INDEX windows_end ON windows(level, end_ns, host, max_ns);";

const HOUR_NS: i64 = 3_600_000_000_000;
const DAY_NS: i64 = 24 * HOUR_NS;

/// What a row stands for: one window, or the windows of an hour or a day merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Level {
    Window,
    Hour,
    Day,
}

impl Level {
    /// The name stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Level::Window => "window",
            Level::Hour => "hour",
            Level::Day => "day",
        }
    }

    pub(super) fn parse(name: &str) -> Level {
        match name {
            "hour" => Level::Hour,
            "day" => Level::Day,
            _ => Level::Window,
        }
    }
}

/// One row of the series of one host and CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub level: Level,
    /// The monitor process that measured it (the last one, for merged rows).
    pub session: String,
    pub host: String,
    pub kernel: String,
    /// The measured CPU (-1: a thread not pinned).
    pub cpu: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Cut short by the end of the monitor (SIGTERM, Ctrl-C, --duration).
    pub partial: bool,
    /// Windows merged into this row (1 for a window).
    pub windows: i64,
    pub samples: i64,
    pub overruns: i64,
    pub misses: i64,
    pub min_ns: i64,
    pub p50_ns: i64,
    pub p99_ns: i64,
    pub p999_ns: i64,
    /// The largest latency, exact (the histogram keeps 3 digits).
    pub max_ns: i64,
    /// When it happened (Unix ns).
    pub max_at_ns: i64,
    pub hist: HistogramData,
}

impl Window {
    /// Sets the percentiles from `hist` (and stores it).
    pub fn set_hist(&mut self, hist: &LatencyHistogram) {
        let q = |q: f64| i64::try_from(hist.value_at_quantile(q)).unwrap_or(i64::MAX);
        self.p50_ns = q(0.5);
        self.p99_ns = q(0.99);
        self.p999_ns = q(0.999);
        self.hist = hist.to_data();
    }

    /// Numbers no monitor writes (a window that ends before it starts, counts
    /// below zero, percentiles out of order) are refused on copy.
    pub(super) fn check(&self) -> Result<(), String> {
        let counts = [self.samples, self.overruns, self.misses];
        if self.end_ns < self.start_ns {
            Err("it ends before it starts".into())
        } else if self.windows < 1 || counts.iter().any(|&n| n < 0) {
            Err("negative counts".into())
        } else if !(self.p50_ns <= self.p99_ns && self.p99_ns <= self.p999_ns) {
            Err("percentiles out of order".into())
        } else if self.samples > 0 && self.min_ns > self.max_ns {
            Err("its minimum is above its maximum".into())
        } else if [&self.host, &self.kernel, &self.session]
            .iter()
            .any(|s| s.chars().count() > crate::record::MAX_NAME_CHARS)
        {
            Err(format!(
                "its host, kernel or session is over {} characters long",
                crate::record::MAX_NAME_CHARS
            ))
        } else {
            Ok(())
        }
    }

    /// Adds `o` into this row: counts summed, the larger maximum, merged histograms.
    fn absorb(&mut self, o: &Window) {
        self.windows += o.windows;
        self.samples += o.samples;
        self.overruns += o.overruns;
        self.misses += o.misses;
        if o.samples > 0 {
            self.min_ns = if self.samples == o.samples {
                o.min_ns
            } else {
                self.min_ns.min(o.min_ns)
            };
        }
        if o.max_ns > self.max_ns {
            self.max_ns = o.max_ns;
            self.max_at_ns = o.max_at_ns;
        }
        self.session.clone_from(&o.session);
        let mut h = LatencyHistogram::from_data(&self.hist);
        h.merge(&LatencyHistogram::from_data(&o.hist));
        self.set_hist(&h);
    }
}

/// How long each level is kept (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub windows_ns: i64,
    pub hourly_ns: i64,
    pub daily_ns: i64,
}

/// What one retention pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Windows merged into hourly rows.
    pub to_hourly: usize,
    /// Hourly rows merged into daily rows.
    pub to_daily: usize,
    /// Daily rows deleted.
    pub deleted: usize,
}

/// Which rows [`Store::windows`] returns.
#[derive(Debug, Clone, Default)]
pub struct WindowFilter {
    pub since_ns: Option<i64>,
    pub cpu: Option<i64>,
    pub host: Option<String>,
    pub level: Option<Level>,
}

pub(super) const COLUMNS: &str =
    "level, session, host, kernel, cpu, start_ns, end_ns, partial, windows,
    samples, overruns, misses, min_ns, p50_ns, p99_ns, p999_ns, max_ns, max_at_ns, hist";

pub(super) fn window_row(r: &Row) -> Result<(i64, Window)> {
    let level: String = r.get(1)?;
    let hist: String = r.get(19)?;
    Ok((
        r.get(0)?,
        Window {
            level: Level::parse(&level),
            session: r.get(2)?,
            host: r.get(3)?,
            kernel: r.get(4)?,
            cpu: r.get(5)?,
            start_ns: r.get(6)?,
            end_ns: r.get(7)?,
            partial: r.get(8)?,
            windows: r.get(9)?,
            samples: r.get(10)?,
            overruns: r.get(11)?,
            misses: r.get(12)?,
            min_ns: r.get(13)?,
            p50_ns: r.get(14)?,
            p99_ns: r.get(15)?,
            p999_ns: r.get(16)?,
            max_ns: r.get(17)?,
            max_at_ns: r.get(18)?,
            // Written by `insert` from a HistogramData; a hand-edited value reads
            // as an empty histogram rather than failing the series.
            hist: serde_json::from_str(&hist).unwrap_or_default(),
        },
    ))
}

/// Rows written per statement by [`insert_all`] (19 values each: well under
/// either backend's limit on a statement's values).
const INSERT_ROWS: usize = 100;

pub(super) fn insert(c: &dyn Conn, w: &Window) -> Result<()> {
    insert_all(c, &[w])
}

/// `rows` rows of placeholders numbered on from `?1`, one per entry of
/// `types`: `(?1, ?2), (?3, ?4)`; an entry that names a type casts its value
/// to it (`CAST(?1 AS TEXT)`).
pub(super) fn value_rows(rows: usize, types: &[&str]) -> String {
    let row = |i: usize| {
        let at = |j: usize, t: &&str| match (i * types.len() + j + 1, *t) {
            (n, "") => format!("?{n}"),
            (n, t) => format!("CAST(?{n} AS {t})"),
        };
        let p: Vec<String> = types.iter().enumerate().map(|(j, t)| at(j, t)).collect();
        format!("({})", p.join(", "))
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

/// Inserts `ws`, [`INSERT_ROWS`] to a statement.
pub(super) fn insert_all(c: &dyn Conn, ws: &[&Window]) -> Result<()> {
    for chunk in ws.chunks(INSERT_ROWS) {
        let mut values = Vec::with_capacity(chunk.len() * 19);
        for w in chunk {
            values.extend_from_slice(args![
                w.level.name(),
                &w.session,
                &w.host,
                &w.kernel,
                w.cpu,
                w.start_ns,
                w.end_ns,
                w.partial,
                w.windows,
                w.samples,
                w.overruns,
                w.misses,
                w.min_ns,
                w.p50_ns,
                w.p99_ns,
                w.p999_ns,
                w.max_ns,
                w.max_at_ns,
                serde_json::to_string(&w.hist)?,
            ]);
        }
        let rows = value_rows(chunk.len(), &[""; 19]);
        let sql = format!("INSERT INTO windows ({COLUMNS}) VALUES {rows}");
        c.execute(&sql, &values)?;
    }
    Ok(())
}

/// The condition of a [`WindowFilter`]: only the filters it sets, so that
/// an index can serve them (`windows_host_end`, `windows_series`), with their
/// values as `?1`, `?2`, ... in order ("TRUE" when it sets none).
fn filter(f: &WindowFilter) -> (String, Vec<Value>) {
    let given: [(&str, Option<Value>); 4] = [
        ("end_ns >= ", f.since_ns.map(Value::from)),
        ("cpu = ", f.cpu.map(Value::from)),
        ("host = ", f.host.as_ref().map(Value::from)),
        ("level = ", f.level.map(|l| Value::from(l.name()))),
    ];
    let (mut terms, mut args) = (Vec::new(), Vec::new());
    for (term, value) in given {
        if let Some(v) = value {
            args.push(v);
            terms.push(format!("{term}?{}", args.len()));
        }
    }
    if terms.is_empty() {
        terms.push("TRUE".into());
    }
    (terms.join(" AND "), args)
}

/// Rows of one level merged per retention pass at most, so that a pass after a
/// long pause stays short; the next passes take the rest.
pub const PASS_ROWS: usize = 2000;

impl Store {
    /// Saves the windows closed at one moment (one per CPU) in one transaction.
    pub fn save_windows(&mut self, windows: &[Window]) -> Result<()> {
        self.write(|c| insert_all(c, &windows.iter().collect::<Vec<_>>()))
    }

    /// The rows `f` selects, oldest first (then by CPU).
    pub fn windows(&self, f: &WindowFilter) -> Result<Vec<Window>> {
        let (cond, args) = filter(f);
        let sql =
            format!("SELECT id, {COLUMNS} FROM windows WHERE {cond} ORDER BY start_ns, cpu, level");
        let rows = self.conn.query(&sql, &args)?;
        rows.iter().map(|r| Ok(window_row(r)?.1)).collect()
    }

    /// At most `limit` rows `f` selects whose id is above `after`, by id, with
    /// their ids: a long series read a page at a time.
    pub(super) fn windows_after(
        &self,
        f: &WindowFilter,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Window)>> {
        let (cond, mut args) = filter(f);
        let (a, l) = (args.len() + 1, args.len() + 2);
        let sql = format!(
            "SELECT id, {COLUMNS} FROM windows WHERE {cond} AND id > ?{a} ORDER BY id LIMIT ?{l}"
        );
        args.extend([after.into(), limit.into()]);
        self.conn
            .query(&sql, &args)?
            .iter()
            .map(window_row)
            .collect()
    }

    /// Retention at `now_ns`: windows older than `r.windows_ns` merged into hourly
    /// rows, hourly rows older than `r.hourly_ns` into daily rows, daily rows older
    /// than `r.daily_ns` deleted; at most `budget` rows of each level per call, in
    /// one transaction.
    pub fn downsample(&mut self, now_ns: i64, r: &Retention, budget: usize) -> Result<Pruned> {
        self.write(|c| {
            let to_hourly = merge_level(c, Level::Window, now_ns - r.windows_ns, budget)?;
            let to_daily = merge_level(c, Level::Hour, now_ns - r.hourly_ns, budget)?;
            let deleted = c.execute(
                "DELETE FROM windows WHERE id IN
                 (SELECT id FROM windows WHERE level = 'day' AND end_ns < ?1 LIMIT ?2)",
                args![now_ns - r.daily_ns, budget],
            )? as usize;
            Ok(Pruned {
                to_hourly,
                to_daily,
                deleted,
            })
        })
    }
}

/// Merges the rows of `from` that ended before `cutoff_ns` into the rows of the
/// next level (an hour or a UTC day per host, kernel and CPU), and deletes them.
fn merge_level(tx: &dyn Conn, from: Level, cutoff_ns: i64, budget: usize) -> Result<usize> {
    let (to, span) = match from {
        Level::Window => (Level::Hour, HOUR_NS),
        _ => (Level::Day, DAY_NS),
    };
    let old: Vec<(i64, Window)> = tx
        .query(
            &format!(
                "SELECT id, {COLUMNS} FROM windows WHERE level = ?1 AND end_ns < ?2
                 ORDER BY start_ns LIMIT ?3"
            ),
            args![from.name(), cutoff_ns, budget],
        )?
        .iter()
        .map(window_row)
        .collect::<Result<_>>()?;
    let mut merged: BTreeMap<(String, String, i64, i64), Window> = BTreeMap::new();
    for (id, w) in &old {
        let bucket = w.start_ns - w.start_ns.rem_euclid(span);
        let key = (w.host.clone(), w.kernel.clone(), w.cpu, bucket);
        match merged.get_mut(&key) {
            Some(m) => m.absorb(w),
            None => {
                let existing = tx
                    .query_opt(
                        &format!(
                            "SELECT id, {COLUMNS} FROM windows WHERE level = ?1 AND host = ?2
                             AND kernel = ?3 AND cpu = ?4 AND start_ns = ?5"
                        ),
                        args![to.name(), &key.0, &key.1, key.2, bucket],
                    )?
                    .map(|r| window_row(&r))
                    .transpose()?;
                let m = match existing {
                    Some((eid, mut e)) => {
                        tx.execute("DELETE FROM windows WHERE id = ?1", args![eid])?;
                        e.absorb(w);
                        e
                    }
                    None => Window {
                        level: to,
                        start_ns: bucket,
                        end_ns: bucket + span,
                        partial: false,
                        ..w.clone()
                    },
                };
                merged.insert(key, m);
            }
        }
        tx.execute("DELETE FROM windows WHERE id = ?1", args![*id])?;
    }
    for m in merged.values() {
        insert(tx, m)?;
    }
    Ok(old.len())
}

#[cfg(test)]
#[path = "windows_tests.rs"]
mod tests;
