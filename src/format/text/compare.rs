//! `rtlab compare` in words: each comparison's table (one column per arm, each
//! figure with its interval, and against the baseline `≈` for no real
//! difference or `1.34x worse` / `0.27x better` for a real one), what differs
//! between the arms, the warnings and the decision; and the cell texts,
//! labels and headings that the markdown and HTML tables share, so that every
//! format shows the same numbers and the same changes.

use super::decision;
use super::run::warnings_text;
use super::table::{paragraph, Table};
use super::why;
use crate::analysis::compare::{Column, Comparison, Quantity, Row};
use crate::analysis::diff::Difference;
use crate::analysis::interval::{Basis, Change};
use crate::analysis::outcome::{Outcome, Part};
use crate::format::{name_with_id, run_key, UNKNOWN};
use crate::record::Run;
use crate::units::{Human, TimeUnit};

/// A metric value: whole numbers as such, others with up to 3 decimals.
pub fn metric_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// A value of `row` as shown in tables.
pub fn value_text(row: &Row, v: f64, unit: TimeUnit) -> String {
    figure_text(row.quantity, v, unit)
}

/// A value of a `quantity` as shown in tables.
pub fn figure_text(quantity: Quantity, v: f64, unit: TimeUnit) -> String {
    match quantity {
        Quantity::Time => unit.cell(v),
        Quantity::Duration => Human(v.max(0.0) as u64).to_string(),
        Quantity::Count => format!("{v:.0}"),
        Quantity::Metric => metric_text(v),
        Quantity::Run => format!("#{v:.0}"),
    }
}

/// The half-width `half` of an interval around `v`, a `quantity`, as
/// `±1.1`: a metric with the decimals its value is shown with.
pub fn spread_text(quantity: Quantity, v: f64, half: f64, unit: TimeUnit) -> String {
    let text = match quantity {
        Quantity::Metric if v.fract() == 0.0 && half.fract() == 0.0 => format!("{half:.0}"),
        Quantity::Metric if v.abs() >= 100.0 || v.fract() == 0.0 => format!("{half:.1}"),
        q => figure_text(q, half, unit),
    };
    format!("±{text}")
}

/// The row name with its unit, for table headers.
pub fn label(row: &Row, unit: TimeUnit) -> String {
    match row.quantity {
        Quantity::Time => format!("{} ({})", row.name, unit.symbol()),
        _ => row.name.clone(),
    }
}

/// One cell as every format shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The value (`63.2`), the range over runs (`63.0–110.0`), or
    /// [`UNKNOWN`].
    pub value: String,
    /// The interval as `±1.1` (the larger distance of its ends from the
    /// value), or "" without one.
    pub interval: String,
    /// Against the baseline: `0.27x better`, `1.34x worse`, `≈` (no real
    /// difference), `≈?` (none seen, not decided), or "".
    pub change: String,
    /// `better`, `worse`, `same` or "": what the formats may colour.
    pub class: &'static str,
}

impl Shown {
    /// The cell in one piece: `63.2 ±1.1 ≈`.
    pub fn text(&self) -> String {
        [&self.value, &self.interval, &self.change]
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Cell `i` of `row` of `c`.
pub fn shown(c: &Comparison, row: &Row, i: usize, unit: TimeUnit) -> Shown {
    let cell = &row.cells[i];
    let Some(v) = cell.value else {
        return Shown {
            value: UNKNOWN.into(),
            interval: String::new(),
            change: String::new(),
            class: "",
        };
    };
    let text = |x: f64| value_text(row, x, unit);
    let (value, interval) = match (cell.basis, cell.ci) {
        (Some(Basis::Range { .. }), Some((lo, hi))) => {
            (format!("{}–{}", text(lo), text(hi)), String::new())
        }
        (Some(Basis::Windows { .. } | Basis::Runs { .. }), Some((lo, hi))) => {
            let half = (v - lo).max(hi - v).max(0.0);
            (text(v), spread_text(row.quantity, v, half, unit))
        }
        _ => (text(v), String::new()),
    };
    let (change, class) = if i == c.baseline {
        (String::new(), "")
    } else {
        let ratio = |word: &str| match cell.ratio {
            Some(r) => format!("{r:.2}x {word}"),
            None => word.to_string(),
        };
        match (cell.change, cell.decided) {
            (Change::Better, _) => (ratio("better"), "better"),
            (Change::Worse, _) => (ratio("worse"), "worse"),
            (Change::Same, true) => ("≈".into(), "same"),
            (Change::Same, false) => ("≈?".into(), "same"),
            (Change::Unknown, _) => (String::new(), ""),
        }
    };
    Shown {
        value,
        interval,
        change,
        class,
    }
}

/// A column's heading: label and id (or its number of runs).
pub fn heading(c: &Column) -> String {
    match (c.runs.len(), c.id) {
        // Named apart from another run of its label already.
        (0, Some(id)) if c.label.ends_with(&format!(" #{id}")) => c.label.clone(),
        (0, _) => name_with_id(&c.label, c.id),
        (n, _) => format!("{} ({n} runs)", c.label),
    }
}

/// The column headings, the baseline's marked when there are several arms.
pub fn headings(c: &Comparison) -> Vec<String> {
    marked(c, c.columns.iter().map(heading).collect())
}

/// `names`, one per column, the baseline's marked when there are several arms.
fn marked(c: &Comparison, mut names: Vec<String>) -> Vec<String> {
    if c.columns.len() > 1 {
        if let Some(n) = names.get_mut(c.baseline) {
            n.push_str(" (baseline)");
        }
    }
    names
}

/// The short names of the columns: [`run_key`] of a run, `g1`, `g2`, … for
/// groups (`--by`), `a1`, `a2`, … for other arms of several runs.
pub fn keys(c: &Comparison) -> Vec<String> {
    c.columns
        .iter()
        .enumerate()
        .map(|(i, col)| match (&col.group, col.runs.is_empty()) {
            (Some(_), _) => format!("g{}", i + 1),
            (None, false) => format!("a{}", i + 1),
            (None, true) => run_key(col.id, i),
        })
        .collect()
}

/// Whether the columns are groups of runs (`--by`).
fn grouped(c: &Comparison) -> bool {
    c.columns.iter().any(|col| col.group.is_some())
}

/// The legend of [`keys`]: each key with its arm's name, the baseline marked.
pub fn legend(c: &Comparison) -> String {
    let keys = keys(c);
    let named = c.columns.iter().map(|col| match col.runs.len() {
        0 => col.label.clone(),
        n => format!("{} ({n} runs)", col.label),
    });
    let labels = marked(c, named.collect());
    let width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
    let mut out = String::from(if grouped(c) { "groups:\n" } else { "runs:\n" });
    for (k, l) in keys.iter().zip(&labels) {
        out.push_str(&paragraph(&format!("  {k:<width$}  "), l));
    }
    out
}

/// The top causes of the runs' spike analyses, each cause named once under a
/// short key (`c1`, `c2`, …).
pub struct TopCauses {
    /// One cell per column: `c1 53%`, `no spike`, or [`UNKNOWN`] for a run
    /// without an analysis.
    pub cells: Vec<String>,
    /// The same cells with the causes' names instead of keys: `NET_RX softirq
    /// on CPU 1: 53%`.
    pub named: Vec<String>,
    /// The keys and the causes they stand for, in order.
    pub legend: Vec<(String, String)>,
}

/// The row heading of [`TopCauses`].
pub const TOP_CAUSE: &str = "top cause";

/// The top cause of each column's spike analysis; `None` when no run has one.
pub fn top_causes(c: &Comparison) -> Option<TopCauses> {
    if c.columns.iter().all(|col| col.why.is_none()) {
        return None;
    }
    let mut t = TopCauses {
        cells: Vec::new(),
        named: Vec::new(),
        legend: Vec::new(),
    };
    for col in &c.columns {
        let (cell, named) = match col.why.as_ref().map(|w| &w.top_cause) {
            None => (UNKNOWN.to_string(), UNKNOWN.to_string()),
            Some(None) => {
                let none = format!(
                    "no {}",
                    col.why.as_ref().map_or("spike", |w| w.subject.noun())
                );
                (none.clone(), none)
            }
            Some(Some(cause)) => {
                let name = why::cause_name(cause);
                let share = why::percent(cause.share);
                let key = match t.legend.iter().find(|(_, n)| *n == name) {
                    Some((k, _)) => k.clone(),
                    None => {
                        let k = format!("c{}", t.legend.len() + 1);
                        t.legend.push((k.clone(), name.clone()));
                        k
                    }
                };
                (format!("{key} {share}"), format!("{name}: {share}"))
            }
        };
        t.cells.push(cell);
        t.named.push(named);
    }
    Some(t)
}

/// The legend of [`top_causes`] as text lines.
fn causes_legend(t: &TopCauses) -> String {
    let mut out = format!(
        "{TOP_CAUSE}: the cause of the largest share of spike (or noise) time ('rtlab why RUN' explains)\n"
    );
    for (k, name) in &t.legend {
        out.push_str(&paragraph(&format!("  {k:<3} "), name));
    }
    out
}

/// What the marks of a comparison mean, in sentences (none for one arm).
pub fn marks_legend(c: &Comparison) -> Vec<String> {
    if c.columns.len() < 2 {
        return Vec::new();
    }
    let noise = c.noise * 100.0;
    let mut out = vec![
        format!(
            "±: 95% interval; a–b: lowest and highest of the runs; a value alone has no interval \
             (a maximum of one run is only observed; an imported run keeps no time windows)"
        ),
        format!(
            "against the baseline: 1.34x worse / 0.27x better: intervals apart by more than the \
             {noise:.0}% noise (value / baseline); ≈ no real difference; ≈? none seen, but the \
             intervals are too wide to be sure; no mark: cannot tell"
        ),
    ];
    out.extend(unsupported_legend(c));
    out.push(format!("{UNKNOWN}: the run does not have it"));
    out
}

/// One sentence per row with percentiles too few samples support.
fn unsupported_legend(c: &Comparison) -> Vec<String> {
    c.rows
        .iter()
        .filter_map(|row| {
            let short: Vec<(u64, u64)> = row.cells.iter().filter_map(|c| c.unsupported()).collect();
            let needed = short.first()?.0;
            let lo = short.iter().map(|s| s.1).min()?;
            let hi = short.iter().map(|s| s.1).max()?;
            let have = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}–{hi}")
            };
            Some(format!(
                "{} {UNKNOWN}: not supported by the sample count (needs {needed} samples, has {have})",
                row.name
            ))
        })
        .collect()
}

/// The comparison headed by `names`, one per column, with the [`top_causes`]
/// row when a run has a spike analysis.
fn comparison_table(c: &Comparison, names: &[String], unit: TimeUnit) -> Table {
    let mut header = vec![""];
    header.extend(names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for col in 1..header.len() {
        t.wrap(col);
    }
    for row in &c.rows {
        let mut cells = vec![label(row, unit)];
        cells.extend((0..c.columns.len()).map(|i| shown(c, row, i, unit).text()));
        t.row(cells);
    }
    if let Some(causes) = top_causes(c) {
        t.row(
            std::iter::once(TOP_CAUSE.to_string())
                .chain(causes.cells)
                .collect(),
        );
    }
    t
}

/// The text table and its legend. Its columns are headed by the arms' names
/// when that fits in [`WIDTH`](super::table::WIDTH) columns, else by their
/// [`keys`], and the table follows their [`legend`]. Whether keys were used.
pub fn render_text(c: &Comparison, unit: TimeUnit) -> (String, bool) {
    let full = comparison_table(c, &headings(c), unit);
    let (mut out, keyed) = if full.fits() {
        (full.render(), false)
    } else {
        let t = comparison_table(c, &marked(c, keys(c)), unit);
        (format!("{}\n{}", legend(c), t.render()), true)
    };
    for line in marks_legend(c) {
        out.push_str(&paragraph("", &line));
    }
    if let Some(causes) = top_causes(c) {
        out.push_str(&causes_legend(&causes));
    }
    (out, keyed)
}

/// Longest value shown in the text "what differs" table (the HTML shows all).
const DIFF_CELL_MAX: usize = 40;

/// `s`, cut to `max` characters with an ellipsis.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// The "what differs" table as text, the columns headed by `names`
/// (left-aligned, long values clipped and wrapped), or a sentence when
/// nothing differs. `heading` names what is compared (`what differs`).
pub fn differences_text(d: &[Difference], names: &[String], heading: &str) -> String {
    if d.is_empty() {
        return format!(
            "{heading}: nothing known differs (system, loads, other load, parameters)\n"
        );
    }
    let mut header = vec!["field"];
    header.extend(names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for col in 0..header.len() {
        t.align_left(col);
        if col > 0 {
            t.wrap(col);
        }
    }
    for d in d {
        let values = d.values.iter().map(|v| clip(v, DIFF_CELL_MAX));
        t.row(std::iter::once(d.field.clone()).chain(values).collect());
    }
    format!("{heading}:\n{}", t.render())
}

/// A part's heading: `1. cpu (bench.cpu)`.
pub fn part_heading(number: usize, p: &Part) -> String {
    if p.title == p.kind {
        format!("{number}. {}", p.kind)
    } else {
        format!("{number}. {} ({})", p.title, p.kind)
    }
}

/// One comparison: its table and legend, and what differs between its arms
/// (its columns named as the table's).
fn part_text(p: &Part, unit: TimeUnit) -> String {
    let table = &p.comparison;
    let (mut out, keyed) = render_text(table, unit);
    if table.columns.len() > 1 {
        let names: Vec<String> = if keyed {
            keys(table)
        } else {
            table.columns.iter().map(heading).collect()
        };
        out.push('\n');
        out.push_str(&differences_text(&p.differences, &names, "what differs"));
    }
    out
}

/// The whole text of `rtlab compare`: each comparison (numbered when there
/// are several), what was compared with nothing, the warnings of the runs,
/// and the decision.
pub fn report(o: &Outcome, unit: TimeUnit) -> String {
    let mut out = String::new();
    let numbered = o.parts.len() > 1;
    for (i, p) in o.parts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if numbered {
            out.push_str(&format!("{}\n\n", part_heading(i + 1, p)));
        }
        out.push_str(&part_text(p, unit));
    }
    for u in &o.unpaired {
        out.push_str(&paragraph("not compared: ", u));
    }
    let runs: Vec<Run> = o.arms().flat_map(|a| a.runs.iter().cloned()).collect();
    let warnings = warnings_text(&runs);
    if !warnings.is_empty() {
        out.push('\n');
        out.push_str(&warnings);
    }
    out.push('\n');
    out.push_str(&decision::render(o, unit));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::arms::Arm;
    use crate::analysis::compare::compare;
    use crate::analysis::fixture::{run_from_samples, same_and_shifted, two_compared_runs as two};
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::format::text::table::WIDTH;

    fn arms(runs: Vec<Run>) -> Vec<Arm> {
        runs.into_iter().map(Arm::of_run).collect()
    }

    fn line<'a>(text: &'a str, start: &str) -> &'a str {
        text.lines().find(|l| l.starts_with(start)).unwrap()
    }

    #[test]
    fn intervals_and_changes_in_the_text_table() {
        let runs = same_and_shifted();
        let (text, keyed) = render_text(&compare(&arms(runs), 0, DEFAULT_NOISE), TimeUnit::Us);
        assert!(!keyed);
        assert!(text.contains("a (baseline)"), "{text}");
        let p50 = line(&text, "p50 (us)");
        assert!(p50.contains(" ±") && p50.contains(" ≈ "), "{p50}");
        assert!(p50.contains("1.50x worse"), "{p50}");
        assert!(!p50.contains('*'), "{p50}");
        let max = line(&text, "max (us)");
        assert!(!max.contains('±') && !max.contains('≈'), "observed: {max}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn unsupported_percentiles_are_dashes_with_a_legend() {
        let (text, _) = render_text(&compare(&arms(two()), 0, DEFAULT_NOISE), TimeUnit::Us);
        let p99 = line(&text, "p99 (us)");
        assert_eq!(
            p99.split_whitespace().collect::<Vec<_>>(),
            ["p99", "(us)", "–", "–"]
        );
        assert!(
            text.contains("p99 –: not supported by the sample count (needs 1000 samples, has 4)"),
            "{text}"
        );
        let min = line(&text, "min (us)");
        assert_eq!(
            min.split_whitespace().collect::<Vec<_>>(),
            ["min", "(us)", "10.0", "5.0"]
        );
    }

    #[test]
    fn long_names_become_keys_under_a_legend() {
        let mut runs = two();
        runs[0].label = "a kernel with a long and descriptive label".into();
        runs[1].label = "b kernel with an even longer and more descriptive label".into();
        let (text, keyed) = render_text(&compare(&arms(runs), 1, DEFAULT_NOISE), TimeUnit::Us);
        assert!(keyed);
        assert!(
            text.starts_with(
                "runs:\n  #1  a kernel with a long and descriptive label\n  \
                 #2  b kernel with an even longer and more descriptive label (baseline)\n\n"
            ),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    /// Groups too many for their names are keyed g1, g2, … under "groups:".
    #[test]
    fn groups_are_keyed() {
        use crate::analysis::group::{compare_groups, group, By};
        let mut runs: Vec<Run> = (0..12)
            .map(|i| run_from_samples(&format!("r{i}"), &[1_000 * (i + 1)]))
            .collect();
        for (i, r) in runs.iter_mut().enumerate() {
            r.id = Some(i as i64 + 1);
            r.fingerprint.hostname = format!("a-rather-long-board-name-{:02}", i % 6);
        }
        let groups = group(&runs, By::Host, &[]).unwrap();
        let (_, c) = compare_groups(&groups, By::Host, 0, DEFAULT_NOISE);
        let (text, keyed) = render_text(&c, TimeUnit::Us);
        assert!(keyed);
        assert!(
            text.starts_with("groups:\n  g1  a-rather-long-board-name-00 (2 runs) (baseline)\n"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let worst = line(&text, "worst run");
        assert!(worst.contains("#7") && worst.ends_with("#12"), "{worst}");
    }

    #[test]
    fn differences_are_left_aligned_and_clipped() {
        let d = vec![
            Difference {
                field: "HZ".into(),
                values: vec!["250".into(), "1000".into()],
            },
            Difference {
                field: "cmdline".into(),
                values: vec!["-".into(), "x".repeat(50)],
            },
        ];
        let text = differences_text(&d, &["a #1".into(), "bb #2".into()], "what differs");
        let want = format!(
            "what differs:\nfield    a #1  bb #2\nHZ       250   1000\ncmdline  -     {}…\n",
            "x".repeat(39)
        );
        assert_eq!(text, want);
        assert_eq!(clip("abc", 3), "abc");
    }
}
