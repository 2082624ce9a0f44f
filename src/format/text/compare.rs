//! The comparison as a text table: one column per run, best values marked `*`,
//! ratios to the baseline in parentheses; and the values, labels and headings
//! that the markdown and HTML tables share.

use super::table::Table;
use crate::analysis::compare::{Column, Comparison, Quantity, Row};
use crate::format::name_with_id;
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

/// One cell of `row` for run `i`: the value, `mark` around it when it is the
/// best, and the ratio to the baseline.
pub fn cell(row: &Row, i: usize, unit: TimeUnit, mark: (&str, &str)) -> String {
    let Some(v) = row.values[i] else {
        return "-".into();
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

/// The text table; best values end in `*`.
pub fn render_text(c: &Comparison, unit: TimeUnit) -> String {
    let heads = headings(c);
    let mut header = vec![""];
    header.extend(heads.iter().map(String::as_str));
    let mut t = Table::new(&header);
    for row in &c.rows {
        let mut cells = vec![label(row, unit)];
        cells.extend((0..c.columns.len()).map(|i| cell(row, i, unit, ("", "*"))));
        t.row(cells);
    }
    let mut out = t.render();
    if c.columns.len() > 1 {
        out.push_str("* best of the row; (1.23x) = value / baseline value\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use crate::analysis::fixture::two_compared_runs as two;

    #[test]
    fn best_values_and_ratios_in_the_text_table() {
        let text = render_text(&compare(&two(), 0), TimeUnit::Us);
        assert!(text.contains("a #1 (baseline)"), "{text}");
        let min_line = text.lines().find(|l| l.starts_with("min (us)")).unwrap();
        assert!(min_line.contains("10.0") && min_line.contains("5.0* (0.50x)"));
    }
}
