//! `rtlab tune`'s report as text (one table within 100 columns, a line of
//! detail under each candidate) and as HTML (the same table, and a
//! before/after histogram overlay for each change that helped).

use super::judge::{Effect, Verdict};
use super::run::Outcome;
use super::{Report, Restored};
use crate::analysis::interval::{Basis, Change, Estimate};
use crate::analysis::series;
use crate::format::html::{self, esc, Cells};
use crate::format::svg;
use crate::format::text::table::Table;
use crate::format::UNKNOWN;
use crate::record::Run;
use crate::units::TimeUnit;
use anyhow::Result;
use std::fmt::Write;

/// One figure's estimate, as a cell: the value and its 95 % interval
/// `52.1 [48.0, 57.3]` (times never below 0), the range of the runs' own
/// extremes `88.0–310.0`, the value alone, or `–` when it has none.
fn estimate(e: Option<&Estimate>, figure: &str, unit: TimeUnit) -> String {
    let Some(e) = e else {
        return UNKNOWN.into();
    };
    let text = |v: f64| match figure {
        "misses" => format!("{:.0}", v.max(0.0)),
        _ => unit.cell(v.max(0.0)),
    };
    match (e.basis, e.ci) {
        (Basis::Unsupported { .. }, _) => UNKNOWN.into(),
        (Basis::Range { .. }, Some((lo, hi))) if lo != hi => format!("{}–{}", text(lo), text(hi)),
        (Basis::Windows { .. } | Basis::Runs { .. }, Some((lo, hi))) if text(lo) != text(hi) => {
            format!("{} [{}, {}]", text(e.value), text(lo), text(hi))
        }
        _ => text(e.value),
    }
}

/// A change against the baseline, as `rtlab compare` marks it.
fn mark(e: &Effect) -> &'static str {
    match (e.change, e.decided) {
        (Change::Better, _) => "better",
        (Change::Worse, _) => "worse",
        (Change::Same, true) => "≈",
        (Change::Same, false) => "≈?",
        (Change::Unknown, _) => "",
    }
}

/// The verdict as shown: "no real effect" that could not be decided says so.
fn verdict_text(o: &Outcome) -> String {
    match o.verdict {
        Verdict::NoRealEffect if !o.decided => "no real effect?".into(),
        v => v.name().into(),
    }
}

/// The line under a candidate: its change and the command, or why not.
fn detail(o: &Outcome) -> String {
    let mut parts = Vec::new();
    if !o.change.is_empty() {
        parts.push(o.change.clone());
    }
    if let Some(r) = &o.reason {
        parts.push(r.clone());
    } else if !o.by_hand.is_empty() {
        parts.push(format!("by hand: {}", o.by_hand));
    }
    if !o.skipped.is_empty() {
        parts.push(format!(
            "the kernel kept {} part(s) as they were: {}",
            o.skipped.len(),
            o.skipped.join("; ")
        ));
    }
    parts.join("; ")
}

/// The candidates' table: a row per figure of each candidate tried (its
/// verdict on the first), one row for a candidate that was not, and a line
/// under each with its change and the command, or why not.
pub fn table(r: &Report, unit: TimeUnit) -> Table {
    let before = format!("before ({})", unit.symbol());
    let after = format!("after ({})", unit.symbol());
    let mut t = Table::new(&["candidate", "figure", &before, &after, "change", "verdict"]);
    for col in [1, 4, 5] {
        t.align_left(col);
    }
    t.wrap(0);
    for o in r.candidates.iter().chain(&r.together) {
        if o.effects.is_empty() {
            t.row_with_note(
                vec![
                    o.name.into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    verdict_text(o),
                ],
                detail(o),
            );
            continue;
        }
        let last = o.effects.len() - 1;
        for (i, e) in o.effects.iter().enumerate() {
            let cells = vec![
                if i == 0 { o.name.into() } else { String::new() },
                e.figure.into(),
                estimate(e.before.as_ref(), e.figure, unit),
                estimate(e.after.as_ref(), e.figure, unit),
                mark(e).into(),
                if i == 0 {
                    verdict_text(o)
                } else {
                    String::new()
                },
            ];
            let note = if i == last { detail(o) } else { String::new() };
            t.row_with_note(cells, note);
        }
    }
    t
}

/// The report as text.
pub fn text(r: &Report, unit: TimeUnit) -> String {
    let mut out = String::new();
    for line in &r.recovered {
        let _ = writeln!(out, "{line}");
    }
    let p = &r.probe;
    let _ = writeln!(
        out,
        "Measured: CPU {} every {}, {}, load {}; {} × {} per arm, interleaved; noise {:.0}%.",
        p.cpus,
        p.interval,
        p.priority,
        if p.loads.is_empty() {
            "none".into()
        } else {
            p.loads.join(" + ")
        },
        r.repeat,
        p.duration,
        r.noise * 100.0
    );
    if let Some(c) = r.campaign {
        let _ = writeln!(
            out,
            "Runs stored as campaign {c} (rtlab report --campaign {c})."
        );
    }
    out.push('\n');
    out.push_str(&table(r, unit).render());
    let helped: Vec<&str> = r
        .candidates
        .iter()
        .filter(|o| o.verdict == Verdict::Helps)
        .map(|o| o.name)
        .collect();
    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        match helped.as_slice() {
            [] => "No change helped: none is kept.".to_string(),
            h => format!("Helped: {}.", h.join(", ")),
        }
    );
    out.push_str(&crate::format::text::table::paragraph(
        "Marks: ",
        &format!(
            "better / worse: the intervals lie apart by more than the noise; ≈: no real difference (≈?: none seen, too few runs to be sure); {UNKNOWN}: too few samples for the figure."
        ),
    ));
    if !r.boot.is_empty() {
        out.push_str("\nNot tried, they need a reboot or another kernel:\n");
        for b in &r.boot {
            out.push_str(&crate::format::text::table::paragraph(
                &format!("  {}: ", b.title),
                &b.fix,
            ));
        }
    }
    if let Some(a) = &r.applied {
        out.push('\n');
        let _ = writeln!(
            out,
            "Applied (kept on, 'rtlab tune --restore' undoes it): {}",
            if a.kept.is_empty() {
                "nothing".into()
            } else {
                a.kept.join(", ")
            }
        );
        for f in &a.files {
            let _ = writeln!(out, "  wrote {}", f.display());
        }
        for b in &a.boot {
            out.push_str(&crate::format::text::table::paragraph("  for good: ", b));
        }
    }
    out.push('\n');
    out.push_str(&after_text(r));
    out
}

/// The sentence about the system read back at the end.
fn after_text(r: &Report) -> String {
    let a = &r.after;
    let what = format!(
        "{} and {} read back",
        counted(a.values, "value"),
        counted(a.threads, "thread")
    );
    let kept = if r.applied.as_ref().is_some_and(|x| !x.kept.is_empty()) {
        " (but what --apply kept)"
    } else {
        ""
    };
    if a.differ.is_empty() {
        format!("System as before{kept}: {what}, all as they were.\n")
    } else {
        let mut s = format!("NOT as before: {what}; {} differ:\n", a.differ.len());
        for d in &a.differ {
            let _ = writeln!(s, "  {d}");
        }
        s
    }
}

/// `1 value`, `3 values`.
fn counted(n: usize, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

/// What `--restore` did, as text.
pub fn restored_text(r: &Restored) -> String {
    let mut out = String::new();
    for l in &r.recovered {
        let _ = writeln!(out, "{l}");
    }
    for v in &r.values {
        let _ = writeln!(out, "put back {v}");
    }
    for f in &r.files {
        let _ = writeln!(out, "{f}");
    }
    for f in &r.failed {
        let _ = writeln!(out, "FAILED {f}");
    }
    if out.is_empty() {
        out.push_str("Nothing to restore: rtlab tune has nothing on and no file written.\n");
    }
    out
}

/// The latency histogram of runs taken together, for the plots.
fn merged(runs: &[Run]) -> Option<rtlab_engine::stats::hist::HistogramData> {
    let all: Vec<_> = runs
        .iter()
        .filter_map(|r| series::primary(r).map(std::borrow::Cow::into_owned))
        .collect();
    (!all.is_empty()).then(|| series::merge(&all).histogram)
}

/// The report as an HTML page: the table, then a before/after histogram
/// overlay for each change that helped (and the winners together).
pub fn html(r: &Report, unit: TimeUnit) -> Result<String> {
    let t = table(r, unit);
    let header: Vec<String> = t.header().iter().map(|h| esc(h)).collect();
    let rows: Vec<Vec<String>> = t
        .rows()
        .iter()
        .map(|row| row.iter().map(|c| esc(c)).collect())
        .collect();
    let all: Vec<&Outcome> = r.candidates.iter().chain(&r.together).collect();
    let mut body = String::from("<h1>rtlab tune</h1>\n");
    let _ = writeln!(
        body,
        "<p>{}</p>",
        esc(text(r, unit).lines().next().unwrap_or(""))
    );
    body.push_str(&html::table(Cells::Text, &header, &rows));
    body.push_str("<h2>Candidates</h2>\n<ul>");
    for o in &all {
        let _ = write!(
            body,
            "<li><b>{}</b>: {}. {}</li>",
            esc(o.name),
            esc(&verdict_text(o)),
            esc(&detail(o))
        );
    }
    body.push_str("</ul>\n");
    for o in all.iter().filter(|o| o.verdict == Verdict::Helps) {
        let (Some(before), Some(after)) = (merged(&o.runs[0]), merged(&o.runs[1])) else {
            continue;
        };
        let _ = writeln!(body, "<h2>{}: before and after</h2>", esc(o.name));
        let _ = writeln!(body, "<p>{}</p>", esc(&detail(o)));
        let series = [("before".to_string(), before), ("after".to_string(), after)];
        let title = format!("{}: latency histograms", o.name);
        body.push_str(&html::figure(svg::histograms(&title, "latency", &series)?));
    }
    if !r.boot.is_empty() {
        body.push_str("<h2>Not tried: they need a reboot or another kernel</h2>\n<ul>");
        for b in &r.boot {
            let _ = write!(body, "<li>{}: {}</li>", esc(b.title), esc(&b.fix));
        }
        body.push_str("</ul>\n");
    }
    let _ = writeln!(body, "<p>{}</p>", esc(after_text(r).trim()));
    Ok(html::document("rtlab tune", "", &body))
}
