//! The fleet's aggregate queries (`rtlab serve`, on a store opened read-only): the hosts
//! a store knows, the latest row of each host's and CPU's series, the worst
//! maximum per host since a time, and each campaign's runs by kind.
//!
//! Plain SQL with numbered parameters; aggregates are cast to BIGINT. On the
//! windows table every query is a seek or a range of an existing index
//! (`windows(level, host, cpu, start_ns)`, `windows(level, end_ns)`): the
//! series are found one at a time by seeking past the previous one, so their
//! cost grows with the number of series, not of rows.

use super::db::args;
use super::windows::{window_row, Level, Window, COLUMNS};
use super::Store;
use anyhow::Result;
use std::collections::BTreeMap;

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
    /// The series (host, CPU) of `level` after `after`, in order: one seek each.
    fn next_series(
        &self,
        level: Level,
        after: Option<&(String, i64)>,
    ) -> Result<Option<(String, i64)>> {
        let lv = level.name();
        if let Some((host, cpu)) = after {
            let cpu: Option<i64> = self
                .conn
                .query_one(
                    "SELECT CAST(MIN(cpu) AS BIGINT) FROM windows WHERE level = ?1 AND host = ?2 AND cpu > ?3",
                    args![lv, host, *cpu],
                )?
                .get(0)?;
            if let Some(cpu) = cpu {
                return Ok(Some((host.clone(), cpu)));
            }
        }
        let host: Option<String> = match after {
            Some((h, _)) => self.conn.query_one(
                "SELECT MIN(host) FROM windows WHERE level = ?1 AND host > ?2",
                args![lv, h],
            )?,
            None => self
                .conn
                .query_one("SELECT MIN(host) FROM windows WHERE level = ?1", args![lv])?,
        }
        .get(0)?;
        let Some(host) = host else { return Ok(None) };
        let cpu: i64 = self
            .conn
            .query_one(
                "SELECT CAST(MIN(cpu) AS BIGINT) FROM windows WHERE level = ?1 AND host = ?2",
                args![lv, &host],
            )?
            .get(0)?;
        Ok(Some((host, cpu)))
    }

    /// The newest row of a series at one level.
    fn newest(&self, level: Level, host: &str, cpu: i64) -> Result<Option<Window>> {
        let sql = format!(
            "SELECT id, {COLUMNS} FROM windows WHERE level = ?1 AND host = ?2 AND cpu = ?3
             ORDER BY start_ns DESC LIMIT 1"
        );
        let row = self.conn.query_opt(&sql, args![level.name(), host, cpu])?;
        Ok(row.map(|r| window_row(&r)).transpose()?.map(|(_, w)| w))
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
        for level in LEVELS {
            let rows = self.conn.query(
                "SELECT host, CAST(MAX(max_ns) AS BIGINT) FROM windows
                 WHERE level = ?1 AND end_ns >= ?2 GROUP BY host",
                args![level.name(), since_ns],
            )?;
            for row in rows {
                let (host, max): (String, i64) = (row.get(0)?, row.get(1)?);
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
        let sql = format!(
            "SELECT id, {COLUMNS} FROM windows
             WHERE level = ?1 AND host = ?2 AND start_ns >= ?3
             ORDER BY start_ns DESC, cpu DESC LIMIT ?4"
        );
        let rows = self
            .conn
            .query(&sql, args![level.name(), host, since_ns, limit])?;
        let mut out = rows
            .iter()
            .map(|r| window_row(r).map(|(_, w)| w))
            .collect::<Result<Vec<_>>>()?;
        out.reverse();
        Ok(out)
    }

    /// Every host of the store (its runs' and its series'), with its kernel
    /// and how many runs it has, by name.
    pub fn hosts(&self, latest: &[Window]) -> Result<Vec<HostRow>> {
        let mut hosts: BTreeMap<String, HostRow> = BTreeMap::new();
        let rows = self.conn.query(
            "SELECT r.hostname, r.kernel_release, c.n FROM runs r
             JOIN (SELECT hostname, CAST(MAX(id) AS BIGINT) AS newest, CAST(COUNT(*) AS BIGINT) AS n
                   FROM runs GROUP BY hostname) c ON r.id = c.newest",
            &[],
        )?;
        for r in rows {
            let row = HostRow {
                host: r.get(0)?,
                kernel: r.get(1)?,
                runs: r.get(2)?,
            };
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
        let rows = self.conn.query(
            "SELECT r.campaign, r.kind, CAST(COUNT(*) AS BIGINT) FROM runs r
             WHERE r.campaign IN (SELECT id FROM campaigns ORDER BY id DESC LIMIT ?1)
             GROUP BY r.campaign, r.kind ORDER BY r.campaign DESC, r.kind",
            args![limit],
        )?;
        rows.iter()
            .map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .collect()
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
