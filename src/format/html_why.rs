//! The spike analysis of a run in its HTML report: the timeline of the worst
//! spikes, the causes ranked over the run, each spike in detail (folded), what
//! the kernel let the analysis see, and a warning when events were lost.

use super::html::{esc, table, Cells};
use super::svg_why::{timeline, TIMELINE_SPIKES};
use super::text::why::{cause_name, parts, percent};
use crate::record::why::{Subject, Why};
use crate::units::Human;
use anyhow::Result;

/// The section of a run's report on why its spikes happened.
pub fn section(why: &Why) -> Result<String> {
    let threshold = Human(why.threshold_ns);
    let noun = why.subject.noun();
    let mut out = format!("<h3>Why: the {noun}s</h3>\n");
    if why.spikes_total == 0 {
        out.push_str(&format!(
            "<p>No {} reached {threshold}: no {noun} to explain.</p>\n",
            why.subject.measured()
        ));
        return Ok(out + &timerlat(why));
    }
    let lost = match why.events_lost {
        0 => "none lost".to_string(),
        n => format!("{n} lost"),
    };
    out.push_str(&format!(
        "<p class=\"meta\">{} {noun}(s) at or above {threshold}. Traced: {}; {} events, {lost}; \
         resolution {}.</p>\n",
        why.spikes_total,
        esc(&why.available.join(", ")),
        why.events,
        Human(why.resolution_ns)
    ));
    for m in &why.missing {
        out.push_str(&format!("<p class=\"meta\">Not analysed: {}</p>\n", esc(m)));
    }
    if why.events_lost > 0 {
        out.push_str(&format!(
            "<div class=\"warn\"><b>events_lost</b>: the kernel dropped {} events (a trace \
             buffer was full): some {noun}s may be explained only in part.</div>\n",
            why.events_lost
        ));
    }
    if let Some(svg) = timeline(why)? {
        out.push_str(&format!("<figure class=\"timeline\">{svg}</figure>\n"));
        let shown = why.spikes.len().min(TIMELINE_SPIKES);
        let bar = match why.subject {
            Subject::Spikes => "from the timer's expiry to the probe's wake-up",
            Subject::Gaps => "from the last clock read before the gap to the first after",
        };
        out.push_str(&format!(
            "<p class=\"meta\">The {shown} worst of {} {noun}s, each bar {bar}.</p>\n",
            why.spikes_total
        ));
    }
    out.push_str(&causes(why));
    out.push_str(&details(why));
    Ok(out + &timerlat(why))
}

/// The timerlat tracer's lines, when it ran.
fn timerlat(why: &Why) -> String {
    match super::text::timerlat::lines(why) {
        t if t.is_empty() => t,
        t => format!("<pre class=\"meta\">{}</pre>\n", esc(&t)),
    }
}

/// Causes in the table; the rest share one last row.
const CAUSES_SHOWN: usize = 20;

/// The causes ranked by the share of spike time they explain.
fn causes(why: &Why) -> String {
    let header = vec![
        "#".to_string(),
        "cause".into(),
        format!("share of {}", why.subject.time()),
        "time".into(),
        format!("{}s", why.subject.noun()),
    ];
    let mut rows: Vec<Vec<String>> = why
        .causes
        .iter()
        .take(CAUSES_SHOWN)
        .enumerate()
        .map(|(i, c)| {
            vec![
                (i + 1).to_string(),
                esc(&cause_name(c)),
                esc(&percent(c.share)),
                Human(c.ns).to_string(),
                format!("{} of {}", c.spikes, why.spikes_total),
            ]
        })
        .collect();
    let rest = &why.causes[why.causes.len().min(CAUSES_SHOWN)..];
    if !rest.is_empty() {
        let share: f64 = rest.iter().map(|c| c.share).sum();
        let ns: u64 = rest.iter().map(|c| c.ns).sum();
        rows.push(vec![
            String::new(),
            format!("and {} smaller cause(s)", rest.len()),
            esc(&percent(share)),
            Human(ns).to_string(),
            String::new(),
        ]);
    }
    format!(
        "<h3>Causes</h3>\n<div class=\"causes\">{}</div>",
        table(Cells::Numbers, &header, &rows)
    )
}

/// Every decomposed spike, one row per part, folded under a summary.
fn details(why: &Why) -> String {
    let header: Vec<String> = match why.subject {
        Subject::Spikes => ["spike", "CPU", "cycle", "latency", "part", "time"],
        Subject::Gaps => ["gap", "CPU", "number", "length", "part", "time"],
    }
    .iter()
    .map(|h| h.to_string())
    .collect();
    let mut rows = Vec::new();
    for (i, s) in why.spikes.iter().enumerate() {
        for (j, (ns, what, note)) in parts(s).into_iter().enumerate() {
            let lead = if j == 0 {
                vec![
                    format!("#{}", i + 1),
                    s.cpu.to_string(),
                    match why.subject {
                        Subject::Spikes => s.cycle,
                        Subject::Gaps => s.cycle + 1,
                    }
                    .to_string(),
                    Human(s.latency_ns).to_string(),
                ]
            } else {
                vec![String::new(); 4]
            };
            let what = if note.is_empty() {
                what
            } else {
                format!("{what}: {note}")
            };
            rows.push([lead, vec![esc(&what), Human(ns).to_string()]].concat());
        }
    }
    format!(
        "<details><summary>Each {} in detail ({})</summary>\n<div class=\"spikes\">{}</div></details>\n",
        why.subject.noun(),
        why.spikes.len(),
        table(Cells::Numbers, &header, &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::html::render_runs as render;
    use crate::record::why::Cause;
    use crate::record::Run;
    use crate::units::TimeUnit;

    fn fixture() -> Run {
        serde_json::from_str(include_str!("../../tests/fixtures/why/latency-flood.json")).unwrap()
    }

    #[test]
    fn a_report_shows_the_timeline_the_causes_and_each_spike() {
        let mut run = fixture();
        run.id = Some(3);
        let html = render("why", std::slice::from_ref(&run), &[], TimeUnit::Us).unwrap();
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&html, opts).expect("well-formed");
        let figure = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("timeline"))
            .expect("timeline");
        assert!(figure.first_element_child().unwrap().has_tag_name("svg"));
        let causes = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("causes"))
            .expect("causes table");
        let rows: Vec<_> = causes
            .descendants()
            .filter(|n| n.has_tag_name("tr"))
            .collect();
        assert_eq!(rows.len(), 1 + run.why.as_ref().unwrap().causes.len());
        for needle in [
            "<td>1</td><td>NET_RX softirq on CPU 1</td><td>53%</td><td>901.056us</td><td>14 of 18</td>",
            "<summary>Each spike in detail (8)</summary>",
            "<td>thread migration/1 (pid 19, fifo 99): outranked the probe</td><td>3.1us</td>",
            "Not analysed: timerlat: the kernel has no timerlat tracer",
        ] {
            assert!(html.contains(needle), "missing {needle}");
        }
        assert!(html.find("Why: the spikes") < html.find("<h3>System</h3>"));
        assert!(!html.contains("events_lost"));
    }

    #[test]
    fn timerlat_is_shown_when_it_ran() {
        let mut why = fixture().why.unwrap();
        assert!(!section(&why).unwrap().contains("worst IRQ latency"));
        why.timerlat = Some(crate::record::why::Timerlat {
            irq_max_ns: 7_000,
            thread_max_ns: 9_000,
            samples: 3,
            per_cpu: vec![],
        });
        let line = "<pre class=\"meta\">timerlat: worst IRQ latency 7us, worst thread latency \
                    9us (3 samples)\n</pre>\n";
        assert!(section(&why).unwrap().ends_with(line));
        why.spikes_total = 0;
        assert!(section(&why).unwrap().ends_with(line));
    }

    #[test]
    fn lost_events_warn_and_no_spikes_say_so() {
        let mut why = fixture().why.unwrap();
        why.events_lost = 7;
        let html = section(&why).unwrap();
        assert!(html.contains("<b>events_lost</b>: the kernel dropped 7 events"));
        why.spikes_total = 0;
        why.spikes.clear();
        why.causes.clear();
        assert_eq!(
            section(&why).unwrap(),
            "<h3>Why: the spikes</h3>\n<p>No sample reached 50us: no spike to explain.</p>\n"
        );
    }

    #[test]
    fn causes_beyond_the_shown_share_one_row() {
        let mut why = fixture().why.unwrap();
        let first = why.causes[0].clone();
        why.causes = (0..CAUSES_SHOWN + 3)
            .map(|i| Cause {
                name: format!("q{i}"),
                ns: 1_000,
                share: 0.01,
                ..first.clone()
            })
            .collect();
        let html = section(&why).unwrap();
        assert!(
            html.contains("<td>20</td><td>q19 softirq on CPU 1</td>"),
            "{html}"
        );
        assert!(!html.contains("q20 softirq"), "{html}");
        assert!(
            html.contains(
                "<td></td><td>and 3 smaller cause(s)</td><td>3%</td><td>3us</td><td></td>"
            ),
            "{html}"
        );
    }

    #[test]
    fn runs_without_an_analysis_have_no_section() {
        let mut run = fixture();
        run.why = None;
        let html = render("plain", &[run], &[], TimeUnit::Us).unwrap();
        assert!(!html.contains("Why: the spikes"));
    }
}
