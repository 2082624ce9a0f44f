//! One analysis of compared arms, for every output: the comparisons (one per
//! kind, or one per campaign step when campaigns are paired by step), each
//! with its verdicts, what differs between its arms and its decision. `cli`
//! chooses the arms; text, JSON, CSV, Markdown, HTML and the web view render
//! this one [`Outcome`] and compute nothing of it, so that they cannot
//! disagree.

use super::arms::Arm;
use super::compare::{compare, Better, Comparison};
use super::decision::{decide, Decision};
use super::diff::{between_arms, Difference};
use super::group::{as_groups, By, Group};
use super::interval::Change;
use super::verdict::{judge_arms, Requirement, Verdict};
use crate::record::Run;
use serde::Serialize;

/// Arms to compare together: all of one kind.
#[derive(Debug, Clone)]
pub struct Pairing {
    /// What they are (a campaign step's name, or their kind).
    pub title: String,
    /// The arms, in column order.
    pub arms: Vec<Arm>,
    /// Index of the baseline arm.
    pub baseline: usize,
    /// What the arms are groups by (`--by`), if they are.
    pub by: Option<By>,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The noise threshold (a fraction: 0.05).
    pub noise: f64,
    /// The requirements the arms were judged against.
    pub requirements: Vec<Requirement>,
    /// One comparison per kind or step, numbered from 1 in this order.
    #[serde(rename = "comparisons")]
    pub parts: Vec<Part>,
    /// What was asked for but compared with nothing (a step only one of the
    /// paired campaigns has), in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpaired: Vec<String>,
}

/// One comparison with everything decided about it.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    /// What is compared (a step's name, or the arms' kind).
    pub title: String,
    /// The arms' kind.
    pub kind: String,
    /// The arms (not in JSON: their runs are the runs compared).
    #[serde(skip)]
    pub arms: Vec<Arm>,
    /// The figures side by side.
    pub comparison: Comparison,
    /// Each arm against each requirement (arm-major).
    pub verdicts: Vec<Verdict>,
    /// What differs between the arms.
    pub differences: Vec<Difference>,
    /// How the changes against the baseline fell.
    pub tally: Tally,
    /// The decision: tier matrix, stability ranking, biggest real change.
    pub decision: Decision,
}

/// How the cells of the arms other than the baseline fell, over the rows
/// with a direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Better than the baseline.
    pub better: usize,
    /// Worse than the baseline.
    pub worse: usize,
    /// No real difference, decided.
    pub same: usize,
    /// No real difference seen, but the intervals are too wide to be sure.
    pub same_undecided: usize,
    /// Cannot be told (no interval).
    pub unknown: usize,
}

impl Tally {
    fn of(c: &Comparison) -> Tally {
        let mut t = Tally::default();
        for row in c.rows.iter().filter(|r| r.better != Better::Neither) {
            for (i, cell) in row.cells.iter().enumerate() {
                if i == c.baseline || cell.value.is_none() {
                    continue;
                }
                match (cell.change, cell.decided) {
                    (Change::Better, _) => t.better += 1,
                    (Change::Worse, _) => t.worse += 1,
                    (Change::Same, true) => t.same += 1,
                    (Change::Same, false) => t.same_undecided += 1,
                    (Change::Unknown, _) => t.unknown += 1,
                }
            }
        }
        t
    }
}

/// Names arms that share a name apart: a run by its id (`k #12`), so that
/// every verdict and ranking names one column.
fn distinct(arms: &mut [Arm]) {
    let names: Vec<String> = arms.iter().map(|a| a.name.clone()).collect();
    for a in arms.iter_mut() {
        let shared = names.iter().filter(|n| **n == a.name).count() > 1;
        if let ([run], true) = (a.runs.as_slice(), shared) {
            if let Some(id) = run.id {
                a.name = format!("{} #{id}", a.name);
            }
        }
    }
}

/// Analyses `pairings` against `reqs` with the noise threshold `noise`.
pub fn analyse(pairings: Vec<Pairing>, reqs: &[Requirement], noise: f64) -> Outcome {
    let parts = pairings
        .into_iter()
        .map(|mut p| {
            distinct(&mut p.arms);
            let mut comparison = compare(&p.arms, p.baseline, noise);
            if let Some(by) = p.by {
                as_groups(&mut comparison, &p.arms, by);
            }
            Part {
                kind: p.arms.first().map(|a| a.kind.clone()).unwrap_or_default(),
                title: p.title,
                verdicts: judge_arms(&p.arms, reqs, noise),
                differences: between_arms(&p.arms),
                tally: Tally::of(&comparison),
                decision: decide(&p.arms, p.baseline, reqs, noise),
                comparison,
                arms: p.arms,
            }
        })
        .collect();
    Outcome {
        noise,
        requirements: reqs.to_vec(),
        parts,
        unpaired: Vec::new(),
    }
}

/// Arms in one comparison per kind (in the order each kind first appears),
/// each titled by its kind: arms of different kinds are never compared. The
/// baseline of the kind of `arms[baseline]` is that arm; of the others,
/// their first arm.
pub fn by_kind(arms: Vec<Arm>, baseline: usize) -> Vec<Pairing> {
    let mut out: Vec<Pairing> = Vec::new();
    for (i, arm) in arms.into_iter().enumerate() {
        let at = match out.iter().position(|p| p.title == arm.kind) {
            Some(at) => at,
            None => {
                out.push(Pairing {
                    title: arm.kind.clone(),
                    arms: Vec::new(),
                    baseline: 0,
                    by: None,
                });
                out.len() - 1
            }
        };
        let p = &mut out[at];
        if i == baseline {
            p.baseline = p.arms.len();
        }
        p.arms.push(arm);
    }
    out
}

/// Runs, one arm each, in one comparison per kind ([`by_kind`]).
pub fn of_runs(runs: Vec<Run>, baseline: usize) -> Vec<Pairing> {
    by_kind(runs.into_iter().map(Arm::of_run).collect(), baseline)
}

impl Part {
    /// The verdicts of the arms the tier matrix has no row for (a benchmark,
    /// an arm without latency values), which are shown on their own.
    pub fn untiered_verdicts(&self) -> Vec<Verdict> {
        let tiered: Vec<&str> = self
            .decision
            .tiers
            .iter()
            .flat_map(|t| t.rows.iter().map(|r| r.arm.as_str()))
            .collect();
        self.verdicts
            .iter()
            .filter(|v| !tiered.contains(&v.label.as_str()))
            .cloned()
            .collect()
    }

    /// Each arm as one run, for plots and pages, named as its column: a run
    /// stands for itself (named by the arm: a step, a group); the runs of an
    /// arm are merged as a `--by` group's are ([`Group::merged`]) and named
    /// `name (N runs)`.
    pub fn merged_runs(&self) -> Vec<Run> {
        self.arms
            .iter()
            .map(|a| match a.runs.as_slice() {
                [one] => {
                    // A name that only adds the run's id to its label is the label.
                    let by_id = one
                        .id
                        .is_some_and(|id| a.name == format!("{} #{id}", one.label));
                    Run {
                        label: if by_id {
                            one.label.clone()
                        } else {
                            a.name.clone()
                        },
                        ..one.clone()
                    }
                }
                many => {
                    let mut run = Group {
                        name: a.name.clone(),
                        runs: many.to_vec(),
                    }
                    .merged();
                    run.label = format!("{} ({} runs)", a.name, many.len());
                    run
                }
            })
            .collect()
    }
}

impl Outcome {
    /// Every verdict of every part.
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.parts
            .iter()
            .flat_map(|p| p.verdicts.iter().cloned())
            .collect()
    }

    /// Every arm of every part, in order.
    pub fn arms(&self) -> impl Iterator<Item = &Arm> {
        self.parts.iter().flat_map(|p| &p.arms)
    }

    /// Every part's [`Part::merged_runs`], in order.
    pub fn merged_runs(&self) -> Vec<Run> {
        self.parts.iter().flat_map(Part::merged_runs).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::windowed_run;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::verdict::parse_requirement;

    #[test]
    fn one_outcome_with_a_part_per_pairing() {
        let samples: Vec<u64> = (0..5_000).map(|i| 20_000 + (i * 37) % 4_000).collect();
        let slow: Vec<u64> = samples.iter().map(|v| v * 2).collect();
        let mut bench = windowed_run("img", &samples);
        bench.kind = "bench.cpu".into();
        bench.metrics.insert("events_per_s".into(), 1000.0);
        let pairings = vec![
            Pairing {
                title: "latency".into(),
                arms: vec![
                    Arm::of_run(windowed_run("idle", &samples)),
                    Arm::of_run(windowed_run("hog", &slow)),
                ],
                baseline: 0,
                by: None,
            },
            Pairing {
                title: "cpu".into(),
                arms: vec![Arm::of_run(bench)],
                baseline: 0,
                by: None,
            },
        ];
        let reqs = parse_requirement("loop=1ms").unwrap();
        let o = analyse(pairings, &reqs, DEFAULT_NOISE);
        assert_eq!(o.parts.len(), 2);
        let t = o.parts[0].tally;
        assert!(t.worse > 0 && t.better == 0, "{t:?}");
        assert_eq!(o.parts[1].kind, "bench.cpu");
        assert_eq!(o.verdicts().len(), 3);
        assert_eq!(crate::analysis::verdict::exit_code(&o.verdicts()), 0);
        let biggest = o.parts[0].decision.biggest.as_ref().unwrap();
        assert_eq!(biggest.arm, "hog");
        assert_eq!(o.arms().count(), 3);
    }
}
