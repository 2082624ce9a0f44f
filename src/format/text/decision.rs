//! The decision in words, the block every comparison and campaign report ends
//! with: the tier matrix of latency arms against the deadline budgets, the
//! stability ranking of benchmark arms, how the figures changed against the
//! baseline and the biggest real change with what differs between the two
//! arms. Rendered from [`analysis::outcome`](crate::analysis::outcome); the
//! sentences are shared with the other formats ([`lines`]).

use super::compare::{figure_text, spread_text};
use super::table::{paragraph, Table};
use super::verdict::signed;
use crate::analysis::compare::Quantity;
use crate::analysis::decision::{BiggestChange, Ranked, Stability, Tiers};
use crate::analysis::interval::{Basis, Change, Estimate};
use crate::analysis::outcome::{OneSetup, Outcome, Part, Tally};
use crate::analysis::verdict::{Verdict, FAIL, NO_DATA, PASS, UNDECIDED};
use crate::format::UNKNOWN;
use crate::units::{Human, TimeUnit};

/// A verdict cell of the tier matrix: `PASS +807us`, `FAIL 2/5 -118us` (the
/// repeats that passed, when there are several).
pub fn tier_cell(v: &Verdict) -> String {
    let margin = v.margin_ns.map(|m| {
        let s = signed(m);
        if m >= 0 {
            format!("+{s}")
        } else {
            s
        }
    });
    let repeats = (v.repeats > 1).then(|| format!("{}/{}", v.repeats_passed, v.repeats));
    [Some(v.result.to_string()), repeats, margin]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The heading of a tier column: its budget (`≤1ms`).
pub fn tier_heading(budget_ns: u64) -> String {
    format!("≤{}", Human(budget_ns))
}

/// The tier matrix as a text table, its columns' requirements and the notes
/// of its cells that are not a plain PASS; every line led by `pad`.
fn tiers_text(t: &Tiers, pad: &str) -> String {
    let headings: Vec<String> = t
        .columns
        .iter()
        .map(|c| tier_heading(c.budget_ns))
        .collect();
    let mut header = vec!["arm"];
    header.extend(headings.iter().map(String::as_str));
    let mut table = Table::new(&header);
    table.wrap(0);
    for r in &t.rows {
        let mut cells = vec![r.arm.clone()];
        cells.extend(r.cells.iter().map(tier_cell));
        table.row(cells);
    }
    let inner = format!("{pad}  ");
    let mut out = paragraph(
        pad,
        "deadlines: each arm's worst maximum against each budget (margin = budget − worst max):",
    );
    out.push_str(&indent(&inner, &table.render()));
    let names: Vec<String> = t
        .columns
        .iter()
        .map(|c| format!("{} {}", tier_heading(c.budget_ns), c.name))
        .collect();
    out.push_str(&paragraph(&inner, &names.join("; ")));
    for (r, v) in t
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(move |v| (r, v)))
    {
        let head = format!("{inner}{} {}: ", r.arm, tier_heading(v.budget_ns));
        // Over repeats, each cell in words; of one run, what is not a plain PASS.
        match (v.repeats > 1, &v.note) {
            (true, Some(note)) => {
                out.push_str(&paragraph(&head, &format!("{}; {note}", repeats_line(v))))
            }
            (true, None) => out.push_str(&paragraph(&head, &repeats_line(v))),
            (false, Some(note)) => out.push_str(&paragraph(&format!("{head}{}: ", v.result), note)),
            (false, None) => {}
        }
    }
    let all = t.rows.iter().flat_map(|r| &r.cells);
    out.push_str(&paragraph(&inner, &verdicts_line(all)));
    out
}

/// One verdict over repeats: `PASS in 5 of 5 repeats, worst max 455us`.
pub fn repeats_line(v: &Verdict) -> String {
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

/// What `--until-decided` left undecided after `repeats` repeats, the last
/// lines of the decision block ("" when everything was decided).
pub fn not_decided(open: &[String], repeats: u32) -> String {
    if open.is_empty() {
        return String::new();
    }
    let mut out = paragraph(
        "  ",
        &format!(
            "not decided after {repeats} repeats (--max-repeats): raise it, or look at what \
             varies between the repeats:"
        ),
    );
    for o in open {
        out.push_str(&paragraph("    - ", o));
    }
    out
}

/// How the verdicts fell, in one sentence.
pub fn verdicts_line<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> String {
    let (mut pass, mut fail, mut undecided, mut none, mut all) = (0, 0, 0, 0, 0);
    for v in verdicts {
        all += 1;
        match v.result {
            PASS => pass += 1,
            FAIL => fail += 1,
            UNDECIDED => undecided += 1,
            _ => none += 1,
        }
    }
    if pass == all {
        return "all requirements met".into();
    }
    let mut parts = vec![format!("{pass} of {all} PASS")];
    for (n, what) in [(fail, FAIL), (undecided, UNDECIDED), (none, NO_DATA)] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let mut out = parts.join(", ");
    if undecided > 0 {
        out.push_str(": repeat the runs (rtlab run --repeat 5) to decide");
    }
    out
}

/// An estimate in text: `12.0 ±0.4us`, `1.2ms` (observed), `63.0–110.0us`
/// (range over runs), `1234.5 ±5.0` (a rate); [`UNKNOWN`] without one.
pub fn estimate_text(e: Option<&Estimate>, quantity: Quantity, unit: TimeUnit) -> String {
    let Some(e) = e else {
        return UNKNOWN.into();
    };
    let text = |v: f64| figure_text(quantity, v, unit);
    let suffix = match quantity {
        Quantity::Time => unit.symbol(),
        _ => "",
    };
    match (e.basis, e.ci) {
        (Basis::Unsupported { .. }, _) => UNKNOWN.into(),
        (Basis::Range { .. }, Some((lo, hi))) => format!("{}–{}{suffix}", text(lo), text(hi)),
        (Basis::Windows { .. } | Basis::Runs { .. }, Some((lo, hi))) => {
            let half = (e.value - lo).max(hi - e.value).max(0.0);
            let spread = spread_text(quantity, e.value, half, unit);
            format!("{} {spread}{suffix}", text(e.value))
        }
        _ => format!("{}{suffix}", text(e.value)),
    }
}

/// The header of a stability ranking's table.
pub const STABILITY_HEADER: [&str; 5] = ["", "arm", "p95−mean", "max−min", "events/s"];

/// The rows of a stability ranking's table, the most stable first: place,
/// arm, p95 − mean, max − min and events/s with their intervals.
pub fn stability_rows(s: &Stability, unit: TimeUnit) -> Vec<Vec<String>> {
    s.entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                format!("{}.", i + 1),
                e.arm.clone(),
                estimate_text(e.p95_mean.as_ref(), Quantity::Time, unit),
                estimate_text(e.max_min.as_ref(), Quantity::Time, unit),
                estimate_text(e.events_per_s.as_ref(), Quantity::Metric, unit),
            ]
        })
        .collect()
}

/// One stability ranking as text: the arms most stable first, then who won;
/// every line led by `pad`.
fn stability_text(s: &Stability, unit: TimeUnit, pad: &str) -> String {
    let mut t = Table::new(&STABILITY_HEADER);
    t.align_left(1);
    t.wrap(1);
    for row in stability_rows(s, unit) {
        t.row(row);
    }
    let inner = format!("{pad}  ");
    let mut out = paragraph(
        pad,
        &format!(
            "stability of the {} runs (ranked by p95−mean, the steadier first):",
            s.kind
        ),
    );
    out.push_str(&indent(&inner, &t.render()));
    out.push_str(&paragraph(&inner, &ranked_line(&s.outcome)));
    out
}

/// Who won a stability ranking, in one sentence.
pub fn ranked_line(r: &Ranked) -> String {
    match r {
        Ranked::MostStable { arm } => format!("most stable: {arm}"),
        Ranked::CannotTell {
            best,
            others,
            repeat,
        } => {
            let others = others.join(", ");
            match repeat {
                Some(n) => format!(
                    "cannot tell {best} from {others} with these runs: repeat with --repeat {n}"
                ),
                None => format!(
                    "cannot tell {best} from {others}: their spreads differ by less than the noise"
                ),
            }
        }
        Ranked::OneSetup { arms } => format!(
            "no most stable: {} differ in nothing known, repeats of one setup",
            arms.join(", ")
        ),
    }
}

/// Arms compared as repeats of one setup, in one sentence: `the runs differ
/// in nothing known: ... (max over 5 repeats: 63us – 110ms)`.
pub fn one_setup_line(s: &OneSetup) -> String {
    let range = match s.max_ns {
        Some((lo, hi)) => format!(
            " (max over {} repeats: {} – {})",
            s.runs,
            Human(lo),
            Human(hi)
        ),
        None => String::new(),
    };
    format!(
        "the runs differ in nothing known (host, kernel, parameters, configuration, other load): \
         compared as {} repeats of one setup, their differences are run-to-run variation{range}",
        s.runs
    )
}

/// How the figures of the other arms fell against the baseline's.
pub fn tally_line(t: &Tally, noise: f64) -> String {
    let noise = noise * 100.0;
    let changed = t.better + t.worse;
    let same = t.same + t.same_undecided;
    if changed + same + t.unknown == 0 {
        return "nothing to compare: one arm, or no figure with a direction".into();
    }
    if changed + same == 0 {
        return "no change can be told: no figure has an interval (a run without time \
                windows, as an imported one; too few values; a maximum of one run, only \
                observed): compare repeats (rtlab run --repeat 5)"
            .into();
    }
    let mut parts = Vec::new();
    if t.better > 0 {
        parts.push(format!("{} better", t.better));
    }
    if t.worse > 0 {
        parts.push(format!("{} worse", t.worse));
    }
    if same > 0 {
        parts.push(format!("{same} with no real difference"));
    }
    if t.unknown > 0 {
        parts.push(format!("{} cannot be told", t.unknown));
    }
    let mut out = format!("against the baseline: {}", parts.join(", "));
    if changed == 0 {
        out.push_str(&format!(
            " (no figure moved by more than the {noise:.0}% noise{})",
            if t.same_undecided > 0 {
                format!(
                    "; {} not decided: their intervals are wider than the noise",
                    t.same_undecided
                )
            } else {
                String::new()
            }
        ));
    }
    out
}

/// The biggest real change in one sentence, its figure a `quantity`.
pub fn biggest_line(b: &BiggestChange, quantity: Quantity, unit: TimeUnit) -> String {
    let word = if b.change == Change::Better {
        "better"
    } else {
        "worse"
    };
    format!(
        "biggest real change: {} of {} is {:.2}x the baseline {}'s ({} against {}): {word}",
        b.metric,
        b.arm,
        b.ratio,
        b.baseline,
        estimate_text(Some(&b.other), quantity, unit),
        estimate_text(Some(&b.base), quantity, unit),
    )
}

/// What differs between the arms of the biggest change, in one sentence.
pub fn explained_line(b: &BiggestChange) -> String {
    if b.differences.is_empty() {
        return "nothing known differs between them: look at what the machine did meanwhile \
                (rtlab why, --trace) or repeat the runs"
            .into();
    }
    let fields: Vec<String> = b
        .differences
        .iter()
        .map(|d| format!("{} {}", d.field, d.values.join(" → ")))
        .collect();
    format!("what differs between them: {}", fields.join("; "))
}

/// The sentences of one part's decision besides its tables, in order.
pub fn lines(p: &Part, noise: f64, unit: TimeUnit) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &p.one_setup {
        out.push(one_setup_line(s));
    }
    if p.comparison.columns.len() > 1 {
        out.push(tally_line(&p.tally, noise));
    }
    if let Some(b) = &p.decision.biggest {
        let row = p.comparison.rows.iter().find(|r| r.name == b.metric);
        let quantity = row.map_or(Quantity::Metric, |r| r.quantity);
        out.push(biggest_line(b, quantity, unit));
        out.push(explained_line(b));
    }
    out
}

/// `text`, each line led by `pad`.
fn indent(pad: &str, text: &str) -> String {
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

/// One part's decision, every line led by `pad`.
fn part(p: &Part, noise: f64, unit: TimeUnit, pad: &str) -> String {
    let mut out = String::new();
    if let Some(t) = &p.decision.tiers {
        out.push_str(&tiers_text(t, pad));
    }
    let rest = p.untiered_verdicts();
    if !rest.is_empty() {
        out.push_str(&super::verdict::render_text(&rest));
    }
    for s in &p.decision.stability {
        out.push_str(&stability_text(s, unit, pad));
    }
    for l in lines(p, noise, unit) {
        out.push_str(&paragraph(pad, &l));
    }
    if out.is_empty() {
        out.push_str(&paragraph(
            pad,
            "one column, no requirement: nothing to decide",
        ));
    }
    out
}

/// The decision block: `decision:` and each part's, numbered when there are
/// several.
pub fn render(o: &Outcome, unit: TimeUnit) -> String {
    let mut out = String::from("decision:\n");
    let numbered = o.parts.len() > 1;
    for (i, p) in o.parts.iter().enumerate() {
        if numbered {
            out.push_str(&format!("  {}\n", super::compare::part_heading(i + 1, p)));
            out.push_str(&part(p, o.noise, unit, "    "));
        } else {
            out.push_str(&part(p, o.noise, unit, "  "));
        }
    }
    if o.parts.is_empty() {
        out.push_str("  nothing compared\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::arms::Arm;
    use crate::analysis::decision::Ranked;
    use crate::analysis::fixture::run_from_samples;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::outcome::{analyse, Pairing};
    use crate::analysis::verdict::{judge_arms, parse_requirement};
    use crate::format::text::table::WIDTH;

    #[test]
    fn the_drone_matrix_has_a_column_per_budget() {
        let arms = [
            ("vanilla", 193_000),
            ("PREEMPT", 68_000),
            ("RT_PREEMPT", 91_000),
            ("Xenomai", 980_000),
        ]
        .into_iter()
        .map(|(name, max)| Arm::of_run(run_from_samples(name, &[20_000, 30_000, max])))
        .collect();
        let o = analyse(
            vec![Pairing {
                title: "latency".into(),
                arms,
                baseline: 0,
                by: None,
            }],
            &parse_requirement("drone").unwrap(),
            DEFAULT_NOISE,
        );
        let text = render(&o, TimeUnit::Us);
        assert!(text.starts_with("decision:\n  deadlines:"), "{text}");
        let header = text.lines().nth(2).unwrap();
        let cols: Vec<&str> = header.split_whitespace().collect();
        assert_eq!(cols, ["arm", "≤1ms", "≤20ms", "≤200ms"], "{text}");
        let xeno = text
            .lines()
            .find(|l| l.trim_start().starts_with("Xenomai"))
            .unwrap();
        assert!(xeno.contains("UNDECIDED +20us"), "{xeno}");
        assert!(
            text.contains("≤20ms baro, compass, airspeed, sonar"),
            "{text}"
        );
        assert!(
            text.contains("Xenomai ≤1ms: UNDECIDED: within the budget by 20us"),
            "{text}"
        );
        assert!(text.contains("11 of 12 PASS, 1 UNDECIDED"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    /// The verdict of one arm whose repeats saw the maxima `max_us`.
    fn over_repeats(max_us: &[u64]) -> Verdict {
        let runs = max_us
            .iter()
            .map(|us| run_from_samples("k", &[10_000, us * 1_000]))
            .collect();
        let reqs = parse_requirement("loop=1ms").unwrap();
        judge_arms(&[Arm::new("idle", runs)], &reqs, DEFAULT_NOISE).remove(0)
    }

    #[test]
    fn each_verdict_over_repeats_says_how_many_it_rests_on() {
        assert_eq!(
            repeats_line(&over_repeats(&[400, 455, 300, 200, 100])),
            "PASS in 5 of 5 repeats, worst max 455us"
        );
        assert_eq!(
            repeats_line(&over_repeats(&[1_200, 2_000, 1_500])),
            "FAIL in 3 of 3 repeats, worst max 2ms"
        );
        assert_eq!(
            repeats_line(&over_repeats(&[400, 1_500, 300])),
            "UNDECIDED: within the budget in 2 of 3 repeats, worst max 1.5ms"
        );
        assert_eq!(not_decided(&[], 5), "");
    }

    #[test]
    fn repeated_arms_are_judged_in_the_one_decision_block() {
        let repeats = |name: &str, max_us: &[u64]| {
            let runs = max_us
                .iter()
                .map(|us| run_from_samples(name, &[10_000, us * 1_000]))
                .collect();
            Arm::new(name, runs)
        };
        let o = analyse(
            vec![Pairing {
                title: "latency".into(),
                arms: vec![
                    repeats("idle", &[400, 455, 300]),
                    repeats("load", &[400, 1_500, 300]),
                ],
                baseline: 0,
                by: None,
            }],
            &parse_requirement("loop=1ms").unwrap(),
            DEFAULT_NOISE,
        );
        let text = render(&o, TimeUnit::Us);
        assert_eq!(text.matches("decision:").count(), 1, "{text}");
        assert!(
            text.contains("idle ≤1ms: PASS in 3 of 3 repeats, worst max 455us"),
            "{text}"
        );
        assert!(
            text.contains("load ≤1ms: UNDECIDED: within the budget in 2 of 3 repeats"),
            "{text}"
        );
    }

    #[test]
    fn sentences_of_rankings_and_tallies() {
        let most = Ranked::MostStable {
            arm: "image3".into(),
        };
        assert_eq!(ranked_line(&most), "most stable: image3");
        let cannot = Ranked::CannotTell {
            best: "image2".into(),
            others: vec!["image3".into()],
            repeat: Some(5),
        };
        assert_eq!(
            ranked_line(&cannot),
            "cannot tell image2 from image3 with these runs: repeat with --repeat 5"
        );
        let same = Tally {
            same: 4,
            ..Tally::default()
        };
        assert_eq!(
            tally_line(&same, 0.05),
            "against the baseline: 4 with no real difference (no figure moved by more than \
             the 5% noise)"
        );
        let unknown = Tally {
            unknown: 3,
            ..Tally::default()
        };
        assert!(tally_line(&unknown, 0.05).starts_with("no change can be told"));
        let one = OneSetup {
            runs: 5,
            max_ns: Some((63_000, 110_000_000)),
        };
        assert!(
            one_setup_line(&one).ends_with(
                "compared as 5 repeats of one setup, their differences are run-to-run \
                 variation (max over 5 repeats: 63us – 110ms)"
            ),
            "{}",
            one_setup_line(&one)
        );
    }
}
