//! Runs taken together by host, kernel release or tag (`--by`): each group is
//! merged into one run that stands for all of its runs, as if they had been one
//! long run. Histograms and counters are added, so the group's percentiles are
//! those of every sample and its maximum is the worst run's; durations are
//! summed; a metric is the group's worst value. Nothing is an average of maxima.

use super::arms::Arm;
use super::compare::{self, Better, Comparison};
use super::metrics::metric_direction;
use super::series;
use crate::record::{Run, RunParams, Series, Status};
use serde::Serialize;
use std::collections::BTreeMap;

/// What runs are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The host name of the run's system.
    Host,
    /// The kernel release (`uname -r`).
    Kernel,
    /// Each of the run's tags.
    Tag,
}

impl By {
    /// The name `--by` takes.
    pub fn name(self) -> &'static str {
        match self {
            By::Host => "host",
            By::Kernel => "kernel",
            By::Tag => "tag",
        }
    }

    /// The groups `run` belongs to: one host, one kernel, or each of its tags.
    pub fn keys(self, run: &Run) -> Vec<String> {
        match self {
            By::Host => vec![run.fingerprint.hostname.clone()],
            By::Kernel => vec![run.fingerprint.kernel_release.clone()],
            By::Tag => run.tags.clone(),
        }
    }
}

/// One group: its name (a host, a kernel release, a tag) and its runs, at
/// least one.
#[derive(Debug, Clone)]
pub struct Group {
    /// The host, kernel release or tag.
    pub name: String,
    /// Its runs, in the order they were given.
    pub runs: Vec<Run>,
}

/// What a compared column stands for when it is a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupInfo {
    /// What the runs were grouped by.
    pub by: By,
    /// Its runs' ids, in the order they were given.
    pub runs: Vec<i64>,
    /// The run with the group's maximum (the first such run on a tie).
    pub worst: Option<i64>,
}

/// `runs` in groups by `by`: first a group for each name of `named`, in that
/// order, then the others by name. A run without a tag is in no group of tags.
/// A name of `named` that no run has is the error.
pub fn group(runs: &[Run], by: By, named: &[String]) -> Result<Vec<Group>, String> {
    let mut others: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    let mut first: Vec<Group> = named
        .iter()
        .map(|n| Group {
            name: n.clone(),
            runs: Vec::new(),
        })
        .collect();
    for run in runs {
        for key in by.keys(run) {
            match first.iter_mut().find(|g| g.name == key) {
                Some(g) => g.runs.push(run.clone()),
                None => others.entry(key).or_default().push(run.clone()),
            }
        }
    }
    if let Some(empty) = first.iter().find(|g| g.runs.is_empty()) {
        return Err(empty.name.clone());
    }
    first.extend(others.into_iter().map(|(name, runs)| Group { name, runs }));
    Ok(first)
}

/// The largest latency of a run (its primary series' maximum).
fn max_of(run: &Run) -> Option<u64> {
    series::primary(run).map(|s| s.summary.max_ns)
}

/// Index of the run with the largest maximum (the first on a tie).
pub(super) fn worst_index(runs: &[Run]) -> usize {
    let mut worst = 0;
    for (i, r) in runs.iter().enumerate() {
        if max_of(r) > max_of(&runs[worst]) {
            worst = i;
        }
    }
    worst
}

impl Group {
    /// What the group's column stands for.
    pub fn info(&self, by: By) -> GroupInfo {
        GroupInfo {
            by,
            runs: self.runs.iter().filter_map(|r| r.id).collect(),
            worst: self.runs.get(worst_index(&self.runs)).and_then(|r| r.id),
        }
    }

    /// The group as one run, named after the group. Its system, parameters and
    /// loads are those of its worst run; its total is every run's primary
    /// series merged; its status is interrupted when any run did not complete;
    /// it spans from the first start to the last end and has observed the sum
    /// of the durations; a figure any run did not report is unreported; each
    /// metric is the worst value of the runs that have it (metrics without a
    /// direction are left out: a sum or mean of them would mislead).
    pub fn merged(&self) -> Run {
        let worst = &self.runs[worst_index(&self.runs)];
        let mut run = worst.clone();
        run.id = None;
        run.label = self.name.clone();
        run.tags = Vec::new();
        run.campaign = None;
        run.status = if self.runs.iter().all(|r| r.status == Status::Complete) {
            Status::Complete
        } else {
            Status::Interrupted
        };
        let times = |at: fn(&Run) -> &String| self.runs.iter().map(at);
        run.started_at = times(|r| &r.started_at).min().cloned().unwrap_or_default();
        run.ended_at = times(|r| &r.ended_at).max().cloned().unwrap_or_default();
        run.duration_ns = self.runs.iter().map(|r| r.duration_ns).sum();
        let primaries: Vec<Series> = self
            .runs
            .iter()
            .filter_map(|r| series::primary(r).map(std::borrow::Cow::into_owned))
            .collect();
        run.series = Vec::new();
        run.total = (!primaries.is_empty()).then(|| series::merge(&primaries));
        run.metrics = worst_metrics(&self.runs);
        let mut unreported: Vec<&str> = self.runs.iter().flat_map(Run::unreported).collect();
        unreported.sort_unstable();
        unreported.dedup();
        let mut own = worst.unreported();
        own.sort_unstable();
        if own != unreported {
            run.params = RunParams::Recorded(serde_json::json!({ "unreported": unreported }));
        }
        run.warnings = Vec::new();
        for w in self.runs.iter().flat_map(|r| &r.warnings) {
            if !run.warnings.contains(w) {
                run.warnings.push(w.clone());
            }
        }
        (run.audit, run.breaktrace, run.why, run.page_faults) = (None, None, None, None);
        (run.sweep, run.perf) = (None, None);
        run
    }
}

/// Each metric's worst value among the runs that have it: the lowest of a
/// rate, the highest of a loss; metrics without a direction are left out.
fn worst_metrics(runs: &[Run]) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for (name, &v) in runs.iter().flat_map(|r| &r.metrics) {
        let worse = match metric_direction(name) {
            Better::Higher => f64::min,
            Better::Lower => f64::max,
            Better::Neither => continue,
        };
        out.entry(name.clone())
            .and_modify(|w| *w = worse(*w, v))
            .or_insert(v);
    }
    out
}

/// The comparison of `groups` against group `baseline` with the noise
/// threshold `noise`: each group an arm ([`Arm::of_group`]), so that its
/// figures are those of all its runs with intervals across them (see
/// [`as_groups`]). Returns the merged runs too ([`Group::merged`], what plots
/// and pages show of a group).
pub fn compare_groups(
    groups: &[Group],
    by: By,
    baseline: usize,
    noise: f64,
) -> (Vec<Run>, Comparison) {
    let runs: Vec<Run> = groups.iter().map(Group::merged).collect();
    let arms: Vec<Arm> = groups.iter().cloned().map(Arm::of_group).collect();
    let mut c = compare::compare(&arms, baseline, noise);
    as_groups(&mut c, &arms, by);
    (runs, c)
}

/// Marks the columns of `c`, a comparison of `arms`, as groups by `by`: each
/// with its [`GroupInfo`], the table headed by the rows `runs` (how many) and
/// `worst run` (the id of the run with the group's maximum).
pub fn as_groups(c: &mut Comparison, arms: &[Arm], by: By) {
    if !arms.iter().any(Arm::repeated) {
        c.rows
            .splice(0..0, compare::repeat_rows(arms, c.baseline, c.noise));
    }
    for (col, arm) in c.columns.iter_mut().zip(arms) {
        col.group = Some(GroupInfo {
            by,
            runs: arm.runs.iter().filter_map(|r| r.id).collect(),
            worst: compare::worst_run(arm),
        });
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
