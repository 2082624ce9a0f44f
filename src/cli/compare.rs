//! `rtlab compare`: runs side by side, each figure with its interval and its
//! change against the baseline, verdicts against deadlines, what differs, the
//! decision, plots and an HTML report. Campaigns are compared step by step;
//! runs of different kinds are never compared with each other.

use super::common::{self, Context};
use super::reportargs::{finish, CiArgs, NoiseArgs, ReportFiles, RequireArgs};
use super::selection::{
    campaign_pairings, campaign_side, chosen, mixed_sides, pair_by_step, side, steps_by_base,
    ByArgs, Entry, FleetFilter, Side,
};
use crate::analysis::arms::Arm;
use crate::analysis::outcome::{analyse, by_kind, Outcome, Pairing};
use crate::error::{bad_flag, UsageError};
use crate::format::svg::Overlay;
use crate::format::{csv, json, markdown, text, Exporter, Options};
use crate::progress::{self, Progress};
use crate::record::Run;
use crate::store::Store;
use crate::units::TimeUnit;
use anyhow::{Context as _, Result};
use clap::Args;
use std::path::{Path, PathBuf};

/// Compare stored runs side by side and decide against deadlines.
///
/// A run is named by its id (12), by its label (the newest complete run with
/// that label) or as label@N (the Nth newest run with that label, whatever its
/// status; @1 is the newest). A label whose newest run is a step of a campaign
/// (rtlab run --label) stands for all of that campaign's steps with the label,
/// and label@STEP (e.g. image1@cpu) for one of them, by name, with its repeats.
/// Runs are also chosen by where and when they ran (--host, --kernel, --tag,
/// --kind, --since, --until). Campaigns are compared step by step: one
/// comparison per step (cpu with cpu, fileio with fileio). Runs of different
/// kinds are never compared: they are split into one comparison each.
///
/// Every figure carries its 95% interval; a column is better or worse than the
/// baseline only when the intervals lie apart by more than the noise threshold
/// (--noise), else "≈ no real difference" (docs/decisions.md). The output ends
/// with the decision: the deadline tier matrix, the most stable benchmark run,
/// the biggest real change and what differs that could explain it. Exit 1 when
/// a verdict fails, 4 when one is undecided.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab compare stock rt
  rtlab compare 12 13 14 --baseline 13 --require gyro=1ms
  rtlab compare image1 image2 image3
  rtlab compare image1@cpu image2@cpu --noise 2%
  rtlab compare --campaign 3 --campaign 4 --html campaigns.html
  rtlab compare stock rt --require drone --junit rtlab-junit.xml
  rtlab compare stock rt --require gyro=1ms --tap
  rtlab compare --kernel 6.6.0-rt --by host --since 30d
  rtlab compare --tag drone --by kernel --by-step --require drone")]
pub struct CompareArgs {
    /// Runs to compare: an id (12), a label (the newest complete run with that
    /// label; a campaign's steps when that run is one), label@N (the Nth newest
    /// run with that label, any status; @1 is the newest) or label@STEP (the
    /// step named STEP of the newest campaign with that label, with its
    /// repeats) [default: none; at least one RUN, --campaign, --label-like, a
    /// filter (--host, ...) or --by].
    #[arg(value_name = "RUN")]
    runs: Vec<String>,
    /// Also compare this campaign (`rtlab run`): with one campaign its steps
    /// side by side (those of one kind), with several step by step (one
    /// comparison per step name); repeatable [default: none].
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
    /// One comparison per campaign step name: the chosen runs (by RUN, filters
    /// or --by) are paired by the step each was saved as, one column per label
    /// (or --by group); runs of no campaign are refused [default: only when
    /// comparing campaigns].
    #[arg(long)]
    by_step: bool,
    /// Changes are judged against this run (added as first column if not
    /// listed), or with --by to this group (a host, kernel release or tag), or
    /// when campaigns are paired to this column (a label) [default: the first
    /// column of each comparison].
    #[arg(long, value_name = "RUN|GROUP")]
    baseline: Option<String>,
    #[command(flatten)]
    req: RequireArgs,
    #[command(flatten)]
    noise: NoiseArgs,
    /// Print the tables as markdown.
    #[arg(long, conflicts_with_all = ["json", "csv", "tap"])]
    markdown: bool,
    /// Print one JSON document: each comparison with every cell (value,
    /// interval, change), its verdicts, what differs and its decision (times
    /// in ns).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the comparisons as CSV, one line per comparison, figure and
    /// column (times in ns).
    #[arg(long, conflicts_with = "tap")]
    csv: bool,
    /// Write the overlaid histograms to this SVG file; with several
    /// comparisons one file each, numbered before the extension (hist-1.svg)
    /// [default: none].
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    svg: Option<PathBuf>,
    #[command(flatten)]
    files: ReportFiles,
    #[command(flatten)]
    ci: CiArgs,
    /// Unit of times in the table.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

/// What the selectors and options stand for, in order, each with the text
/// that named it.
fn sides(store: &Store, a: &CompareArgs) -> Result<Vec<(String, Side)>> {
    // Groups merge the series that stand for each run, and need no other.
    let load = match a.by.by {
        Some(_) => Store::load_primary,
        None => Store::load,
    };
    let named = !a.runs.is_empty() || !a.campaign.is_empty() || !a.label_like.is_empty();
    if a.fleet.is_set() && named {
        return Err(UsageError(format!(
            "{} chooses runs on its own: name runs (RUN, --campaign, --label-like) or choose them with filters, not both",
            a.fleet.describe()
        ))
        .into());
    }
    let chosen = match a.fleet.is_set() || (a.by.by.is_some() && !named) {
        true => chosen(store, &a.fleet, a.by.by.is_some())?,
        false => Vec::new(),
    };
    let len = (a.runs.len() + chosen.len()) as u64;
    let progress = Progress::steps(progress::wanted(false), "run", "loading", len);
    let mut out: Vec<(String, Side)> = Vec::new();
    for sel in &a.runs {
        out.push((sel.clone(), side(store, sel, load)?));
        progress.inc();
    }
    for &c in &a.campaign {
        out.push((format!("--campaign {c}"), campaign_side(store, c)?));
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
            match side(store, &label, load) {
                Ok(s) => out.push((label, s)),
                Err(e) => eprintln!("rtlab: note: --label-like skips '{label}': {e:#}"),
            }
        }
    }
    for id in chosen {
        out.push((id.to_string(), Side::Arm(Arm::of_run(load(store, id)?))));
        progress.inc();
    }
    drop(progress);
    if out.is_empty() {
        return Err(UsageError(
            "nothing to compare: name runs by id, label, label@N or label@STEP, use --campaign ID or --label-like PATTERN, or choose runs with --host, --kernel, --tag, --since or --by (see 'rtlab results list')".into(),
        )
        .into());
    }
    Ok(out)
}

/// Every run of single-column `sides` once (a run named twice is compared
/// once).
fn runs_of(sides: Vec<(String, Side)>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (_, s) in sides {
        let Side::Arm(arm) = s else { continue };
        for r in arm.runs {
            if r.id.is_some() && runs.iter().any(|x| x.id == r.id) {
                eprintln!(
                    "rtlab: note: run {} is named twice; it is compared once",
                    r.id.unwrap_or_default()
                );
            } else {
                runs.push(r);
            }
        }
    }
    runs
}

/// `--by-step`: each run paired by the step it was saved as, in a column per
/// label (or per `--by` group, or per campaign named).
fn by_step(store: &Store, a: &CompareArgs, sides: Vec<(String, Side)>) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (sel, s) in sides {
        match s {
            Side::Campaign { name, steps } => {
                for (step, runs) in steps_by_base(&steps) {
                    entries.extend(runs.into_iter().map(|run| Entry {
                        column: name.clone(),
                        step: step.clone(),
                        run,
                    }));
                }
            }
            Side::Arm(arm) => {
                for run in arm.runs {
                    let id = run.id.unwrap_or_default();
                    let Some((_, step)) = store.step_of(id)? else {
                        return Err(bad_flag(
                            "--by-step",
                            format!("run {id} ('{sel}') is no campaign step: leave it out"),
                        ));
                    };
                    let columns = match a.by.by {
                        Some(by) => by.keys(&run),
                        None => vec![run.label.clone()],
                    };
                    for column in columns {
                        entries.push(Entry {
                            column,
                            step: step.base_name.clone(),
                            run: run.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(entries)
}

/// The column `--baseline` names in each of `pairings` (by its name); an
/// error when it names none.
fn baseline_by_name(pairings: &mut [Pairing], name: &str) -> Result<()> {
    let mut found = false;
    for p in pairings.iter_mut() {
        if let Some(i) = p.arms.iter().position(|a| a.name == name) {
            p.baseline = i;
            found = true;
        }
    }
    if found {
        return Ok(());
    }
    let mut names: Vec<&str> = pairings
        .iter()
        .flat_map(|p| p.arms.iter().map(|a| a.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    Err(bad_flag(
        "--baseline",
        format!(
            "'{name}' is none of the compared columns ({})",
            names.join(", ")
        ),
    ))
}

/// The runs of `sides` as comparisons: campaigns step by step, a campaign's
/// steps side by side, single runs one column each, or `--by` groups; each
/// of one kind. Steps compared with nothing are the second list.
fn pairings(
    store: &Store,
    a: &CompareArgs,
    sides: Vec<(String, Side)>,
) -> Result<(Vec<Pairing>, Vec<String>)> {
    let campaigns = sides
        .iter()
        .filter(|(_, s)| matches!(s, Side::Campaign { .. }))
        .count();
    if a.by_step || campaigns >= 2 && campaigns == sides.len() {
        let (mut pairings, unpaired) = pair_by_step(by_step(store, a, sides)?);
        if pairings.is_empty() {
            return Err(UsageError(format!(
                "no step is shared by two of the compared columns: {}",
                unpaired.join("; ")
            ))
            .into());
        }
        if let Some(name) = &a.baseline {
            baseline_by_name(&mut pairings, name)?;
        }
        if let Some(by) = a.by.by {
            pairings.iter_mut().for_each(|p| p.by = Some(by));
        }
        return Ok((pairings, unpaired));
    }
    if campaigns > 0 && campaigns < sides.len() {
        let named: Vec<(String, &Side)> = sides.iter().map(|(t, s)| (t.clone(), s)).collect();
        return Err(UsageError(mixed_sides(&named)).into());
    }
    if let [(_, Side::Campaign { steps, .. })] = sides.as_slice() {
        let mut pairings = campaign_pairings(steps);
        if let Some(b) = &a.baseline {
            baseline_by_name(&mut pairings, b)?;
        }
        return Ok((pairings, Vec::new()));
    }
    match a.by.by {
        Some(by) => {
            let groups = a.by.groups(runs_of(sides), by, &a.fleet)?;
            let baseline = a.by.baseline(&groups, a.baseline.as_deref())?;
            let arms: Vec<Arm> = groups.into_iter().map(Arm::of_group).collect();
            let mut pairings = by_kind(arms, baseline);
            pairings.iter_mut().for_each(|p| p.by = Some(by));
            Ok((pairings, Vec::new()))
        }
        None => {
            let mut arms = arms_of(sides);
            let baseline = baseline_arm(store, a, &mut arms)?;
            Ok((by_kind(arms, baseline), Vec::new()))
        }
    }
}

/// The columns of single-column `sides`, in order; a run named twice is
/// compared once.
fn arms_of(sides: Vec<(String, Side)>) -> Vec<Arm> {
    let mut arms: Vec<Arm> = Vec::new();
    for (_, s) in sides {
        let Side::Arm(arm) = s else { continue };
        let seen = |id: Option<i64>| arms.iter().flat_map(|a| &a.runs).any(|r| r.id == id);
        match arm.runs.as_slice() {
            [one] if one.id.is_some() && seen(one.id) => eprintln!(
                "rtlab: note: run {} is named twice; it is compared once",
                one.id.unwrap_or_default()
            ),
            _ => arms.push(arm),
        }
    }
    arms
}

/// The column of `--baseline` among `arms`: the column of that name, else
/// the column of the run it names, that run added first when no column
/// holds it.
fn baseline_arm(store: &Store, a: &CompareArgs, arms: &mut Vec<Arm>) -> Result<usize> {
    let Some(sel) = &a.baseline else {
        return Ok(0);
    };
    // A column named apart from its run's label (label@step) by its name.
    let named = |arm: &Arm| arm.runs.iter().any(|r| r.label != arm.name) && arm.name == *sel;
    if let Some(i) = arms.iter().position(named) {
        return Ok(i);
    }
    let id = store.resolve(sel).context("--baseline")?;
    let held = arms
        .iter()
        .position(|arm| arm.runs.iter().any(|r| r.id == Some(id)));
    Ok(match held {
        Some(i) => i,
        None => {
            arms.insert(0, Arm::of_run(store.load(id)?));
            0
        }
    })
}

/// `path` for comparison `n` of several: `hist.svg` → `hist-2.svg`.
fn numbered(path: &Path, n: usize) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = match (stem, path.extension()) {
        (Some(s), Some(e)) => format!("{s}-{n}.{}", e.to_string_lossy()),
        (Some(s), None) => format!("{s}-{n}"),
        (None, _) => format!("{n}"),
    };
    path.with_file_name(name)
}

/// The title of a comparison: its columns' names.
fn title(o: &Outcome) -> String {
    let names: Vec<&str> = o
        .parts
        .iter()
        .flat_map(|p| p.comparison.columns.iter().map(|c| c.label.as_str()))
        .collect();
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    format!("rtlab compare: {}", unique.join(" vs "))
}

/// Runs `rtlab compare`.
pub fn run(ctx: &Context, a: CompareArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = ctx.open_read()?;
    let sides = sides(&store, &a)?;
    let (pairings, unpaired) = pairings(&store, &a, sides)?;
    let mut o = analyse(pairings, &reqs, a.noise.noise);
    o.unpaired = unpaired;
    let title = title(&o);
    let opts = Options {
        unit: a.unit,
        title: &title,
        reqs: &reqs,
    };
    let mut files = Vec::new();
    if let Some(path) = &a.svg {
        for (i, p) in o.parts.iter().enumerate() {
            let file = match o.parts.len() {
                1 => path.clone(),
                _ => numbered(path, i + 1),
            };
            files.push((file, "--svg", Overlay.serialize(&p.merged_runs(), &opts)?));
        }
    }
    files.extend(a.files.render(&o, &opts)?);
    files.extend(a.ci.files(&o, &title)?);
    let text = a.ci.text(&o, || {
        Ok(if a.json {
            json::comparison(&o)?
        } else if a.csv {
            csv::comparison(&o)
        } else if a.markdown {
            markdown::render(&o, a.unit)
        } else {
            text::compare::report(&o, a.unit)
        })
    })?;
    finish(&files, &text, &o.verdicts())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_svg_files_are_numbered() {
        assert_eq!(
            numbered(Path::new("d/hist.svg"), 2),
            Path::new("d/hist-2.svg")
        );
        assert_eq!(numbered(Path::new("hist"), 1), Path::new("hist-1"));
    }
}
