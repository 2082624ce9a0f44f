//! GitHub-flavoured markdown of an analysis, for pasting into issues and pull
//! requests: each comparison's table (every figure with its interval and its
//! change against the baseline, as the text shows them), the tier matrix, the
//! other verdicts, the stability rankings and the sentences of the decision.

use super::text::compare::TOP_CAUSE;
use super::text::compare::{headings, label, marks_legend, part_heading, shown, top_causes};
use super::text::decision::{
    lines, ranked_line, stability_rows, tier_cell, tier_heading, verdicts_line, STABILITY_HEADER,
};
use super::text::verdict;
use crate::analysis::compare::Comparison;
use crate::analysis::outcome::{Outcome, Part};
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

/// One comparison's table and what its marks mean.
pub fn comparison(c: &Comparison, unit: TimeUnit) -> String {
    let mut header = vec![String::new()];
    header.extend(headings(c));
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![label(row, unit)];
            cells.extend((0..c.columns.len()).map(|i| {
                let mut s = shown(c, row, i, unit);
                if matches!(s.class, "better" | "worse") {
                    s.change = format!("**{}**", s.change);
                }
                s.text()
            }));
            cells
        })
        .collect();
    if let Some(t) = top_causes(c) {
        let row = std::iter::once(TOP_CAUSE.to_string()).chain(t.named);
        rows.push(row.collect());
    }
    let mut out = table(&header, &rows);
    for l in marks_legend(c) {
        out.push_str(&format!("\n{l}\n"));
    }
    out
}

/// One comparison's decision.
fn decision(p: &Part, noise: f64, unit: TimeUnit) -> String {
    let mut out = String::new();
    if let Some(t) = &p.decision.tiers {
        let mut header = vec!["arm".to_string()];
        header.extend(
            t.columns
                .iter()
                .map(|c| format!("{} ({})", tier_heading(c.budget_ns), c.name)),
        );
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.arm.clone()];
                row.extend(r.cells.iter().map(tier_cell));
                row
            })
            .collect();
        out.push_str(&table(&header, &rows));
        let all = t.rows.iter().flat_map(|r| &r.cells);
        out.push_str(&format!("\n{}\n", verdicts_line(all)));
    }
    let rest: Vec<Vec<String>> = p.untiered_verdicts().iter().map(verdict::cells).collect();
    if !rest.is_empty() {
        let header: Vec<String> = verdict::HEADER.iter().map(|h| h.to_string()).collect();
        out.push('\n');
        out.push_str(&table(&header, &rest));
    }
    for s in &p.decision.stability {
        let header: Vec<String> = STABILITY_HEADER.iter().map(|h| h.to_string()).collect();
        let rows = stability_rows(s, unit);
        out.push_str(&format!("\nStability of the {} runs:\n\n", s.kind));
        out.push_str(&table(&header, &rows));
        out.push_str(&format!("\n**{}**\n", ranked_line(&s.outcome)));
    }
    for l in lines(p, noise, unit) {
        out.push_str(&format!("\n{l}\n"));
    }
    out
}

/// The whole analysis: each comparison (under a heading when there are
/// several), then the decision.
pub fn render(o: &Outcome, unit: TimeUnit) -> String {
    let numbered = o.parts.len() > 1;
    let mut out = String::new();
    for (i, p) in o.parts.iter().enumerate() {
        if numbered {
            out.push_str(&format!("### {}\n\n", part_heading(i + 1, p)));
        }
        out.push_str(&comparison(&p.comparison, unit));
        out.push('\n');
    }
    out.push_str("### Decision\n");
    for (i, p) in o.parts.iter().enumerate() {
        if numbered {
            out.push_str(&format!("\n#### {}\n", part_heading(i + 1, p)));
        }
        out.push('\n');
        out.push_str(&decision(p, o.noise, unit));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{same_and_shifted, two_compared_runs as two};
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::outcome::{analyse, of_runs};

    #[test]
    fn changes_are_bold_and_pipes_escaped() {
        let mut runs = same_and_shifted();
        runs.remove(1);
        let o = analyse(of_runs(runs, 0), &[], DEFAULT_NOISE);
        let md = render(&o, TimeUnit::Ms);
        let p50 = md.lines().find(|l| l.starts_with("| p50 (ms)")).unwrap();
        assert!(p50.contains("**1.50x worse**"), "{md}");
        assert!(md.contains("biggest real change"), "{md}");
        let o = analyse(of_runs(two(), 0), &[], DEFAULT_NOISE);
        let md = render(&o, TimeUnit::Ms);
        assert!(md.contains("| max (ms) | 0.040 | 0.085 |"), "{md}");
        let t = table(&["a|b".into(), "c".into()], &[]);
        assert_eq!(t, "| a\\|b | c |\n|---|---:|\n");
    }
}
