//! The verdicts of a repeated campaign in words: each step and requirement
//! judged over its repeats ("PASS in 5 of 5 repeats, worst max 455us"), and
//! what `--until-decided` could not decide.

use super::table::paragraph;
use crate::analysis::repeats::RepeatVerdict;
use crate::units::Human;

/// One verdict over repeats: `PASS in 5 of 5 repeats, worst max 455us`.
pub fn line(v: &RepeatVerdict) -> String {
    let worst = v
        .worst_max_ns
        .map(|m| format!(", worst max {}", Human(m)))
        .unwrap_or_default();
    match v.result {
        "PASS" => format!("PASS in {} of {} repeats{worst}", v.passed, v.repeats),
        "FAIL" => format!("FAIL in {} of {} repeats{worst}", v.repeats, v.repeats),
        "UNDECIDED" => format!(
            "UNDECIDED: passed in {} of {} repeats{worst}",
            v.passed, v.repeats
        ),
        other => other.to_string(),
    }
}

/// The verdicts over repeats, one line per step and requirement ("" when
/// there are none).
pub fn render(verdicts: &[RepeatVerdict]) -> String {
    if verdicts.is_empty() {
        return String::new();
    }
    let width = verdicts
        .iter()
        .map(|v| v.step.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("verdicts over repeats:\n");
    for v in verdicts {
        out.push_str(&format!(
            "  {:width$}  {} {}: {}\n",
            v.step,
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

    fn v(result: &'static str, passed: usize, repeats: usize) -> RepeatVerdict {
        RepeatVerdict {
            step: "idle".into(),
            requirement: "loop".into(),
            budget_ns: 1_000_000,
            result,
            decided: result != "UNDECIDED",
            passed,
            repeats,
            worst_max_ns: Some(455_000),
        }
    }

    #[test]
    fn each_verdict_says_how_many_repeats_it_rests_on() {
        assert_eq!(
            line(&v("PASS", 5, 5)),
            "PASS in 5 of 5 repeats, worst max 455us"
        );
        assert_eq!(
            line(&v("FAIL", 0, 3)),
            "FAIL in 3 of 3 repeats, worst max 455us"
        );
        assert_eq!(
            line(&v("UNDECIDED", 2, 5)),
            "UNDECIDED: passed in 2 of 5 repeats, worst max 455us"
        );
        assert_eq!(
            render(&[v("PASS", 5, 5)]),
            "verdicts over repeats:\n  idle  loop 1ms: PASS in 5 of 5 repeats, worst max 455us\n\n"
        );
        assert_eq!(undecided(&[], 5), "");
    }
}
