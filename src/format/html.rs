//! The HTML report: one self-contained file (inline CSS and SVG, no script, nothing
//! fetched from the network) that reads on a phone. It takes a title and a list of
//! runs, so one run in depth (`rtlab report ID --html`), a comparison and a
//! campaign all use the same builder. The first run is the baseline of the ratios.
//!
//! The output is well-formed XML (XHTML syntax), so tools and tests can parse it.

use super::svg::{self, primary_histograms};
use super::text::compare::{headings, label, value_text};
use super::text::latency::series_table;
use super::text::verdict::{cells, HEADER};
use super::{run_name, Exporter, Options, UNKNOWN};
use crate::analysis::compare::compare;
use crate::analysis::diff::{differences, system_fields};
use crate::analysis::verdict::{failures, judge, Requirement};
use crate::record::Run;
use crate::units::{Human, TimeUnit};
use anyhow::Result;

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:0 12px 40px;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}h3{font-size:1.05em}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
table.text td{white-space:normal;text-align:left;word-break:break-word}
.best{font-weight:bold;background:#e8f4e8}.ratio{color:#666;font-size:.85em}
.PASS{color:#1a7f37;font-weight:bold}.FAIL,.NO.DATA{color:#c62828;font-weight:bold}
.warn{background:#fff4e5;border-left:4px solid #f28e2b;padding:4px 8px;margin:4px 0}
svg{max-width:100%;height:auto;display:block;margin:.5em 0}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:.85em}
.meta{color:#666;font-size:.9em}
";

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How a table's cells are laid out.
#[derive(Clone, Copy)]
enum Cells {
    /// Figures: right-aligned, on one line.
    Numbers,
    /// Text values (system fields, parameters): left-aligned, wrapping.
    Text,
}

/// A table; cells are already HTML.
fn table(cells: Cells, header: &[String], rows: &[Vec<String>]) -> String {
    let class = match cells {
        Cells::Numbers => "",
        Cells::Text => " class=\"text\"",
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

fn figure(svg: Option<String>) -> String {
    svg.map(|s| format!("<figure>{s}</figure>\n"))
        .unwrap_or_default()
}

fn comparison(runs: &[Run], unit: TimeUnit) -> String {
    let c = compare(runs, 0);
    let mut header = vec![String::new()];
    header.extend(headings(&c).iter().map(|h| esc(h)));
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![esc(&label(row, unit))];
            cells.extend(row.values.iter().enumerate().map(|(i, v)| {
                let Some(v) = v else { return UNKNOWN.into() };
                let text = esc(&value_text(row, *v, unit));
                let ratio = row.ratios[i]
                    .map(|r| format!(" <span class=\"ratio\">{r:.2}x</span>"))
                    .unwrap_or_default();
                if row.best.contains(&i) {
                    format!("<span class=\"best\">{text}</span>{ratio}")
                } else {
                    format!("{text}{ratio}")
                }
            }));
            cells
        })
        .collect();
    let mut out = table(Cells::Numbers, &header, &rows);
    if runs.len() > 1 {
        out.push_str(
            "<p class=\"meta\">Bold: best of the row. Small figures: value / baseline value. –: the run does not have it.</p>\n",
        );
    }
    out
}

fn verdicts(runs: &[Run], reqs: &[Requirement]) -> String {
    let v = judge(runs, reqs);
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|v| {
            let mut row: Vec<String> = cells(v).iter().map(|c| esc(c)).collect();
            row[3] = format!("<span class=\"{0}\">{0}</span>", v.result);
            row
        })
        .collect();
    let failed = failures(&v);
    let summary = if failed == 0 {
        "<p class=\"PASS\">All requirements met.</p>".to_string()
    } else {
        format!(
            "<p class=\"FAIL\">{failed} of {} verdict(s) failed.</p>",
            v.len()
        )
    };
    format!("{summary}\n{}", table(Cells::Numbers, &header, &rows))
}

fn what_differs(runs: &[Run]) -> String {
    let d = differences(runs);
    if d.is_empty() {
        return "<p>The runs share their system fingerprint and parameters.</p>\n".into();
    }
    let mut header = vec!["field".to_string()];
    header.extend(runs.iter().map(|r| esc(&run_name(r))));
    let rows: Vec<Vec<String>> = d
        .iter()
        .map(|d| {
            let mut cells = vec![esc(&d.field)];
            cells.extend(d.values.iter().map(|v| esc(v)));
            cells
        })
        .collect();
    table(Cells::Text, &header, &rows)
}

fn run_section(run: &Run, unit: TimeUnit) -> Result<String> {
    let name = run_name(run);
    let mut out = format!(
        "<section id=\"run-{}\"><h2>{}</h2>\n<p class=\"meta\">{} run, {}, started {}, {} observed</p>\n",
        run.id.unwrap_or(0),
        esc(&name),
        esc(&run.kind),
        run.status.name(),
        esc(&run.started_at),
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
        let text = series_table(run, unit);
        out.push_str(&format!("<pre>{}</pre>\n", esc(&text)));
    }
    out.push_str(&figure(svg::run_threads(run)?));
    out.push_str(&figure(svg::run_over_time(run)?));
    if !run.metrics.is_empty() {
        let rows: Vec<Vec<String>> = run
            .metrics
            .iter()
            .map(|(k, v)| vec![esc(k), v.to_string()])
            .collect();
        out.push_str("<h3>Metrics</h3>\n");
        out.push_str(&table(
            Cells::Numbers,
            &["metric".into(), "value".into()],
            &rows,
        ));
    }
    if !run.loads.is_empty() {
        let rows: Vec<Vec<String>> = run
            .loads
            .iter()
            .map(|l| {
                let achieved = serde_json::Value::Object(l.achieved.clone()).to_string();
                vec![esc(&l.spec), l.workers.to_string(), esc(&achieved)]
            })
            .collect();
        out.push_str("<h3>Loads</h3>\n");
        let header = ["load".into(), "workers".into(), "achieved".into()];
        out.push_str(&table(Cells::Text, &header, &rows));
    }
    out.push_str("<h3>System</h3>\n");
    let rows: Vec<Vec<String>> = system_fields(run)
        .into_iter()
        .map(|(k, v)| vec![esc(k), esc(&v)])
        .collect();
    out.push_str(&table(
        Cells::Text,
        &["field".into(), "value".into()],
        &rows,
    ));
    out.push_str(&format!(
        "<h3>Parameters</h3>\n<pre>{}</pre>\n<p class=\"meta\">Command: <code>{}</code></p>\n</section>\n",
        esc(&serde_json::to_string_pretty(&run.params)?),
        esc(&run.command_line.join(" "))
    ));
    Ok(out)
}

/// The HTML report of runs: `opts.title`, verdicts against `opts.reqs`, times in
/// `opts.unit`.
pub struct Html;

impl Exporter for Html {
    fn serialize(&self, runs: &[Run], opts: &Options) -> Result<String> {
        render(opts.title, runs, opts.reqs, opts.unit)
    }
}

/// The report of `runs` under `title`, judged against `reqs` (none: no verdict
/// section), times in `unit`.
pub fn render(title: &str, runs: &[Run], reqs: &[Requirement], unit: TimeUnit) -> Result<String> {
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"meta\">rtlab {}, {} run(s), written {}</p>\n",
        esc(title),
        env!("CARGO_PKG_VERSION"),
        runs.len(),
        esc(&crate::record::now_rfc3339())
    );
    let warned = runs.iter().filter(|r| !r.warnings.is_empty()).count();
    if warned > 0 {
        body.push_str(&format!(
            "<div class=\"warn\">{warned} run(s) carry warnings about their numbers: see each run below.</div>\n"
        ));
    }
    if !reqs.is_empty() {
        body.push_str("<h2>Verdicts</h2>\n");
        body.push_str(&verdicts(runs, reqs));
    }
    body.push_str("<h2>Summary</h2>\n");
    body.push_str(&comparison(runs, unit));
    let hists = primary_histograms(runs);
    let plots = figure(svg::histograms("Latency histograms", &hists)?)
        + &figure(svg::percentiles("Latency by percentile", &hists)?);
    if !plots.is_empty() {
        body.push_str("<h2>Distributions</h2>\n");
        body.push_str(&plots);
    }
    if runs.len() > 1 {
        body.push_str("<h2>What differs</h2>\n");
        body.push_str(&what_differs(runs));
    }
    for run in runs {
        body.push_str(&run_section(run, unit)?);
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        esc(title)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::analysis::verdict::parse_requirement;
    use crate::record::Warning;

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
        b.fingerprint.hz = Some(300);
        a.warnings.push(Warning::new("vm", "running under kvm"));
        let reqs = parse_requirement("gyro=1ms").unwrap();
        let html = render("Stock vs RT", &[a, b], &reqs, TimeUnit::Us).unwrap();
        let doc = parse(&html);
        let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
        // Overlay and percentiles, then one scatter per run.
        assert_eq!(svgs, 4);
        for needle in [
            "stock &lt;4.19&gt; #1 (baseline)",
            "rt &amp; co #2",
            "class=\"FAIL\">FAIL<",
            "class=\"PASS\">PASS<",
            "-500us",
            "running under kvm",
            "<td>HZ</td><td>-</td><td>300</td>",
            "name=\"viewport\"",
        ] {
            assert!(html.contains(needle), "missing {needle}");
        }
        // Nothing loaded from elsewhere.
        for external in [" src=", "<link", "<script", "@import", "url("] {
            assert!(!html.contains(external), "{external}");
        }
    }

    #[test]
    fn one_run_has_no_differences_section() {
        let html = render("one", &[run_from_samples("x", &[1_000])], &[], TimeUnit::Us).unwrap();
        parse(&html);
        assert!(!html.contains("What differs"));
        assert!(!html.contains("Verdicts"));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }
}
