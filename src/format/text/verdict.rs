//! The text of verdicts: one row per run and requirement, and a closing line
//! counting the failures.

use super::table::Table;
use crate::analysis::verdict::{failures, Verdict};
use crate::format::name_with_id;
use crate::units::Human;

/// A signed duration in human form (`-1.5ms`).
pub fn signed(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", Human(ns.unsigned_abs()))
    } else {
        Human(ns as u64).to_string()
    }
}

/// The cells of a verdict row: run, requirement, budget, result, max, margin,
/// misses, overruns, samples, observed, note.
pub fn cells(v: &Verdict) -> Vec<String> {
    let opt = |o: Option<u64>| o.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
    vec![
        name_with_id(&v.label, v.run_id),
        v.requirement.clone(),
        Human(v.budget_ns).to_string(),
        v.result.into(),
        v.max_ns.map(|m| Human(m).to_string()).unwrap_or("-".into()),
        v.margin_ns.map(signed).unwrap_or("-".into()),
        opt(v.misses),
        opt(v.overruns),
        v.samples.to_string(),
        if v.duration_ns > 0 {
            Human(v.duration_ns).to_string()
        } else {
            "unknown".into()
        },
        v.note.clone().unwrap_or_default(),
    ]
}

/// Column headers matching [`cells`].
pub const HEADER: &[&str] = &[
    "run",
    "requirement",
    "budget",
    "verdict",
    "max",
    "margin",
    "misses",
    "overruns",
    "samples",
    "observed",
    "note",
];

/// The verdict table as text, with a closing line counting the failures. Runs
/// are named by label and id, or by id alone (`#12`) when the names would make
/// the table wider than [`WIDTH`](super::table::WIDTH).
pub fn render_text(verdicts: &[Verdict]) -> String {
    let mut t = verdict_table(verdicts, |v| name_with_id(&v.label, v.run_id));
    if !t.fits() {
        t = verdict_table(verdicts, |v| match v.run_id {
            Some(id) => format!("#{id}"),
            None => v.label.clone(),
        });
    }
    let failed = failures(verdicts);
    format!(
        "{}{}\n",
        t.render(),
        if failed == 0 {
            "all requirements met".to_string()
        } else {
            format!("{failed} of {} verdict(s) failed", verdicts.len())
        }
    )
}

/// The verdict table, each run named by `name`; notes wrap.
fn verdict_table(verdicts: &[Verdict], name: impl Fn(&Verdict) -> String) -> Table {
    let mut t = Table::new(HEADER);
    t.wrap(0);
    let note = HEADER.len() - 1;
    t.align_left(note);
    t.wrap(note);
    for v in verdicts {
        let mut cells = cells(v);
        cells[0] = name(v);
        t.row(cells);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::analysis::verdict::{judge, parse_requirement};

    #[test]
    fn failures_are_counted_and_margins_signed() {
        let run = run_from_samples("stock", &[100_000, 200_000, 900_000, 1_100_000, 1_200_000]);
        let v = judge(&[run], &parse_requirement("drone").unwrap());
        let text = render_text(&v);
        assert!(text.contains("2 of 7 verdict(s) failed"), "{text}");
        assert!(text.contains("-200us"), "{text}");
    }

    #[test]
    fn an_unknown_observation_time_says_so() {
        let mut imported = run_from_samples("ct", &[1_000]);
        imported.duration_ns = 0;
        let v = judge(&[imported], &parse_requirement("a=1ms").unwrap());
        assert_eq!(cells(&v[0])[9], "unknown");
    }
}
