//! The store's schema and its migrations, one text for both backends (the id
//! columns and the blob type are the only words that differ: [`ddl`]).
//!
//! SQLite: `PRAGMA user_version` holds the schema version and `PRAGMA
//! application_id` marks the file as an rtlab store ([`APPLICATION_ID`]).
//! PostgreSQL: the table `rtlab_meta` holds both. What a database holds is
//! judged before anything is written ([`Identity::judge`]): another program's
//! database, or a schema version this rtlab does not know, is refused
//! untouched. Creation and every migration run in one transaction (SQLite:
//! immediate; PostgreSQL: under an advisory lock), so that several rtlab
//! processes opening a new or old database at once create or migrate it
//! exactly once, and a crash mid-migration leaves the old version.

use super::db::{args, Conn, Kind};
use anyhow::Result;
use rusqlite::Connection;

/// Version 1: runs, their tags and their series.
pub(super) const V1: &str = "CREATE TABLE runs (
        id {ID},
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        status TEXT NOT NULL,
        exit_code BIGINT NOT NULL,
        campaign BIGINT,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL,
        duration_ns BIGINT NOT NULL,
        kernel_release TEXT NOT NULL,
        preempt TEXT NOT NULL,
        hostname TEXT NOT NULL,
        samples BIGINT,
        p99_ns BIGINT,
        max_ns BIGINT,
        misses BIGINT,
        record TEXT NOT NULL
    );
    CREATE INDEX runs_label ON runs(label);
    CREATE INDEX runs_kind ON runs(kind);
    CREATE TABLE tags (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (run_id, tag)
    );
    CREATE TABLE series (
        run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx BIGINT NOT NULL,
        name TEXT NOT NULL,
        samples BIGINT NOT NULL,
        overruns BIGINT NOT NULL,
        misses BIGINT NOT NULL,
        overflows BIGINT NOT NULL,
        min_ns BIGINT NOT NULL,
        mean_ns DOUBLE PRECISION NOT NULL,
        stddev_ns DOUBLE PRECISION NOT NULL,
        p50_ns BIGINT NOT NULL,
        p90_ns BIGINT NOT NULL,
        p95_ns BIGINT NOT NULL,
        p99_ns BIGINT NOT NULL,
        p999_ns BIGINT NOT NULL,
        p9999_ns BIGINT NOT NULL,
        max_ns BIGINT NOT NULL,
        data {BLOB} NOT NULL,
        PRIMARY KEY (run_id, idx)
    );";

/// Version 2: scalar metrics next to the headline columns, an index for
/// `--since`, and campaigns: one invocation of a scenario, its steps and the
/// runs each step produced.
const V2: &str = "ALTER TABLE runs ADD COLUMN metrics TEXT NOT NULL DEFAULT '{}';
    CREATE INDEX runs_started ON runs(started_at);
    CREATE TABLE campaigns (
        id {ID},
        name TEXT NOT NULL,
        scenario TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE campaign_runs (
        campaign_id BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        step_index BIGINT NOT NULL,
        step_name TEXT NOT NULL,
        run_id BIGINT NOT NULL UNIQUE REFERENCES runs(id) ON DELETE CASCADE,
        PRIMARY KEY (campaign_id, step_index, run_id)
    );";

/// The metrics of the runs stored before version 2, from their records.
const V2_FILL: &str =
    "UPDATE runs SET metrics = COALESCE(json_extract(record, '$.metrics'), '{}');";

/// Version 3: the process that runs a campaign (pid, its start time in clock ticks
/// after boot, the boot id), so that a campaign whose process is gone is shown as
/// interrupted, never as running.
const V3: &str = "ALTER TABLE campaigns ADD COLUMN owner_pid BIGINT;
    ALTER TABLE campaigns ADD COLUMN owner_start BIGINT;
    ALTER TABLE campaigns ADD COLUMN owner_boot TEXT;";

/// Version 4: a UUID for every run and campaign, which names them in any
/// store: a run copied to another store keeps it, so copying it again finds it
/// there. New UUIDs are made by rtlab ([`super::db::new_uuid`]).
const V4: &str = "ALTER TABLE runs ADD COLUMN uuid TEXT;
    CREATE UNIQUE INDEX runs_uuid ON runs(uuid);
    ALTER TABLE campaigns ADD COLUMN uuid TEXT;
    CREATE UNIQUE INDEX campaigns_uuid ON campaigns(uuid);";

/// A random version 4 UUID in SQLite's SQL, for the rows stored before
/// version 4.
macro_rules! new_uuid_sql {
    () => {
        "(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
            || substr(lower(hex(randomblob(2))), 2) || '-'
            || substr('89ab', 1 + abs(random() % 4), 1) || substr(lower(hex(randomblob(2))), 2)
            || '-' || lower(hex(randomblob(6))))"
    };
}

/// UUIDs for the runs and campaigns stored before version 4.
const V4_FILL: &str = concat!(
    "UPDATE runs SET uuid = ",
    new_uuid_sql!(),
    "; UPDATE campaigns SET uuid = ",
    new_uuid_sql!(),
    ";"
);

/// Version 7: each campaign step's base name (its name without the repeat)
/// and which repeat it is, so that the repeats of one step are grouped by what
/// was recorded rather than by reading names. Rows of an older rtlab keep
/// NULL there and are read from their names (`NAME #r`).
const V7: &str = "ALTER TABLE campaign_runs ADD COLUMN base_name TEXT;
    ALTER TABLE campaign_runs ADD COLUMN repeat_index BIGINT;";

/// Version 9: series written in the third form of `blob.rs` (the time series
/// and the histogram's buckets in binary beside the plain JSON of the rest).
/// No table changes: the version tells an older rtlab, which reads only the
/// first two forms, to refuse the store rather than take its series for
/// damaged ones.
const V9: &str = "";

/// One step of the schema: its DDL (both backends, see [`ddl`]) and what
/// fills the new columns of rows already stored. The fills are SQLite's: a
/// PostgreSQL store is always created at the current version, with no rows.
pub(super) struct Migration {
    pub ddl: &'static str,
    pub fill: &'static str,
}

/// Migrations in order; index `i` moves the schema from version `i` to `i + 1`.
pub(super) const MIGRATIONS: &[Migration] = &[
    Migration { ddl: V1, fill: "" },
    Migration {
        ddl: V2,
        fill: V2_FILL,
    },
    Migration { ddl: V3, fill: "" },
    Migration {
        ddl: V4,
        fill: V4_FILL,
    },
    Migration {
        ddl: super::windows::V5,
        fill: "",
    },
    Migration {
        ddl: super::windows::V6,
        fill: "",
    },
    Migration { ddl: V7, fill: "" },
    Migration {
        ddl: super::windows::V8,
        fill: "",
    },
    Migration { ddl: V9, fill: "" },
];

/// `text` for `kind`: `{ID}` is the id column (a rowid alias in SQLite, an
/// identity column in PostgreSQL), `{BLOB}` the type of stored series
/// (TEXT in SQLite, where version 1 stored JSON text there; BYTEA).
pub(super) fn ddl(text: &str, kind: Kind) -> String {
    let (id, blob) = match kind {
        Kind::Sqlite => ("INTEGER PRIMARY KEY", "TEXT"),
        Kind::Postgres => (
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
            "BYTEA",
        ),
    };
    text.replace("{ID}", id).replace("{BLOB}", blob)
}

/// The schema version this rtlab writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `PRAGMA application_id` of an rtlab store: "RTLB" in ASCII (0x52544c42). It
/// tells an rtlab store from any other SQLite database before anything is written.
pub const APPLICATION_ID: i32 = i32::from_be_bytes(*b"RTLB");

/// The tables of the stores written before rtlab set [`APPLICATION_ID`], by schema
/// version (index `v - 1`), sorted. An unmarked file is an rtlab store only when it
/// has exactly these: every later rtlab marks its stores.
const UNMARKED_TABLES: [&[&str]; 2] = [
    &["runs", "series", "tags"],
    &["campaign_runs", "campaigns", "runs", "series", "tags"],
];

/// What a database file says about itself, read in one statement (one snapshot)
/// without writing anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    /// `PRAGMA application_id`: 0 when unset.
    pub application_id: i32,
    /// `PRAGMA user_version`: the schema version, 0 when unset.
    pub version: i64,
    /// Names of its tables, SQLite's own (`sqlite_*`) left out, sorted.
    pub tables: Vec<String>,
}

/// What [`Identity::judge`] accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// No schema at all: a fresh path, an empty file, an empty SQLite database.
    Empty,
    /// An rtlab store at `version` (at most [`SCHEMA_VERSION`]); `marked` when it
    /// carries [`APPLICATION_ID`].
    Store { version: i64, marked: bool },
}

impl Found {
    /// Nothing to create, migrate or mark.
    pub fn is_current(self) -> bool {
        self == Found::Store {
            version: SCHEMA_VERSION,
            marked: true,
        }
    }
}

/// Why a database is not opened. Shown after the path: `x.db is not ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Another program's application_id.
    OtherApplication(i32),
    /// No application_id and not the tables of an rtlab store.
    OtherTables { tables: Vec<String>, version: i64 },
    /// An rtlab store with a schema newer than this rtlab reads.
    Newer(i64),
    /// A schema version no rtlab writes (negative, or 0 with tables).
    UnknownVersion(i64),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const LEFT: &str = "it was left unchanged; give another --db";
        match self {
            Refusal::OtherApplication(id) => write!(
                f,
                "is not an rtlab results database: its SQLite application_id is {id:#010x}, another program's (rtlab's is {APPLICATION_ID:#010x}, \"RTLB\"); {LEFT}"
            ),
            Refusal::OtherTables { tables, version } => {
                let tables = if tables.is_empty() {
                    "no tables".to_string()
                } else {
                    format!("tables {}", tables.join(", "))
                };
                write!(
                    f,
                    "is not an rtlab results database: it has {tables} and user_version {version}, not rtlab's; {LEFT}"
                )
            }
            Refusal::Newer(v) => write!(
                f,
                "has schema version {v}: made by a newer rtlab, upgrade or use another --db (this rtlab, {}, reads versions up to {SCHEMA_VERSION}; the file was left unchanged)",
                env!("CARGO_PKG_VERSION")
            ),
            Refusal::UnknownVersion(v) => write!(
                f,
                "has schema version {v}, which no rtlab writes; {LEFT}"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

impl Identity {
    /// Reads the identity of the database `conn` is open on.
    pub fn read(conn: &Connection) -> rusqlite::Result<Identity> {
        // One statement: the three answers come from the same snapshot.
        let (application_id, version, tables) = conn.query_row(
            "SELECT (SELECT application_id FROM pragma_application_id),
                    (SELECT user_version FROM pragma_user_version),
                    (SELECT group_concat(name, char(10)) FROM sqlite_master
                     WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\')",
            [],
            |r| {
                Ok((
                    r.get::<_, i32>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            },
        )?;
        let mut tables: Vec<String> = tables
            .map(|t| t.split('\n').map(str::to_string).collect())
            .unwrap_or_default();
        tables.sort();
        Ok(Identity {
            application_id,
            version,
            tables,
        })
    }

    /// Whether this is a database rtlab may open (and then create, migrate or
    /// mark), or why not.
    pub fn judge(&self) -> Result<Found, Refusal> {
        let marked = self.application_id == APPLICATION_ID;
        if self.application_id != 0 && !marked {
            return Err(Refusal::OtherApplication(self.application_id));
        }
        if self.version == 0 && self.tables.is_empty() {
            return Ok(Found::Empty);
        }
        if self.version <= 0 && (marked || self.version < 0) {
            return Err(Refusal::UnknownVersion(self.version));
        }
        if marked {
            return if self.version > SCHEMA_VERSION {
                Err(Refusal::Newer(self.version))
            } else {
                Ok(Found::Store {
                    version: self.version,
                    marked,
                })
            };
        }
        let known = usize::try_from(self.version - 1)
            .ok()
            .and_then(|i| UNMARKED_TABLES.get(i));
        match known {
            Some(tables) if self.tables.iter().eq(tables.iter()) => Ok(Found::Store {
                version: self.version,
                marked,
            }),
            _ => Err(Refusal::OtherTables {
                tables: self.tables.clone(),
                version: self.version,
            }),
        }
    }
}

/// The table of a PostgreSQL store that holds its marker and version.
const META: &str = "rtlab_meta";

impl Identity {
    /// Reads the identity of the database `conn` is open on (SQLite: one
    /// snapshot; PostgreSQL: the tables of the current schema and `rtlab_meta`).
    pub fn of(conn: &dyn Conn) -> Result<Identity> {
        if let Some(sqlite) = conn.as_sqlite() {
            return Ok(Identity::read(sqlite)?);
        }
        let mut tables: Vec<String> = conn
            .query(
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY 1",
                &[],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect::<Result<_>>()?;
        let mut id = Identity {
            application_id: 0,
            version: 0,
            tables: Vec::new(),
        };
        if let Some(at) = tables.iter().position(|t| t == META) {
            tables.remove(at);
            for r in conn.query("SELECT key, value FROM rtlab_meta", &[])? {
                let (key, value): (String, String) = (r.get(0)?, r.get(1)?);
                match key.as_str() {
                    "application_id" => id.application_id = value.parse().unwrap_or(-1),
                    "schema_version" => id.version = value.parse().unwrap_or(-1),
                    _ => {}
                }
            }
        }
        id.tables = tables;
        Ok(id)
    }
}

/// Marks the database as an rtlab store at [`SCHEMA_VERSION`].
fn mark(conn: &dyn Conn) -> Result<()> {
    if let Some(sqlite) = conn.as_sqlite() {
        sqlite.pragma_update(None, "application_id", APPLICATION_ID)?;
        sqlite.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        return Ok(());
    }
    conn.batch(
        "CREATE TABLE IF NOT EXISTS rtlab_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )?;
    for (key, value) in [
        ("application_id", APPLICATION_ID.to_string()),
        ("schema_version", SCHEMA_VERSION.to_string()),
    ] {
        conn.execute(
            "INSERT INTO rtlab_meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            args![key, value],
        )?;
    }
    Ok(())
}

/// Creates, migrates and marks the store in one transaction, so that several
/// rtlab processes doing it at once do it exactly once and a crash leaves the
/// database as it was. What it holds is judged again inside the transaction
/// (PostgreSQL: once the advisory lock is held): another process may have
/// created or migrated it meanwhile.
pub(super) fn migrate(conn: &dyn Conn) -> Result<()> {
    conn.in_tx(|c| {
        if c.kind() == Kind::Postgres {
            c.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                args![i64::from(APPLICATION_ID)],
            )?;
        }
        let from = match Identity::of(c)?.judge()? {
            found if found.is_current() => return Ok(()),
            Found::Empty => 0,
            Found::Store { version, .. } => version,
        };
        for m in &MIGRATIONS[from as usize..] {
            c.batch(&ddl(m.ddl, c.kind()))?;
            if c.kind() == Kind::Sqlite {
                c.batch(m.fill)?;
            }
        }
        mark(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(application_id: i32, version: i64, tables: &[&str]) -> Identity {
        Identity {
            application_id,
            version,
            tables: tables.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn unmarked_tables_are_what_the_migrations_create() {
        let conn = Connection::open_in_memory().unwrap();
        for (i, m) in MIGRATIONS.iter().enumerate().take(UNMARKED_TABLES.len()) {
            conn.execute_batch(&ddl(m.ddl, Kind::Sqlite)).unwrap();
            let tables = Identity::read(&conn).unwrap().tables;
            assert!(tables.iter().eq(UNMARKED_TABLES[i].iter()), "{tables:?}");
        }
    }

    #[test]
    fn new_and_rtlab_files_are_accepted_and_the_rest_refused() {
        let v1 = UNMARKED_TABLES[0];
        let v2 = UNMARKED_TABLES[1];
        let store = |version, marked| Ok(Found::Store { version, marked });
        let cases = [
            (id(0, 0, &[]), Ok(Found::Empty)),
            (id(APPLICATION_ID, 0, &[]), Ok(Found::Empty)),
            (
                id(APPLICATION_ID, SCHEMA_VERSION, v2),
                store(SCHEMA_VERSION, true),
            ),
            (id(APPLICATION_ID, 1, v1), store(1, true)),
            (id(0, 1, v1), store(1, false)),
            (id(0, 2, v2), store(2, false)),
            (id(1234, 0, &[]), Err(Refusal::OtherApplication(1234))),
            (id(-1, 2, v2), Err(Refusal::OtherApplication(-1))),
            (
                id(0, 0, &["notes"]),
                Err(Refusal::OtherTables {
                    tables: vec!["notes".into()],
                    version: 0,
                }),
            ),
            (
                id(0, 1, v2),
                Err(Refusal::OtherTables {
                    tables: v2.iter().map(|t| t.to_string()).collect(),
                    version: 1,
                }),
            ),
            (
                id(0, 1, &["notes", "runs", "series", "tags"]),
                Err(Refusal::OtherTables {
                    tables: vec![
                        "notes".into(),
                        "runs".into(),
                        "series".into(),
                        "tags".into(),
                    ],
                    version: 1,
                }),
            ),
            (
                id(0, 7, &[]),
                Err(Refusal::OtherTables {
                    tables: vec![],
                    version: 7,
                }),
            ),
            (
                id(APPLICATION_ID, SCHEMA_VERSION + 1, v2),
                Err(Refusal::Newer(SCHEMA_VERSION + 1)),
            ),
            (id(APPLICATION_ID, -1, v2), Err(Refusal::UnknownVersion(-1))),
            (id(0, -1, &[]), Err(Refusal::UnknownVersion(-1))),
            (id(APPLICATION_ID, 0, v2), Err(Refusal::UnknownVersion(0))),
        ];
        for (identity, expected) in cases {
            assert_eq!(identity.judge(), expected, "{identity:?}");
        }
    }

    #[test]
    fn migrating_twice_changes_nothing_the_second_time() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        let first = Identity::read(&conn).unwrap();
        assert_eq!(
            first.judge(),
            Ok(Found::Store {
                version: SCHEMA_VERSION,
                marked: true
            })
        );
        migrate(&conn).unwrap();
        assert_eq!(Identity::read(&conn).unwrap(), first);
    }
}
