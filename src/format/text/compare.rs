//! `rtlab compare` in words: the comparison table (one column per run, best
//! values marked `*`, ratios to the baseline in parentheses), the verdicts, what
//! differs between the runs and their warnings; and the values, labels and
//! headings that the markdown and HTML tables share.

use super::run::warnings_text;
use super::table::Table;
use super::verdict;
use crate::analysis::compare::{Column, Comparison, Quantity, Row};
use crate::analysis::diff::differences;
use crate::analysis::verdict::Verdict;
use crate::format::{name_with_id, run_name, UNKNOWN};
use crate::record::Run;
use crate::units::{Human, TimeUnit};

/// A metric value: whole numbers as such, others with up to 3 decimals.
fn metric_text(v: f64) -> String {
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
    c.columns
        .iter()
        .enumerate()
        .map(|(i, col)| {
            if i == c.baseline && c.columns.len() > 1 {
                format!("{} (baseline)", heading(col))
            } else {
                heading(col)
            }
        })
        .collect()
}

/// The widest header line of the text table: wider, the columns are headed by
/// run ids and a legend below names the runs.
const HEADER_MAX: usize = 100;

/// A column's short heading: the run's id (`#12`), else its place (`[3]`).
fn short_heading(c: &Column, i: usize) -> String {
    match c.id {
        Some(id) => format!("#{id}"),
        None => format!("[{}]", i + 1),
    }
}

/// The text table with `heads` over the runs' columns.
fn table_text(c: &Comparison, unit: TimeUnit, heads: &[String]) -> String {
    let mut header = vec![""];
    header.extend(heads.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for row in &c.rows {
        let mut cells = vec![label(row, unit)];
        cells.extend((0..c.columns.len()).map(|i| cell(row, i, unit, ("", "*"))));
        t.row(cells);
    }
    t.render()
}

/// The text table; best values end in `*`. When the runs' labels make its
/// header wider than [`HEADER_MAX`] columns, the columns are headed by run ids
/// and a legend below names them.
pub fn render_text(c: &Comparison, unit: TimeUnit) -> String {
    let mut out = table_text(c, unit, &headings(c));
    let header_width = out.lines().next().map_or(0, |l| l.chars().count());
    if header_width > HEADER_MAX {
        let short: Vec<String> = c
            .columns
            .iter()
            .enumerate()
            .map(|(i, col)| short_heading(col, i))
            .collect();
        out = table_text(c, unit, &short);
        let width = short.iter().map(|s| s.chars().count()).max().unwrap_or(0);
        for (i, (s, col)) in short.iter().zip(&c.columns).enumerate() {
            let base = if i == c.baseline && c.columns.len() > 1 {
                " (baseline)"
            } else {
                ""
            };
            out.push_str(&format!("{s:<width$}  {}{base}\n", col.label));
        }
    }
    if c.columns.len() > 1 {
        out.push_str(&format!(
            "* best of the row; (1.23x) = value / baseline value; {UNKNOWN} = the run does not have it\n"
        ));
    }
    out
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

/// The "what differs" table as text (left-aligned, long values clipped), or a
/// sentence when nothing differs.
pub fn differences_text(runs: &[Run]) -> String {
    let d = differences(runs);
    if d.is_empty() {
        return "what differs: nothing (same system fingerprint and parameters)\n".into();
    }
    let names: Vec<String> = runs.iter().map(run_name).collect();
    let mut header = vec!["field"];
    header.extend(names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for col in 0..header.len() {
        t.align_left(col);
    }
    for d in d {
        let values = d.values.iter().map(|v| clip(v, DIFF_CELL_MAX));
        t.row(std::iter::once(d.field).chain(values).collect());
    }
    format!("what differs:\n{}", t.render())
}

/// The whole text of `rtlab compare`: the table, the verdicts (when there are
/// requirements), what differs (between several runs) and the warnings.
pub fn report(runs: &[Run], table: &Comparison, verdicts: &[Verdict], unit: TimeUnit) -> String {
    let mut out = render_text(table, unit);
    if !verdicts.is_empty() {
        out.push('\n');
        out.push_str(&verdict::render_text(verdicts));
    }
    if runs.len() > 1 {
        out.push('\n');
        out.push_str(&differences_text(runs));
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

    #[test]
    fn best_values_and_ratios_in_the_text_table() {
        let text = render_text(&compare(&two(), 0), TimeUnit::Us);
        assert!(text.contains("a #1 (baseline)"), "{text}");
        let min_line = text.lines().find(|l| l.starts_with("min (us)")).unwrap();
        assert!(min_line.contains("10.0") && min_line.contains("5.0* (0.50x)"));
    }

    #[test]
    fn long_labels_give_short_headings_and_a_legend() {
        let mut runs = two();
        runs[0].label = "a".repeat(60);
        runs[1].label = "b".repeat(60);
        let text = render_text(&compare(&runs, 0), TimeUnit::Us);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].chars().count() <= HEADER_MAX, "{text}");
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["#1", "#2"]
        );
        assert!(
            text.contains(&format!("\n#1  {} (baseline)\n", "a".repeat(60))),
            "{text}"
        );
        assert!(
            text.contains(&format!("\n#2  {}\n", "b".repeat(60))),
            "{text}"
        );
        // Short labels keep their headings.
        let text = render_text(&compare(&two(), 0), TimeUnit::Us);
        let head: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(head, ["a", "#1", "(baseline)", "b", "#2"]);
    }

    #[test]
    fn differences_are_left_aligned_and_clipped() {
        let mut a = run_from_samples("a", &[1_000]);
        let mut b = run_from_samples("bb", &[1_000]);
        a.id = Some(1);
        b.id = Some(2);
        b.fingerprint.hz = Some(1000);
        b.fingerprint.cmdline = "x".repeat(50);
        let text = differences_text(&[a, b]);
        let want = format!(
            "what differs:\nfield    a #1  bb #2\nHZ       -     1000\ncmdline  -     {}…\n",
            "x".repeat(39)
        );
        assert_eq!(text, want);
        assert_eq!(clip("abc", 3), "abc");
    }
}
