//! Runs chosen by where and when they ran: `--host`, `--kernel`, `--tag`,
//! `--kind`, `--since`, `--until`, shared by `results list`/`push`/`pull`,
//! `compare` and `report`; `--by`, which merges the chosen runs into one
//! column per host, kernel or tag; and what a selector of `compare` stands
//! for (a run, a campaign step's repeats, a campaign's steps) with the
//! pairing of campaigns step by step.

use super::common;
use crate::analysis::arms::Arm;
use crate::analysis::group::{group, By, Group, GroupInfo};
use crate::analysis::outcome::Pairing;
use crate::analysis::repeats;
use crate::error::bad_flag;
use crate::error::UsageError;
use crate::record::{Run, Status};
use crate::scenario::runner::{by_base, campaign_steps, StepRun};
use crate::store::{ListFilter, Store};
use crate::units::parse_since;
use anyhow::Result;
use clap::Args;

/// Where and when the runs ran: every option given must match.
#[derive(Debug, Args, Default)]
pub struct FleetFilter {
    /// Only this kind (latency, net, bench.cpu, ...; "bench" for all benchmarks)
    /// [default: any].
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// Only runs of this host (its hostname; SQL LIKE pattern when it contains
    /// %); repeatable: any of them [default: any].
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
    /// Only runs of this kernel release (as `uname -r`; SQL LIKE pattern when it
    /// contains %, e.g. '6.6%'); repeatable: any of them [default: any].
    #[arg(long = "kernel", value_name = "RELEASE")]
    pub kernels: Vec<String>,
    /// Only runs with this tag [default: any].
    #[arg(long, value_name = "TAG", value_parser = common::tag_value)]
    pub tag: Option<String>,
    /// Only runs started within this long (30m, 12h, 2d, 1w) or since a date
    /// (2026-05-01, RFC 3339) [default: any time].
    #[arg(long, value_name = "AGE|DATE")]
    pub since: Option<String>,
    /// Only runs started before this age (12h: more than 12 hours ago) or date
    /// (2026-05-01, RFC 3339) [default: up to now].
    #[arg(long, value_name = "AGE|DATE")]
    pub until: Option<String>,
}

impl FleetFilter {
    /// Whether any option was given.
    pub fn is_set(&self) -> bool {
        self.kind.is_some()
            || !self.hosts.is_empty()
            || !self.kernels.is_empty()
            || self.tag.is_some()
            || self.since.is_some()
            || self.until.is_some()
    }

    /// The store's filter (ages read against now), with no label or campaign.
    pub fn to_filter(&self) -> Result<ListFilter> {
        let now = chrono::Utc::now();
        let time = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|s| parse_since(s, now).map_err(|e| bad_flag(flag, e)))
                .transpose()
        };
        Ok(ListFilter {
            kind: self.kind.clone(),
            since: time("--since", &self.since)?,
            until: time("--until", &self.until)?,
            tag: self.tag.clone(),
            hosts: self.hosts.clone(),
            kernels: self.kernels.clone(),
            ..ListFilter::default()
        })
    }

    /// The values given for `by` that name one group each (patterns with `%`
    /// name none): every one of them must have runs.
    pub fn named(&self, by: By) -> Vec<String> {
        let given = match by {
            By::Host => self.hosts.clone(),
            By::Kernel => self.kernels.clone(),
            By::Tag => self.tag.iter().cloned().collect(),
        };
        given.into_iter().filter(|v| !v.contains('%')).collect()
    }

    /// The options as typed, to repeat in messages (`--host a --since 30d`).
    pub fn describe(&self) -> String {
        let mut out = Vec::new();
        let mut add = |flag: &str, v: &str| out.push(format!("{flag} {v}"));
        self.kind.iter().for_each(|v| add("--kind", v));
        self.hosts.iter().for_each(|v| add("--host", v));
        self.kernels.iter().for_each(|v| add("--kernel", v));
        self.tag.iter().for_each(|v| add("--tag", v));
        self.since.iter().for_each(|v| add("--since", v));
        self.until.iter().for_each(|v| add("--until", v));
        out.join(" ")
    }
}

/// Most runs shown one by one (`compare` columns, `report` sections); more
/// are merged with --by.
pub const MAX_ONE_BY_ONE: usize = 50;

/// The runs `fleet` chooses, oldest first: an error when none, or when more
/// than [`MAX_ONE_BY_ONE`] are to be shown one by one (`merged`: false).
pub fn chosen(store: &Store, fleet: &FleetFilter, merged: bool) -> Result<Vec<i64>> {
    let rows = store.list_where(&fleet.to_filter()?)?;
    let what = fleet.describe();
    if rows.is_empty() {
        return Err(UsageError(if what.is_empty() {
            "the store holds no run (see 'rtlab results list')".into()
        } else {
            format!("no stored run matches {what} (see 'rtlab results list {what}')")
        })
        .into());
    }
    if !merged && rows.len() > MAX_ONE_BY_ONE {
        return Err(UsageError(format!(
            "{} runs match {what}; at most {MAX_ONE_BY_ONE} are shown one by one: narrow the choice (--since, --host, ...) or merge them with --by host|kernel|tag",
            rows.len()
        ))
        .into());
    }
    Ok(rows.iter().rev().map(|r| r.id).collect())
}

/// `--by`, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct ByArgs {
    /// Merge the chosen runs into one group per host, kernel release or tag (a
    /// run with several tags counts in each): a column of compare, a report, a
    /// line of results list. A group is its runs taken together, as one long
    /// run: histograms added (so percentiles are those of every sample), max =
    /// the worst run's max, samples, overruns, misses and durations summed;
    /// never an average of maxima. Its "runs" row counts them and "worst run"
    /// names the run with that max. --require judges each group [default:
    /// every run on its own].
    #[arg(long, value_enum, value_name = "host|kernel|tag")]
    pub by: Option<By>,
}

impl ByArgs {
    /// `runs` in groups by `by`: failed runs are left out (said on stderr), all
    /// must be of one kind, and each value `fleet` names for `by` must have runs.
    pub fn groups(&self, mut runs: Vec<Run>, by: By, fleet: &FleetFilter) -> Result<Vec<Group>> {
        let before = runs.len();
        runs.retain(|r| r.status != Status::Failed);
        if runs.len() < before {
            eprintln!(
                "rtlab: note: {} failed run(s) left out: they measured nothing",
                before - runs.len()
            );
        }
        let mut kinds: Vec<&str> = runs.iter().map(|r| r.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        if kinds.len() > 1 {
            return Err(bad_flag(
                "--by",
                format!(
                    "the chosen runs are of {} kinds ({}); merge one kind at a time with --kind KIND",
                    kinds.len(),
                    kinds.join(", ")
                ),
            ));
        }
        let groups = group(&runs, by, &fleet.named(by)).map_err(|name| {
            let flag = format!("--{}", by.name());
            bad_flag(
                &flag,
                format!(
                    "no run of {} '{name}' among the {} chosen by {}; see 'rtlab results list {flag} {name}'",
                    by.name(),
                    runs.len(),
                    fleet.describe()
                ),
            )
        })?;
        if groups.is_empty() {
            return Err(bad_flag(
                "--by",
                format!("none of the {} chosen runs has a {}", runs.len(), by.name()),
            ));
        }
        Ok(groups)
    }

    /// The column of `--baseline` (a group's name) among `groups`.
    pub fn baseline(&self, groups: &[Group], name: Option<&str>) -> Result<usize> {
        let Some(name) = name else {
            return Ok(0);
        };
        groups.iter().position(|g| g.name == name).ok_or_else(|| {
            let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
            bad_flag(
                "--baseline",
                format!(
                    "with --by, name a group: '{name}' is none of them ({})",
                    names.join(", ")
                ),
            )
        })
    }
}

/// `runs` named for outputs without a row for what a group holds (plots,
/// pages, reports): each group's label followed by its run count and worst
/// run. `groups` holds each run's group, if it is one.
pub fn described(runs: &[Run], groups: &[Option<GroupInfo>]) -> Vec<Run> {
    let mut out = runs.to_vec();
    for (run, group) in out.iter_mut().zip(groups) {
        if let Some(g) = group {
            let worst = g
                .worst
                .map(|id| format!(", worst #{id}"))
                .unwrap_or_default();
            let n = g.runs.len();
            let plural = if n == 1 { "" } else { "s" };
            run.label = format!("{} ({n} run{plural}{worst})", run.label);
        }
    }
    out
}

/// What one selector of `compare` stands for.
#[derive(Debug)]
pub enum Side {
    /// One column: a run, or the repeats of one campaign step (`label@step`).
    Arm(Arm),
    /// The steps of a campaign, each step's runs (its repeats) one column.
    Campaign {
        /// The columns' name: the label, or `campaign N`.
        name: String,
        /// Its steps, in step order.
        steps: Vec<StepRun>,
    },
}

/// The steps of a campaign by base name, in the order each first ran, each
/// with its runs (its repeats) in the order they ran.
pub fn steps_by_base(steps: &[StepRun]) -> Vec<(String, Vec<Run>)> {
    by_base(steps)
        .into_iter()
        .map(|g| {
            let runs = g.steps.iter().map(|s| s.run.clone()).collect();
            (g.name.to_string(), runs)
        })
        .collect()
}

/// The steps of campaign `id` that ran under `label` (every step, without).
fn labelled_steps(store: &Store, id: i64, label: Option<&str>) -> Result<Vec<StepRun>> {
    let mut steps = campaign_steps(store, id)?;
    if let Some(l) = label {
        steps.retain(|s| s.run.label == l);
    }
    Ok(steps)
}

/// `--campaign ID`: the campaign's steps, under the label of its runs (or
/// `campaign ID` when they have several).
pub fn campaign_side(store: &Store, id: i64) -> Result<Side> {
    let steps = labelled_steps(store, id, None)?;
    let mut labels: Vec<&str> = steps.iter().map(|s| s.run.label.as_str()).collect();
    labels.dedup();
    let name = match labels.as_slice() {
        [one] => one.to_string(),
        _ => format!("campaign {id}"),
    };
    Ok(Side::Campaign { name, steps })
}

/// What `sel` stands for: an id or `label@N` one run; `label@step` the runs
/// of that step (by name) of the newest campaign with runs labelled `label`;
/// a label the newest complete run with it, or, when that run is a step of a
/// campaign with more runs of that label (other steps, repeats), that
/// campaign's steps of that label, so that a label is never narrowed to one
/// of its steps. `load` loads a run.
pub fn side(store: &Store, sel: &str, load: fn(&Store, i64) -> Result<Run>) -> Result<Side> {
    if let Some((label, step)) = sel.rsplit_once('@') {
        let numbered = step.bytes().all(|b| b.is_ascii_digit());
        if !numbered && store.runs_with_label(sel)?.is_empty() {
            return step_side(store, label, step);
        }
    }
    let id = store.resolve(sel)?;
    let is_label = sel.parse::<i64>().is_err() && !store.runs_with_label(sel)?.is_empty();
    if is_label {
        if let Some((c, _)) = store.step_of(id)? {
            let steps = labelled_steps(store, c, Some(sel))?;
            if steps.len() > 1 {
                return Ok(Side::Campaign {
                    name: sel.to_string(),
                    steps,
                });
            }
        }
    }
    Ok(Side::Arm(Arm::of_run(load(store, id)?)))
}

/// `label@step`: the runs of the step `step` of the newest campaign with runs
/// labelled `label`, as one column `step · label`.
fn step_side(store: &Store, label: &str, step: &str) -> Result<Side> {
    let sel = format!("{label}@{step}");
    let Some(c) = store.campaign_with_label(label)? else {
        return Err(UsageError(format!(
            "'{sel}': no campaign holds a run labelled '{label}' (label@STEP names a step of \
             a campaign, 'rtlab results list --label {label}' shows its runs)"
        ))
        .into());
    };
    let steps = steps_by_base(&labelled_steps(store, c, Some(label))?);
    let names: Vec<&str> = steps.iter().map(|(b, _)| b.as_str()).collect();
    match steps.iter().find(|(b, _)| b == step) {
        Some((_, runs)) => Ok(Side::Arm(Arm::new(
            format!("{step} · {label}"),
            runs.clone(),
        ))),
        None => Err(UsageError(format!(
            "'{sel}': campaign {c} has no step '{step}' labelled '{label}'; its steps: {}",
            names.join(", ")
        ))
        .into()),
    }
}

/// A campaign's steps as comparisons: each step's runs (its repeats) one
/// column ([`repeats::arms`]), the steps of one kind side by side.
pub fn campaign_pairings(steps: &[StepRun]) -> Vec<Pairing> {
    crate::analysis::outcome::by_kind(repeats::arms(steps), 0)
}

/// Runs to compare step by step: the column each run belongs to, its step's
/// base name and the run.
#[derive(Debug)]
pub struct Entry {
    /// Its column (a label, a campaign, a group).
    pub column: String,
    /// Its step's base name.
    pub step: String,
    /// The run.
    pub run: Run,
}

/// One comparison per step (in the order each step first appears; steps of
/// one name but different kinds apart), one column per column name with the
/// step's runs of that column. Steps with one column only are compared with
/// nothing: they are said in the second list.
pub fn pair_by_step(entries: Vec<Entry>) -> (Vec<Pairing>, Vec<String>) {
    // Per step and kind: its columns, each with its runs.
    type Columns = Vec<(String, Vec<Run>)>;
    let mut steps: Vec<(String, String, Columns)> = Vec::new();
    for e in entries {
        let kind = e.run.kind.clone();
        let at = match steps
            .iter()
            .position(|(s, k, _)| *s == e.step && *k == kind)
        {
            Some(at) => at,
            None => {
                steps.push((e.step.clone(), kind, Vec::new()));
                steps.len() - 1
            }
        };
        let columns = &mut steps[at].2;
        match columns.iter_mut().find(|(c, _)| *c == e.column) {
            Some((_, runs)) => runs.push(e.run),
            None => columns.push((e.column, vec![e.run])),
        }
    }
    let mut pairings = Vec::new();
    let mut unpaired = Vec::new();
    for (step, kind, columns) in steps {
        if columns.len() < 2 {
            let only = columns.first().map_or("", |(c, _)| c.as_str());
            unpaired.push(format!("step '{step}' ({kind}): only {only} has it"));
            continue;
        }
        pairings.push(Pairing {
            title: step,
            arms: columns
                .into_iter()
                .map(|(c, runs)| Arm::new(c, runs))
                .collect(),
            baseline: 0,
            by: None,
        });
    }
    (pairings, unpaired)
}

/// The selectors among `sides` that stand for campaigns and those that stand
/// for one column, as a message that lists the choices (`label@step`).
pub fn mixed_sides(sels: &[(String, &Side)]) -> String {
    let mut out = Vec::new();
    for (sel, side) in sels {
        match side {
            Side::Arm(a) => out.push(format!("'{sel}' is one column ({})", a.name)),
            Side::Campaign { name, steps } => {
                let steps = steps_by_base(steps);
                let choices: Vec<String> =
                    steps.iter().map(|(b, _)| format!("{name}@{b}")).collect();
                out.push(format!(
                    "'{sel}' stands for {} steps: {}",
                    steps.len(),
                    choices.join(", ")
                ));
            }
        }
    }
    format!(
        "campaigns are compared step by step with campaigns, not with single runs: {}; name one \
         step of each campaign (label@step), or compare campaigns only",
        out.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    fn entry(column: &str, step: &str, kind: &str) -> Entry {
        let mut run = run_from_samples(column, &[1_000]);
        run.kind = kind.into();
        Entry {
            column: column.into(),
            step: step.into(),
            run,
        }
    }

    /// Three images of four bench steps each: cpu with cpu, fileio with
    /// fileio; a step one image alone has is said, never ratioed.
    #[test]
    fn campaigns_pair_step_by_step() {
        let mut entries = Vec::new();
        for image in ["image1", "image2", "image3"] {
            entries.push(entry(image, "cpu", "bench.cpu"));
            entries.push(entry(image, "fileio", "bench.fileio"));
        }
        entries.push(entry("image2", "usb", "bench.fileio"));
        entries.push(entry("image3", "cpu", "bench.cpu"));
        let (pairings, unpaired) = pair_by_step(entries);
        let shown: Vec<(&str, Vec<(&str, usize)>)> = pairings
            .iter()
            .map(|p| {
                let arms = p
                    .arms
                    .iter()
                    .map(|a| (a.name.as_str(), a.runs.len()))
                    .collect();
                (p.title.as_str(), arms)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("cpu", vec![("image1", 1), ("image2", 1), ("image3", 2)]),
                ("fileio", vec![("image1", 1), ("image2", 1), ("image3", 1)])
            ]
        );
        assert!(pairings
            .iter()
            .all(|p| p.arms.iter().all(|a| a.kind == p.arms[0].kind)));
        assert_eq!(unpaired, ["step 'usb' (bench.fileio): only image2 has it"]);
    }
}
