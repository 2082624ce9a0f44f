//! Read-only access and the fleet's aggregate queries (`rtlab serve`): the hosts
//! a store knows, the latest row of each host's and CPU's series, the worst
//! maximum per host since a time, and each campaign's runs by kind.
//!
//! Plain SQL with numbered parameters; aggregates are cast to BIGINT. On the
//! windows table every query is a seek or a range of an existing index
//! (`windows(level, host, cpu, start_ns)`, `windows(level, end_ns)`): the
//! series are found one at a time by seeking past the previous one, so their
//! cost grows with the number of series, not of rows.

use super::schema::{self, Identity};
use super::windows::{window_row, Level, Window, COLUMNS};
use super::{store_error, Store};
use crate::error::UsageError;
use anyhow::{bail, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How long a read waits for a writer that holds the file (a monitor or a run
/// writing at the same time reads as the last committed state under WAL).
const READ_PATIENCE: Duration = Duration::from_secs(5);

const LEVELS: [Level; 3] = [Level::Window, Level::Hour, Level::Day];

/// One host as the fleet overview shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRow {
    pub host: String,
    /// The kernel of its newest window, else of its newest run.
    pub kernel: String,
    /// Runs stored from it.
    pub runs: i64,
}

impl Store {
    /// Opens an existing store for reading only: SQLite opens the file
    /// read-only, nothing is created, migrated or checkpointed. A store of an
    /// older rtlab is refused (a read-only store cannot be migrated), as are
    /// what [`Store::open`] refuses.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| store_error(path, READ_PATIENCE, e.into()))?;
        conn.busy_timeout(READ_PATIENCE)?;
        let found = Identity::read(&conn)
            .map_err(|e| store_error(path, READ_PATIENCE, e.into()))?
            .judge()
            .map_err(|r| store_error(path, READ_PATIENCE, r.into()))?;
        if !found.is_current() {
            bail!(UsageError(format!(
                "{} is not a current rtlab store (schema version {} is needed); open it once for writing (e.g. rtlab --db {} results list) to bring it up to date",
                path.display(),
                schema::SCHEMA_VERSION,
                path.display()
            )));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The series (host, CPU) of `level` after `after`, in order: one seek each.
    fn next_series(
        &self,
        level: Level,
        after: Option<&(String, i64)>,
    ) -> Result<Option<(String, i64)>> {
        let lv = level.name();
        if let Some((host, cpu)) = after {
            let cpu: Option<i64> = self.conn.query_row(
                "SELECT CAST(MIN(cpu) AS BIGINT) FROM windows WHERE level = ?1 AND host = ?2 AND cpu > ?3",
                params![lv, host, cpu],
                |r| r.get(0),
            )?;
            if let Some(cpu) = cpu {
                return Ok(Some((host.clone(), cpu)));
            }
        }
        let host: Option<String> = match after {
            Some((h, _)) => self.conn.query_row(
                "SELECT MIN(host) FROM windows WHERE level = ?1 AND host > ?2",
                params![lv, h],
                |r| r.get(0),
            )?,
            None => self.conn.query_row(
                "SELECT MIN(host) FROM windows WHERE level = ?1",
                params![lv],
                |r| r.get(0),
            )?,
        };
        let Some(host) = host else { return Ok(None) };
        let cpu: i64 = self.conn.query_row(
            "SELECT CAST(MIN(cpu) AS BIGINT) FROM windows WHERE level = ?1 AND host = ?2",
            params![lv, host],
            |r| r.get(0),
        )?;
        Ok(Some((host, cpu)))
    }

    /// The newest row of a series at one level.
    fn newest(&self, level: Level, host: &str, cpu: i64) -> Result<Option<Window>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT id, {COLUMNS} FROM windows WHERE level = ?1 AND host = ?2 AND cpu = ?3
                     ORDER BY start_ns DESC LIMIT 1"
                ),
                params![level.name(), host, cpu],
                window_row,
            )
            .optional()?
            .map(|(_, w)| w))
    }

    /// The newest row of every host's and CPU's series (a window; when its
    /// windows were all merged, its newest hourly or daily row), by host and CPU.
    pub fn latest_windows(&self) -> Result<Vec<Window>> {
        let mut latest: BTreeMap<(String, i64), Window> = BTreeMap::new();
        for level in LEVELS {
            let mut at = None;
            while let Some(series) = self.next_series(level, at.as_ref())? {
                if let Some(w) = self.newest(level, &series.0, series.1)? {
                    let newer = latest.get(&series).is_none_or(|o| w.end_ns > o.end_ns);
                    if newer {
                        latest.insert(series.clone(), w);
                    }
                }
                at = Some(series);
            }
        }
        Ok(latest.into_values().collect())
    }

    /// The largest maximum (ns) of each host over the rows that end at or after
    /// `since_ns`, every level.
    pub fn worst_since(&self, since_ns: i64) -> Result<BTreeMap<String, i64>> {
        let mut worst: BTreeMap<String, i64> = BTreeMap::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT host, CAST(MAX(max_ns) AS BIGINT) FROM windows
             WHERE level = ?1 AND end_ns >= ?2 GROUP BY host",
        )?;
        for level in LEVELS {
            let rows = stmt.query_map(params![level.name(), since_ns], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?;
            for row in rows {
                let (host, max) = row?;
                let w = worst.entry(host).or_insert(max);
                *w = (*w).max(max);
            }
        }
        Ok(worst)
    }

    /// The newest rows of one host's series at `level` ending at or after
    /// `since_ns`, at most `limit`, oldest first.
    pub fn series_tail(
        &self,
        host: &str,
        level: Level,
        since_ns: i64,
        limit: usize,
    ) -> Result<Vec<Window>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT id, {COLUMNS} FROM windows
             WHERE level = ?1 AND host = ?2 AND start_ns >= ?3
             ORDER BY start_ns DESC, cpu DESC LIMIT ?4"
        ))?;
        let rows = stmt.query_map(
            params![level.name(), host, since_ns, limit as i64],
            window_row,
        )?;
        let mut out = rows
            .map(|r| r.map(|(_, w)| w))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }

    /// Every host of the store (its runs' and its series'), with its kernel
    /// and how many runs it has, by name.
    pub fn hosts(&self, latest: &[Window]) -> Result<Vec<HostRow>> {
        let mut hosts: BTreeMap<String, HostRow> = BTreeMap::new();
        let mut stmt = self.conn.prepare(
            "SELECT r.hostname, r.kernel_release, c.n FROM runs r
             JOIN (SELECT hostname, CAST(MAX(id) AS BIGINT) AS newest, CAST(COUNT(*) AS BIGINT) AS n
                   FROM runs GROUP BY hostname) c ON r.id = c.newest",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(HostRow {
                host: r.get(0)?,
                kernel: r.get(1)?,
                runs: r.get(2)?,
            })
        })?;
        for row in rows {
            let row = row?;
            hosts.insert(row.host.clone(), row);
        }
        // The kernel of each host's newest row.
        let mut newest: BTreeMap<&str, &Window> = BTreeMap::new();
        for w in latest {
            let e = newest.entry(&w.host).or_insert(w);
            if w.end_ns > e.end_ns {
                *e = w;
            }
        }
        for (host, w) in newest {
            hosts
                .entry(host.to_string())
                .and_modify(|h| h.kernel.clone_from(&w.kernel))
                .or_insert_with(|| HostRow {
                    host: host.to_string(),
                    kernel: w.kernel.clone(),
                    runs: 0,
                });
        }
        Ok(hosts.into_values().collect())
    }

    /// The runs of each of the newest `limit` campaigns by kind: (campaign,
    /// kind, runs), newest campaign first.
    pub fn campaign_kinds(&self, limit: usize) -> Result<Vec<(i64, String, i64)>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.campaign, r.kind, CAST(COUNT(*) AS BIGINT) FROM runs r
             WHERE r.campaign IN (SELECT id FROM campaigns ORDER BY id DESC LIMIT ?1)
             GROUP BY r.campaign, r.kind ORDER BY r.campaign DESC, r.kind",
        )?;
        let rows = stmt.query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
