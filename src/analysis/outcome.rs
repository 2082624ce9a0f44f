//! One analysis of compared arms, for every output: the comparisons (one per
//! kind, or one per campaign step when campaigns are paired by step), each
//! with its verdicts, what differs between its arms and its decision. `cli`
//! chooses the arms; text, JSON, CSV, Markdown, HTML and the web view render
//! this one [`Outcome`] and compute nothing of it, so that they cannot
//! disagree.
//!
//! Arms whose runs differ in nothing known ([`OneSetup`]: the same host,
//! kernel, parameters and configuration, no other load, every run with its
//! system and background recorded) are repeats of one setup whatever their
//! names: what separates their figures is run-to-run variation, which the
//! intervals of single runs do not hold. They are compared as repeats: every
//! change is "no real difference", no arm is the most stable, and the range
//! across the runs is said instead.

use super::arms::Arm;
use super::compare::{compare, Better, Comparison};
use super::decision::{decide, Decision};
use super::diff::{between_arms, Difference};
use super::group::{as_groups, By, Group};
use super::interval::Change;
use super::series;
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
    /// When the arms differ in nothing known: their runs compared as
    /// repeats of one setup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_setup: Option<OneSetup>,
}

/// Arms whose runs are repeats of one setup, and how far their runs range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneSetup {
    /// Runs of all the arms.
    pub runs: usize,
    /// The lowest and the highest maximum of the runs (ns), when they have
    /// latency values.
    pub max_ns: Option<(u64, u64)>,
}

impl OneSetup {
    /// `arms` as repeats of one setup when they are several, every run has
    /// its system and background recorded (an imported run's unknown fields
    /// could hide what differs) and nothing in `differences`.
    fn of(arms: &[Arm], differences: &[Difference]) -> Option<OneSetup> {
        let runs: Vec<&Run> = arms.iter().flat_map(|a| &a.runs).collect();
        let recorded = |r: &Run| {
            r.background.is_some()
                && !r.fingerprint.hostname.is_empty()
                && !r.fingerprint.kernel_release.is_empty()
        };
        if arms.len() < 2 || !differences.is_empty() || !runs.iter().all(|r| recorded(r)) {
            return None;
        }
        let maxima: Vec<u64> = runs
            .iter()
            .filter_map(|r| series::primary(r))
            .filter(|s| s.counters.samples > 0)
            .map(|s| s.summary.max_ns)
            .collect();
        let max_ns = maxima
            .iter()
            .min()
            .zip(maxima.iter().max())
            .map(|(lo, hi)| (*lo, *hi));
        Some(OneSetup {
            runs: runs.len(),
            max_ns,
        })
    }
}

/// Every judged cell of the arms other than the baseline as "no real
/// difference": the arms are repeats of one setup.
fn as_repeats(c: &mut Comparison) {
    for row in c.rows.iter_mut().filter(|r| r.better != Better::Neither) {
        for (i, cell) in row.cells.iter_mut().enumerate() {
            if i != c.baseline && cell.value.is_some() {
                cell.change = Change::Same;
                cell.decided = true;
                cell.ratio = None;
            }
        }
    }
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
            let differences = between_arms(&p.arms);
            let one_setup = OneSetup::of(&p.arms, &differences);
            let mut decision = decide(&p.arms, p.baseline, reqs, noise);
            if one_setup.is_some() {
                as_repeats(&mut comparison);
                decision.as_repeats();
            }
            Part {
                kind: p.arms.first().map(|a| a.kind.clone()).unwrap_or_default(),
                title: p.title,
                verdicts: judge_arms(&p.arms, reqs, noise),
                differences,
                tally: Tally::of(&comparison),
                decision,
                one_setup,
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
    use crate::analysis::diff;
    use crate::analysis::fixture::windowed_run;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::verdict::parse_requirement;

    /// A run of this machine as `rtlab latency` records it (host, kernel,
    /// background), of samples around `base_ns` with a tail up to `tail_ns`.
    fn recorded(label: &str, kernel: &str, base_ns: u64, tail_ns: u64) -> Run {
        let samples: Vec<u64> = (0..20_000u64)
            .map(|i| match i % 500 {
                0 => tail_ns,
                _ => base_ns + (i * 7_919) % (base_ns / 5),
            })
            .collect();
        let mut run = windowed_run(label, &samples);
        run.fingerprint.hostname = "board".into();
        run.fingerprint.kernel_release = kernel.into();
        run.background = Some(crate::record::Background {
            loadavg: (0.5, 0.5),
            other_cpus: 0.1,
            rt_threads: Vec::new(),
        });
        run
    }

    fn one_pairing(runs: Vec<Run>) -> Vec<Pairing> {
        of_runs(runs, 0)
    }

    #[test]
    fn runs_that_differ_in_nothing_are_repeats_of_one_setup() {
        // Five runs of one setup whose figures scatter far beyond their own
        // intervals (as run-to-run drift does on a busy machine).
        let runs: Vec<Run> = [(20_000, 60_000), (30_000, 110_000_000), (25_000, 63_000)]
            .iter()
            .chain(&[(40_000, 900_000), (22_000, 70_000)])
            .enumerate()
            .map(|(i, &(base, tail))| recorded(&format!("same-{i}"), "6.1.0", base, tail))
            .collect();
        let alone = analyse(
            one_pairing(
                runs.iter()
                    .map(|r| Run {
                        background: None,
                        ..r.clone()
                    })
                    .collect(),
            ),
            &[],
            DEFAULT_NOISE,
        );
        // Judged run by run, the scatter reads as changes.
        assert!(alone.parts[0].tally.better + alone.parts[0].tally.worse > 0);
        assert!(alone.parts[0].one_setup.is_none());
        let o = analyse(one_pairing(runs), &[], DEFAULT_NOISE);
        let p = &o.parts[0];
        assert!(p.differences.is_empty(), "{:?}", p.differences);
        assert_eq!(
            p.one_setup,
            Some(OneSetup {
                runs: 5,
                max_ns: Some((60_000, 110_000_000))
            })
        );
        assert_eq!((p.tally.better, p.tally.worse, p.tally.unknown), (0, 0, 0));
        assert!(p.tally.same > 0);
        assert!(p.decision.biggest.is_none());
        for row in &p.comparison.rows {
            assert!(row.cells.iter().all(|c| c.ratio.is_none()), "{}", row.name);
        }
    }

    #[test]
    fn runs_that_differ_are_judged_by_their_own_intervals() {
        // Another kernel, the figures shifted apart: worse, intervals separate.
        let runs = vec![
            recorded("stock", "6.1.0", 20_000, 60_000),
            recorded("other", "6.1.0-rt", 40_000, 120_000),
        ];
        let o = analyse(one_pairing(runs.clone()), &[], DEFAULT_NOISE);
        let p = &o.parts[0];
        assert!(p.one_setup.is_none());
        assert_eq!(p.differences[0].field, "kernel");
        let (row, _) = p.comparison.value("p50", 1).unwrap();
        assert_eq!(row.cells[1].change, Change::Worse);
        // Another real-time thread on the machine is a difference too.
        let mut hogged = runs[0].clone();
        if let Some(b) = hogged.background.as_mut() {
            b.rt_threads = vec!["hog fifo 95".into()];
        }
        let mut shifted = recorded("hog", "6.1.0", 40_000, 120_000);
        shifted.background = hogged.background;
        let o = analyse(
            one_pairing(vec![runs[0].clone(), shifted]),
            &[],
            DEFAULT_NOISE,
        );
        assert!(o.parts[0].one_setup.is_none());
        assert_eq!(o.parts[0].differences[0].field, diff::OTHER_LOAD);
        assert!(o.parts[0].tally.worse > 0);
    }

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
