//! Copying runs between stores, and bundles: an rtlab store file made to carry
//! runs to another store (`rtlab results export --bundle` / `import --bundle`).
//!
//! A run is named in every store by its UUID: a run already there (the same
//! UUID) is not copied again, so copying twice stores once, and a copy cut short
//! continues where it stopped when run again. Each run is copied in one
//! transaction, with its tags, series (histograms, time series), fingerprint,
//! analyses and, when it belongs to one, its campaign (found by the campaign's
//! UUID, or created) and its step in it.
//!
//! Monitor windows go along: a window is the same window in any store when its
//! session, host, CPU, level and start are; those already there are skipped.
//! Either side may be a SQLite file or a PostgreSQL database.

use super::campaign::{insert_step, CampaignStep};
use super::db::{args, Conn};
use super::schema::{self, Identity, Refusal};
use super::windows::{Window, WindowFilter};
use super::{damage, Store};
use crate::error::UsageError;
use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

mod windows;
use windows::copy_batch;

/// What copying one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copied {
    /// Stored under this id in the destination.
    New(i64),
    /// The destination already had it, under this id.
    Present(i64),
}

/// What copying a selection did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs stored.
    pub new: usize,
    /// Runs the destination already had.
    pub present: usize,
    /// Runs not copied, with why (a damaged record, numbers no measurement gives).
    pub refused: Vec<(i64, String)>,
    /// Monitor windows stored.
    pub windows_new: usize,
    /// Monitor windows the destination already had.
    pub windows_present: usize,
    /// Monitor windows not copied (numbers no measurement gives), with why.
    pub windows_refused: Vec<String>,
}

/// Windows copied per transaction: a copy cut short keeps whole batches.
const WINDOW_BATCH: usize = 500;

/// The campaign of a run as the source stores it.
struct CampaignOf {
    uuid: String,
    name: String,
    scenario: String,
    fingerprint: String,
    status: String,
    created_at: String,
    ended_at: Option<String>,
    /// Its step in the source (with the source's run id).
    step: CampaignStep,
}

impl Store {
    /// The UUID of run `id`.
    pub fn run_uuid(&self, id: i64) -> Result<String> {
        match self
            .conn
            .query_opt("SELECT uuid FROM runs WHERE id = ?1", args![id])?
        {
            Some(r) => r.get(0),
            None => Err(self.no_run(id)),
        }
    }

    /// Copies run `id` of `from` into this store, unless it is already here.
    /// Its numbers are checked as [`Store::save`] does; what `from` cannot give
    /// whole is an error and nothing is written.
    fn copy_run(&mut self, from: &Store, id: i64) -> Result<Copied> {
        let uuid = from.run_uuid(id).map_err(unreadable)?;
        if let Some(here) = find_run(&*self.conn, &uuid)? {
            return Ok(Copied::Present(here));
        }
        let mut run = from.load(id).map_err(unreadable)?;
        run.check_numbers()?;
        // Another store may hold names no rtlab of today would take.
        run.bound_names();
        let campaign = match run.campaign {
            Some(_) => from.campaign_of(id).map_err(unreadable)?,
            None => None,
        };
        let blobs = super::series_blobs(&run)?;
        self.write(|tx| {
            // Another process may have copied it since the check above.
            if let Some(here) = find_run(tx, &uuid)? {
                return Ok(Copied::Present(here));
            }
            run.campaign = match &campaign {
                Some(c) => Some(ensure_campaign(tx, c)?),
                None => None,
            };
            let new = super::insert_run(tx, &run, Some(&uuid), blobs)?;
            if let (Some(c), Some(cid)) = (&campaign, run.campaign) {
                insert_step(tx, cid, &c.step, new)?;
            }
            Ok(Copied::New(new))
        })
    }

    /// Copies the runs `ids` of `from` (oldest first, so that ids keep their
    /// order) until `stop` says so. A run that cannot be read or checked is
    /// refused and the others go on; an error of the destination stops.
    pub fn copy_runs(
        &mut self,
        from: &Store,
        ids: &[i64],
        stop: impl Fn() -> bool,
    ) -> Result<Tally> {
        let mut tally = Tally::default();
        for &id in ids {
            if stop() {
                break;
            }
            match self.copy_run(from, id) {
                Ok(Copied::New(_)) => tally.new += 1,
                Ok(Copied::Present(_)) => tally.present += 1,
                Err(e) if is_refusal(&e) => tally.refused.push((id, format!("{e:#}"))),
                Err(e) => return Err(e),
            }
        }
        Ok(tally)
    }

    /// Copies the monitor windows of `from` that `f` selects and this store
    /// does not have, read and written [`WINDOW_BATCH`] at a time (one
    /// transaction each), until `stop` says so; adds what it did to `tally`.
    pub fn copy_windows(
        &mut self,
        from: &Store,
        f: &WindowFilter,
        tally: &mut Tally,
        stop: impl Fn() -> bool,
    ) -> Result<()> {
        let mut after = i64::MIN;
        while !stop() {
            let page = match from.windows_after(f, after, WINDOW_BATCH) {
                Err(e) if damage::is_damage(&e) => {
                    tally.windows_refused.push(format!(
                        "the windows from row {after} on cannot be read: {e:#}"
                    ));
                    break;
                }
                page => page?,
            };
            let Some(&(last, _)) = page.last() else {
                break;
            };
            after = last;
            let batch: Vec<Window> = page.into_iter().map(|(_, w)| w).collect();
            let (new, present, refused) = self.write(|c| copy_batch(c, &batch))?;
            tally.windows_new += new;
            tally.windows_present += present;
            tally.windows_refused.extend(refused);
        }
        Ok(())
    }

    /// The campaign run `id` belongs to, with its step.
    fn campaign_of(&self, id: i64) -> Result<Option<CampaignOf>> {
        let row = self.conn.query_opt(
            "SELECT c.uuid, c.name, c.scenario, c.fingerprint, c.status, c.created_at,
                c.ended_at, m.step_index, m.step_name, m.run_id, m.base_name, m.repeat_index
             FROM campaign_runs m JOIN campaigns c ON c.id = m.campaign_id
             WHERE m.run_id = ?1",
            args![id],
        )?;
        let Some(r) = row else { return Ok(None) };
        Ok(Some(CampaignOf {
            uuid: r.get(0)?,
            name: r.get(1)?,
            scenario: r.get(2)?,
            fingerprint: r.get(3)?,
            status: r.get(4)?,
            created_at: r.get(5)?,
            ended_at: r.get(6)?,
            step: CampaignStep::of_row(&r, 7)?,
        }))
    }
}

/// Whether copying a run failed because of the run itself (it is refused and
/// the others are copied) rather than of a store.
fn is_refusal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<crate::record::NumbersError>()
            || c.is::<serde_json::Error>()
            || c.is::<std::io::Error>()
            || c.is::<Unreadable>()
    })
}

/// A run the source cannot give, its pages damaged: refused, and the
/// others copied (what copying out of a damaged store is for).
#[derive(Debug)]
struct Unreadable(String);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "it cannot be read from its damaged store ({})", self.0)
    }
}

impl std::error::Error for Unreadable {}

/// An error reading the source: damage as [`Unreadable`], the rest as it is.
fn unreadable(e: anyhow::Error) -> anyhow::Error {
    if damage::is_damage(&e) {
        Unreadable(damage::said(&e)).into()
    } else {
        e
    }
}

/// The id of the run with `uuid` in `conn`.
fn find_run(conn: &dyn Conn, uuid: &str) -> Result<Option<i64>> {
    conn.query_opt("SELECT id FROM runs WHERE uuid = ?1", args![uuid])?
        .map(|r| r.get(0))
        .transpose()
}

/// The id of campaign `c` in the destination, created if it is not there; its
/// status and end follow the source's. A copied campaign has no owner: it runs
/// in no process here.
fn ensure_campaign(conn: &dyn Conn, c: &CampaignOf) -> Result<i64> {
    let found = conn.query_opt("SELECT id FROM campaigns WHERE uuid = ?1", args![&c.uuid])?;
    if let Some(r) = found {
        let id: i64 = r.get(0)?;
        conn.execute(
            "UPDATE campaigns SET status = ?2, ended_at = ?3 WHERE id = ?1",
            args![id, &c.status, c.ended_at.as_ref()],
        )?;
        return Ok(id);
    }
    conn.query_one(
        "INSERT INTO campaigns (name, scenario, fingerprint, status, created_at, ended_at, uuid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
        args![
            &c.name,
            &c.scenario,
            &c.fingerprint,
            &c.status,
            &c.created_at,
            c.ended_at.as_ref(),
            &c.uuid
        ],
    )?
    .get(0)
}

/// A bundle opened to import from: a private copy of the file (migrated when an
/// older rtlab wrote it) in a new directory of its own (mode 0700, a random
/// name), removed with it when dropped. The bundle itself is only read.
pub struct Bundle {
    // Fields drop in order: the store is closed before its directory goes.
    store: Store,
    _dir: tempfile::TempDir,
}

impl Bundle {
    /// Opens `path` as a bundle. A file that is not an rtlab bundle or store,
    /// or that a newer rtlab wrote, is refused (exit 2).
    pub fn open(path: &Path) -> Result<Bundle> {
        let shown = path.display();
        if !path.is_file() {
            bail!(UsageError(format!(
                "--bundle {shown}: no such file; give a file written by 'rtlab results export --bundle'"
            )));
        }
        let unreadable = |e: &dyn std::fmt::Display| {
            UsageError(format!(
                "--bundle {shown} cannot be read as an rtlab bundle ({e}); nothing was imported"
            ))
        };
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| unreadable(&e))?;
        match Identity::read(&conn).map_err(|e| unreadable(&e))?.judge() {
            Ok(schema::Found::Store { .. }) => {}
            Ok(schema::Found::Empty) => bail!(unreadable(&"it holds no runs")),
            Err(Refusal::Newer(v)) => bail!(UsageError(format!(
                "--bundle {shown} was written by a newer rtlab (schema version {v}; this one reads up to {}): import it with that rtlab or a newer one; nothing was imported",
                schema::SCHEMA_VERSION
            ))),
            Err(r) => bail!(unreadable(&format!("it {r}"))),
        }
        let dir = crate::files::private_dir("rtlab-bundle-")
            .context("cannot create a temporary directory for the bundle's copy")?;
        let copy = dir.path().join("bundle.db");
        conn.execute("VACUUM INTO ?1", [copy.to_string_lossy()])
            .map_err(|e| unreadable(&e))?;
        Ok(Bundle {
            store: Store::open(&copy)?,
            _dir: dir,
        })
    }

    /// The runs it holds.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

/// Writes the runs `ids` of `from` into a new bundle file `path`: made in a
/// new private directory beside it, moved to `path` when whole, so that `path`
/// is a whole bundle or absent, and no one can plant a link where SQLite
/// writes. An existing `path` is refused. `None` when `stop` said so before the
/// end: then no bundle is written.
pub fn write_bundle(
    from: &Store,
    ids: &[i64],
    path: &Path,
    stop: impl Fn() -> bool,
) -> Result<Option<Tally>> {
    let new = super::backup::NewStoreFile::new(
        path,
        "bundle",
        Some("--bundle"),
        ", or copy into that database with 'rtlab results push --to URL'",
    )?;
    let mut to = Store::open(&new.part())?;
    let mut tally = to.copy_runs(from, ids, &stop)?;
    to.copy_windows(from, &WindowFilter::default(), &mut tally, &stop)?;
    // One file: the write-ahead log folded back in, the journal of a plain file.
    if let Some(c) = to.conn.as_sqlite() {
        c.pragma_update(None, "journal_mode", "DELETE")?;
    }
    drop(to);
    if stop() {
        return Ok(None);
    }
    new.place()?;
    Ok(Some(tally))
}
