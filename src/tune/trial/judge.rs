//! What a change did: the baseline's and the changed arm's runs compared on
//! p99.9, maximum and deadline misses, each with its interval, by the rule of
//! `rtlab compare` ([`crate::analysis::interval::judge`]: a difference is real
//! only when the intervals separate by more than the noise threshold), and one
//! verdict per candidate.

use crate::analysis::compare::Better;
use crate::analysis::interval::{self, Change, Estimate};
use crate::record::Run;
use serde::Serialize;

/// The figures a change is judged on, all better lower.
pub const FIGURES: [&str; 3] = ["p99.9", "max", "misses"];

/// One figure before and after a change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Effect {
    /// `p99.9`, `max`, `misses`.
    pub figure: &'static str,
    /// The baseline's runs together.
    pub before: Option<Estimate>,
    /// The changed arm's runs together.
    pub after: Option<Estimate>,
    /// Against the baseline.
    pub change: Change,
    /// Whether the intervals are narrow enough that a real difference would
    /// have been seen (for `same`).
    pub decided: bool,
}

/// How a candidate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A figure is better and none is worse: kept.
    Helps,
    /// No figure differs by more than the noise.
    NoRealEffect,
    /// A figure is worse (even if another is better).
    Hurts,
    /// Not tried: absent, already set, or refused (the reason is said).
    NotPossible,
    /// Stopped before it was measured in full.
    Interrupted,
}

impl Verdict {
    /// As the table shows it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Helps => "helps",
            Verdict::NoRealEffect => "no real effect",
            Verdict::Hurts => "hurts",
            Verdict::NotPossible => "not possible here",
            Verdict::Interrupted => "interrupted",
        }
    }
}

/// Each of [`FIGURES`] for `base` against `changed`, judged with `noise` (a
/// fraction of the baseline's value).
pub fn effects(base: &[&Run], changed: &[&Run], noise: f64) -> Vec<Effect> {
    FIGURES
        .iter()
        .map(|&figure| {
            let before = interval::of_runs(base, figure);
            let after = interval::of_runs(changed, figure);
            let j = match (&before, &after) {
                (Some(b), Some(a)) => interval::judge(b, a, Better::Lower, noise),
                _ => interval::Judged {
                    change: Change::Unknown,
                    decided: false,
                },
            };
            Effect {
                figure,
                before,
                after,
                change: j.change,
                decided: j.decided,
            }
        })
        .collect()
}

/// The verdict of a candidate's effects: a change that makes any figure worse
/// is not kept; one that makes some better is; else none was seen.
pub fn verdict(effects: &[Effect]) -> Verdict {
    let any = |c: Change| effects.iter().any(|e| e.change == c);
    if any(Change::Worse) {
        Verdict::Hurts
    } else if any(Change::Better) {
        Verdict::Helps
    } else {
        Verdict::NoRealEffect
    }
}

/// Whether "no real effect" is decided: some figure could be judged, and every
/// one that could is the same within the noise, with intervals narrow enough
/// to have seen a difference.
pub fn decided(effects: &[Effect]) -> bool {
    let judged: Vec<&Effect> = effects
        .iter()
        .filter(|e| e.change != Change::Unknown)
        .collect();
    !judged.is_empty() && judged.iter().all(|e| e.decided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::windowed_run;
    use crate::analysis::interval::DEFAULT_NOISE;

    /// A run of `n` wake-ups around `base` ns with a tail at `tail` ns every
    /// 200th: known p99.9 and maximum.
    fn run(seed: u64, base: u64, tail: u64) -> Run {
        let samples: Vec<u64> = (0..20_000u64)
            .map(|i| {
                let jitter = (i * 7919 + seed * 104_729) % 1_000;
                if i % 200 == 199 {
                    tail + jitter
                } else {
                    base + jitter
                }
            })
            .collect();
        windowed_run("r", &samples)
    }

    fn judged(a: &[Run], b: &[Run]) -> (Vec<Effect>, Verdict) {
        let a: Vec<&Run> = a.iter().collect();
        let b: Vec<&Run> = b.iter().collect();
        let e = effects(&a, &b, DEFAULT_NOISE);
        let v = verdict(&e);
        (e, v)
    }

    #[test]
    fn a_tail_cut_in_half_helps() {
        let base: Vec<Run> = (0..3).map(|s| run(s, 10_000, 100_000)).collect();
        let better: Vec<Run> = (3..6).map(|s| run(s, 10_000, 50_000)).collect();
        let (e, v) = judged(&base, &better);
        assert_eq!(e[0].figure, "p99.9");
        assert_eq!(e[0].change, Change::Better, "{e:?}");
        assert_eq!(v, Verdict::Helps);
        // The other way round, it hurts.
        let (_, v) = judged(&better, &base);
        assert_eq!(v, Verdict::Hurts);
    }

    #[test]
    fn the_same_distribution_is_no_real_effect() {
        let a: Vec<Run> = (0..3).map(|s| run(s, 10_000, 100_000)).collect();
        let b: Vec<Run> = (7..10).map(|s| run(s, 10_000, 100_000)).collect();
        let (e, v) = judged(&a, &b);
        assert_eq!(v, Verdict::NoRealEffect, "{e:?}");
        assert_eq!(e[0].change, Change::Same);
        // Maxima of three runs a side are ranges, never separated by chance
        // alone: unknown or the same, never a verdict of their own.
        assert_ne!(e[1].change, Change::Better);
        assert!(e[2].before.is_some(), "misses are counted");
        // Nothing that can be judged is never a decided "no real effect".
        let none: Vec<Effect> = e
            .iter()
            .map(|x| Effect {
                change: Change::Unknown,
                decided: false,
                ..*x
            })
            .collect();
        assert_eq!(verdict(&none), Verdict::NoRealEffect);
        assert!(!decided(&none));
    }

    #[test]
    fn better_on_one_figure_and_worse_on_another_hurts() {
        let base: Vec<Run> = (0..4).map(|s| run(s, 10_000, 100_000)).collect();
        let mut mixed: Vec<Run> = (4..8).map(|s| run(s, 10_000, 50_000)).collect();
        for r in &mut mixed {
            for s in r.series.iter_mut().chain(&mut r.total) {
                s.counters.deadline_misses = 500;
            }
        }
        let (e, v) = judged(&base, &mixed);
        assert_eq!(e[0].change, Change::Better);
        assert_eq!(e[2].change, Change::Worse, "{:?}", e[2]);
        assert_eq!(v, Verdict::Hurts);
    }
}
