//! The fleet's aggregate queries (`rtlab serve`, on a store opened read-only): the hosts
//! a store knows, the latest row of each host's and CPU's series, the worst
//! maximum per host since a time, each host's latency evidence (its monitor
//! rows and latency runs of a week, counted against budgets), and each
//! campaign's runs by kind.
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

/// A week before a time (ns).
const WEEK_NS: i64 = 7 * 86_400_000_000_000;

/// Units of evidence (monitor rows, or runs) counted against budgets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Count {
    /// How many there are.
    pub n: i64,
    /// Of them, how many have a maximum within each budget (in the budgets'
    /// order).
    pub within: Vec<i64>,
    /// The largest maximum (ns).
    pub worst_ns: Option<i64>,
}

impl Count {
    fn add(&mut self, other: &Count) {
        self.n += other.n;
        if self.within.len() < other.within.len() {
            self.within.resize(other.within.len(), 0);
        }
        for (w, o) in self.within.iter_mut().zip(&other.within) {
            *w += o;
        }
        self.worst_ns = self.worst_ns.max(other.worst_ns);
    }
}

/// What a host's latency verdicts rest on: its monitor rows (a window, or
/// an hour or a day of them merged) that end in a week, and its latency runs
/// that start in it. The week is the last one; for a host with nothing in
/// it, the week to its newest row or run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// The week's start and end (Unix ns).
    pub from_ns: i64,
    pub to_ns: i64,
    /// Its monitor rows.
    pub rows: Count,
    /// Its latency runs.
    pub runs: Count,
}

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

    /// The [`Evidence`] of each of `hosts` against `budgets_ns`, the week to
    /// `now_ns` (the week to its newest evidence when it has none in that
    /// one; `latest` is every series' newest row, [`Store::latest_windows`]);
    /// runs count when their kind is `kind` (the latency probe's: their
    /// maximum is a wake-up latency, as a monitor row's is).
    pub fn evidence(
        &self,
        now_ns: i64,
        budgets_ns: &[u64],
        kind: &str,
        latest: &[Window],
        hosts: &[HostRow],
    ) -> Result<BTreeMap<String, Evidence>> {
        let since = now_ns.saturating_sub(WEEK_NS);
        let mut out: BTreeMap<String, Evidence> = BTreeMap::new();
        let week = |to_ns: i64| Evidence {
            from_ns: to_ns.saturating_sub(WEEK_NS),
            to_ns,
            ..Evidence::default()
        };
        for level in LEVELS {
            let rows = self.counted(WEEK_ROWS, &[level.name().into(), since.into()], budgets_ns)?;
            for (host, c) in rows {
                out.entry(host).or_insert_with(|| week(now_ns)).rows.add(&c);
            }
        }
        let runs = self.counted(
            "SELECT hostname, {COUNTS} FROM runs
             WHERE kind = ?1 AND max_ns IS NOT NULL AND started_at >= ?2 GROUP BY hostname",
            &[kind.into(), rfc3339(since).into()],
            budgets_ns,
        )?;
        for (host, c) in runs {
            out.entry(host).or_insert_with(|| week(now_ns)).runs.add(&c);
        }
        // The hosts with nothing in the week: the week to their newest.
        if hosts.iter().all(|h| out.contains_key(&h.host)) {
            return Ok(out);
        }
        for (host, newest) in self.newest_evidence(kind, latest)? {
            if out.contains_key(&host) || newest >= since {
                continue;
            }
            let mut e = week(newest);
            let args =
                |from: super::db::Value, to: super::db::Value| [host.as_str().into(), from, to];
            let rows = self.counted(
                "SELECT host, {COUNTS} FROM windows
                 WHERE host = ?1 AND end_ns >= ?2 AND end_ns <= ?3 GROUP BY host",
                &args(e.from_ns.into(), e.to_ns.into()),
                budgets_ns,
            )?;
            let runs = self.counted(
                "SELECT hostname, {COUNTS} FROM runs
                 WHERE hostname = ?1 AND started_at >= ?2 AND started_at <= ?3
                   AND kind = ?4 AND max_ns IS NOT NULL GROUP BY hostname",
                &[
                    args(rfc3339(e.from_ns).into(), rfc3339(e.to_ns).into()).as_slice(),
                    &[kind.into()],
                ]
                .concat(),
                budgets_ns,
            )?;
            rows.iter().for_each(|(_, c)| e.rows.add(c));
            runs.iter().for_each(|(_, c)| e.runs.add(c));
            out.insert(host, e);
        }
        Ok(out)
    }

    /// The rows of `sql` (whose `{COUNTS}` becomes the count, one count within
    /// each budget and the largest maximum): a host and its [`Count`] each.
    /// Each distinct budget is counted once (the drone's seven are three).
    fn counted(
        &self,
        sql: &str,
        args: &[super::db::Value],
        budgets_ns: &[u64],
    ) -> Result<Vec<(String, Count)>> {
        let mut distinct = budgets_ns.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let mut all: Vec<super::db::Value> = args.to_vec();
        all.extend(
            distinct
                .iter()
                .map(|b| i64::try_from(*b).unwrap_or(i64::MAX).into()),
        );
        let sql = counts_sql(sql, args.len(), distinct.len());
        self.conn
            .query(&sql, &all)?
            .iter()
            .map(|r| {
                let within = budgets_ns
                    .iter()
                    .map(|b| r.get(2 + distinct.binary_search(b).unwrap_or(0)))
                    .collect::<Result<_>>()?;
                let c = Count {
                    n: r.get(1)?,
                    within,
                    worst_ns: r.get(2 + distinct.len())?,
                };
                Ok((r.get(0)?, c))
            })
            .collect()
    }

    /// Each host's newest evidence (Unix ns): the end of its newest monitor
    /// row (of `latest`), the start of its newest run of `kind`.
    fn newest_evidence(&self, kind: &str, latest: &[Window]) -> Result<BTreeMap<String, i64>> {
        let mut newest: BTreeMap<String, i64> = BTreeMap::new();
        for w in latest {
            let n = newest.entry(w.host.clone()).or_insert(w.end_ns);
            *n = (*n).max(w.end_ns);
        }
        let rows = self.conn.query(
            "SELECT hostname, MAX(started_at) FROM runs
             WHERE kind = ?1 AND max_ns IS NOT NULL GROUP BY hostname",
            args![kind],
        )?;
        for r in rows {
            let (host, at): (String, String) = (r.get(0)?, r.get(1)?);
            let Some(ns) = chrono::DateTime::parse_from_rfc3339(&at)
                .ok()
                .and_then(|t| t.timestamp_nanos_opt())
            else {
                continue;
            };
            let n = newest.entry(host).or_insert(ns);
            *n = (*n).max(ns);
        }
        Ok(newest)
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

/// The monitor rows of each host at a level (`?1`) ending since a time
/// (`?2`): read from the index `windows(level, end_ns, host, max_ns)` alone.
const WEEK_ROWS: &str =
    "SELECT host, {COUNTS} FROM windows WHERE level = ?1 AND end_ns >= ?2 GROUP BY host";

/// `sql` whose `{COUNTS}` becomes the count, one count within each of
/// `budgets` budgets (the parameters after its `args` own) and the largest
/// maximum.
fn counts_sql(sql: &str, args: usize, budgets: usize) -> String {
    let mut counts = vec!["CAST(COUNT(*) AS BIGINT)".to_string()];
    counts.extend((1..=budgets).map(|i| {
        format!(
            "CAST(SUM(CASE WHEN max_ns <= ?{} THEN 1 ELSE 0 END) AS BIGINT)",
            args + i
        )
    }));
    counts.push("CAST(MAX(max_ns) AS BIGINT)".into());
    sql.replace("{COUNTS}", &counts.join(", "))
}

/// Unix ns as the runs' `started_at` text (RFC 3339, µs, UTC), which sorts
/// as the times do.
fn rfc3339(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
