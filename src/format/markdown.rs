//! GitHub-flavoured markdown: the comparison table (best values in bold) and the
//! verdict table, for pasting into issues and pull requests.

use super::text::compare::{cell, headings, label, top_causes, TOP_CAUSE};
use super::text::verdict;
use crate::analysis::compare::Comparison;
use crate::analysis::verdict::Verdict;
use crate::units::TimeUnit;

/// A markdown table: first column left-aligned, the others right-aligned.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(header);
    out.push_str("|---|");
    out.push_str(&"---:|".repeat(header.len().saturating_sub(1)));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// The comparison; best values in bold.
pub fn comparison(c: &Comparison, unit: TimeUnit) -> String {
    let mut header = vec![String::new()];
    header.extend(headings(c));
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![label(row, unit)];
            cells.extend((0..c.columns.len()).map(|i| cell(row, i, unit, ("**", "**"))));
            cells
        })
        .collect();
    if let Some(t) = top_causes(c) {
        let row = std::iter::once(TOP_CAUSE.to_string()).chain(t.named);
        rows.push(row.collect());
    }
    table(&header, &rows)
}

/// The comparison, then the verdicts (when there are any) as a second table.
pub fn comparison_with_verdicts(c: &Comparison, verdicts: &[Verdict], unit: TimeUnit) -> String {
    let mut out = comparison(c, unit);
    if !verdicts.is_empty() {
        let header: Vec<String> = verdict::HEADER.iter().map(|h| h.to_string()).collect();
        let rows: Vec<Vec<String>> = verdicts.iter().map(verdict::cells).collect();
        out.push('\n');
        out.push_str(&table(&header, &rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::fixture::two_compared_runs as two;

    #[test]
    fn best_values_are_bold_and_pipes_escaped() {
        let md = comparison(&compare(&two(), 0), TimeUnit::Ms);
        assert!(
            md.contains("| max (ms) | **0.040** | 0.085 (2.12x) |"),
            "{md}"
        );
        let t = table(&["a|b".into(), "c".into()], &[]);
        assert_eq!(t, "| a\\|b | c |\n|---|---:|\n");
    }
}
