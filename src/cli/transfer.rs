//! Runs copied between stores: `rtlab results push --to STORE` and `pull --from
//! STORE`, and through a file (a bundle, an rtlab store file) for boards that
//! never see the network: `results export --bundle FILE`, `import --bundle FILE`.
//! Runs already in the destination (the same UUID) are not copied again; nor are
//! monitor windows (the same session, host, CPU, level and start). Either store
//! may be a file or a `postgres://` URL.

use super::common;
use super::selection::FleetFilter;
use crate::error::{bad_flag, UsageError, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
use crate::store::{self, Bundle, ListFilter, Store, Tally, WindowFilter};
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::signals;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Which runs: every option given must match.
#[derive(Debug, Args)]
pub struct RunFilter {
    /// Only this label (SQL LIKE pattern when it contains %) [default: any].
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    #[command(flatten)]
    fleet: FleetFilter,
    /// Only runs of this campaign [default: any].
    #[arg(long, value_name = "ID")]
    campaign: Option<i64>,
}

impl RunFilter {
    /// Where and when the runs ran.
    pub fn fleet(&self) -> &FleetFilter {
        &self.fleet
    }

    /// The store's filter (`--since` and `--until` read against now).
    pub fn to_filter(&self) -> Result<ListFilter> {
        Ok(ListFilter {
            label: self.label.clone(),
            campaign: self.campaign,
            ..self.fleet.to_filter()?
        })
    }
}

/// The runs to copy: ids and filters. Monitor windows go along unless ids or
/// run-only filters (label, kind, tag, campaign, kernel, until, several hosts)
/// are given; `--since` and one `--host` apply to them too.
#[derive(Debug, Args)]
pub struct Selection {
    /// Only these runs [default: every run the filters match].
    #[arg(value_name = "ID")]
    ids: Vec<i64>,
    #[command(flatten)]
    filter: RunFilter,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results push --to /mnt/lab/fleet.db
  rtlab results push --to postgres://rtlab@fleet.lab/rtlab --since 1d
  rtlab results push --to /mnt/lab/fleet.db --since 1d --tag nightly")]
pub struct PushArgs {
    /// The store to copy into (a SQLite file, created if missing, or a
    /// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE URL).
    #[arg(long, value_name = "STORE")]
    to: PathBuf,
    #[command(flatten)]
    selection: Selection,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results pull --from /mnt/lab/fleet.db --label 'rt 6.6%'
  rtlab results pull --from /mnt/board7/rtlab.db 12 13")]
pub struct PullArgs {
    /// The store to copy from (a SQLite file or a postgres:// URL).
    #[arg(long, value_name = "STORE")]
    from: PathBuf,
    #[command(flatten)]
    selection: Selection,
}

/// Copies the selected runs of `store` into `--to`.
pub fn push(store: &Store, a: &PushArgs) -> Result<i32> {
    let mut to = Store::open(&store::other_store("--to", &a.to)?)?;
    let ids = a.selection.ids(store)?;
    let windows = a.selection.windows()?;
    let shown = to.path().to_path_buf();
    copy(store, &mut to, &ids, windows.as_ref(), &shown)
}

/// Copies the selected runs of `--from` into `store`.
pub fn pull(store: &mut Store, a: &PullArgs) -> Result<i32> {
    let path = store::other_store("--from", &a.from)?;
    if !store::exists(&path) {
        return Err(UsageError(format!(
            "--from {}: no such store; give the path of an rtlab results database",
            path.display()
        ))
        .into());
    }
    let from = Store::open(&path)?;
    let ids = a.selection.ids(&from)?;
    let windows = a.selection.windows()?;
    copy(&from, store, &ids, windows.as_ref(), from.path())
}

impl Selection {
    /// The ids given (checked to exist) that match the filters, or every run
    /// that does; oldest first.
    fn ids(&self, store: &Store) -> Result<Vec<i64>> {
        for &id in &self.ids {
            store.run_uuid(id)?;
        }
        let filter = self.filter.to_filter()?;
        let listed: Vec<i64> = match store.list_where(&filter) {
            // A damaged list of runs: every run that may still be read, one
            // at a time (copying out of a damaged store).
            Err(e) if store::damage::is_damage(&e) && filter.is_everything() => store
                .run_ids()
                .0
                .into_iter()
                // Ids of deleted runs left out; damaged ones kept, to be named.
                .filter(|&id| match store.run_uuid(id) {
                    Err(e) => store::damage::is_damage(&e),
                    Ok(_) => true,
                })
                .collect(),
            rows => rows?.iter().map(|r| r.id).collect(),
        };
        let mut ids: Vec<i64> = listed
            .into_iter()
            .filter(|id| self.ids.is_empty() || self.ids.contains(id))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The monitor windows to copy, if any: none when runs are chosen by what
    /// windows do not have (ids, label, kind, tag, campaign, kernel, an end
    /// time, several hosts or a host pattern).
    fn windows(&self) -> Result<Option<WindowFilter>> {
        let f = &self.filter;
        let fleet = &f.fleet;
        let host = match fleet.hosts.as_slice() {
            [] => None,
            [h] if !h.contains('%') => Some(h.clone()),
            _ => return Ok(None),
        };
        let runs_only = !self.ids.is_empty()
            || f.label.is_some()
            || f.campaign.is_some()
            || fleet.kind.is_some()
            || fleet.tag.is_some()
            || !fleet.kernels.is_empty()
            || fleet.until.is_some();
        if runs_only {
            return Ok(None);
        }
        let since_ns = match f.to_filter()?.since {
            Some(s) => Some(
                chrono::DateTime::parse_from_rfc3339(&s)
                    .ok()
                    .and_then(|t| t.timestamp_nanos_opt())
                    .ok_or_else(|| bad_flag("--since", format!("'{s}' is out of range")))?,
            ),
            None => None,
        };
        Ok(Some(WindowFilter {
            since_ns,
            host,
            ..WindowFilter::default()
        }))
    }
}

/// Writes the runs `ids` (every run when empty) into a new bundle `path`.
pub fn export(store: &Store, ids: &[i64], path: &Path) -> Result<i32> {
    let ids = selection(store, ids)?;
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    let Some(tally) = store::write_bundle(store, &ids, path, stopped)? else {
        eprintln!("interrupted: no bundle was written");
        return Ok(EXIT_INTERRUPTED);
    };
    let windows = match tally.windows_new {
        0 => String::new(),
        n => format!(" and {n} monitor window(s)"),
    };
    common::print(&format!(
        "{}: {} run(s){windows} written{}\n",
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
    copy(
        bundle.store(),
        store,
        &ids,
        Some(&WindowFilter::default()),
        path,
    )
}

/// Copies the runs `ids` and the monitor windows `windows` selects of `from`
/// into `to` (named `shown`), says how many were new, already there or
/// refused, and stops at Ctrl-C between two runs.
fn copy(
    from: &Store,
    to: &mut Store,
    ids: &[i64],
    windows: Option<&WindowFilter>,
    shown: &Path,
) -> Result<i32> {
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    let mut tally = to.copy_runs(from, ids, stopped)?;
    if let Some(f) = windows {
        to.copy_windows(from, f, &mut tally, stopped)?;
    }
    let looked = tally.new + tally.present + tally.refused.len();
    let mut said = format!(
        "{}: {} new, {} already there, {} refused\n",
        shown.display(),
        tally.new,
        tally.present,
        tally.refused.len()
    );
    let windows_seen = tally.windows_new + tally.windows_present + tally.windows_refused.len();
    if windows_seen > 0 {
        said.push_str(&format!(
            "{}: monitor windows: {} new, {} already there, {} refused\n",
            shown.display(),
            tally.windows_new,
            tally.windows_present,
            tally.windows_refused.len()
        ));
    }
    common::print(&said);
    report_refused(&tally);
    if looked < ids.len() || stopped() {
        eprintln!(
            "interrupted: {looked} of {} runs copied or looked at; run the same command again to copy the rest",
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
    match tally.refused.len() + tally.windows_refused.len() {
        0 => String::new(),
        n => format!(", {n} refused"),
    }
}

fn report_refused(tally: &Tally) {
    for (id, why) in &tally.refused {
        eprintln!("run {id} refused: {why}");
    }
    for why in &tally.windows_refused {
        eprintln!("refused: {why}");
    }
}

/// 0, or 2 when the source held runs that could not be copied.
fn exit_code(tally: &Tally) -> i32 {
    if tally.refused.is_empty() && tally.windows_refused.is_empty() {
        EXIT_OK
    } else {
        EXIT_USAGE
    }
}
