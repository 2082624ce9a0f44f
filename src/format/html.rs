//! The HTML report: one self-contained file (inline CSS and SVG, no script,
//! nothing fetched from the network) that reads on a laptop, on a phone and on
//! paper. What decides comes first (the decision: the tier matrix of verdicts,
//! stability rankings, the biggest real change; for a campaign also its steps
//! and biggest risks), then each comparison's figures side by side with their
//! intervals, its plots and what differs, and each run in depth. Runs are named by short keys (`#12`) in the headings of
//! wide tables, each a link to the run's own section; a legend (the list of runs,
//! or a campaign's step table) gives their full names. A table wider than the
//! page scrolls inside its own box; in print every box shows whole.
//!
//! A report of runs (`rtlab report ID --html`, `rtlab compare --html`, the web
//! view's pages) is [`render`]ed from the one analysis (`analysis::outcome`)
//! the text is rendered from, so the page and the text show the same
//! baseline, numbers and verdicts; a campaign's report is a [`CampaignPage`].
//! The output is well-formed XML (XHTML syntax), so tools and tests can parse
//! it.

use super::svg::{self, primary_histograms};
use super::text::campaign::{attribution, bench_grid, step_grid, RISKS_SHOWN};
use super::text::compare::{
    label, marks_legend, metric_text, part_heading, shown, top_causes, TOP_CAUSE,
};
use super::text::decision::{
    lines, ranked_line, stability_rows, tier_cell, tier_heading, verdicts_line, STABILITY_HEADER,
};
use super::text::latency::series_grid;
use super::text::table::Table;
use super::text::verdict::{cells, HEADER};
use super::{run_key, run_name};
use crate::analysis::attribution::Ranking;
use crate::analysis::compare::Comparison;
use crate::analysis::diff::{system_fields, Difference};
use crate::analysis::outcome::{Outcome, Part};
use crate::analysis::risks::Risk;
use crate::analysis::verdict::{Requirement, Verdict};
use crate::record::Run;
use crate::scenario::runner::{step_view, StepRun};
use crate::units::{Human, TimeUnit};
use anyhow::Result;

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;padding:0 16px 40px;color:#222;line-height:1.4}
main{max-width:1400px;margin:0 auto}
h1{font-size:1.5em;overflow-wrap:anywhere}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd;overflow-wrap:anywhere}h3{font-size:1.05em}
p,li,.warn,dl{max-width:60rem}
a{color:#1f5f99;text-decoration:none}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f4f4f4;white-space:normal}
th:first-child,td:first-child{text-align:left;white-space:normal}
table.text th,table.text td{text-align:left}
table.text td:first-child{white-space:nowrap}
table.named th:nth-child(3),table.named td:nth-child(3){text-align:left}
table.text td+td{white-space:normal;max-width:40em}
.better{color:#1a7f37;font-weight:bold}.worse{color:#c62828;font-weight:bold}.same,.ci{color:#666;font-size:.85em}
.PASS{color:#1a7f37;font-weight:bold}.FAIL,.NO.DATA{color:#c62828;font-weight:bold}.UNDECIDED{color:#b26a00;font-weight:bold}
.warn{background:#fff4e5;border-left:4px solid #f28e2b;padding:4px 8px;margin:4px 0;overflow-wrap:anywhere}
ol.risks li{margin:.3em 0}
figure{margin:1em 0}
svg{max-width:100%;height:auto;display:block}
dl.kv{display:flex;flex-wrap:wrap;gap:2px 18px;font-size:.9em;margin:.5em 0}
dl.kv div{display:flex;gap:6px}dl.kv dt{color:#666}dl.kv dd{margin:0;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}
.meta{color:#666;font-size:.9em}.word{white-space:nowrap}
.causes th:nth-child(2),.causes td:nth-child(2),.spikes th:nth-child(5),.spikes td:nth-child(5){text-align:left;white-space:normal}
summary{cursor:pointer;margin:.5em 0}
@media (max-width:900px){body{padding:0 8px 24px}table{font-size:.85em}th,td{padding:2px 5px}}
@page{margin:12mm}
@media print{
body{padding:0;font-size:10pt}main{max-width:none}
a{color:inherit}
.scroll{overflow:visible}
table{font-size:8pt}th,td{padding:1px 4px}
td{white-space:normal}
h2,h3{break-after:avoid}
figure,tr,.warn,li{break-inside:avoid}
section{break-before:page}
svg{max-width:17cm}
.warn,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
";

/// Escapes text for HTML content and attribute values; control characters
/// but newlines and tabs are written as escapes
/// ([`printable`](crate::format::text::table::printable)).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c => out.push_str(&crate::format::text::table::printable(
                c.encode_utf8(&mut [0; 4]),
            )),
        }
    }
    out
}

/// How a table's cells are laid out.
#[derive(Clone, Copy)]
pub(crate) enum Cells {
    /// Figures: right-aligned, on one line.
    Numbers,
    /// Text values (system fields, differences): left-aligned; the first column
    /// (the field names) on one line, the others wrapping at spaces.
    Text,
    /// Figures named in the third column (what loads achieved): the names
    /// left-aligned, the figures right-aligned.
    Named,
}

/// A table in its own scrolling box; cells are already HTML.
pub(crate) fn table(cells: Cells, header: &[String], rows: &[Vec<String>]) -> String {
    let class = match cells {
        Cells::Numbers => "",
        Cells::Text => " class=\"text\"",
        Cells::Named => " class=\"named\"",
    };
    let mut out = format!("<div class=\"scroll\"><table{class}><thead><tr>");
    for h in header {
        out.push_str(&format!("<th>{h}</th>"));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            out.push_str(&format!("<td>{c}</td>"));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// The columns `cols` of a table of the text reports as HTML: every cell
/// escaped, then given to `cell` with its column to dress it.
fn grid(
    t: &Table,
    cols: impl Iterator<Item = usize> + Clone,
    cells: Cells,
    cell: impl Fn(usize, String) -> String,
) -> String {
    let pick = |r: &[String]| -> Vec<String> {
        cols.clone()
            .map(|i| cell(i, esc(r.get(i).map(String::as_str).unwrap_or(""))))
            .collect()
    };
    let header: Vec<String> = cols.clone().map(|i| esc(&t.header()[i])).collect();
    let rows: Vec<Vec<String>> = t.rows().iter().map(|r| pick(r)).collect();
    table(cells, &header, &rows)
}

/// A run's key ([`run_key`]) linking to its section.
fn key_link(id: Option<i64>, index: usize) -> String {
    let key = esc(&run_key(id, index));
    match id {
        Some(id) => format!("<a href=\"#run-{id}\">{key}</a>"),
        None => key,
    }
}

/// HTML text that may break between its words but never inside one (not at a
/// hyphen either).
fn whole_words(html: &str) -> String {
    html.split(' ')
        .map(|w| format!("<span class=\"word\">{w}</span>"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A verdict (`PASS`, `FAIL`, `NO DATA`), coloured.
pub(crate) fn verdict_mark(result: &str) -> String {
    format!("<span class=\"{result}\">{result}</span>")
}

/// The sentence over verdicts: all met, or how they fell.
fn verdict_summary(verdicts: &[Verdict]) -> String {
    let class = if verdicts.iter().all(Verdict::passed) {
        "PASS"
    } else {
        "FAIL"
    };
    format!(
        "<p class=\"{class}\">{}.</p>\n",
        esc(&verdicts_line(verdicts.iter()))
    )
}

pub(crate) fn figure(svg: Option<String>) -> String {
    svg.map(|s| format!("<figure>{s}</figure>\n"))
        .unwrap_or_default()
}

/// The key of each column: a run's key linking to its section, or the
/// arm's short key.
fn column_keys(c: &Comparison) -> Vec<String> {
    let keys = super::text::compare::keys(c);
    c.columns
        .iter()
        .zip(keys)
        .map(|(col, key)| match col.id {
            Some(id) => format!("<a href=\"#run-{id}\">{}</a>", esc(&key)),
            None => esc(&key),
        })
        .collect()
}

/// The figures of the arms side by side, one column per arm headed by its
/// key, each cell with its interval and its change against the baseline.
fn comparison(c: &Comparison, unit: TimeUnit) -> String {
    let mut header = vec![String::new()];
    header.extend(column_keys(c).into_iter().enumerate().map(|(i, key)| {
        if i == c.baseline && c.columns.len() > 1 {
            format!("{key} (baseline)")
        } else {
            key
        }
    }));
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![esc(&label(row, unit))];
            cells.extend((0..c.columns.len()).map(|i| {
                let s = shown(c, row, i, unit);
                let mut out = esc(&s.value);
                if !s.interval.is_empty() {
                    out.push_str(&format!(" <span class=\"ci\">{}</span>", esc(&s.interval)));
                }
                if !s.change.is_empty() {
                    out.push_str(&format!(
                        " <span class=\"{}\">{}</span>",
                        s.class,
                        esc(&s.change)
                    ));
                }
                out
            }));
            cells
        })
        .collect();
    if let Some(t) = top_causes(c) {
        let row = std::iter::once(TOP_CAUSE.to_string()).chain(t.named.iter().map(|n| esc(n)));
        rows.push(row.collect());
    }
    let mut out = table(Cells::Numbers, &header, &rows);
    for line in marks_legend(c) {
        out.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&line)));
    }
    out
}

/// The legend of the runs' keys: each run's key, label, kind, status, start
/// and time observed.
fn legend(runs: &[Run]) -> String {
    let header: Vec<String> = [
        "run",
        "label",
        "kind",
        "status",
        "started (UTC)",
        "observed",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                key_link(r.id, i),
                whole_words(&esc(&r.label)),
                esc(&r.kind),
                r.status.name().to_string(),
                esc(&r
                    .started_at
                    .get(..19)
                    .unwrap_or(&r.started_at)
                    .replace('T', " ")),
                Human(r.duration_ns).to_string(),
            ]
        })
        .collect();
    table(Cells::Text, &header, &rows)
}

/// Verdicts as a table, one row per arm and requirement (the note column
/// only when a verdict has a note).
fn verdict_rows(judged: &[Verdict]) -> String {
    let noted = judged.iter().any(|v| v.note.is_some());
    let shown = if noted {
        HEADER.len()
    } else {
        HEADER.len() - 1
    };
    let header: Vec<String> = HEADER[..shown].iter().map(|h| h.to_string()).collect();
    let rows: Vec<Vec<String>> = judged
        .iter()
        .map(|v| {
            let mut row: Vec<String> = cells(v)[..shown].iter().map(|c| esc(c)).collect();
            if v.run_id.is_some() && v.repeats <= 1 {
                row[0] = format!(
                    "<a href=\"#run-{}\">{}</a>",
                    v.run_id.unwrap_or_default(),
                    row[0]
                );
            }
            row[3] = verdict_mark(v.result);
            row
        })
        .collect();
    table(Cells::Numbers, &header, &rows)
}

/// One comparison's decision: the tier matrix, other verdicts, the
/// stability rankings and the sentences of the text.
fn decision(p: &Part, noise: f64, unit: TimeUnit) -> String {
    let mut out = String::new();
    if let Some(t) = &p.decision.tiers {
        let mut header = vec!["arm".to_string()];
        header.extend(t.columns.iter().map(|c| {
            format!(
                "{}<br/><span class=\"meta\">{}</span>",
                esc(&tier_heading(c.budget_ns)),
                esc(&c.name)
            )
        }));
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![whole_words(&esc(&r.arm))];
                row.extend(r.cells.iter().map(|v| {
                    let text = tier_cell(v);
                    let rest = text.strip_prefix(v.result).unwrap_or(&text);
                    format!("{}{}", verdict_mark(v.result), esc(rest))
                }));
                row
            })
            .collect();
        out.push_str(&verdict_summary(
            &t.rows
                .iter()
                .flat_map(|r| r.cells.clone())
                .collect::<Vec<_>>(),
        ));
        out.push_str(&table(Cells::Numbers, &header, &rows));
        out.push_str(
            "<p class=\"meta\">Each arm's worst maximum against each budget; the figure is the \
             margin (budget − worst max).</p>\n",
        );
        let notes: Vec<String> = t
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().map(move |v| (r, v)))
            .filter_map(|(r, v)| {
                let note = v.note.as_ref()?;
                Some(format!(
                    "<li>{} {}: {}: {}</li>",
                    esc(&r.arm),
                    esc(&tier_heading(v.budget_ns)),
                    esc(v.result),
                    esc(note)
                ))
            })
            .collect();
        if !notes.is_empty() {
            out.push_str(&format!("<ul>{}</ul>\n", notes.concat()));
        }
    }
    let rest = p.untiered_verdicts();
    if !rest.is_empty() {
        out.push_str(&verdict_summary(&rest));
        out.push_str(&verdict_rows(&rest));
    }
    for st in &p.decision.stability {
        let header: Vec<String> = STABILITY_HEADER.iter().map(|h| h.to_string()).collect();
        let rows: Vec<Vec<String>> = stability_rows(st, unit)
            .into_iter()
            .map(|row| row.iter().map(|c| whole_words(&esc(c))).collect())
            .collect();
        out.push_str(&format!(
            "<h3>Stability of the {} runs</h3>\n",
            esc(&st.kind)
        ));
        out.push_str(&table(Cells::Numbers, &header, &rows));
        out.push_str(&format!(
            "<p><b>{}</b></p>\n",
            esc(&ranked_line(&st.outcome))
        ));
    }
    for l in lines(p, noise, unit) {
        out.push_str(&format!("<p>{}</p>\n", esc(&l)));
    }
    out
}

/// What differs between a comparison's arms, one column per arm.
fn what_differs(d: &[Difference], c: &Comparison) -> String {
    if d.is_empty() {
        return "<p>Nothing known differs: the runs share their system fingerprint, loads, \
                other load and parameters.</p>\n"
            .into();
    }
    let mut header = vec!["field".to_string()];
    header.extend(column_keys(c));
    let rows: Vec<Vec<String>> = d
        .iter()
        .map(|d| {
            let mut cells = vec![esc(&d.field)];
            cells.extend(d.values.iter().map(|v| whole_words(&esc(v))));
            cells
        })
        .collect();
    table(Cells::Text, &header, &rows)
}

/// A JSON value as text: strings bare, whole numbers without decimals.
fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if n.is_f64() => {
            n.as_f64().map(metric_text).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// The loads beside a run: one row per figure each achieved.
fn loads(run: &Run) -> String {
    let header: Vec<String> = ["load", "workers", "achieved", "value"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    let mut rows = Vec::new();
    for l in &run.loads {
        let lead = [esc(&l.spec), l.workers.to_string()];
        if l.achieved.is_empty() {
            rows.push([lead.to_vec(), vec!["-".into(), "-".into()]].concat());
        }
        for (i, (k, v)) in l.achieved.iter().enumerate() {
            let lead = if i == 0 {
                lead.to_vec()
            } else {
                vec![String::new(), String::new()]
            };
            rows.push([lead, vec![esc(k), esc(&json_text(v))]].concat());
        }
    }
    table(Cells::Named, &header, &rows)
}

/// Pairs as a flowing list of `key value` items.
fn key_values(pairs: &[(String, String)]) -> String {
    let mut out = String::from("<dl class=\"kv\">");
    for (k, v) in pairs {
        out.push_str(&format!(
            "<div><dt>{}</dt><dd>{}</dd></div>",
            esc(k),
            esc(v)
        ));
    }
    out.push_str("</dl>\n");
    out
}

fn run_section(run: &Run, unit: TimeUnit) -> Result<String> {
    // A group of runs (`--by`) has no id, and no anchor.
    let anchor = run
        .id
        .map(|id| format!(" id=\"run-{id}\""))
        .unwrap_or_default();
    let mut out = format!(
        "<section{anchor}><h2>{}</h2>\n<p class=\"meta\">{} run, {}, started {}, ended {}, {} observed</p>\n",
        esc(&run_name(run)),
        esc(&run.kind),
        run.status.name(),
        esc(&run.started_at),
        esc(&run.ended_at),
        Human(run.duration_ns)
    );
    for w in &run.warnings {
        out.push_str(&format!(
            "<div class=\"warn\"><b>{}</b>: {}</div>\n",
            esc(&w.code),
            esc(&w.message)
        ));
    }
    if !run.series.is_empty() {
        out.push_str("<h3>Series</h3>\n");
        let t = series_grid(run, unit);
        out.push_str(&grid(&t, 0..t.header().len(), Cells::Numbers, |_, c| c));
        out.push_str(&format!(
            "<p class=\"meta\">Times in {}. Overruns: periods that expired while a thread was late; \
             misses: values over the deadline; overflows: values above the histogram's range.</p>\n",
            unit.symbol()
        ));
    }
    let kind = crate::step::kind(&run.kind);
    if let (Some(what), Some(total)) = (kind.total_figure, &run.total) {
        let title = format!("{}: {what}", run_name(run));
        out.push_str(&figure(svg::histograms(
            &title,
            kind.quantity,
            &[("all".to_string(), &total.histogram)],
        )?));
    }
    out.push_str(&figure(svg::run_threads(run)?));
    out.push_str(&figure(svg::run_over_time(run)?));
    if let Some(why) = &run.why {
        out.push_str(&super::html_why::section(why)?);
    }
    out.push_str(&figure(super::sweep_svg::plot(run)?));
    if let Some(p) = &run.perf {
        out.push_str("<h3>Performance counters</h3>\n");
        let rows: Vec<Vec<String>> = p
            .total
            .iter()
            .map(|c| vec![esc(&c.event), esc(&c.text())])
            .collect();
        out.push_str(&table(
            Cells::Numbers,
            &["counter".into(), "value".into()],
            &rows,
        ));
    }
    if !run.metrics.is_empty() {
        let rows: Vec<Vec<String>> = run
            .metrics
            .iter()
            .map(|(k, v)| vec![esc(k), metric_text(*v)])
            .collect();
        out.push_str("<h3>Metrics</h3>\n");
        out.push_str(&table(
            Cells::Numbers,
            &["metric".into(), "value".into()],
            &rows,
        ));
    }
    if !run.loads.is_empty() {
        out.push_str("<h3>Loads</h3>\n");
        out.push_str(&loads(run));
    }
    out.push_str("<h3>System</h3>\n");
    let rows: Vec<Vec<String>> = system_fields(run)
        .into_iter()
        .map(|(k, v)| vec![esc(k), whole_words(&esc(&v))])
        .collect();
    out.push_str(&table(
        Cells::Text,
        &["field".into(), "value".into()],
        &rows,
    ));
    out.push_str("<h3>Parameters</h3>\n");
    out.push_str(&key_values(&crate::format::params_shown(run)));
    out.push_str(&format!(
        "<p class=\"meta\">Command: <code>{}</code></p>\n</section>\n",
        esc(&run.command_line.join(" "))
    ));
    Ok(out)
}

/// A part's figures: its table, its plots and what differs between its arms.
fn part_section(p: &Part, heading: &str, unit: TimeUnit) -> Result<String> {
    let mut out = format!("<h2>{}</h2>\n", esc(heading));
    out.push_str(&comparison(&p.comparison, unit));
    let runs = p.merged_runs();
    let hists = primary_histograms(&runs);
    let axis = svg::quantity(&runs);
    let plots = figure(svg::histograms(
        &svg::titled(axis, "histograms"),
        axis,
        &hists,
    )?) + &figure(svg::percentiles(
        &svg::titled(axis, "by percentile"),
        axis,
        &hists,
    )?);
    if !plots.is_empty() {
        out.push_str("<h3>Distributions</h3>\n");
        out.push_str(&plots);
    }
    if p.arms.len() > 1 {
        out.push_str("<h3>What differs</h3>\n");
        out.push_str(&what_differs(&p.differences, &p.comparison));
    }
    Ok(out)
}

/// The whole page: `title`, a line about it (`about`, HTML), `top` (HTML),
/// then the decision of `o`, each of its comparisons with its plots and
/// differences, and each run of `sections` in depth.
fn page(
    title: &str,
    about: &str,
    top: &str,
    o: &Outcome,
    sections: &[Run],
    unit: TimeUnit,
) -> Result<String> {
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"meta\">{about}rtlab {}, {} run(s), written {}</p>\n",
        esc(title),
        env!("CARGO_PKG_VERSION"),
        sections.len(),
        whole_words(&esc(&crate::record::now_rfc3339()))
    );
    let warned = sections.iter().filter(|r| !r.warnings.is_empty()).count();
    if warned > 0 {
        body.push_str(&format!(
            "<div class=\"warn\">{warned} run(s) carry warnings about their numbers: see each run below.</div>\n"
        ));
    }
    let numbered = o.parts.len() > 1;
    let decided: String = o
        .parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = decision(p, o.noise, unit);
            match (numbered, d.is_empty()) {
                (_, true) => String::new(),
                (true, false) => format!("<h3>{}</h3>\n{d}", esc(&part_heading(i + 1, p))),
                (false, false) => d,
            }
        })
        .collect();
    if !decided.is_empty() {
        body.push_str("<h2>Decision</h2>\n");
        body.push_str(&decided);
    }
    body.push_str(top);
    for (i, p) in o.parts.iter().enumerate() {
        let heading = if numbered {
            part_heading(i + 1, p)
        } else {
            "Summary".to_string()
        };
        body.push_str(&part_section(p, &heading, unit)?);
    }
    for run in sections {
        body.push_str(&run_section(run, unit)?);
    }
    Ok(document(title, "", &body))
}

/// A whole page: `title`, the report's style followed by `style`, and `body`
/// (HTML) in its `main`.
pub(crate) fn document(title: &str, style: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\
         <title>{}</title><style>{STYLE}{style}</style></head>\n<body><main>\n{body}</main></body></html>\n",
        esc(title)
    )
}

/// The report of the analysis `o` under `title`, times in `unit`, with
/// each run of `sections` in depth (several are listed first, as the legend
/// of their keys).
pub fn render(title: &str, o: &Outcome, sections: &[Run], unit: TimeUnit) -> Result<String> {
    let mut top = String::new();
    if sections.len() > 1 {
        top.push_str("<h2>Runs</h2>\n");
        top.push_str(&legend(sections));
    }
    page(title, "", &top, o, sections, unit)
}

/// The report of `runs` (one column each, the first the baseline of its
/// kind) against `reqs`, as the web view makes it.
#[cfg(test)]
pub(crate) fn render_runs(
    title: &str,
    runs: &[Run],
    reqs: &[Requirement],
    unit: TimeUnit,
) -> Result<String> {
    use crate::analysis::outcome::{analyse, of_runs};
    let o = analyse(
        of_runs(runs.to_vec(), 0),
        reqs,
        crate::analysis::interval::DEFAULT_NOISE,
    );
    render(title, &o, runs, unit)
}

/// The report of a campaign (`rtlab run`, `rtlab report --campaign`): the same
/// facts as its text, its step table with a verdict per requirement, its
/// biggest risks and its load attribution, first; then its steps' runs in depth.
pub struct CampaignPage<'a> {
    /// The page's title.
    pub title: &'a str,
    /// The unit of times.
    pub unit: TimeUnit,
    /// Where the campaign stands (`complete`, `interrupted`, ...), and what else
    /// its text says of it (when it was created).
    pub about: &'a str,
    /// Its steps, each with the run it saved.
    pub steps: &'a [StepRun],
    /// The requirements it is judged against.
    pub reqs: &'a [Requirement],
    /// Its risks, most severe first.
    pub risks: &'a [Risk],
    /// Its load attribution.
    pub ranked: &'a [Ranking],
    /// The analysis of its steps.
    pub outcome: &'a Outcome,
}

impl CampaignPage<'_> {
    /// The page.
    pub fn render(&self) -> Result<String> {
        let runs = step_view(self.steps);
        let t = step_grid(self.steps, self.reqs, self.unit);
        let verdicts_from = t.header().len() - self.reqs.len();
        // Step names break between words only; the run column holds each run's
        // key, linking to its section.
        let dress = |col: usize, cell: String| match col {
            0 => whole_words(&cell),
            1 => match cell.parse::<i64>() {
                Ok(id) => key_link(Some(id), 0),
                Err(_) => cell,
            },
            c if c >= verdicts_from => verdict_mark(&cell),
            _ => cell,
        };
        let mut top = String::new();
        if !self.reqs.is_empty() {
            top.push_str("<h2>Verdicts of each step</h2>\n");
            let cols = [0, 1].into_iter().chain(verdicts_from..t.header().len());
            top.push_str(&grid(&t, cols, Cells::Numbers, dress));
        }
        top.push_str("<h2>Steps</h2>\n");
        top.push_str(&grid(&t, 0..verdicts_from, Cells::Numbers, dress));
        top.push_str(&format!(
            "<p class=\"meta\">Times in {}. Overruns: periods that expired while a thread was \
             late; misses: values over the deadline. A run's key links to it below.</p>\n",
            self.unit.symbol()
        ));
        if let Some(b) = bench_grid(self.steps, self.unit) {
            top.push_str("<h2>Benchmark steps</h2>\n");
            top.push_str(&grid(&b, 0..b.header().len(), Cells::Numbers, dress));
        }
        if !self.risks.is_empty() {
            top.push_str("<h2>Biggest risks</h2>\n<ol class=\"risks\">");
            for r in self.risks.iter().take(RISKS_SHOWN) {
                top.push_str(&format!("<li>{}</li>", esc(&r.text)));
            }
            top.push_str("</ol>\n");
        }
        for r in self.ranked {
            let a = attribution(r);
            top.push_str(&format!("<h2>{}</h2>\n", esc(&a.heading)));
            if !a.harmful.is_empty() {
                top.push_str("<ol>");
                for h in &a.harmful {
                    top.push_str(&format!("<li>{}</li>", esc(h)));
                }
                top.push_str("</ol>\n");
            }
            for n in &a.notes {
                top.push_str(&format!("<p>{}</p>\n", esc(n)));
            }
        }
        let about = format!("{}; ", whole_words(&esc(self.about)));
        page(self.title, &about, &top, self.outcome, &runs, self.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{run_from_samples, step_run};
    use crate::analysis::outcome::{analyse, of_runs};
    use crate::analysis::verdict::parse_requirement;
    use crate::record::{LoadRecord, Warning};

    fn parse(html: &str) -> roxmltree::Document<'_> {
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        roxmltree::Document::parse_with_options(html, opts).expect("well-formed")
    }

    #[test]
    fn self_contained_well_formed_report() {
        let mut a = run_from_samples("stock <4.19>", &[10_000, 20_000, 1_500_000]);
        let mut b = run_from_samples("rt & co", &[15_000, 16_000, 30_000]);
        a.id = Some(1);
        b.id = Some(2);
        a.fingerprint.hz = Some(250);
        b.fingerprint.hz = Some(300);
        a.warnings.push(Warning::new("vm", "running under kvm"));
        let reqs = parse_requirement("gyro=1ms").unwrap();
        let html = render_runs("Stock vs RT", &[a, b], &reqs, TimeUnit::Us).unwrap();
        let doc = parse(&html);
        let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
        // Overlay and percentiles, then one scatter per run.
        assert_eq!(svgs, 4);
        for needle in [
            "<h2>stock &lt;4.19&gt; #1</h2>",
            "<td><span class=\"word\">rt</span> <span class=\"word\">&amp;</span> <span class=\"word\">co</span></td>",
            "<a href=\"#run-1\">#1</a> (baseline)",
            "class=\"FAIL\">FAIL<",
            "class=\"PASS\">PASS<",
            "-500us",
            "running under kvm",
            "<td>HZ</td><td><span class=\"word\">250</span></td><td><span class=\"word\">300</span></td>",
            "name=\"viewport\"",
            "@media print",
        ] {
            assert!(html.contains(needle), "missing {needle}");
        }
        // What decides comes first.
        assert!(html.find("<h2>Decision</h2>") < html.find("Summary"));
        // Nothing loaded from elsewhere.
        for external in [" src=", "<link", "<script", "@import", "url("] {
            assert!(!html.contains(external), "{external}");
        }
    }

    #[test]
    fn one_run_has_no_differences_section() {
        let html =
            render_runs("one", &[run_from_samples("x", &[1_000])], &[], TimeUnit::Us).unwrap();
        parse(&html);
        assert!(!html.contains("What differs"));
        assert!(!html.contains("Verdicts"));
        assert!(!html.contains("<h2>Runs</h2>"));
    }

    #[test]
    fn a_campaign_page_leads_with_its_steps_verdicts_and_risks() {
        let mut steps = [
            step_run("idle", &[5_000; 10], None),
            step_run("loaded", &[2_000_000; 10], Some("cpu")),
        ];
        steps[0].run.id = Some(7);
        steps[1].run.id = Some(8);
        steps[1].run.loads[0]
            .achieved
            .insert("ops_per_s".into(), 1234.5678.into());
        let reqs = parse_requirement("gyro=1ms").unwrap();
        let risks = crate::analysis::risks::risks(&steps, &reqs);
        let html = CampaignPage {
            title: "rtlab run: two (campaign 3)",
            about: "complete",
            steps: &steps,
            reqs: &reqs,
            risks: &risks,
            ranked: &[],
            unit: TimeUnit::Us,
            outcome: &analyse(
                of_runs(steps.iter().map(|s| s.run.clone()).collect(), 0),
                &reqs,
                0.05,
            ),
        }
        .render()
        .unwrap();
        parse(&html);
        for needle in [
            "complete</span>; rtlab",
            "1 of 2 PASS, 1 FAIL",
            "<th>gyro 1ms</th>",
            "<td><a href=\"#run-8\">#8</a></td>",
            "<span class=\"FAIL\">FAIL</span>",
            "<h2>Biggest risks</h2>",
            "gyro: max 2ms in step &#39;loaded&#39; exceeds the 1ms budget",
            "<section id=\"run-8\"><h2>loaded · k #8</h2>",
            "<td>ops_per_s</td><td>1234.6</td>",
        ] {
            assert!(html.contains(needle), "missing {needle}\n{html}");
        }
        assert!(!html.contains("{\""), "no raw JSON");
        assert!(html.find("Biggest risks") < html.find("Summary"));
    }

    #[test]
    fn loads_are_a_table_of_what_each_achieved() {
        let mut run = run_from_samples("x", &[1_000]);
        let mut load = LoadRecord {
            spec: "cpu:2".into(),
            workers: 2,
            ..LoadRecord::default()
        };
        load.achieved.insert("ops_per_s".into(), 10.0.into());
        load.achieved.insert("ctx_switches_per_s".into(), 3.into());
        run.loads.push(load);
        let html = loads(&run);
        assert!(
            html.contains(
                "<tr><td>cpu:2</td><td>2</td><td>ctx_switches_per_s</td><td>3</td></tr>\
                 <tr><td></td><td></td><td>ops_per_s</td><td>10</td></tr>"
            ),
            "{html}"
        );
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }
}
