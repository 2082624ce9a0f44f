//! The plot of a periodic sweep: achieved against requested frequency, both on
//! log axes, one line per method and load, the points that held filled, and
//! the diagonal where achieved equals requested.

use super::svg::{axis_number, colour, legend, log_ticks, new_chart, plot_error, SIZE};
use crate::record::Run;
use anyhow::Result;
use plotters::prelude::*;

/// The sweep's plot (`None` when the run holds no sweep or no point).
pub fn plot(run: &Run) -> Result<Option<String>> {
    let Some(s) = &run.sweep else {
        return Ok(None);
    };
    let all = || s.curves.iter().flat_map(|c| c.points.iter());
    if all().next().is_none() {
        return Ok(None);
    }
    let lo = all()
        .map(|p| p.requested_hz.min(p.achieved_hz.max(1.0)))
        .fold(s.lo_hz, f64::min)
        * 0.8;
    let hi = all()
        .map(|p| p.requested_hz.max(p.achieved_hz))
        .fold(s.lo_hz, f64::max)
        * 1.25;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        let (bold, light) = log_ticks(lo, hi);
        let axis = || {
            (lo..hi)
                .log_scale()
                .with_key_points(bold.clone())
                .with_light_points(light.clone())
        };
        let title = format!(
            "Achieved vs requested frequency (held: within {:.0}%)",
            s.tolerance * 100.0
        );
        let mut chart = new_chart(&root, &title, axis(), axis())?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .x_desc("requested (Hz, log)")
            .y_desc("achieved (Hz, log)")
            .x_label_formatter(&|v| axis_number(*v))
            .y_label_formatter(&|v| axis_number(*v))
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(LineSeries::new(
                vec![(lo, lo), (hi, hi)],
                BLACK.mix(0.3).stroke_width(1),
            ))
            .map_err(plot_error)?;
        for (i, c) in s.curves.iter().enumerate() {
            let col = colour(i);
            let mut pts: Vec<(f64, f64)> = c
                .points
                .iter()
                .map(|p| (p.requested_hz, p.achieved_hz.max(lo)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts, col.stroke_width(2)))
                .map_err(plot_error)?
                .label(format!("{} / {}", c.method, c.load))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2))
                });
            chart
                .draw_series(c.points.iter().map(|p| {
                    let style = if p.held {
                        col.filled()
                    } else {
                        col.stroke_width(1)
                    };
                    Circle::new((p.requested_hz, p.achieved_hz.max(lo)), 4, style)
                }))
                .map_err(plot_error)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(plot_error)?;
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::sweep::{Curve, Point, Sweep};

    #[test]
    fn a_sweep_plots_one_line_per_curve_and_a_run_without_one_nothing() {
        let mut run = crate::analysis::fixture::run_from_samples("x", &[1_000, 2_000]);
        assert!(plot(&run).unwrap().is_none());
        let pt = |f: f64, a: f64, held| Point {
            requested_hz: f,
            achieved_hz: a,
            worst_deviation: 0.0,
            missed: 0,
            held,
        };
        run.sweep = Some(Sweep {
            lo_hz: 1e3,
            hi_hz: 1e7,
            tolerance: 0.1,
            curves: vec![Curve {
                method: "busy".into(),
                load: "idle".into(),
                best_hz: Some(1e4),
                truncated: false,
                out_of_time: false,
                repeats: 1,
                points: vec![pt(1e3, 1e3, true), pt(1e4, 1e4, true), pt(1e5, 3e4, false)],
            }],
        });
        let svg = plot(&run).unwrap().unwrap();
        assert!(svg.contains("busy / idle"), "legend names the curve");
        assert_eq!(svg.matches("<circle").count(), 3, "one mark per point");
    }
}
