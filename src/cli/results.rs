//! `rtlab results`: list, show, delete, tag, label, export and import stored runs,
//! and list the campaigns they belong to.

use super::common::{self, write_output, Context};
use crate::error::{bad_flag, UsageError, EXIT_INTERRUPTED, EXIT_OK};
use crate::format::text::progress::{self, Progress};
use crate::format::{self, json, text, Format};
use crate::import;
use crate::store::{CampaignStatus, ListFilter, Store};
use crate::units::{parse_since, TimeUnit};
use anyhow::Result;
use clap::{Args, Subcommand};
use rtlab_engine::rt::signals;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Stored runs: list, show, change, export, import.
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
        label: String,
    },
    /// Write a run as rtlab JSON, CSV (also several runs), or a cyclictest -h histogram.
    Export(ExportArgs),
    /// Import what cyclictest (summary, live view, -v, -h/-H, --json), sysbench (0.4, 1.0) or
    /// stress-ng (--metrics-brief, --yaml) printed, or rtlab JSON.
    Import(ImportArgs),
    /// Campaigns (runs of one invocation): list them, or show one's steps.
    #[command(after_long_help = "Examples:
  rtlab results campaigns
  rtlab results campaigns 3")]
    Campaigns {
        /// Show this campaign's steps and runs [default: list every campaign].
        id: Option<i64>,
    },
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results list --last 10
  rtlab results list --kind latency --since 2d
  rtlab results list --label 'rt%' --json")]
struct ListArgs {
    /// Only this label (SQL LIKE pattern when it contains %) [default: any].
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Only this kind (latency, net, bench.cpu, ...; "bench" for all benchmarks)
    /// [default: any].
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Only runs started within this long (30m, 12h, 2d, 1w) or since a date
    /// (2026-05-01, RFC 3339) [default: any time].
    #[arg(long, value_name = "AGE|DATE")]
    since: Option<String>,
    /// Only runs with this tag [default: any].
    #[arg(long, value_name = "TAG", value_parser = common::tag_value)]
    tag: Option<String>,
    /// Only runs of this campaign [default: any].
    #[arg(long, value_name = "ID")]
    campaign: Option<i64>,
    /// Only the newest N of the matching runs [default: all].
    #[arg(short = 'n', long, value_name = "N")]
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
  rtlab results export 12 --format hist > hist.txt")]
struct ExportArgs {
    /// Run ids (several only with --format csv: one table).
    #[arg(required = true, value_name = "ID")]
    ids: Vec<i64>,
    /// Output format (hist = cyclictest -h layout, one column per thread).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of stdout ("-": stdout) [default: stdout].
    #[arg(short, long, value_name = "PATH", value_parser = common::output_file)]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results import ct.txt
  rtlab results import ct.txt --label stock --tag lab
  rtlab results import cpu.txt memory.txt fileio.txt --label 'rt 6.6'")]
struct ImportArgs {
    /// Files to import (cyclictest, sysbench, stress-ng or rtlab output; the
    /// format is read from the file); several files make one campaign.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Label of the imported runs [default: the kernel named in the file, else
    /// the file's name].
    #[arg(long, value_name = "TEXT", value_parser = common::label_value)]
    label: Option<String>,
    /// Tag the imported runs (repeatable) [default: no tags].
    #[arg(long = "tag", value_name = "TAG", value_parser = common::tag_value)]
    tags: Vec<String>,
    /// The sysbench test the files come from, checked against what the report
    /// says; sysbench 1.0's threads and mutex reports look alike, and are told
    /// apart by their events per thread (mutex runs one) unless this names one
    /// [default: read from the file].
    #[arg(long, value_name = "TEST", value_parser = clap::builder::PossibleValuesParser::new(import::SYSBENCH_TESTS))]
    sysbench_test: Option<String>,
}

/// Runs `rtlab results`.
pub fn run(ctx: &Context, a: ResultsArgs) -> Result<i32> {
    let mut store = ctx.open_store()?;
    match a.command {
        ResultsCommand::List(l) => list(&store, &l),
        ResultsCommand::Show(s) => show(&store, &s),
        ResultsCommand::Windows(w) => w.run(&store),
        ResultsCommand::Delete { ids } => {
            let n = store.delete(&ids)?;
            common::print(&format!("deleted {n} run(s)\n"));
            Ok(0)
        }
        ResultsCommand::Tag { id, tags, remove } => {
            if remove {
                let n = store.remove_tags(id, &tags)?;
                common::print(&format!("run {id}: removed {n} tag(s)\n"));
            } else {
                store.add_tags(id, &tags)?;
            }
            common::print(&format!("run {id}: tags {}\n", store.tags(id)?.join(", ")));
            Ok(0)
        }
        ResultsCommand::Label { id, label } => {
            if label.trim().is_empty() {
                return Err(UsageError("the new label is empty; give some text".into()).into());
            }
            store.set_label(id, &label)?;
            common::print(&format!("run {id}: label '{label}'\n"));
            Ok(0)
        }
        ResultsCommand::Export(e) => {
            let runs = e
                .ids
                .iter()
                .map(|&id| store.load(id))
                .collect::<Result<Vec<_>>>()?;
            let text = format::export(&runs, e.format)?;
            write_output("--output", e.output.as_deref(), &text)?;
            Ok(0)
        }
        ResultsCommand::Import(i) => import_files(&mut store, &i),
        ResultsCommand::Campaigns { id } => campaigns(&store, id),
    }
}

fn list(store: &Store, a: &ListArgs) -> Result<i32> {
    let since = a
        .since
        .as_deref()
        .map(|s| parse_since(s, chrono::Utc::now()).map_err(|e| bad_flag("--since", e)))
        .transpose()?;
    let filter = ListFilter {
        label: a.label.clone(),
        kind: a.kind.clone(),
        since,
        tag: a.tag.clone(),
        campaign: a.campaign,
    };
    let mut rows = store.list_where(&filter)?;
    if let Some(n) = a.last {
        rows.truncate(n);
    }
    let text = if a.json {
        json::run_rows(&rows)?
    } else {
        text::results::list(&rows, a.unit, store.path())
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

fn import_files(store: &mut Store, a: &ImportArgs) -> Result<i32> {
    let opts = import::Options {
        label: a.label.clone(),
        sysbench_test: a.sysbench_test.clone(),
    };
    // Ctrl-C/SIGTERM stops between files: before writing, nothing is written;
    // while writing, the runs saved so far stay and the campaign says so.
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    // Every file is read and checked before anything is written.
    let mut runs = Vec::with_capacity(a.files.len());
    let progress = Progress::steps(
        progress::wanted(false),
        "file",
        "reading",
        a.files.len() as u64,
    );
    for f in &a.files {
        if stopped() {
            progress
                .suspend(|| eprintln!("interrupted while reading the files: nothing was imported"));
            return Ok(EXIT_INTERRUPTED);
        }
        let mut run = import::import_file(f, &opts)?;
        for t in &a.tags {
            if !run.tags.contains(t) {
                run.tags.push(t.clone());
            }
        }
        runs.push(run);
        progress.inc();
    }
    drop(progress);
    let campaign = if runs.len() > 1 {
        let scenario = std::env::args().collect::<Vec<_>>().join(" ");
        Some(store.create_campaign("import", &scenario, &runs[0].fingerprint)?)
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    let mut saved = 0;
    for (i, (run, file)) in runs.iter().zip(&a.files).enumerate() {
        if stopped() {
            break;
        }
        let id = store.save(run)?;
        saved += 1;
        if let Some(c) = campaign {
            store.add_campaign_run(c, i as i64, &file.display().to_string(), id)?;
        }
        let _ = write!(out, "{}", text::results::imported(id, run, file));
    }
    let interrupted = saved < runs.len();
    if let Some(c) = campaign {
        let status = if interrupted {
            CampaignStatus::Interrupted
        } else {
            CampaignStatus::Complete
        };
        store.set_campaign_status(c, status)?;
        let _ = writeln!(out, "campaign {c}: {saved} runs");
    }
    if interrupted {
        eprintln!(
            "interrupted: {saved} of {} files imported, the others not",
            runs.len()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

fn campaigns(store: &Store, id: Option<i64>) -> Result<i32> {
    let text = match id {
        Some(id) => text::results::campaign(&store.load_campaign(id)?),
        None => text::results::campaigns(store.list_campaigns()?),
    };
    write_output("--output", None, &text)?;
    Ok(0)
}
