//! Turning runs into output: text tables for terminals, rtlab JSON (the `--json`
//! document, which `rtlab results import` reads back), CSV, cyclictest's `-h`
//! histogram layout, SVG plots and HTML reports. One file per format. Measuring
//! code never prints; it hands results here.

pub mod csv;
pub mod histfile;
pub mod html;
pub mod markdown;
pub mod svg;
pub mod text;

use crate::error::UsageError;
use crate::record::Run;
use anyhow::{bail, Result};
use histfile::HistColumn;

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The rtlab/1 JSON document.
    Json,
    /// One row per series with counters, summary and metrics.
    Csv,
    /// cyclictest's -h layout: 1-µs buckets, one column per thread.
    Hist,
}

/// The runs in `format`: JSON and hist take one run, CSV any number (one table).
pub fn export(runs: &[Run], format: Format) -> Result<String> {
    match (format, runs) {
        (Format::Csv, _) => Ok(csv::render(runs)),
        (Format::Json, [run]) => {
            let mut s = serde_json::to_string_pretty(run)?;
            s.push('\n');
            Ok(s)
        }
        (Format::Hist, [run]) => hist(run),
        _ => bail!(UsageError(format!(
            "--format {}: export one run at a time (several runs go into one table with --format csv)",
            clap::ValueEnum::to_possible_value(&format)
                .map(|v| v.get_name().to_string())
                .unwrap_or_default()
        ))),
    }
}

/// The per-thread 1-µs histograms in cyclictest's layout.
fn hist(run: &Run) -> Result<String> {
    let cols: Vec<HistColumn> = run
        .series
        .iter()
        .filter_map(|s| {
            let us = s.us_histogram.as_ref()?;
            Some(HistColumn::from_series(
                us,
                s.summary.min_ns,
                s.summary.mean_ns,
                s.summary.max_ns,
            ))
        })
        .collect();
    if cols.is_empty() || cols.len() != run.series.len() {
        bail!(UsageError(format!(
            "--format hist: run {} ({}) has no 1-µs histogram per thread; export it with --format json or csv",
            run.id.map(|i| i.to_string()).unwrap_or_default(),
            run.kind
        )));
    }
    Ok(histfile::render(&cols))
}

/// How a run is named in tables and plots: `label #id`.
pub fn name_with_id(label: &str, id: Option<i64>) -> String {
    match id {
        Some(id) => format!("{label} #{id}"),
        None => label.to_string(),
    }
}

/// The name of a run in tables and plots.
pub fn run_name(run: &Run) -> String {
    name_with_id(&run.label, run.id)
}
