//! `rtlab results`: list, show, delete, tag, label, export and import stored runs,
//! and list the campaigns they belong to.

use super::common::{self, write_output, Context};
use super::results_import::{self, ImportArgs};
use super::selection::ByArgs;
use super::transfer::{self, PullArgs, PushArgs, RunFilter};
use crate::analysis::group::{self, By};
use crate::analysis::interval::DEFAULT_NOISE;
use crate::error::{UsageError, EXIT_FAILED, EXIT_OK};
use crate::format::text::table::printable;
use crate::format::{self, json, text, Format};
use crate::store::{ListFilter, RunRow, Store};
use crate::units::TimeUnit;
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Stored runs: list, show, change, export, import, copy to and from other stores.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results list --last 10
  rtlab results show 12
  rtlab results import cyclictest.txt --label stock")]
pub struct ResultsArgs {
    #[command(subcommand)]
    command: ResultsCommand,
}

#[derive(Debug, Subcommand)]
enum ResultsCommand {
    /// Runs, newest first: id, time, kind, label, status, headline numbers.
    List(ListArgs),
    /// Everything about one run: parameters, fingerprint, series, metrics, warnings.
    Show(ShowArgs),
    /// The series of rtlab monitor: per window, hour or day, max and p99.
    Windows(super::windows::ResultsWindows),
    /// Delete runs (with their series and tags); all or none.
    #[command(after_long_help = "Examples:
  rtlab results delete 12
  rtlab results delete 3 4 5")]
    Delete {
        /// Run ids.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<i64>,
    },
    /// Add tags to a run (or remove them with --remove).
    #[command(after_long_help = "Examples:
  rtlab results tag 12 baseline isolcpus
  rtlab results tag 12 baseline --remove")]
    Tag {
        /// Run id.
        id: i64,
        /// Tags.
        #[arg(required = true, value_name = "TAG", value_parser = common::tag_value)]
        tags: Vec<String>,
        /// Remove these tags instead of adding them.
        #[arg(long)]
        remove: bool,
    },
    /// Give a run a new label.
    #[command(after_long_help = "Examples:
  rtlab results label 12 'rt 6.6 isolcpus'
  rtlab results label 13 stock")]
    Label {
        /// Run id.
        id: i64,
        /// The new label.
        #[arg(value_parser = common::label_value)]
        label: String,
    },
    /// Write a run as rtlab JSON, CSV (also several runs), a cyclictest -h histogram, or
    /// runs into a bundle for another store.
    Export(ExportArgs),
    /// Import what cyclictest (summary, live view, -v, -h/-H, --json), sysbench (0.4, 1.0) or
    /// stress-ng (--metrics-brief, --yaml) printed, rtlab JSON, or the runs of a bundle.
    Import(ImportArgs),
    /// Copy runs into another store (runs it already has are not copied again).
    Push(PushArgs),
    /// Copy runs from another store into this one (runs it already has are not
    /// copied again).
    Pull(PullArgs),
    /// Campaigns (runs of one invocation): list them, or show one's steps.
    #[command(after_long_help = "Examples:
  rtlab results campaigns
  rtlab results campaigns 3")]
    Campaigns {
        /// Show this campaign's steps and runs [default: list every campaign].
        id: Option<i64>,
    },
    /// Check the store for damage and say which runs can still be read.
    ///
    /// SQLite's integrity check, then every run read back. Exit 1 when the
    /// store is damaged: writes to it are then refused, and it says how to
    /// copy what can be read into a new store (results push). A PostgreSQL
    /// store is refused: its server checks its own storage.
    #[command(after_long_help = "Examples:
  rtlab results check
  rtlab results check --db /var/lib/rtlab/rtlab.db")]
    Check,
    /// Copy the store into a new file, while monitors and runs go on writing.
    ///
    /// SQLite's online backup: one consistent copy, one file, a store of its
    /// own (--db FILE), checked by SQLite's quick check. Exit 1 when the copy
    /// is damaged as the store is. A PostgreSQL store is refused: back it up
    /// with pg_dump.
    #[command(after_long_help = "Examples:
  rtlab results backup /tmp/rtlab-2026-05-01.db
  rtlab results backup --db /var/lib/rtlab/rtlab.db /tmp/rtlab-backup.db")]
    Backup {
        /// The new file (an existing file is never replaced).
        #[arg(value_name = "FILE", value_parser = common::output_file)]
        file: PathBuf,
    },
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results list --last 10
  rtlab results list --kind latency --since 2d
  rtlab results list --host board7 --kernel '6.6%' --limit 100
  rtlab results list --kernel 6.6.58-rt45 --since 30d --by host
  rtlab results list --label 'rt%' --json")]
struct ListArgs {
    #[command(flatten)]
    filter: RunFilter,
    #[command(flatten)]
    by: ByArgs,
    /// Only the newest N of the matching runs (--limit is the same)
    /// [default: all].
    #[arg(short = 'n', long, visible_alias = "limit", value_name = "N")]
    last: Option<usize>,
    /// One JSON document: an array of rows.
    #[arg(long)]
    json: bool,
    /// Unit of times.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results show 12
  rtlab results show 12 --json --unit ns")]
struct ShowArgs {
    /// Run id.
    id: i64,
    /// The run record as JSON (format rtlab/1).
    #[arg(long)]
    json: bool,
    /// Unit of times.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results export 12 -o run12.json
  rtlab results export 12 13 --format csv -o runs.csv
  rtlab results export 12 --format hist > hist.txt
  rtlab results export --bundle board7.rtlab")]
struct ExportArgs {
    /// Run ids (several only with --format csv or --bundle: one table, one
    /// bundle) [default: with --bundle, every run; else required].
    #[arg(required_unless_present = "bundle", value_name = "ID")]
    ids: Vec<i64>,
    /// Write the runs, whole (campaigns, histograms, fingerprints), into a new
    /// bundle file for 'rtlab results import --bundle' on another store
    /// [default: no bundle, the run in --format].
    #[arg(long, value_name = "FILE", conflicts_with_all = ["format", "output"])]
    bundle: Option<PathBuf>,
    /// Output format (hist = cyclictest -h layout, one column per thread).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of stdout ("-": stdout) [default: stdout].
    #[arg(short, long, value_name = "PATH", value_parser = common::output_file)]
    output: Option<PathBuf>,
}

/// Runs `rtlab results`. What only reads opens the store read-only, and
/// never creates one; what changes runs needs it to exist; import and pull
/// create it.
pub fn run(ctx: &Context, a: ResultsArgs) -> Result<i32> {
    match a.command {
        ResultsCommand::List(l) => list(&ctx.open_read()?, &l),
        ResultsCommand::Show(s) => show(&ctx.open_read()?, &s),
        ResultsCommand::Windows(w) => w.run(&ctx.open_read()?),
        ResultsCommand::Delete { ids } => {
            let n = ctx.open_existing()?.delete(&ids)?;
            common::print(&format!("deleted {n} run(s)\n"));
            Ok(0)
        }
        ResultsCommand::Tag { id, tags, remove } => {
            let mut store = ctx.open_existing()?;
            if remove {
                let n = store.remove_tags(id, &tags)?;
                common::print(&format!("run {id}: removed {n} tag(s)\n"));
            } else {
                store.add_tags(id, &tags)?;
            }
            let tags = store.tags(id)?.join(", ");
            common::print(&format!("run {id}: tags {}\n", printable(&tags)));
            Ok(0)
        }
        ResultsCommand::Label { id, label } => {
            ctx.open_existing()?.set_label(id, &label)?;
            common::print(&format!("run {id}: label '{label}'\n"));
            Ok(0)
        }
        ResultsCommand::Export(ExportArgs {
            ids,
            bundle: Some(b),
            ..
        }) => transfer::export(&ctx.open_read()?, &ids, &b),
        ResultsCommand::Import(ImportArgs {
            bundle: Some(b), ..
        }) => transfer::import(&mut ctx.open_store()?, &b),
        ResultsCommand::Export(e) => {
            let store = ctx.open_read()?;
            let runs = e
                .ids
                .iter()
                .map(|&id| store.load(id))
                .collect::<Result<Vec<_>>>()?;
            let text = format::export(&runs, e.format)?;
            write_output("--output", e.output.as_deref(), &text)?;
            Ok(0)
        }
        ResultsCommand::Import(i) => results_import::run(&mut ctx.open_store()?, &i),
        ResultsCommand::Push(p) => transfer::push(&ctx.open_read()?, &p),
        ResultsCommand::Pull(p) => transfer::pull(&mut ctx.open_store()?, &p),
        ResultsCommand::Campaigns { id } => campaigns(&ctx.open_read()?, id),
        ResultsCommand::Check => {
            let store = ctx.open_read()?;
            let found = store.check()?;
            common::print(&text::results::checked(store.path(), &found));
            Ok(if found.is_whole() {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
        ResultsCommand::Backup { file } => {
            let store = ctx.open_read()?;
            let backed = store.backup(&file)?;
            common::print(&text::results::backed_up(store.path(), &file, &backed));
            Ok(if backed.problems.is_empty() {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
    }
}

fn list(store: &Store, a: &ListArgs) -> Result<i32> {
    let filter = ListFilter {
        limit: a.last,
        ..a.filter.to_filter()?
    };
    let rows = store.list_where(&filter)?;
    if let Some(by) = a.by.by {
        return list_groups(store, a, &rows, by);
    }
    let text = if a.json {
        json::run_rows(&rows)?
    } else {
        text::results::list(&rows, a.unit, store.path())
    };
    write_output("--output", None, &text)?;
    Ok(0)
}

/// `rtlab results list --by`: the runs of `rows` merged, one line per group.
fn list_groups(store: &Store, a: &ListArgs, rows: &[RunRow], by: By) -> Result<i32> {
    if rows.is_empty() {
        return Err(UsageError(format!(
            "no runs match in {} (see 'rtlab results list' without --by)",
            store.path().display()
        ))
        .into());
    }
    // Oldest first, as compare --by takes them.
    let runs = rows
        .iter()
        .rev()
        .map(|r| store.load_primary(r.id))
        .collect::<Result<Vec<_>>>()?;
    let groups = a.by.groups(runs, by, a.filter.fleet())?;
    let (_, table) = group::compare_groups(&groups, by, 0, DEFAULT_NOISE);
    let text = if a.json {
        json::group_rows(&table)?
    } else {
        text::results::groups(&table, by.name(), a.unit)
    };
    write_output("--output", None, &text)?;
    Ok(0)
}

fn show(store: &Store, a: &ShowArgs) -> Result<i32> {
    let run = store.load(a.id)?;
    let text = if a.json {
        format::export(std::slice::from_ref(&run), Format::Json)?
    } else {
        text::run::show(&run, a.unit)?
    };
    write_output("--output", None, &text)?;
    Ok(0)
}

fn campaigns(store: &Store, id: Option<i64>) -> Result<i32> {
    let text = match id {
        Some(id) => text::results::campaign(&store.load_campaign(id)?),
        None => text::results::campaigns(store.list_campaigns()?),
    };
    write_output("--output", None, &text)?;
    Ok(0)
}
