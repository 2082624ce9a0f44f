//! The spike timeline of a run's spike analysis: one stacked horizontal bar per
//! spike, worst at the top, split into what held its CPU from the timer's
//! expiry to the probe's wake-up (the timer interrupt, other IRQs, softirqs,
//! threads, idle exit, unexplained), drawn as the other plots are.

use super::svg::{axis_number, colour, legend, new_chart, plot_error, SIZE};
use crate::record::why::{Irq, Spike, Subject, Why};
use anyhow::Result;
use plotters::prelude::*;

/// Spikes the timeline draws at most (the worst ones).
pub const TIMELINE_SPIKES: usize = 20;

/// A part of a bar: its name, and how a spike's amount of it is read (ns).
pub type Part = (&'static str, fn(&Spike) -> u64);

/// The parts of a bar, in drawing order.
pub const PARTS: [Part; 7] = [
    ("timer interrupt", |s| {
        s.irqs.iter().filter(|q| is_timer(q)).map(|q| q.ns).sum()
    }),
    ("IRQs", |s| {
        s.irqs.iter().filter(|q| !is_timer(q)).map(|q| q.ns).sum()
    }),
    ("softirqs", |s| s.softirqs.iter().map(|q| q.ns).sum()),
    ("NMIs", |s| s.nmi_ns),
    ("threads", |s| s.threads.iter().map(|t| t.ns).sum()),
    ("idle exit", |s| s.idle.as_ref().map_or(0, |i| i.exit_ns)),
    ("unexplained", |s| s.unexplained_ns),
];

/// Whether `q` is the time in timer interrupts and hrtimer callbacks (its
/// lateness, `timer_irq_delay_ns`, overlaps the other parts and is not a part).
fn is_timer(q: &Irq) -> bool {
    q.name == crate::trace::TIMER_IRQ && q.irq == 0
}

/// Height of one bar's row, and of the chart around the bars (pixels).
const ROW: u32 = 26;
const FRAME: u32 = 130;

/// The timeline of `why`'s decomposed spikes; `None` when it has none.
pub fn timeline(why: &Why) -> Result<Option<String>> {
    let spikes = &why.spikes[..why.spikes.len().min(TIMELINE_SPIKES)];
    if spikes.is_empty() {
        return Ok(None);
    }
    // One row per spike (at least two: a segmented range needs two ends).
    let rows = (spikes.len() as u32).max(2);
    let x_end = spikes.iter().map(|s| s.latency_ns).max().unwrap_or(0) as f64 / 1000.0;
    let label = |i: usize| {
        spikes
            .get(i)
            .map(|s| format!("#{} CPU {}", i + 1, s.cpu))
            .unwrap_or_default()
    };
    let mut buf = String::new();
    {
        let size = (SIZE.0, FRAME + ROW * rows.max(4));
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        // Room on the right for the legend, beside the longest bar.
        let mut chart = new_chart(
            &root,
            match why.subject {
                Subject::Spikes => "Spikes, worst first: what held the CPU",
                Subject::Gaps => "Noise gaps, worst first: what held the CPU",
            },
            0f64..x_end.max(1.0) * 1.3,
            // A segmented range holds both its ends: one segment per row.
            (0..rows - 1).into_segmented(),
        )?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .x_desc(match why.subject {
                Subject::Spikes => "time from the timer's expiry (µs)",
                Subject::Gaps => "time from the gap's start (µs)",
            })
            .x_label_formatter(&|x| axis_number(*x))
            .y_labels(rows as usize)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(r) => rows
                    .checked_sub(r + 1)
                    .map(|k| label(k as usize))
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(plot_error)?;
        for (p, (name, amount)) in PARTS.iter().enumerate() {
            let c = colour(p);
            let bars = spikes.iter().enumerate().filter_map(|(i, s)| {
                let start: u64 = PARTS[..p].iter().map(|(_, f)| f(s)).sum();
                let len = amount(s);
                (len > 0).then(|| {
                    let row = rows - 1 - i as u32;
                    let x0 = start as f64 / 1000.0;
                    let x1 = (start + len) as f64 / 1000.0;
                    let mut r = Rectangle::new(
                        [
                            (x0, SegmentValue::Exact(row)),
                            (x1, SegmentValue::Exact(row + 1)),
                        ],
                        c.filled(),
                    );
                    r.set_margin(3, 3, 0, 0);
                    r
                })
            });
            chart
                .draw_series(bars)
                .map_err(plot_error)?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(plot_error)?;
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Why {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/why/latency-flood.json"))
                .unwrap();
        serde_json::from_value(doc["why"].clone()).unwrap()
    }

    /// The texts of an SVG, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn one_bar_segment_per_part_of_each_spike() {
        let why = fixture();
        let svg = timeline(&why).unwrap().unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let segments: usize = why
            .spikes
            .iter()
            .map(|s| PARTS.iter().filter(|(_, f)| f(s) > 0).count())
            .sum();
        let legend_marks = PARTS.len();
        let rects = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
        // The background, the legend's box (filled, then framed), the bars
        // and the legend's marks.
        assert_eq!(rects, 3 + segments + legend_marks, "{svg}");
        let texts = texts(&svg);
        for name in PARTS.iter().map(|p| p.0).chain(["#1 CPU 1", "#8 CPU 1"]) {
            assert!(texts.iter().any(|t| t == name), "{name}: {texts:?}");
        }
        assert!(!texts.iter().any(|t| t.starts_with("#9")), "{texts:?}");
    }

    #[test]
    fn the_parts_of_a_spike_add_up_to_its_latency() {
        for s in fixture().spikes {
            let sum: u64 = PARTS.iter().map(|(_, f)| f(&s)).sum();
            assert_eq!(sum, s.latency_ns);
        }
    }

    #[test]
    fn one_spike_is_one_bar_row() {
        let mut why = fixture();
        why.spikes.truncate(1);
        let svg = timeline(&why).unwrap().unwrap();
        let texts = texts(&svg);
        assert!(texts.iter().any(|t| t == "#1 CPU 1"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.starts_with("#2")), "{texts:?}");
    }

    #[test]
    fn no_spike_no_timeline() {
        let mut why = fixture();
        why.spikes.clear();
        assert_eq!(timeline(&why).unwrap(), None);
    }
}
