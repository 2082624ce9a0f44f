//! Helpers of the compare and report CLI tests: real runs made with
//! `rtlab latency`, and well-formedness checks of SVG and HTML.

use crate::common::expect;
use assert_cmd::Command;
use std::path::Path;

/// `rtlab` with the database `db`.
pub fn rtlab(db: &Path) -> Command {
    let mut c = Command::cargo_bin("rtlab").unwrap();
    c.arg("--db").arg(db);
    c
}

/// Makes a short real latency run labelled `label` and returns its JSON record.
pub fn measure(db: &Path, label: &str, extra: &[&str]) -> serde_json::Value {
    let out = expect(
        rtlab(db)
            .args([
                "latency", "-i", "200us", "-l", "300", "-q", "--json", "--label", label,
            ])
            .args(extra),
        &[0],
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Parses an SVG or XHTML document, failing the test when it is not well-formed.
pub fn parse(text: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(text, opts)
        .unwrap_or_else(|e| panic!("not well-formed: {e}"))
}

/// The number of `<polyline>`s drawn in each of the first `n` series colours.
pub fn polylines_per_colour(doc: &roxmltree::Document<'_>, n: usize) -> Vec<usize> {
    const COLOURS: [&str; 4] = ["#4E79A7", "#F28E2B", "#E15759", "#76B7B2"];
    COLOURS[..n]
        .iter()
        .map(|c| {
            doc.descendants()
                .filter(|e| e.has_tag_name("polyline") && e.attribute("stroke") == Some(c))
                .count()
        })
        .collect()
}

/// The first comparison of a `rtlab compare --json` document.
pub fn first(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["comparisons"][0]
}

/// The row `name` of the first comparison of a `rtlab compare --json`
/// document.
pub fn row<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    first(doc)["comparison"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

/// The values of a row's cells (`None` where a column has none).
pub fn values(row: &serde_json::Value) -> Vec<Option<f64>> {
    row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_f64())
        .collect()
}

/// The changes of a row's cells against the baseline (`better`, `worse`,
/// `same`, `unknown`).
pub fn changes(row: &serde_json::Value) -> Vec<String> {
    row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["change"].as_str().unwrap().to_string())
        .collect()
}

/// The columns of the first comparison of a `rtlab compare --json` document.
pub fn columns(doc: &serde_json::Value) -> &Vec<serde_json::Value> {
    first(doc)["comparison"]["columns"].as_array().unwrap()
}
