//! One analysis, every format: a comparison whose baseline is not its first
//! column, rendered as text, JSON, CSV, Markdown and HTML, shows the same
//! baseline, the same numbers, the same changes and the same verdicts in all.

use crate::analysis::fixture::same_and_shifted;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::outcome::{analyse, of_runs, Outcome};
use crate::analysis::verdict::parse_requirement;
use crate::format::html::esc;
use crate::format::text::compare::{label, shown};
use crate::format::text::decision::tier_cell;
use crate::format::{csv, html, json, markdown, text};
use crate::units::TimeUnit;

/// Runs a and b of one distribution, c of it shifted by half again, judged
/// against b and against an 80 µs budget that only c misses.
fn outcome() -> Outcome {
    let mut runs = same_and_shifted();
    for (i, r) in runs.iter_mut().enumerate() {
        r.id = Some(i as i64 + 1);
    }
    let reqs = parse_requirement("loop=80us").unwrap();
    analyse(of_runs(runs, 1), &reqs, DEFAULT_NOISE)
}

/// The cells of the markdown row that starts with `name`.
fn md_row<'a>(md: &'a str, name: &str) -> Vec<&'a str> {
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")))
        .unwrap_or_else(|| panic!("no row {name}\n{md}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// The HTML row whose first cell is `name` (a word, perhaps kept whole).
fn html_row<'a>(page: &'a str, name: &str) -> &'a str {
    let plain = format!("<tr><td>{}</td>", esc(name));
    let word = format!("<tr><td><span class=\"word\">{}</span></td>", esc(name));
    let at = page
        .find(&plain)
        .or_else(|| page.find(&word))
        .unwrap_or_else(|| panic!("no row {name}"));
    let end = page[at..].find("</tr>").unwrap();
    &page[at..at + end]
}

#[test]
fn every_format_shows_the_same_numbers_changes_and_verdicts() {
    let o = outcome();
    let unit = TimeUnit::Us;
    let p = &o.parts[0];
    let c = &p.comparison;
    assert_eq!(c.baseline, 1);
    let txt = text::compare::report(&o, unit);
    let md = markdown::render(&o, unit);
    let page = html::render("agree", &o, &o.merged_runs(), unit).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json::comparison(&o).unwrap()).unwrap();
    let table = csv::comparison(&o);

    // The baseline is the second column everywhere.
    assert!(txt.contains("b #2 (baseline)"), "{txt}");
    assert!(md.contains("| b #2 (baseline) |"), "{md}");
    assert!(page.contains("#2</a> (baseline)"), "{page}");
    assert_eq!(doc["comparisons"][0]["comparison"]["baseline"], 1);

    let mut changed = 0;
    for (r, row) in c.rows.iter().enumerate() {
        let name = label(row, unit);
        let text_line = txt
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}\n{txt}"));
        let md_cells = md_row(&md, &name);
        let html_cells = html_row(&page, &name);
        for i in 0..c.columns.len() {
            let s = shown(c, row, i, unit);
            assert!(text_line.contains(&s.text()), "{name} {i}: {text_line}");
            let md_cell = md_cells[i + 1].replace("**", "");
            assert_eq!(md_cell, s.text(), "{name} {i}");
            for part in [&s.value, &s.interval, &s.change] {
                assert!(html_cells.contains(&esc(part)), "{name} {i}: {html_cells}");
            }
            let cell = &row.cells[i];
            let js = &doc["comparisons"][0]["comparison"]["rows"][r]["cells"][i];
            assert_eq!(js["value"].as_f64(), cell.value, "{name} {i}");
            let change = serde_json::to_value(cell.change).unwrap();
            assert_eq!(js["change"], change, "{name} {i}");
            let id = cell.run.unwrap();
            let value = cell.value.map(|v| v.to_string()).unwrap_or_default();
            let csv_line = format!(
                ",{},{},{id},{},{value},",
                row.name,
                serde_json::to_value(row.quantity)
                    .unwrap()
                    .as_str()
                    .unwrap(),
                c.columns[i].label
            );
            let line = table
                .lines()
                .find(|l| l.contains(&csv_line))
                .unwrap_or_else(|| panic!("no line {csv_line}\n{table}"));
            assert!(
                line.contains(&format!(",{},", change.as_str().unwrap())),
                "{line}"
            );
            if !s.change.is_empty() && s.class != "same" {
                changed += 1;
            }
        }
    }
    // c against b: real changes (worse), and a against b: none.
    assert!(changed > 0, "{txt}");
    let p50 = c.rows.iter().find(|r| r.name == "p50").unwrap();
    let words: Vec<String> = (0..3).map(|i| shown(c, p50, i, unit).change).collect();
    assert_eq!(words[0], "≈");
    assert!(words[2].ends_with("x worse"), "{words:?}");

    // The same verdicts: c fails the budget, a and b pass it.
    let tiers = p.decision.tiers.as_ref().unwrap();
    let verdicts = doc["comparisons"][0]["verdicts"].as_array().unwrap();
    for (row, v) in tiers.rows.iter().zip(verdicts) {
        let cell = tier_cell(&row.cells[0]);
        assert_eq!(v["result"], row.cells[0].result);
        assert_eq!(v["label"].as_str(), Some(row.arm.as_str()));
        let text_row = txt
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", row.arm)) && l.contains(&cell))
            .unwrap_or_else(|| panic!("no verdict {cell} of {}\n{txt}", row.arm));
        assert!(text_row.contains(&cell));
        assert_eq!(md_row(&md, &row.arm)[1], cell, "{md}");
        let result = row.cells[0].result;
        let rest = cell.strip_prefix(result).unwrap();
        let marked = format!("<span class=\"{result}\">{result}</span>{}", esc(rest));
        assert!(html_row(&page, &row.arm).contains(&marked), "{page}");
    }
    let results: Vec<&str> = tiers.rows.iter().map(|r| r.cells[0].result).collect();
    assert_eq!(results, ["PASS", "PASS", "FAIL"]);
}
