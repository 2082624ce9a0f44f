//! `rtlab compare`: runs side by side, verdicts against deadlines, what differs
//! between them, plots and an HTML report.

use super::common::{self, Context};
use super::reportargs::{finish, ReportFiles, RequireArgs};
use super::selection::{chosen, described, ByArgs, FleetFilter};
use crate::analysis::diff::differences;
use crate::analysis::{compare, group, verdict};
use crate::error::{bad_flag, UsageError};
use crate::format::svg::Overlay;
use crate::format::text::progress::{self, Progress};
use crate::format::{csv, json, markdown, run_name, text, Exporter, Options};
use crate::record::Run;
use crate::scenario::runner::{campaign_steps, step_view};
use crate::store::Store;
use crate::units::TimeUnit;
use anyhow::{Context as _, Result};
use clap::Args;
use std::path::PathBuf;

/// Compare stored runs side by side and decide against deadlines.
///
/// A run is named by its id (12), by its label (the newest complete run with that
/// label) or as label@N (the Nth newest run with that label, whatever its status;
/// @1 is the newest), or chosen by where and when it ran (--host, --kernel,
/// --tag, --kind, --since, --until). Each run is one column, or with --by each
/// host, kernel or tag is one column of its runs merged; the best value of each
/// row is marked and every value is also given as a ratio to the baseline.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab compare stock rt
  rtlab compare 12 13 14 --baseline 13 --require gyro=1ms
  rtlab compare --campaign 3 --html campaign.html
  rtlab compare --kernel 6.6.0-rt --by host --since 30d
  rtlab compare --host board7 --by kernel --baseline 6.1.0 --require gyro=1ms")]
pub struct CompareArgs {
    /// Runs to compare, one column each: an id (12), a label (the newest complete
    /// run with that label) or label@N (the Nth newest run with that label, any
    /// status; @1 is the newest) [default: none; at least one RUN, --campaign,
    /// --label-like, a filter (--host, ...) or --by].
    #[arg(value_name = "RUN")]
    runs: Vec<String>,
    /// Also compare every step of this campaign (`rtlab run`), one column per
    /// step, named after the step; repeatable [default: none].
    #[arg(long, value_name = "ID")]
    campaign: Vec<i64>,
    /// Also compare the newest complete run of every label matching this SQL LIKE
    /// pattern ('%' any text, '_' one character); repeatable [default: none].
    #[arg(long, value_name = "PATTERN")]
    label_like: Vec<String>,
    #[command(flatten)]
    fleet: FleetFilter,
    #[command(flatten)]
    by: ByArgs,
    /// Ratios are to this run (added as first column if not listed), or with
    /// --by to this group (a host, kernel release or tag) [default: the first
    /// column].
    #[arg(long, value_name = "RUN|GROUP")]
    baseline: Option<String>,
    #[command(flatten)]
    req: RequireArgs,
    /// Print the table as markdown.
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    markdown: bool,
    /// Print one JSON document (table, verdicts, differences; times in ns).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the table as CSV, one line per figure and run (times in ns).
    #[arg(long)]
    csv: bool,
    /// Write the overlaid histograms of all runs to this SVG file [default: none].
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    svg: Option<PathBuf>,
    #[command(flatten)]
    files: ReportFiles,
    /// Unit of times in the table.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

/// The runs to compare, in column order, without repeats: those named, then
/// those the filters choose (oldest first).
fn select(store: &Store, a: &CompareArgs) -> Result<Vec<i64>> {
    let mut ids: Vec<i64> = Vec::new();
    let add = |id: i64, ids: &mut Vec<i64>| {
        if ids.contains(&id) {
            eprintln!("rtlab: note: run {id} is named twice; it is compared once");
        } else {
            ids.push(id);
        }
    };
    for sel in &a.runs {
        add(store.resolve(sel)?, &mut ids);
    }
    for &c in &a.campaign {
        for s in campaign_steps(store, c)? {
            add(s.run.id.unwrap_or_default(), &mut ids);
        }
    }
    for pattern in &a.label_like {
        let labels = store.labels_like(pattern)?;
        if labels.is_empty() {
            return Err(bad_flag(
                "--label-like",
                format!("no label matches '{pattern}' ('%' matches any text, e.g. '4.19%')"),
            ));
        }
        for label in labels {
            match store.resolve(&label) {
                Ok(id) => add(id, &mut ids),
                Err(e) => eprintln!("rtlab: note: --label-like skips '{label}': {e:#}"),
            }
        }
    }
    if a.fleet.is_set() && !ids.is_empty() {
        return Err(UsageError(format!(
            "{} chooses runs on its own: name runs (RUN, --campaign, --label-like) or choose them with filters, not both",
            a.fleet.describe()
        ))
        .into());
    }
    if a.fleet.is_set() || (a.by.by.is_some() && ids.is_empty()) {
        ids = chosen(store, &a.fleet, a.by.by.is_some())?;
    }
    if ids.is_empty() {
        return Err(UsageError(
            "nothing to compare: name runs by id, label or label@N, use --label-like PATTERN, or choose runs with --host, --kernel, --tag, --since or --by (see 'rtlab results list')".into(),
        )
        .into());
    }
    Ok(ids)
}

/// The column of `--baseline` among `ids`, added first when not there.
fn baseline_run(store: &Store, a: &CompareArgs, ids: &mut Vec<i64>) -> Result<usize> {
    let Some(sel) = &a.baseline else {
        return Ok(0);
    };
    let id = store.resolve(sel).context("--baseline")?;
    Ok(match ids.iter().position(|&i| i == id) {
        Some(i) => i,
        None => {
            ids.insert(0, id);
            0
        }
    })
}

/// Runs `rtlab compare`.
pub fn run(ctx: &Context, a: CompareArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = ctx.open_read()?;
    let mut ids = select(&store, &a)?;
    let baseline = match a.by.by {
        Some(_) => 0,
        None => baseline_run(&store, &a, &mut ids)?,
    };
    let progress = Progress::steps(progress::wanted(false), "run", "loading", ids.len() as u64);
    // Groups merge the series that stand for each run, and need no other.
    let load = match a.by.by {
        Some(_) => Store::load_primary,
        None => Store::load,
    };
    let mut runs = ids
        .iter()
        .map(|&id| load(&store, id).inspect(|_| progress.inc()))
        .collect::<Result<Vec<Run>>>()?;
    drop(progress);
    // A campaign's runs share one label: name them after their steps.
    for &c in &a.campaign {
        for view in step_view(&campaign_steps(&store, c)?) {
            if let Some(r) = runs.iter_mut().find(|r| r.id == view.id) {
                r.label = view.label;
            }
        }
    }
    let (runs, table, title) = match a.by.by {
        None => {
            let table = compare::compare(&runs, baseline);
            let names: Vec<String> = runs.iter().map(run_name).collect();
            let title = format!("rtlab compare: {}", names.join(" vs "));
            (runs, table, title)
        }
        Some(by) => {
            let groups = a.by.groups(runs, by, &a.fleet)?;
            let baseline = a.by.baseline(&groups, a.baseline.as_deref())?;
            let (runs, table) = group::compare_groups(&groups, by, baseline);
            let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
            let title = format!("rtlab compare by {}: {}", by.name(), names.join(" vs "));
            (runs, table, title)
        }
    };
    let verdicts = verdict::judge(&runs, &reqs);
    let opts = Options {
        unit: a.unit,
        title: &title,
        reqs: &reqs,
    };
    // Plots and pages name each group with its runs.
    let infos: Vec<_> = table.columns.iter().map(|c| c.group.clone()).collect();
    let shown = described(&runs, &infos);
    let mut files = Vec::new();
    if let Some(path) = &a.svg {
        files.push((path.clone(), "--svg", Overlay.serialize(&shown, &opts)?));
    }
    files.extend(a.files.render(&shown, &opts)?);

    let text = if a.json {
        json::comparison(&table, &reqs, &verdicts, &differences(&runs))?
    } else if a.csv {
        csv::comparison(&table)
    } else if a.markdown {
        markdown::comparison_with_verdicts(&table, &verdicts, a.unit)
    } else {
        text::compare::report(&runs, &table, &verdicts, a.unit)
    };
    finish(&files, &text, &verdicts)
}
