//! What every measuring command shares: saving to the store, labels and tags,
//! `--json`, `--quiet`, `--unit`, and turning a finished run into output and an
//! exit code.

use crate::error::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::record::{self, Run, Status};
use crate::store::{self, Store};
use crate::units::TimeUnit;
use anyhow::Result;
use clap::Args;
use rtlab_engine::sysinfo::Fingerprint;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Options that apply to the whole invocation.
#[derive(Debug, Clone)]
pub struct Context {
    /// `--db`.
    pub db: Option<PathBuf>,
}

impl Context {
    /// Opens the store named by `--db`, `$RTLAB_DB` or the default path.
    pub fn open_store(&self) -> Result<Store> {
        Store::open(&store::default_path(self.db.as_deref())?)
    }
}

/// Saving options of measuring commands.
#[derive(Debug, Clone, Args)]
pub struct SaveArgs {
    /// Do not save the run to the results store.
    #[arg(long)]
    pub no_save: bool,
    /// Label of the run (default: "<kernel release> <preemption model>").
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Tag the run (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

impl SaveArgs {
    /// A new run of a measuring command on this system: labelled and tagged as
    /// asked, with the system's audit summary. The caller fills in what it measured.
    pub fn new_run(
        &self,
        kind: &str,
        fp: Fingerprint,
        started_at: String,
        params: serde_json::Value,
    ) -> Run {
        let label = self
            .label
            .clone()
            .unwrap_or_else(|| record::default_label(&fp));
        let mut run = Run::new(kind, label, fp, started_at, params);
        run.tags = self.tags.clone();
        run.audit = Some(crate::tune::audit::summary());
        run
    }
}

/// Output options of measuring commands.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print one JSON document (format rtlab/1) on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// No live view; only the final result.
    #[arg(short, long)]
    pub quiet: bool,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    pub unit: TimeUnit,
}

impl OutputArgs {
    /// Whether a live view may be drawn (on stderr, when it is a terminal).
    pub fn live(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

/// Saves the run (unless `--no-save`), prints it as JSON or as `table`, and
/// returns its exit code. The store is written before anything is printed, so
/// that a closed pipe cannot lose the run.
pub fn finish(
    ctx: &Context,
    save: &SaveArgs,
    out: &OutputArgs,
    run: &mut Run,
    table: impl FnOnce(&Run) -> String,
) -> Result<i32> {
    let mut saved = None;
    if !save.no_save {
        let mut store = ctx.open_store()?;
        let id = store.save(run)?;
        run.id = Some(id);
        saved = Some(store.path().display().to_string());
    }
    let mut stdout = std::io::stdout().lock();
    let text = if out.json {
        let mut s = serde_json::to_string_pretty(run)?;
        s.push('\n');
        s
    } else {
        table(run)
    };
    // A closed pipe (`| head`) is not an error.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if let (Some(id), Some(path)) = (run.id, saved) {
        eprintln!("saved as run {id} in {path}");
    }
    Ok(run.exit_code)
}

/// The exit code of a run: interrupted by a signal → 130, a threshold failed → 1.
pub fn exit_code_for(status: Status, by_signal: bool, threshold_failed: bool) -> i32 {
    if status == Status::Interrupted && by_signal {
        EXIT_INTERRUPTED
    } else if threshold_failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
