//! The store's schema and its migrations. `PRAGMA user_version` holds the schema
//! version; each migration moves it up by one, all of them inside one immediate
//! transaction, so that two rtlab processes opening an old database at once
//! migrate it exactly once and a crash mid-migration leaves the old version.

use anyhow::{bail, Result};
use rusqlite::Connection;

/// Version 1: runs, their tags and their series.
pub(super) const V1: &str = "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        status TEXT NOT NULL,
        exit_code INTEGER NOT NULL,
        campaign INTEGER,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL,
        duration_ns INTEGER NOT NULL,
        kernel_release TEXT NOT NULL,
        preempt TEXT NOT NULL,
        hostname TEXT NOT NULL,
        samples INTEGER,
        p99_ns INTEGER,
        max_ns INTEGER,
        misses INTEGER,
        record TEXT NOT NULL
    );
    CREATE INDEX runs_label ON runs(label);
    CREATE INDEX runs_kind ON runs(kind);
    CREATE TABLE tags (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (run_id, tag)
    );
    CREATE TABLE series (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        samples INTEGER NOT NULL,
        overruns INTEGER NOT NULL,
        misses INTEGER NOT NULL,
        overflows INTEGER NOT NULL,
        min_ns INTEGER NOT NULL,
        mean_ns REAL NOT NULL,
        stddev_ns REAL NOT NULL,
        p50_ns INTEGER NOT NULL,
        p90_ns INTEGER NOT NULL,
        p95_ns INTEGER NOT NULL,
        p99_ns INTEGER NOT NULL,
        p999_ns INTEGER NOT NULL,
        p9999_ns INTEGER NOT NULL,
        max_ns INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, idx)
    );";

/// Version 2: scalar metrics next to the headline columns (filled from the
/// records already stored), an index for `--since`, and campaigns: one
/// invocation of a scenario, its steps and the runs each step produced.
const V2: &str = "ALTER TABLE runs ADD COLUMN metrics TEXT NOT NULL DEFAULT '{}';
    UPDATE runs SET metrics = COALESCE(json_extract(record, '$.metrics'), '{}');
    CREATE INDEX runs_started ON runs(started_at);
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        scenario TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE campaign_runs (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL,
        step_name TEXT NOT NULL,
        run_id INTEGER NOT NULL UNIQUE REFERENCES runs(id) ON DELETE CASCADE,
        PRIMARY KEY (campaign_id, step_index, run_id)
    );";

/// Version 3: the process that runs a campaign (pid, its start time in clock ticks
/// after boot, the boot id), so that a campaign whose process is gone is shown as
/// interrupted, never as running.
const V3: &str = "ALTER TABLE campaigns ADD COLUMN owner_pid INTEGER;
    ALTER TABLE campaigns ADD COLUMN owner_start INTEGER;
    ALTER TABLE campaigns ADD COLUMN owner_boot TEXT;";

/// Migrations in order; index `i` moves the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The schema version this rtlab writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the schema to [`SCHEMA_VERSION`]; refuses a newer one.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        bail!(crate::error::UsageError(format!(
            "the database has schema version {version}, written by a newer rtlab; this rtlab ({}) reads up to version {SCHEMA_VERSION}. Upgrade rtlab or use another --db",
            env!("CARGO_PKG_VERSION")
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}
