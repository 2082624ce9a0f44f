//! JSON: a run as the rtlab/1 document (what `--json` prints and `rtlab results
//! import` reads back), and the documents of `rtlab compare --json` and `rtlab
//! results list --json`. Pretty-printed, ending in a newline.

use super::{one, Exporter, Format, Options};
use crate::analysis::compare::Comparison;
use crate::analysis::diff::Difference;
use crate::analysis::verdict::{Requirement, Verdict};
use crate::record::{Run, FORMAT};
use crate::store::RunRow;
use anyhow::Result;
use serde::Serialize;
use serde_json::json;

/// The rtlab/1 document of one run.
pub struct Json;

impl Exporter for Json {
    fn serialize(&self, runs: &[Run], _: &Options) -> Result<String> {
        document(one(runs, Format::Json)?)
    }
}

/// Any document, pretty-printed with a final newline.
pub fn document<T: Serialize + ?Sized>(doc: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// `rtlab compare --json`: the table, the requirements and their verdicts, and
/// what differs between the runs (times in ns).
pub fn comparison(
    table: &Comparison,
    reqs: &[Requirement],
    verdicts: &[Verdict],
    differences: &[Difference],
) -> Result<String> {
    document(&json!({
        "format": FORMAT,
        "kind": "compare",
        "comparison": table,
        "requirements": reqs,
        "verdicts": verdicts,
        "differences": differences,
    }))
}

/// `rtlab results list --json`: an array of rows.
pub fn run_rows(rows: &[RunRow]) -> Result<String> {
    let doc: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.id, "started_at": r.started_at, "kind": r.kind, "label": r.label,
                "status": r.status, "samples": r.samples, "p99_ns": r.p99_ns,
                "max_ns": r.max_ns, "misses": r.misses, "campaign": r.campaign,
                "tags": r.tags, "metrics": r.metrics,
            })
        })
        .collect();
    document(&doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    #[test]
    fn a_run_reads_back_as_itself() {
        let run = run_from_samples("a", &[1_000, 2_000]);
        let text = Json
            .serialize(std::slice::from_ref(&run), &Options::default())
            .unwrap();
        assert!(text.ends_with("}\n"));
        assert_eq!(serde_json::from_str::<Run>(&text).unwrap(), run);
    }
}
