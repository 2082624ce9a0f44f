//! What the repeats of a campaign say: each requirement judged over every
//! repeat of a step ("PASS in 5 of 5 repeats, worst max 455 µs"), UNDECIDED
//! when the repeats disagree, and what in a campaign is still undecided, so
//! that `rtlab run --until-decided` knows whether another round is needed.

use super::verdict::{self, Requirement};
use crate::scenario::runner::Repeats;
use serde::Serialize;

/// One requirement judged over the repeats of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatVerdict {
    /// The step's base name.
    pub step: String,
    /// Requirement name.
    pub requirement: String,
    /// Budget (ns).
    pub budget_ns: u64,
    /// `PASS` (every repeat passed), `FAIL` (every repeat failed),
    /// `UNDECIDED` (the repeats disagree) or `NO DATA` (no repeat has latency
    /// values).
    pub result: &'static str,
    /// Whether more repeats could not change it: every repeat agrees.
    pub decided: bool,
    /// Repeats that passed.
    pub passed: usize,
    /// Repeats judged.
    pub repeats: usize,
    /// The largest maximum of the repeats (ns).
    pub worst_max_ns: Option<u64>,
}

/// Every requirement judged over the repeats of every step (step-major).
pub fn judge(groups: &[Repeats<'_>], reqs: &[Requirement]) -> Vec<RepeatVerdict> {
    let mut out = Vec::new();
    for g in groups {
        let runs: Vec<_> = g.steps.iter().map(|s| s.run.clone()).collect();
        let each = verdict::judge(&runs, reqs);
        for (i, req) in reqs.iter().enumerate() {
            // `judge` is run-major: this requirement's verdict of every run.
            let of_req: Vec<&verdict::Verdict> = each.iter().skip(i).step_by(reqs.len()).collect();
            let judged: Vec<&&verdict::Verdict> =
                of_req.iter().filter(|v| v.max_ns.is_some()).collect();
            let passed = judged.iter().filter(|v| v.passed()).count();
            let (result, decided) = match (judged.len(), passed) {
                (0, _) => ("NO DATA", true),
                (n, p) if p == n => ("PASS", true),
                (_, 0) => ("FAIL", true),
                _ => ("UNDECIDED", false),
            };
            out.push(RepeatVerdict {
                step: g.name.to_string(),
                requirement: req.name.clone(),
                budget_ns: req.budget_ns,
                result,
                decided,
                passed,
                repeats: judged.len(),
                worst_max_ns: judged.iter().filter_map(|v| v.max_ns).max(),
            });
        }
    }
    out
}

/// What in a campaign is still undecided, in words: each verdict whose
/// repeats disagree.
pub fn undecided(groups: &[Repeats<'_>], reqs: &[Requirement]) -> Vec<String> {
    judge(groups, reqs)
        .iter()
        .filter(|v| !v.decided)
        .map(|v| {
            format!(
                "{} against {}: passed in {} of {} repeats",
                v.step, v.requirement, v.passed, v.repeats
            )
        })
        .collect()
}

/// Whether any verdict is undecided (the campaign's exit code is then
/// [`crate::error::EXIT_UNDECIDED`] unless one failed outright).
pub fn any_undecided(verdicts: &[RepeatVerdict]) -> bool {
    verdicts.iter().any(|v| !v.decided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::step_run;
    use crate::scenario::runner::by_base;

    fn repeat(base: &str, r: u32, max_us: u64) -> crate::scenario::runner::StepRun {
        let mut s = step_run(base, &[50_000, max_us * 1_000], None);
        s.name = format!("{base} #{r}");
        s.repeat = r;
        s
    }

    #[test]
    fn repeats_that_agree_decide_and_repeats_that_disagree_do_not() {
        let steps = vec![
            repeat("idle", 1, 400),
            repeat("load", 1, 900),
            repeat("idle", 2, 455),
            repeat("load", 2, 1_500),
            repeat("idle", 3, 300),
            repeat("load", 3, 700),
        ];
        let groups = by_base(&steps);
        let reqs = verdict::parse_requirement("loop=1ms").unwrap();
        let v = judge(&groups, &reqs);
        let shown: Vec<(&str, &str, usize, usize, Option<u64>, bool)> = v
            .iter()
            .map(|v| {
                (
                    v.step.as_str(),
                    v.result,
                    v.passed,
                    v.repeats,
                    v.worst_max_ns,
                    v.decided,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("idle", "PASS", 3, 3, Some(455_000), true),
                ("load", "UNDECIDED", 2, 3, Some(1_500_000), false)
            ]
        );
        assert!(any_undecided(&v));
        assert_eq!(
            undecided(&groups, &reqs),
            ["load against loop: passed in 2 of 3 repeats"]
        );
        let strict = verdict::parse_requirement("loop=200us").unwrap();
        let v = judge(&groups, &strict);
        assert!(v.iter().all(|v| v.result == "FAIL" && v.decided));
        assert!(undecided(&groups, &strict).is_empty());
    }
}
