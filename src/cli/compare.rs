//! `rtlab compare`: runs side by side, verdicts against deadlines, what differs
//! between them, plots and an HTML report.

use super::common::{self, Context};
use crate::analysis::compare;
use crate::analysis::diff::differences;
use crate::analysis::verdict::{self, Requirement};
use crate::error::{bad_flag, UsageError, EXIT_FAILED, EXIT_OK};
use crate::format::svg::primary_histograms;
use crate::format::{csv, html, markdown, run_name, svg, text};
use crate::record::{Run, Status};
use crate::scenario::runner::{campaign_steps, step_view};
use crate::store::{self, Store};
use crate::units::TimeUnit;
use anyhow::{Context as _, Result};
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Compare stored runs side by side and decide against deadlines.
///
/// A run is named by its id (12), by its label (the newest complete run with that
/// label) or as label@N (the Nth newest run with that label, whatever its status;
/// @1 is the newest). Each run is one column; the best value of each row is marked
/// and every value is also given as a ratio to the baseline run.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Runs to compare, one column each: an id (12), a label (the newest complete
    /// run with that label) or label@N (the Nth newest run with that label, any
    /// status; @1 is the newest).
    #[arg(value_name = "RUN")]
    runs: Vec<String>,
    /// Also compare every step of this campaign (`rtlab run`), one column per
    /// step, named after the step; repeatable.
    #[arg(long, value_name = "ID")]
    campaign: Vec<i64>,
    /// Also compare the newest complete run of every label matching this SQL LIKE
    /// pattern ('%' any text, '_' one character); repeatable.
    #[arg(long, value_name = "PATTERN")]
    label_like: Vec<String>,
    /// Ratios are to this run (default: the first); added as first column if not listed.
    #[arg(long, value_name = "RUN")]
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
    /// Write the overlaid histograms of all runs to this SVG file.
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    svg: Option<PathBuf>,
    #[command(flatten)]
    files: ReportFiles,
    /// Unit of times in the table.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

/// `--require`, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct RequireArgs {
    /// A deadline budget NAME=BUDGET (e.g. gyro=1ms; a bare number is µs) or a
    /// preset (drone, messaging); repeatable. A run passes when its observed
    /// maximum latency is within the budget. Exit 1 if any run fails one.
    #[arg(long = "require", value_name = "NAME=BUDGET|PRESET")]
    require: Vec<String>,
}

impl RequireArgs {
    /// The requirements, presets expanded.
    pub fn parse(&self) -> Result<Vec<Requirement>> {
        let mut out = Vec::new();
        for r in &self.require {
            out.extend(verdict::parse_requirement(r).map_err(|e| bad_flag("--require", e))?);
        }
        Ok(out)
    }
}

/// HTML report and plot directory, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct ReportFiles {
    /// Write a self-contained HTML report (inline SVG plots) to this file.
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    html: Option<PathBuf>,
    /// Title of the HTML report.
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Write every plot as an SVG file into this directory (histograms.svg,
    /// percentiles.svg, run-ID-threads.svg, run-ID-time.svg).
    #[arg(long, value_name = "DIR", value_parser = common::output_dir)]
    plots: Option<PathBuf>,
}

impl ReportFiles {
    /// The files to write: path, flag, content. Built completely before anything
    /// is written, so an error leaves nothing half-written.
    pub fn render(
        &self,
        default_title: &str,
        runs: &[Run],
        reqs: &[Requirement],
        unit: TimeUnit,
    ) -> Result<Vec<(PathBuf, &'static str, String)>> {
        let mut out = Vec::new();
        if let Some(path) = &self.html {
            let title = self.title.as_deref().unwrap_or(default_title);
            out.push((
                path.clone(),
                "--html",
                html::render(title, runs, reqs, unit)?,
            ));
        }
        if let Some(dir) = &self.plots {
            for (name, svg) in plot_files(runs)? {
                out.push((dir.join(name), "--plots", svg));
            }
        }
        Ok(out)
    }
}

fn overlay(runs: &[Run]) -> Result<Option<String>> {
    svg::histograms("Latency histograms", &primary_histograms(runs))
}

/// Every plot of `runs`, by file name.
fn plot_files(runs: &[Run]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let hists = primary_histograms(runs);
    if let Some(s) = svg::histograms("Latency histograms", &hists)? {
        out.push(("histograms.svg".to_string(), s));
    }
    if let Some(s) = svg::percentiles("Latency by percentile", &hists)? {
        out.push(("percentiles.svg".to_string(), s));
    }
    for run in runs {
        let id = run.id.unwrap_or(0);
        if let Some(s) = svg::run_threads(run)? {
            out.push((format!("run-{id}-threads.svg"), s));
        }
        if let Some(s) = svg::run_over_time(run)? {
            out.push((format!("run-{id}-time.svg"), s));
        }
    }
    Ok(out)
}

/// Writes each file next to its final name, then renames it into place, so that
/// a reader never sees half a file.
fn write_files(files: &[(PathBuf, &'static str, String)]) -> Result<()> {
    for (path, flag, content) in files {
        // Only --plots' own directory is ever made, below one that exists:
        // the flags' parsers checked that.
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
        {
            std::fs::create_dir(dir)
                .map_err(|e| bad_flag(flag, format!("cannot create {}: {e}", dir.display())))?;
        }
        let tmp = path.with_extension("rtlab-tmp");
        std::fs::write(&tmp, content)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                bad_flag(flag, format!("cannot write {}: {e}", path.display()))
            })?;
    }
    Ok(())
}

/// Writes the files, prints `text` on stdout (a closed pipe is not an error) and
/// returns the exit code of the verdicts: 1 when any failed.
pub fn finish(
    files: &[(PathBuf, &'static str, String)],
    text: &str,
    verdicts: &[verdict::Verdict],
) -> Result<i32> {
    write_files(files)?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    for (path, _, _) in files {
        eprintln!("wrote {}", path.display());
    }
    Ok(if verdicts.iter().all(|v| v.passed()) {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}

/// Opens the results store for reading; a missing database is an input error
/// rather than a new empty file.
pub fn open_existing(ctx: &Context) -> Result<Store> {
    let path = store::default_path(ctx.db.as_deref())?;
    if !path.exists() {
        return Err(UsageError(format!(
            "no results database at {}: measure something first (e.g. rtlab latency), or name the database with --db PATH or RTLAB_DB",
            path.display()
        ))
        .into());
    }
    Store::open(&path)
}

/// The runs to compare, in column order, without repeats, and the baseline index.
fn select(store: &Store, a: &CompareArgs) -> Result<(Vec<i64>, usize)> {
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
    let baseline = match &a.baseline {
        None => 0,
        Some(sel) => {
            let id = store.resolve(sel).context("--baseline")?;
            match ids.iter().position(|&i| i == id) {
                Some(i) => i,
                None => {
                    ids.insert(0, id);
                    0
                }
            }
        }
    };
    if ids.is_empty() {
        return Err(UsageError(
            "nothing to compare: name runs by id, label or label@N, or use --label-like PATTERN (see 'rtlab results list')".into(),
        )
        .into());
    }
    Ok((ids, baseline))
}

/// Longest value shown in the text "what differs" table (the HTML shows all).
const DIFF_CELL_MAX: usize = 40;

/// `s`, cut to `max` characters with an ellipsis.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// The "what differs" table as text (left-aligned, long values clipped), or a
/// sentence when nothing differs.
fn differences_text(runs: &[Run]) -> String {
    let d = differences(runs);
    if d.is_empty() {
        return "what differs: nothing (same system fingerprint and parameters)\n".into();
    }
    let mut lines: Vec<Vec<String>> = vec![std::iter::once("field".to_string())
        .chain(runs.iter().map(run_name))
        .collect()];
    for d in d {
        let values = d.values.iter().map(|v| clip(v, DIFF_CELL_MAX));
        lines.push(std::iter::once(d.field).chain(values).collect());
    }
    let mut width = vec![0; lines[0].len()];
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::from("what differs:\n");
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .zip(&width)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Warnings of all runs as text lines, and which runs did not complete.
pub fn warnings_text(runs: &[Run]) -> String {
    let mut out = String::new();
    for r in runs {
        if r.status != Status::Complete {
            out.push_str(&format!(
                "  ! {}: status: the run is {}: its figures cover only what was observed\n",
                run_name(r),
                r.status.name()
            ));
        }
        for w in &r.warnings {
            out.push_str(&format!("  ! {}: {}: {}\n", run_name(r), w.code, w.message));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("warnings:\n{out}")
    }
}

/// Runs `rtlab compare`.
pub fn run(ctx: &Context, a: CompareArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = open_existing(ctx)?;
    let (ids, baseline) = select(&store, &a)?;
    let mut runs = ids
        .iter()
        .map(|&id| store.load(id))
        .collect::<Result<Vec<Run>>>()?;
    // A campaign's runs share one label: name them after their steps.
    for &c in &a.campaign {
        for view in step_view(&campaign_steps(&store, c)?) {
            if let Some(r) = runs.iter_mut().find(|r| r.id == view.id) {
                r.label = view.label;
            }
        }
    }
    let table = compare::compare(&runs, baseline);
    let verdicts = verdict::judge(&runs, &reqs);

    let mut files = Vec::new();
    if let Some(path) = &a.svg {
        match overlay(&runs)? {
            Some(s) => files.push((path.clone(), "--svg", s)),
            None => {
                return Err(bad_flag(
                    "--svg",
                    "none of these runs holds a latency histogram to plot",
                ))
            }
        }
    }
    let names: Vec<String> = runs.iter().map(run_name).collect();
    let title = format!("rtlab compare: {}", names.join(" vs "));
    files.extend(a.files.render(&title, &runs, &reqs, a.unit)?);

    let text = if a.json {
        let doc = json!({
            "format": crate::record::FORMAT,
            "kind": "compare",
            "comparison": table,
            "requirements": reqs,
            "verdicts": verdicts,
            "differences": differences(&runs),
        });
        serde_json::to_string_pretty(&doc)? + "\n"
    } else if a.csv {
        csv::comparison(&table)
    } else if a.markdown {
        markdown::comparison_with_verdicts(&table, &verdicts, a.unit)
    } else {
        let mut out = text::compare::render_text(&table, a.unit);
        if !verdicts.is_empty() {
            out.push('\n');
            out.push_str(&text::verdict::render_text(&verdicts));
        }
        if runs.len() > 1 {
            out.push('\n');
            out.push_str(&differences_text(&runs));
        }
        let warnings = warnings_text(&runs);
        if !warnings.is_empty() {
            out.push('\n');
            out.push_str(&warnings);
        }
        out
    };
    finish(&files, &text, &verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{run_from_samples, series_from_samples};

    #[test]
    fn plot_files_cover_every_chart() {
        let mut a = run_from_samples("a", &[1_000, 2_000]);
        a.id = Some(3);
        let mut b = a.clone();
        b.id = Some(4);
        b.series.push(series_from_samples("cpu1", &[3_000]));
        let files: Vec<String> = plot_files(&[a, b])
            .unwrap()
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(
            files,
            vec![
                "histograms.svg",
                "percentiles.svg",
                "run-3-time.svg",
                "run-4-threads.svg",
                "run-4-time.svg"
            ],
            "per-thread plots only for runs with several threads"
        );
    }

    #[test]
    fn differences_are_left_aligned_and_clipped() {
        let mut a = run_from_samples("a", &[1_000]);
        let mut b = run_from_samples("bb", &[1_000]);
        a.id = Some(1);
        b.id = Some(2);
        b.fingerprint.hz = Some(1000);
        b.fingerprint.cmdline = "x".repeat(50);
        let text = differences_text(&[a, b]);
        let want = format!(
            "what differs:\nfield    a #1  bb #2\nHZ       -     1000\ncmdline  -     {}…\n",
            "x".repeat(39)
        );
        assert_eq!(text, want);
        assert_eq!(clip("abc", 3), "abc");
    }

    #[test]
    fn unfinished_runs_and_warnings_are_listed() {
        let mut a = run_from_samples("a", &[1_000]);
        a.id = Some(1);
        assert_eq!(warnings_text(std::slice::from_ref(&a)), "");
        a.status = Status::Interrupted;
        a.warnings
            .push(crate::record::Warning::new("vm", "under kvm"));
        assert_eq!(
            warnings_text(&[a]),
            "warnings:\n  ! a #1: status: the run is interrupted: its figures cover only what was observed\n  ! a #1: vm: under kvm\n"
        );
    }

    #[test]
    fn files_are_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("sub/a.svg");
        write_files(&[(good.clone(), "--svg", "<svg/>".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "<svg/>");
        let bad = dir.path().join("a.svg/inside-a-file.svg");
        std::fs::write(dir.path().join("a.svg"), "x").unwrap();
        let e = write_files(&[(bad, "--html", "x".into())]).unwrap_err();
        assert!(e.to_string().starts_with("--html: cannot"), "{e}");
    }
}
