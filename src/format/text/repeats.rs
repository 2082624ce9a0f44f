//! The verdicts of a repeated campaign in words: each step and requirement
//! judged over its repeats ("PASS in 5 of 5 repeats, worst max 455us"), and
//! what `--until-decided` could not decide.

use super::table::paragraph;
use crate::analysis::verdict::{Verdict, FAIL, PASS, UNDECIDED};
use crate::units::Human;

/// One verdict over repeats: `PASS in 5 of 5 repeats, worst max 455us`.
pub fn line(v: &Verdict) -> String {
    let worst = v
        .max_ns
        .map(|m| format!(", worst max {}", Human(m)))
        .unwrap_or_default();
    let (passed, of) = (v.repeats_passed, v.repeats);
    match v.result {
        PASS => format!("PASS in {passed} of {of} repeats{worst}"),
        FAIL => format!("FAIL in {} of {of} repeats{worst}", of - passed),
        UNDECIDED => format!("UNDECIDED: within the budget in {passed} of {of} repeats{worst}"),
        other => other.to_string(),
    }
}

/// The verdicts over repeats, one line per step and requirement ("" when
/// there are none).
pub fn render(verdicts: &[Verdict]) -> String {
    if verdicts.is_empty() {
        return String::new();
    }
    let width = verdicts
        .iter()
        .map(|v| v.label.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("verdicts over repeats:\n");
    for v in verdicts {
        out.push_str(&format!(
            "  {:width$}  {} {}: {}\n",
            v.label,
            v.requirement,
            Human(v.budget_ns),
            line(v)
        ));
    }
    out.push('\n');
    out
}

/// What `--until-decided` left undecided after `repeats` repeats ("" when
/// everything was decided).
pub fn undecided(open: &[String], repeats: u32) -> String {
    if open.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "not decided after {repeats} repeats (--max-repeats): raise it, or look at what varies \
         between the repeats:\n"
    );
    for o in open {
        out.push_str(&paragraph("  - ", o));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::arms::Arm;
    use crate::analysis::fixture::run_from_samples;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::verdict::{judge_arms, parse_requirement};

    /// The verdict of one arm whose repeats saw the maxima `max_us`.
    fn judged(max_us: &[u64]) -> Verdict {
        let runs = max_us
            .iter()
            .map(|us| run_from_samples("k", &[10_000, us * 1_000]))
            .collect();
        let reqs = parse_requirement("loop=1ms").unwrap();
        judge_arms(&[Arm::new("idle", runs)], &reqs, DEFAULT_NOISE).remove(0)
    }

    #[test]
    fn each_verdict_says_how_many_repeats_it_rests_on() {
        assert_eq!(
            line(&judged(&[400, 455, 300, 200, 100])),
            "PASS in 5 of 5 repeats, worst max 455us"
        );
        assert_eq!(
            line(&judged(&[1_200, 2_000, 1_500])),
            "FAIL in 3 of 3 repeats, worst max 2ms"
        );
        assert_eq!(
            line(&judged(&[400, 1_500, 300])),
            "UNDECIDED: within the budget in 2 of 3 repeats, worst max 1.5ms"
        );
        assert_eq!(
            render(&[judged(&[400, 455])]),
            "verdicts over repeats:\n  idle  loop 1ms: PASS in 2 of 2 repeats, worst max 455us\n\n"
        );
        assert_eq!(undecided(&[], 5), "");
    }
}
