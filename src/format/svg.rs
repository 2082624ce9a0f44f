//! SVG plots (plotters, SVG backend): overlaid latency histograms as step lines on
//! a log count axis, percentile curves (latency against 1 − quantile on a log axis),
//! and latency over time. One colour per series, in [`PALETTE`] order, with a
//! legend. Each function returns `None` when there is nothing to draw.

use super::text::table::printable;
use super::{run_name, Exporter, Options};
use crate::analysis::series;
use crate::error::UsageError;
use crate::record::Run;
use anyhow::{anyhow, bail, Result};
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::coord::Shift;
use plotters::prelude::*;
use rtlab_engine::stats::hist::{HistogramData, LatencyHistogram};
use rtlab_engine::stats::trace::TracePoint;
use std::borrow::Borrow;

/// The latency histograms of all runs overlaid, one line per run.
pub struct Overlay;

impl Exporter for Overlay {
    fn serialize(&self, runs: &[Run], _: &Options) -> Result<String> {
        let what = quantity(runs);
        match histograms(&titled(what, "histograms"), what, &primary_histograms(runs))? {
            Some(svg) => Ok(svg),
            None => bail!(UsageError(
                "--svg: none of these runs holds a latency histogram to plot".into()
            )),
        }
    }
}

/// Every plot of `runs` by file name: the overlaid histograms, the percentile
/// curves, and each run's per-thread histograms, latency over time and spike
/// timeline.
pub fn plot_files(runs: &[Run]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let hists = primary_histograms(runs);
    let what = quantity(runs);
    if let Some(s) = histograms(&titled(what, "histograms"), what, &hists)? {
        out.push(("histograms.svg".to_string(), s));
    }
    if let Some(s) = percentiles(&titled(what, "by percentile"), what, &hists)? {
        out.push(("percentiles.svg".to_string(), s));
    }
    for run in runs {
        let id = run.id.unwrap_or(0);
        if let Some(s) = run_threads(run)? {
            out.push((format!("run-{id}-threads.svg"), s));
        }
        if let Some(s) = run_over_time(run)? {
            out.push((format!("run-{id}-time.svg"), s));
        }
        if let Some(s) = run.why.as_ref().map(super::svg_why::timeline).transpose()? {
            out.extend(s.map(|s| (format!("run-{id}-why.svg"), s)));
        }
    }
    Ok(out)
}

/// What the histograms of `runs` count, for axis names and titles: the gap
/// of noise runs, the wake-up latency of ipc runs, the period jitter of
/// periodic runs; the latency of any other or of a mix.
pub fn quantity(runs: &[Run]) -> &'static str {
    let of = |r: &Run| crate::step::kind(&r.kind).quantity;
    match runs.split_first() {
        Some((first, rest)) if rest.iter().all(|r| of(r) == of(first)) => of(first),
        _ => "latency",
    }
}

/// A plot's title: the quantity, capitalised, then `what` ("Gap histograms").
pub fn titled(quantity: &str, what: &str) -> String {
    let mut c = quantity.chars();
    let first = c.next().map(|f| f.to_uppercase().to_string());
    format!("{}{} {what}", first.unwrap_or_default(), c.as_str())
}

/// The histogram of each run's primary series, named after the run.
pub fn primary_histograms(runs: &[Run]) -> Vec<(String, HistogramData)> {
    runs.iter()
        .filter_map(|r| series::primary(r).map(|s| (run_name(r), s.histogram.clone())))
        .collect()
}

/// Plot size in pixels; the SVG scales (it has a viewBox).
pub(crate) const SIZE: (u32, u32) = (900, 480);
/// About this many histogram bins across the x axis.
const TARGET_BINS: u64 = 400;
/// At most this many dots per series in a latency-over-time plot: beyond it,
/// neighbouring points are merged keeping the largest, so peaks stay visible and
/// the page stays light.
const MAX_DOTS: usize = 600;
/// Where a zero count sits on the log axis (below 1, so a step down to it shows).
const ZERO_COUNT: f64 = 0.5;

/// Series colours (Tableau 10): distinct, readable on white, colour-blind aware.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0xe1, 0x57, 0x59),
    (0x76, 0xb7, 0xb2),
    (0x59, 0xa1, 0x4f),
    (0xed, 0xc9, 0x48),
    (0xb0, 0x7a, 0xa1),
    (0xff, 0x9d, 0xa7),
    (0x9c, 0x75, 0x5f),
    (0xba, 0xb0, 0xac),
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

pub(crate) fn plot_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("cannot draw the plot: {e}")
}

/// The smallest 1, 2 or 5 × 10^k that is at least `x` (and at least 1).
pub fn nice_step(x: u64) -> u64 {
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if p * m >= x {
                return p * m;
            }
        }
        p *= 10;
    }
}

/// Counts per bin of `bin_us` µs, from 0 up to the largest value of any series.
fn bins(h: &HistogramData, bin_us: u64, nbins: usize) -> Vec<u64> {
    let mut out = vec![0u64; nbins];
    for &(ns, count) in &h.buckets {
        let i = ((ns / 1000) / bin_us) as usize;
        out[i.min(nbins - 1)] += count;
    }
    out
}

/// The outline of a step histogram: only the corners, zero counts at
/// [`ZERO_COUNT`], starting and ending on the floor.
fn step_points(counts: &[u64], bin_us: u64) -> Vec<(f64, f64)> {
    let y = |c: u64| if c == 0 { ZERO_COUNT } else { c as f64 };
    let mut pts = vec![(0.0, ZERO_COUNT)];
    let mut prev = 0;
    for (i, &c) in counts.iter().enumerate() {
        if c != prev {
            let x = (i as u64 * bin_us) as f64;
            pts.push((x, y(prev)));
            pts.push((x, y(c)));
            prev = c;
        }
    }
    let end = (counts.len() as u64 * bin_us) as f64;
    pts.push((end, y(prev)));
    pts.push((end, ZERO_COUNT));
    pts
}

/// Histograms overlaid: x the `axis` quantity in µs, y count (log), one step
/// line per series.
pub fn histograms<H: Borrow<HistogramData>>(
    title: &str,
    axis: &str,
    series: &[(String, H)],
) -> Result<Option<String>> {
    let max_ns = series
        .iter()
        .filter_map(|(_, h)| h.borrow().buckets.last().map(|b| b.0))
        .max();
    let Some(max_ns) = max_ns else {
        return Ok(None);
    };
    let span_us = max_ns / 1000 + 1;
    let bin_us = nice_step(span_us.div_ceil(TARGET_BINS));
    let nbins = (span_us / bin_us + 1) as usize;
    let counted: Vec<(&String, Vec<u64>)> = series
        .iter()
        .filter(|(_, h)| !h.borrow().buckets.is_empty())
        .map(|(n, h)| (n, bins(h.borrow(), bin_us, nbins)))
        .collect();
    let top = counted
        .iter()
        .flat_map(|(_, c)| c.iter().copied())
        .max()
        .unwrap_or(1) as f64;
    let x_end = (nbins as u64 * bin_us) as f64;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let mut chart = new_chart(
            &root,
            title,
            0f64..x_end,
            (ZERO_COUNT..top * 2.0).log_scale(),
        )?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .x_desc(format!("{axis} (µs), {bin_us} µs bins"))
            .x_label_formatter(&|x| axis_number(*x))
            .y_desc("count (log)")
            .y_label_formatter(&|c| format!("{c:.0}"))
            .draw()
            .map_err(plot_error)?;
        for (i, (name, counts)) in counted.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(
                    step_points(counts, bin_us),
                    c.stroke_width(2),
                ))
                .map_err(plot_error)?
                .label(printable(name))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(plot_error)?;
    }
    Ok(Some(buf))
}

/// A chart drawn into an SVG string.
pub(crate) type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A white chart with a title and room for axis labels.
pub(crate) fn new_chart<'a, 'b: 'a, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    x: X,
    y: Y,
) -> Result<Chart<'a, 'b, X::CoordDescType, Y::CoordDescType>> {
    root.fill(&WHITE).map_err(plot_error)?;
    ChartBuilder::on(root)
        .caption(printable(title), ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(75)
        .build_cartesian_2d(x, y)
        .map_err(plot_error)
}

pub(crate) fn legend<'a, 'b: 'a, X: Ranged, Y: Ranged>(
    chart: &mut Chart<'a, 'b, X, Y>,
    position: SeriesLabelPosition,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(plot_error)
}

/// An axis label: whole numbers without decimals, others with one or two.
pub fn axis_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The ticks of a log axis from `lo` to `hi` (both above 0): labelled ones at
/// 1, 2 and 5 × 10^k when it spans fewer than three decades (so that a short
/// axis has labels at all), else at the powers of ten; and grid lines at every
/// whole multiple of 10^k.
pub fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let fine = hi / lo < 1000.0;
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in 1..10 {
            let v = decade * m as f64;
            if v < lo || v > hi {
                continue;
            }
            if m == 1 || (fine && (m == 2 || m == 5)) {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
        decade *= 10.0;
    }
    (bold, light)
}

/// `1/(1-q)` as the percentile it stands for: 10 → `90%`, 1000 → `99.9%`.
pub fn percentile_label(x: f64) -> String {
    if x < 1.0 + 1e-9 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().round() as i64 - 2).max(0) as usize;
    format!("{p:.decimals$}%")
}

/// Percentile curves: x is 1/(1 − quantile) on a log axis (labelled as the
/// percentile), y the `axis` quantity in µs at that quantile (log), up to the
/// maximum.
pub fn percentiles<H: Borrow<HistogramData>>(
    title: &str,
    axis: &str,
    series: &[(String, H)],
) -> Result<Option<String>> {
    let mut curves = Vec::new();
    for (name, data) in series {
        let h = LatencyHistogram::from_data(data.borrow());
        let n = h.len();
        if n == 0 {
            continue;
        }
        // Ten points per decade of 1/(1-q), then the maximum at x = n.
        let decades = (n as f64).log10();
        let mut pts: Vec<(f64, f64)> = (0..)
            .map(|k| 10f64.powf(k as f64 / 10.0))
            .take_while(|&x| x < n as f64 && x.log10() <= decades)
            .map(|x| (x, h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1000.0))
            .collect();
        pts.push((
            (n as f64).max(1.0),
            h.value_at_quantile(1.0) as f64 / 1000.0,
        ));
        curves.push((name, pts));
    }
    if curves.is_empty() {
        return Ok(None);
    }
    let x_end = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.0))
        .fold(10.0, f64::max);
    // Log latency axis too: the tail spans decades above the median.
    let ys = || curves.iter().flat_map(|(_, p)| p.iter().map(|p| p.1));
    let y_end = ys().fold(1.0, f64::max) * 1.2;
    let y_start = ys().fold(y_end, f64::min).max(0.01) * 0.8;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let x = (1f64..x_end).log_scale();
        let (bold, light) = log_ticks(y_start, y_end);
        let y = (y_start..y_end)
            .log_scale()
            .with_key_points(bold)
            .with_light_points(light);
        let mut chart = new_chart(&root, title, x, y)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .x_desc("percentile (log of 1/(1-q))")
            .y_desc(format!("{axis} (µs, log)"))
            .y_label_formatter(&|y| axis_number(*y))
            .x_label_formatter(&|x| percentile_label(*x))
            .draw()
            .map_err(plot_error)?;
        for (i, (name, pts)) in curves.into_iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(plot_error)?
                .label(printable(name))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(plot_error)?;
    }
    Ok(Some(buf))
}

/// The histograms of a run's threads overlaid (`None` with fewer than two).
pub fn run_threads(run: &Run) -> Result<Option<String>> {
    if run.series.len() < 2 {
        return Ok(None);
    }
    let threads: Vec<(String, &HistogramData)> = run
        .series
        .iter()
        .map(|s| (s.name.clone(), &s.histogram))
        .collect();
    histograms(
        &format!("{}: per-thread histograms", run_name(run)),
        quantity(std::slice::from_ref(run)),
        &threads,
    )
}

/// A run's values over time, one colour per thread (`None` without a trace).
pub fn run_over_time(run: &Run) -> Result<Option<String>> {
    let traces: Vec<(String, &[TracePoint])> = run
        .series
        .iter()
        .map(|s| (s.name.clone(), s.trace.as_slice()))
        .collect();
    let what = quantity(std::slice::from_ref(run));
    over_time(
        &format!("{}: {what} over time", run_name(run)),
        what,
        &traces,
    )
}

/// At most `max` points: groups of neighbours reduced to their largest value.
pub fn decimate(trace: &[TracePoint], max: usize) -> Vec<TracePoint> {
    let group = trace.len().div_ceil(max.max(1)).max(1);
    trace
        .chunks(group)
        .filter_map(|c| c.iter().max_by_key(|p| p.max_ns).copied())
        .collect()
}

/// Latency over time: one dot per trace point (the maximum of a block of
/// samples), x in seconds from the start, y in µs.
pub fn over_time(
    title: &str,
    axis: &str,
    series: &[(String, &[TracePoint])],
) -> Result<Option<String>> {
    let all = || series.iter().flat_map(|(_, t)| t.iter());
    if all().next().is_none() {
        return Ok(None);
    }
    let x_end = all().map(|p| p.offset_ns).max().unwrap_or(0) as f64 / 1e9;
    let y_end = all().map(|p| p.max_ns).max().unwrap_or(0) as f64 / 1000.0;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let mut chart = new_chart(
            &root,
            title,
            0f64..x_end.max(1e-3) * 1.02,
            0f64..y_end.max(1.0) * 1.05,
        )?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .x_desc("time (s)")
            .y_desc(format!("{axis} (µs), block maxima"))
            .y_label_formatter(&|y| axis_number(*y))
            .draw()
            .map_err(plot_error)?;
        for (i, (name, trace)) in series.iter().enumerate() {
            if trace.is_empty() {
                continue;
            }
            let c = colour(i);
            let dots = decimate(trace, MAX_DOTS).into_iter().map(|p| {
                Circle::new(
                    (p.offset_ns as f64 / 1e9, p.max_ns as f64 / 1000.0),
                    2,
                    c.filled(),
                )
            });
            chart
                .draw_series(dots)
                .map_err(plot_error)?
                .label(printable(name))
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(plot_error)?;
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{run_from_samples, series_from_samples};

    #[test]
    fn plot_files_cover_every_chart() {
        let mut a = run_from_samples("a", &[1_000, 2_000]);
        a.id = Some(3);
        let mut b = a.clone();
        b.id = Some(4);
        b.series.push(series_from_samples("cpu1", &[3_000]));
        let files: Vec<String> = plot_files(&[a, b])
            .unwrap()
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(
            files,
            vec![
                "histograms.svg",
                "percentiles.svg",
                "run-3-time.svg",
                "run-4-threads.svg",
                "run-4-time.svg"
            ],
            "per-thread plots only for runs with several threads"
        );
    }

    #[test]
    fn nothing_to_overlay_is_an_error_naming_the_flag() {
        let mut bench = run_from_samples("b", &[]);
        bench.series.clear();
        bench.total = None;
        let e = Overlay
            .serialize(&[bench], &Options::default())
            .unwrap_err();
        assert!(
            e.to_string().starts_with("--svg: none of these runs"),
            "{e}"
        );
    }

    /// Parses the SVG as XML and counts the polylines drawn in each colour.
    fn polylines_by_colour(svg: &str, n: usize) -> Vec<usize> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        (0..n)
            .map(|i| {
                let (r, g, b) = PALETTE[i];
                let want = format!("#{r:02X}{g:02X}{b:02X}");
                doc.descendants()
                    .filter(|e| e.has_tag_name("polyline"))
                    .filter(|e| e.attribute("stroke") == Some(want.as_str()))
                    .count()
            })
            .collect()
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0), 1);
        assert_eq!(nice_step(1), 1);
        assert_eq!(nice_step(3), 5);
        assert_eq!(nice_step(7), 10);
        assert_eq!(nice_step(11), 20);
        assert_eq!(nice_step(499), 500);
    }

    #[test]
    fn steps_outline_the_bins() {
        assert_eq!(
            step_points(&[0, 3, 3, 0], 2),
            vec![
                (0.0, 0.5),
                (2.0, 0.5),
                (2.0, 3.0),
                (6.0, 3.0),
                (6.0, 0.5),
                (8.0, 0.5),
                (8.0, 0.5)
            ]
        );
    }

    #[test]
    fn bins_put_values_in_their_microsecond() {
        let s = series_from_samples("x", &[500, 1_500, 1_900, 4_000]);
        assert_eq!(bins(&s.histogram, 1, 5), vec![1, 2, 0, 0, 1]);
        assert_eq!(bins(&s.histogram, 2, 3), vec![3, 0, 1]);
    }

    #[test]
    fn overlay_has_one_step_line_per_series_and_a_legend() {
        let a = series_from_samples("a", &[10_000, 12_000, 12_500, 90_000]);
        let b = series_from_samples("b", &[20_000, 21_000, 300_000]);
        let names = ["vanilla <3.8>".to_string(), "rt & co".to_string()];
        let svg = histograms(
            "wake-up latency",
            "wake-up latency",
            &[
                (names[0].clone(), &a.histogram),
                (names[1].clone(), &b.histogram),
            ],
        )
        .unwrap()
        .unwrap();
        // Data line and legend sample per series.
        assert_eq!(polylines_by_colour(&svg, 3), vec![2, 2, 0]);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(
            texts.contains(&"vanilla <3.8>") && texts.contains(&"rt & co"),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"wake-up latency (µs), 1 µs bins"),
            "{texts:?}"
        );
        assert!(histograms::<HistogramData>("empty", "gap", &[])
            .unwrap()
            .is_none());
    }

    #[test]
    fn axes_name_what_the_runs_measured() {
        let of = |kinds: &[&str]| {
            let runs: Vec<Run> = kinds
                .iter()
                .map(|k| {
                    let mut r = run_from_samples("a", &[1000]);
                    r.kind = k.to_string();
                    r
                })
                .collect();
            quantity(&runs)
        };
        assert_eq!(of(&["noise", "noise"]), "gap");
        assert_eq!(of(&["ipc"]), "wake-up latency");
        assert_eq!(of(&["periodic"]), "period jitter");
        assert_eq!(of(&["latency"]), "latency");
        assert_eq!(of(&["noise", "ipc"]), "latency");
        assert_eq!(of(&[]), "latency");
        assert_eq!(titled("gap", "histograms"), "Gap histograms");
        let a = series_from_samples("a", &[10_000, 12_000]);
        let svg = percentiles("p", "period jitter", &[("a".into(), &a.histogram)])
            .unwrap()
            .unwrap();
        assert!(svg.contains("period jitter (µs, log)"), "{svg}");
    }

    #[test]
    fn percentile_chart_and_labels() {
        let a = series_from_samples("a", &(1..=1000).map(|v| v * 1000).collect::<Vec<_>>());
        let svg = percentiles("p", "gap", &[("a".into(), &a.histogram)])
            .unwrap()
            .unwrap();
        assert_eq!(polylines_by_colour(&svg, 2), vec![2, 0]);
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(axis_number(1000.0), "1000");
        assert_eq!(axis_number(12.5), "12.5");
        assert_eq!(axis_number(0.25), "0.25");
    }

    #[test]
    fn short_log_axes_are_labelled_at_one_two_and_five() {
        let (bold, light) = log_ticks(11.0, 104.0);
        assert_eq!(bold, [20.0, 50.0, 100.0]);
        assert_eq!(light, [30.0, 40.0, 60.0, 70.0, 80.0, 90.0]);
        let (bold, _) = log_ticks(1.5, 20_000.0);
        assert_eq!(bold, [10.0, 100.0, 1000.0, 10_000.0]);
    }

    #[test]
    fn decimation_keeps_the_peaks() {
        let s = series_from_samples("a", &[1, 9, 2, 3, 8, 4, 5]);
        let d: Vec<u64> = decimate(&s.trace, 3).iter().map(|p| p.max_ns).collect();
        assert_eq!(d, vec![9, 8, 5]);
        assert_eq!(decimate(&s.trace, 100).len(), 7);
        assert_eq!(decimate(&s.trace, 7), s.trace);
    }

    #[test]
    fn scatter_has_a_dot_per_trace_point() {
        let a = series_from_samples("a", &[5_000, 7_000, 6_000]);
        let svg = over_time("t", "latency", &[("cpu0".into(), &a.trace)])
            .unwrap()
            .unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let circles = doc
            .descendants()
            .filter(|e| e.has_tag_name("circle"))
            .count();
        assert_eq!(circles, 3 + 1, "three dots and the legend mark");
        assert!(over_time("t", "latency", &[("cpu0".into(), &[])])
            .unwrap()
            .is_none());
    }
}
