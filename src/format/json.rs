//! JSON: a run as the rtlab/1 document (what `--json` prints and `rtlab results
//! import` reads back), and the documents of `rtlab compare --json` and `rtlab
//! results list --json`. Pretty-printed, ending in a newline.

use super::{one, Exporter, Format, Options};
use crate::analysis::attribution::Ranking;
use crate::analysis::compare::Comparison;
use crate::analysis::outcome::Outcome;
use crate::analysis::risks::Risk;
use crate::analysis::verdict::{Requirement, Verdict};
use crate::record::{Run, FORMAT};
use crate::scenario::runner::StepRun;
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

/// The document of a command that is not a run (`prio list`, `audit`,
/// `kconfig`): `{"format": "rtlab/1", "kind": KIND, ...}` with the fields of
/// `body` (which must serialize as an object).
pub fn tagged(kind: &str, body: &impl Serialize) -> Result<String> {
    let mut doc = serde_json::Map::new();
    doc.insert("format".into(), FORMAT.into());
    doc.insert("kind".into(), kind.into());
    match serde_json::to_value(body)? {
        serde_json::Value::Object(fields) => doc.extend(fields),
        other => {
            doc.insert("result".into(), other);
        }
    }
    document(&doc)
}

/// `rtlab compare --json`: the analysis, each comparison with its cells
/// (`metric`, `run`, `value`, `ci`, `change`, `decided`), verdicts, what
/// differs and its decision (times in ns).
pub fn comparison(o: &Outcome) -> Result<String> {
    tagged("compare", o)
}

/// `rtlab report RUN --json`: the runs as stored, the requirements and the
/// verdicts.
pub fn report(runs: &[Run], reqs: &[Requirement], verdicts: &[Verdict]) -> Result<String> {
    document(&json!({
        "format": FORMAT,
        "kind": "report",
        "runs": runs,
        "requirements": reqs,
        "verdicts": verdicts,
    }))
}

/// `rtlab run --json`: the campaign, each step's run, the verdicts, risks,
/// load attribution and decision, the HTML report's path and the exit code.
pub fn campaign(c: &CampaignDoc) -> Result<String> {
    let steps: Vec<serde_json::Value> = c
        .steps
        .iter()
        .map(|s| {
            json!({"index": s.index, "name": s.name, "base": s.base, "repeat": s.repeat, "run": s.run})
        })
        .collect();
    document(&json!({
        "format": FORMAT,
        "campaign": c.campaign,
        "name": c.name,
        "status": c.status,
        "steps": steps,
        "verdicts": c.verdicts,
        "risks": c.risks,
        "attribution": c.attribution,
        "decision": c.outcome,
        "html": c.html,
        "undecided": c.undecided,
        "exit_code": c.exit_code,
    }))
}

/// What `rtlab run` shows of a campaign.
pub struct CampaignDoc<'a> {
    /// Its id.
    pub campaign: i64,
    /// Its scenario's name.
    pub name: &'a str,
    /// `complete` or `interrupted`.
    pub status: &'a str,
    /// Each step's run.
    pub steps: &'a [StepRun],
    /// Verdicts of the steps against the requirements, each over its repeats.
    pub verdicts: &'a [Verdict],
    /// Its biggest risks.
    pub risks: &'a [Risk],
    /// Load attributions.
    pub attribution: &'a [Ranking],
    /// Its steps compared, and the decision.
    pub outcome: &'a Outcome,
    /// Where its HTML report is.
    pub html: String,
    /// What `--until-decided` left undecided at `--max-repeats`, in words.
    pub undecided: &'a [String],
    /// Its exit code.
    pub exit_code: i32,
}

/// `rtlab results list --by ... --json`: an array of groups, each with its
/// name, what it is grouped by, its runs' ids, its worst run, how many runs,
/// and the samples, p99 and max (ns) and misses of its runs merged.
pub fn group_rows(c: &Comparison) -> Result<String> {
    let doc: Vec<serde_json::Value> = c
        .columns
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let v = |name: &str| c.value(name, i).map(|(_, v)| v);
            let g = col.group.as_ref();
            json!({
                "group": col.label, "by": g.map(|g| g.by), "run_ids": g.map(|g| &g.runs),
                "worst_run": g.and_then(|g| g.worst), "runs": v("runs"),
                "samples": v("samples"), "p99_ns": v("p99"), "max_ns": v("max"),
                "misses": v("misses"),
            })
        })
        .collect();
    document(&doc)
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
                "step": r.step, "tags": r.tags, "metrics": r.metrics,
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
