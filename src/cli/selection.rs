//! Runs chosen by where and when they ran: `--host`, `--kernel`, `--tag`,
//! `--kind`, `--since`, `--until`, shared by `results list`/`push`/`pull`,
//! `compare` and `report`; and `--by`, which merges the chosen runs into one
//! column per host, kernel or tag.

use super::common;
use crate::analysis::group::{group, By, Group, GroupInfo};
use crate::error::bad_flag;
use crate::error::UsageError;
use crate::record::{Run, Status};
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
