//! `rtlab compare` in words: the comparison table (one column per run, best
//! values marked `*`, ratios to the baseline in parentheses), the verdicts, what
//! differs between the runs and their warnings; and the values, labels and
//! headings that the markdown and HTML tables share.

use super::run::warnings_text;
use super::table::{paragraph, Table};
use super::verdict;
use super::why;
use crate::analysis::compare::{Column, Comparison, Quantity, Row};
use crate::analysis::diff::differences;
use crate::analysis::verdict::Verdict;
use crate::format::{name_with_id, run_key, run_name, UNKNOWN};
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
    match row.quantity {
        Quantity::Time => unit.cell(v),
        Quantity::Duration => Human(v.max(0.0) as u64).to_string(),
        Quantity::Count => format!("{v:.0}"),
        Quantity::Metric => metric_text(v),
        Quantity::Run => format!("#{v:.0}"),
    }
}

/// The row name with its unit, for table headers.
pub fn label(row: &Row, unit: TimeUnit) -> String {
    match row.quantity {
        Quantity::Time => format!("{} ({})", row.name, unit.symbol()),
        _ => row.name.clone(),
    }
}

/// One cell of `row` for run `i`: the value ([`UNKNOWN`] when the run does
/// not have it), `mark` around it when it is the best, and the ratio to the
/// baseline.
pub fn cell(row: &Row, i: usize, unit: TimeUnit, mark: (&str, &str)) -> String {
    let Some(v) = row.values[i] else {
        return UNKNOWN.into();
    };
    let mut text = value_text(row, v, unit);
    if row.best.contains(&i) {
        text = format!("{}{text}{}", mark.0, mark.1);
    }
    if let Some(r) = row.ratios[i] {
        text.push_str(&format!(" ({r:.2}x)"));
    }
    text
}

/// A column's heading: label and id.
pub fn heading(c: &Column) -> String {
    name_with_id(&c.label, c.id)
}

/// The column headings, the baseline's marked when there are several runs.
pub fn headings(c: &Comparison) -> Vec<String> {
    marked(c, c.columns.iter().map(heading).collect())
}

/// `names`, one per column, the baseline's marked when there are several runs.
fn marked(c: &Comparison, mut names: Vec<String>) -> Vec<String> {
    if c.columns.len() > 1 {
        if let Some(n) = names.get_mut(c.baseline) {
            n.push_str(" (baseline)");
        }
    }
    names
}

/// The short names of the columns: [`run_key`], or `g1`, `g2`, … for groups
/// (`--by`).
pub fn keys(c: &Comparison) -> Vec<String> {
    c.columns
        .iter()
        .enumerate()
        .map(|(i, col)| match col.group {
            Some(_) => format!("g{}", i + 1),
            None => run_key(col.id, i),
        })
        .collect()
}

/// Whether the columns are groups of runs (`--by`).
fn grouped(c: &Comparison) -> bool {
    c.columns.iter().any(|col| col.group.is_some())
}

/// The legend of [`keys`]: each key with its run's label, the baseline marked.
pub fn legend(c: &Comparison) -> String {
    let keys = keys(c);
    let labels = marked(c, c.columns.iter().map(|col| col.label.clone()).collect());
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

/// The comparison headed by `names`, one per column, with the [`top_causes`]
/// row when a run has a spike analysis.
fn comparison_table(c: &Comparison, names: &[String], unit: TimeUnit) -> Table {
    let mut header = vec![""];
    header.extend(names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for row in &c.rows {
        let mut cells = vec![label(row, unit)];
        cells.extend((0..c.columns.len()).map(|i| cell(row, i, unit, ("", "*"))));
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

/// The text table; best values end in `*`. Its columns are headed by the runs'
/// names when that fits in [`WIDTH`](super::table::WIDTH) columns, else by their [`keys`], and the
/// table follows their [`legend`]. Whether keys were used.
pub fn render_text(c: &Comparison, unit: TimeUnit) -> (String, bool) {
    let full = comparison_table(c, &headings(c), unit);
    let (mut out, keyed) = if full.fits() {
        (full.render(), false)
    } else {
        let t = comparison_table(c, &marked(c, keys(c)), unit);
        (format!("{}\n{}", legend(c), t.render()), true)
    };
    if c.columns.len() > 1 {
        out.push_str(&format!(
            "* best of the row; (1.23x) = value / baseline value; {UNKNOWN} = the run does not have it\n"
        ));
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

/// The "what differs" table as text, the runs' columns headed by `names`
/// (left-aligned, long values clipped and wrapped), or a sentence when nothing
/// differs. `heading` names what is compared (`what differs`).
pub fn differences_text(runs: &[Run], names: &[String], heading: &str) -> String {
    let d = differences(runs);
    if d.is_empty() {
        return format!("{heading}: nothing (same system fingerprint and parameters)\n");
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
        t.row(std::iter::once(d.field).chain(values).collect());
    }
    format!("{heading}:\n{}", t.render())
}

/// The whole text of `rtlab compare`: the table, the verdicts (when there are
/// requirements), what differs (between several runs, its columns named as the
/// table's) and the warnings.
pub fn report(runs: &[Run], table: &Comparison, verdicts: &[Verdict], unit: TimeUnit) -> String {
    let (mut out, keyed) = render_text(table, unit);
    if !verdicts.is_empty() {
        out.push('\n');
        out.push_str(&verdict::render_text(verdicts));
    }
    if runs.len() > 1 {
        let names: Vec<String> = if keyed {
            keys(table)
        } else {
            runs.iter().map(run_name).collect()
        };
        let heading = if grouped(table) {
            // A group's system and parameters are those of its worst run.
            "what differs between the groups' worst runs"
        } else {
            "what differs"
        };
        out.push('\n');
        out.push_str(&differences_text(runs, &names, heading));
    }
    let warnings = warnings_text(runs);
    if !warnings.is_empty() {
        out.push('\n');
        out.push_str(&warnings);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::fixture::{run_from_samples, two_compared_runs as two};
    use crate::format::text::table::WIDTH;

    #[test]
    fn best_values_and_ratios_in_the_text_table() {
        let (text, keyed) = render_text(&compare(&two(), 0), TimeUnit::Us);
        assert!(!keyed);
        assert!(text.contains("a #1 (baseline)"), "{text}");
        let min_line = text.lines().find(|l| l.starts_with("min (us)")).unwrap();
        assert!(min_line.contains("10.0") && min_line.contains("5.0* (0.50x)"));
    }

    #[test]
    fn long_names_become_keys_under_a_legend() {
        let mut runs = two();
        runs[0].label = "a kernel with a long and descriptive label".into();
        runs[1].label = "b kernel with an even longer and more descriptive label".into();
        let (text, keyed) = render_text(&compare(&runs, 1), TimeUnit::Us);
        assert!(keyed);
        assert!(
            text.starts_with(
                "runs:\n  #1  a kernel with a long and descriptive label\n  \
                 #2  b kernel with an even longer and more descriptive label (baseline)\n\n"
            ),
            "{text}"
        );
        let header = text.lines().nth(4).unwrap();
        assert!(header.ends_with("#1  #2 (baseline)"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    /// Groups too many for their names are keyed g1, g2, … under "groups:",
    /// and "what differs" says whose systems it shows.
    #[test]
    fn groups_are_keyed_and_their_differences_named() {
        use crate::analysis::group::{compare_groups, group, By};
        let mut runs: Vec<Run> = (0..12)
            .map(|i| run_from_samples(&format!("r{i}"), &[1_000 * (i + 1)]))
            .collect();
        for (i, r) in runs.iter_mut().enumerate() {
            r.id = Some(i as i64 + 1);
            r.fingerprint.hostname = format!("a-rather-long-board-name-{:02}", i % 6);
        }
        let groups = group(&runs, By::Host, &[]).unwrap();
        let (merged, c) = compare_groups(&groups, By::Host, 0);
        let text = report(&merged, &c, &[], TimeUnit::Us);
        assert!(
            text.starts_with("groups:\n  g1  a-rather-long-board-name-00 (baseline)\n"),
            "{text}"
        );
        assert!(
            text.contains("what differs between the groups' worst runs:\n"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let worst = text.lines().find(|l| l.starts_with("worst run")).unwrap();
        assert!(worst.contains("#7") && worst.ends_with("#12"), "{worst}");
    }

    #[test]
    fn differences_are_left_aligned_and_clipped() {
        let mut a = run_from_samples("a", &[1_000]);
        let mut b = run_from_samples("bb", &[1_000]);
        a.id = Some(1);
        b.id = Some(2);
        b.fingerprint.hz = Some(1000);
        b.fingerprint.cmdline = "x".repeat(50);
        let names = [run_name(&a), run_name(&b)];
        let text = differences_text(&[a, b], &names, "what differs");
        let want = format!(
            "what differs:\nfield    a #1  bb #2\nHZ       -     1000\ncmdline  -     {}…\n",
            "x".repeat(39)
        );
        assert_eq!(text, want);
        assert_eq!(clip("abc", 3), "abc");
    }
}
