//! The decision a comparison or a campaign leads to, as data (`format` puts it
//! in words): the tier matrix of latency arms against the requirement budgets,
//! the stability ranking of benchmark arms, and the biggest real change with
//! what differs between the arms that could explain it. Every part says how
//! sure it is: verdicts are decided or not, rankings name a winner only when
//! the intervals separate, and a change is real only when [`judge`] says so.

use super::arms::Arm;
use super::compare::Better;
use super::diff::{differences, Difference};
use super::interval::{judge, Change, Estimate, Judged};
use super::metrics::metric_direction;
use super::verdict::{judge_arms, Requirement, Verdict, NO_DATA};
use serde::Serialize;

/// Everything decided, for one set of arms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The noise threshold the decision used (a fraction: 0.05).
    pub noise: f64,
    /// Latency arms × requirement budgets; `None` without requirements or
    /// without latency values.
    pub tiers: Option<Tiers>,
    /// One ranking per benchmark kind with at least two arms.
    pub stability: Vec<Stability>,
    /// The largest real change against the baseline arm, if any.
    pub biggest: Option<BiggestChange>,
}

/// The tier matrix: a column per budget, a row per arm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tiers {
    /// The budgets, smallest first.
    pub columns: Vec<Tier>,
    /// One row per arm with latency values, in arm order.
    pub rows: Vec<TierRow>,
}

/// One column: the requirements that share a budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tier {
    /// The column's name: its requirements, joined (`gyro, accel`).
    pub name: String,
    /// The requirements, in the order given.
    pub requirements: Vec<String>,
    /// Their budget (ns).
    pub budget_ns: u64,
}

/// One arm's verdict in each tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TierRow {
    /// The arm's name.
    pub arm: String,
    /// One verdict per column (its `requirement` is the column's name).
    pub cells: Vec<Verdict>,
}

/// The stability ranking of the benchmark arms of one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stability {
    /// The kind (`bench.cpu`).
    pub kind: String,
    /// The arms, most stable first (smallest p95 − mean).
    pub entries: Vec<StabilityEntry>,
    /// The winner, or the arms that cannot be told from the best.
    pub outcome: Ranked,
}

/// One arm's stability figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StabilityEntry {
    /// The arm's name.
    pub arm: String,
    /// Events per second.
    pub events_per_s: Option<Estimate>,
    /// Spread max − min (observed in one run; the range over repeats).
    pub max_min: Option<Estimate>,
    /// Spread p95 − mean: what the ranking rests on.
    pub p95_mean: Option<Estimate>,
}

/// What a ranking found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Ranked {
    /// One arm is more stable than every other, by more than the noise, with
    /// separate intervals.
    MostStable {
        /// The arm.
        arm: String,
    },
    /// The best arm cannot be told from these others with these runs.
    CannotTell {
        /// The best arm by value.
        best: String,
        /// The arms it cannot be told from.
        others: Vec<String>,
        /// Runs per arm that would likely tell them apart (`--repeat N`);
        /// `None` when their difference is within the noise, so that more
        /// runs would only show there is no real difference.
        repeat: Option<usize>,
    },
    /// The arms are repeats of one setup (they differ in nothing known):
    /// none is more stable than another.
    OneSetup {
        /// The arms, in rank order.
        arms: Vec<String>,
    },
}

/// The largest real change among the compared figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BiggestChange {
    /// The figure (a comparison row's name: `p99`, `events_per_s`).
    pub metric: String,
    /// The baseline arm.
    pub baseline: String,
    /// The changed arm.
    pub arm: String,
    /// The baseline's estimate.
    pub base: Estimate,
    /// The changed arm's estimate.
    pub other: Estimate,
    /// Better or worse (always decided).
    pub change: Change,
    /// The changed value over the baseline's.
    pub ratio: f64,
    /// What differs between the two arms (the same within each arm, so
    /// that it may explain the change).
    pub differences: Vec<Difference>,
}

/// The figures of a series a change is looked for in, better lower.
const SERIES_FIGURES: [&str; 9] = [
    "mean", "p50", "p99", "p99.9", "p99.99", "max", "stddev", "max-min", "p95-mean",
];

/// The decision for `arms` against `arms[baseline]` and the requirements.
pub fn decide(arms: &[Arm], baseline: usize, reqs: &[Requirement], noise: f64) -> Decision {
    Decision {
        noise,
        tiers: tiers(arms, reqs, noise),
        stability: stability(arms, noise),
        biggest: biggest_change(arms, baseline, noise),
    }
}

impl Decision {
    /// The decision about arms that are repeats of one setup: no real change,
    /// no most stable arm (what separates them is run-to-run variation).
    pub fn as_repeats(&mut self) {
        self.biggest = None;
        for s in &mut self.stability {
            s.outcome = Ranked::OneSetup {
                arms: s.entries.iter().map(|e| e.arm.clone()).collect(),
            };
        }
    }
}

/// The tier matrix: requirements with equal budgets form one column, named by
/// them; a row per arm that has latency values (a benchmark's event times are
/// no deadline's).
pub fn tiers(arms: &[Arm], reqs: &[Requirement], noise: f64) -> Option<Tiers> {
    let mut columns: Vec<Tier> = Vec::new();
    for r in reqs {
        match columns.iter_mut().find(|t| t.budget_ns == r.budget_ns) {
            Some(t) if !t.requirements.contains(&r.name) => t.requirements.push(r.name.clone()),
            Some(_) => {}
            None => columns.push(Tier {
                name: String::new(),
                requirements: vec![r.name.clone()],
                budget_ns: r.budget_ns,
            }),
        }
    }
    columns.sort_by_key(|t| t.budget_ns);
    for t in &mut columns {
        t.name = t.requirements.join(", ");
    }
    let as_reqs: Vec<Requirement> = columns
        .iter()
        .map(|t| Requirement {
            name: t.name.clone(),
            budget_ns: t.budget_ns,
        })
        .collect();
    let rows: Vec<TierRow> = arms
        .iter()
        .filter(|a| !is_bench(a))
        .map(|a| TierRow {
            arm: a.name.clone(),
            cells: judge_arms(std::slice::from_ref(a), &as_reqs, noise),
        })
        .filter(|r| r.cells.iter().any(|c| c.result != NO_DATA))
        .collect();
    (!columns.is_empty() && !rows.is_empty()).then_some(Tiers { columns, rows })
}

/// Whether an arm is a benchmark: its runs count events at a rate.
fn is_bench(a: &Arm) -> bool {
    a.runs
        .iter()
        .all(|r| r.metrics.contains_key("events_per_s"))
}

/// The stability rankings: for each kind with two or more benchmark arms,
/// the arms by p95 − mean, the most stable named when it is better than every
/// other by more than the noise.
pub fn stability(arms: &[Arm], noise: f64) -> Vec<Stability> {
    let mut kinds: Vec<&str> = Vec::new();
    for a in arms.iter().filter(|a| is_bench(a)) {
        if !kinds.contains(&a.kind.as_str()) {
            kinds.push(&a.kind);
        }
    }
    kinds
        .into_iter()
        .filter_map(|kind| {
            let of_kind: Vec<&Arm> = arms
                .iter()
                .filter(|a| a.kind == kind && is_bench(a))
                .collect();
            (of_kind.len() >= 2).then(|| rank(kind, &of_kind, noise))
        })
        .collect()
}

fn rank(kind: &str, arms: &[&Arm], noise: f64) -> Stability {
    let mut entries: Vec<StabilityEntry> = arms
        .iter()
        .map(|a| StabilityEntry {
            arm: a.name.clone(),
            events_per_s: a.estimate("events_per_s"),
            max_min: a.estimate("max-min"),
            p95_mean: a.estimate("p95-mean"),
        })
        .collect();
    let key = |e: &StabilityEntry| e.p95_mean.map_or(f64::INFINITY, |p| p.value.max(0.0));
    entries.sort_by(|a, b| key(a).total_cmp(&key(b)));
    let best = &entries[0];
    let runs = |name: &str| {
        arms.iter()
            .find(|a| a.name == name)
            .map_or(1, |a| a.runs.len())
    };
    let mut others = Vec::new();
    let mut repeat: Option<usize> = None;
    let mut within_noise = false;
    for e in &entries[1..] {
        let judged = match (&best.p95_mean, &e.p95_mean) {
            (Some(b), Some(o)) => judge(b, o, Better::Lower, noise),
            _ => Judged {
                change: Change::Unknown,
                decided: false,
            },
        };
        if judged.change == Change::Worse {
            continue;
        }
        others.push(e.arm.clone());
        let n = runs(&best.arm).max(runs(&e.arm));
        match (&best.p95_mean, &e.p95_mean) {
            (Some(b), Some(o)) => match repeats_to_separate(b, o, n, noise) {
                Some(k) => repeat = repeat.max(Some(k)),
                None => within_noise = true,
            },
            _ => repeat = repeat.max(Some(MIN_REPEATS)),
        }
    }
    let outcome = if others.is_empty() {
        Ranked::MostStable {
            arm: best.arm.clone(),
        }
    } else {
        Ranked::CannotTell {
            best: best.arm.clone(),
            others,
            repeat: if within_noise && repeat.is_none() {
                None
            } else {
                repeat.or(Some(MIN_REPEATS))
            },
        }
    };
    Stability {
        kind: kind.to_string(),
        entries,
        outcome,
    }
}

/// The fewest runs per arm a suggestion asks for: with fewer, the spread
/// across runs is hardly known (see `interval`'s widening).
const MIN_REPEATS: usize = 3;
/// More runs than this are not suggested: a difference that needs them is
/// too small to decide by repeating.
const MAX_REPEATS: usize = 50;

/// Runs per arm that would likely separate the intervals of `a` and `b` (each
/// now from `runs` runs) by more than the noise, assuming their widths shrink
/// as one over the square root of the runs; `None` when their difference is
/// within the noise, or would need more than [`MAX_REPEATS`].
pub fn repeats_to_separate(a: &Estimate, b: &Estimate, runs: usize, noise: f64) -> Option<usize> {
    let (Some((al, ah)), Some((bl, bh))) = (a.interval(), b.interval()) else {
        return Some(MIN_REPEATS);
    };
    let gap = (a.value - b.value).abs() - noise * a.value.abs();
    if gap <= 0.0 {
        return None;
    }
    let half_widths = (ah - al) / 2.0 + (bh - bl) / 2.0;
    let n = (runs.max(1) as f64 * (half_widths / gap).powi(2)).ceil() as usize;
    let n = n.max(MIN_REPEATS).max(runs + 1);
    (n <= MAX_REPEATS).then_some(n)
}

/// The largest real change of any arm of the baseline's kind against the
/// baseline, over the series figures and the metrics with a direction: the
/// one whose ratio is furthest from 1, with what differs between the two.
pub fn biggest_change(arms: &[Arm], baseline: usize, noise: f64) -> Option<BiggestChange> {
    let base = arms.get(baseline)?;
    let mut metrics: Vec<(String, Better)> = SERIES_FIGURES
        .iter()
        .map(|m| (m.to_string(), Better::Lower))
        .collect();
    let mut names: Vec<&String> = arms
        .iter()
        .flat_map(|a| &a.runs)
        .flat_map(|r| r.metrics.keys())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        match metric_direction(name) {
            Better::Neither => {}
            better => metrics.push((name.clone(), better)),
        }
    }
    let mut best: Option<BiggestChange> = None;
    for (metric, better) in &metrics {
        let Some(b) = base.estimate(metric).filter(|b| b.value > 0.0) else {
            continue;
        };
        for (i, arm) in arms.iter().enumerate() {
            if i == baseline || arm.kind != base.kind {
                continue;
            }
            // A negative figure (a spread p95 − mean below zero) has no ratio.
            let Some(o) = arm.estimate(metric).filter(|o| o.value >= 0.0) else {
                continue;
            };
            let judged = judge(&b, &o, *better, noise);
            if !matches!(judged.change, Change::Better | Change::Worse) {
                continue;
            }
            let ratio = o.value / b.value;
            let size = |r: f64| {
                if r >= 1.0 {
                    r
                } else {
                    1.0 / r.max(f64::MIN_POSITIVE)
                }
            };
            if best.as_ref().is_some_and(|c| size(c.ratio) >= size(ratio)) {
                continue;
            }
            best = Some(BiggestChange {
                metric: metric.clone(),
                baseline: base.name.clone(),
                arm: arm.name.clone(),
                base: b,
                other: o,
                change: judged.change,
                ratio,
                differences: Vec::new(),
            });
        }
    }
    let mut change = best?;
    let other = arms.iter().find(|a| a.name == change.arm)?;
    change.differences = between(base, other);
    Some(change)
}

/// What differs between two arms and is the same within each: the fields
/// that may explain a change between them (a field that differs among one
/// arm's own repeats explains nothing between the arms).
pub fn between(a: &Arm, b: &Arm) -> Vec<Difference> {
    let runs: Vec<_> = a.runs.iter().chain(&b.runs).cloned().collect();
    let n = a.runs.len();
    differences(&runs)
        .into_iter()
        .filter_map(|d| {
            let (left, right) = d.values.split_at(n);
            let same = |v: &[String]| v.iter().all(|x| *x == v[0]);
            (same(left) && same(right) && left[0] != right[0]).then(|| Difference {
                field: d.field,
                values: vec![left[0].clone(), right[0].clone()],
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
