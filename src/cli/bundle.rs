//! `rtlab results export --bundle FILE` and `import --bundle FILE`: runs carried
//! between stores in a file (an rtlab store file), for boards that never see the
//! network. Runs already in the destination (the same UUID) are not copied
//! again.

use crate::error::{EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
use crate::store::{self, Bundle, ListFilter, Store, Tally};
use anyhow::Result;
use rtlab_engine::rt::signals;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Writes the runs `ids` (every run when empty) into a new bundle `path`.
pub fn export(store: &Store, ids: &[i64], path: &Path) -> Result<i32> {
    let ids = selection(store, ids)?;
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    let Some(tally) = store::write_bundle(store, &ids, path, stopped)? else {
        eprintln!("interrupted: no bundle was written");
        return Ok(EXIT_INTERRUPTED);
    };
    super::common::print(&format!(
        "{}: {} run(s) written{}\n",
        path.display(),
        tally.new,
        refused_note(&tally)
    ));
    Ok(exit_code(&tally))
}

/// Copies the runs of bundle `path` that `store` does not have.
pub fn import(store: &mut Store, path: &Path) -> Result<i32> {
    let bundle = Bundle::open(path)?;
    let ids = selection(bundle.store(), &[])?;
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    let tally = store.copy_runs(bundle.store(), &ids, stopped)?;
    let copied = tally.new + tally.present + tally.refused.len();
    super::common::print(&format!(
        "{}: {} new, {} already there, {} refused\n",
        path.display(),
        tally.new,
        tally.present,
        tally.refused.len()
    ));
    report_refused(&tally);
    if copied < ids.len() {
        eprintln!(
            "interrupted: {copied} of {} runs looked at; import the bundle again to copy the rest",
            ids.len()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(exit_code(&tally))
}

/// `ids` checked to exist, or every run; oldest first.
fn selection(store: &Store, ids: &[i64]) -> Result<Vec<i64>> {
    let mut ids = if ids.is_empty() {
        let rows = store.list_where(&ListFilter::default())?;
        rows.iter().map(|r| r.id).collect()
    } else {
        for &id in ids {
            store.run_uuid(id)?;
        }
        ids.to_vec()
    };
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

fn refused_note(tally: &Tally) -> String {
    report_refused(tally);
    match tally.refused.len() {
        0 => String::new(),
        n => format!(", {n} refused"),
    }
}

fn report_refused(tally: &Tally) {
    for (id, why) in &tally.refused {
        eprintln!("run {id} refused: {why}");
    }
}

/// 0, or 2 when the source held runs that could not be copied.
fn exit_code(tally: &Tally) -> i32 {
    if tally.refused.is_empty() {
        EXIT_OK
    } else {
        EXIT_USAGE
    }
}
