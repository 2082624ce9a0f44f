//! Monitor windows copied a page at a time: which of the page the destination
//! has in one query, the others in a few multi-row statements.

use super::super::db::{args, Conn, Kind};
use super::super::windows::{self as win, Level, Window};
use anyhow::Result;
use std::collections::HashSet;

/// Copies the windows of `batch` that `c` does not have: which of them it has
/// in one query, the others in a few multi-row statements. (new, present,
/// refused with why).
pub(super) fn copy_batch(c: &dyn Conn, batch: &[Window]) -> Result<(usize, usize, Vec<String>)> {
    let mut refused = Vec::new();
    let checked: Vec<&Window> = batch
        .iter()
        .filter(|w| match w.check() {
            Ok(()) => true,
            Err(why) => {
                let host: String = w.host.chars().take(64).collect();
                refused.push(format!(
                    "window of {host} CPU {} at {} ns: {why}",
                    w.cpu, w.start_ns
                ));
                false
            }
        })
        .collect();
    // A window already there, or twice in the batch, is stored once.
    let mut seen = present(c, &checked)?;
    let new: Vec<&Window> = checked
        .iter()
        .copied()
        .filter(|w| seen.insert(w.key()))
        .collect();
    win::insert_all(c, &new)?;
    Ok((new.len(), checked.len() - new.len(), refused))
}

/// What names a window in every store: its level, host, CPU, start and
/// session (the same window, copied before, has the same).
type Key = (&'static str, String, i64, i64, String);

impl Window {
    fn key(&self) -> Key {
        let w = self;
        (
            w.level.name(),
            w.host.clone(),
            w.cpu,
            w.start_ns,
            w.session.clone(),
        )
    }
}

/// The keys of `ws` that `c` already holds: one query for them all on
/// PostgreSQL, where each query is a round trip; one a window on SQLite, in
/// this process, where one long query measured slower than many short ones.
fn present(c: &dyn Conn, ws: &[&Window]) -> Result<HashSet<Key>> {
    let per = match c.kind() {
        Kind::Postgres => ws.len().max(1),
        Kind::Sqlite => 1,
    };
    let mut found = HashSet::new();
    for chunk in ws.chunks(per) {
        found.extend(present_of(c, chunk)?);
    }
    Ok(found)
}

/// The keys of `ws` that `c` already holds, in one query.
fn present_of(c: &dyn Conn, ws: &[&Window]) -> Result<Vec<Key>> {
    // Typed, so that PostgreSQL knows the columns of the VALUES list.
    let rows = win::value_rows(ws.len(), &["TEXT", "TEXT", "BIGINT", "BIGINT", "TEXT"]);
    let mut values = Vec::with_capacity(ws.len() * 5);
    for w in ws {
        values.extend_from_slice(args![
            w.level.name(),
            &w.host,
            w.cpu,
            w.start_ns,
            &w.session
        ]);
    }
    let sql = format!(
        "SELECT w.level, w.host, w.cpu, w.start_ns, w.session
         FROM (VALUES {rows}) AS v JOIN windows w ON w.level = v.column1 AND w.host = v.column2
             AND w.cpu = v.column3 AND w.start_ns = v.column4 AND w.session = v.column5"
    );
    c.query(&sql, &values)?
        .iter()
        .map(|r| {
            let level: String = r.get(0)?;
            Ok((
                Level::parse(&level).name(),
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
            ))
        })
        .collect()
}
