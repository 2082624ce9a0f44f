//! Turning runs into output: text tables for terminals, rtlab JSON (the `--json`
//! document, which `rtlab results import` reads back), CSV, markdown, cyclictest's
//! `-h` histogram layout, SVG plots and HTML reports. One file per format; each
//! whole-file format is an [`Exporter`]. Measuring code never prints; it hands
//! results here. Figures come from `analysis`; nothing here computes them.

pub mod csv;
pub mod histfile;
pub mod html;
mod html_why;
pub mod json;
pub mod markdown;
pub mod metrics;
pub mod svg;
pub mod svg_why;
pub mod sweep_svg;
pub mod text;
pub mod web;

use crate::analysis::verdict::Requirement;
use crate::error::UsageError;
use crate::record::Run;
use crate::units::TimeUnit;
use anyhow::{bail, Result};

/// How tables show a value a run does not have (not reported by the file it
/// was imported from, or not measured by its kind of run): an en dash, apart
/// from a minus sign. CSV leaves such a field empty.
pub const UNKNOWN: &str = "–";

/// What an exporter may use besides the runs.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Unit of times in tables.
    pub unit: TimeUnit,
    /// Title of a report.
    pub title: &'a str,
    /// Requirements the runs are judged against (none: no verdicts).
    pub reqs: &'a [Requirement],
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            unit: TimeUnit::Us,
            title: "",
            reqs: &[],
        }
    }
}

/// One output format: runs in, the whole file's text out.
pub trait Exporter {
    /// `runs` in this format.
    fn serialize(&self, runs: &[Run], opts: &Options) -> Result<String>;
}

/// The formats of `rtlab results export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The rtlab/1 JSON document.
    Json,
    /// One row per series with counters, summary and metrics.
    Csv,
    /// cyclictest's -h layout: 1-µs buckets, one column per thread.
    Hist,
}

impl Format {
    /// The exporter of this format.
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Json => &json::Json,
            Format::Csv => &csv::Csv,
            Format::Hist => &histfile::Hist,
        }
    }

    /// The name `--format` takes.
    fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// The runs in `format`: JSON and hist take one run, CSV any number (one table).
pub fn export(runs: &[Run], format: Format) -> Result<String> {
    format.exporter().serialize(runs, &Options::default())
}

/// The run of an exporter that takes one at a time.
fn one(runs: &[Run], format: Format) -> Result<&Run> {
    match runs {
        [run] => Ok(run),
        _ => bail!(UsageError(format!(
            "--format {}: export one run at a time (several runs go into one table with --format csv)",
            format.name()
        ))),
    }
}

/// How a run is named in tables and plots: `label #id`.
pub fn name_with_id(label: &str, id: Option<i64>) -> String {
    match id {
        Some(id) => format!("{label} #{id}"),
        None => label.to_string(),
    }
}

/// The short name of a run where its full name is too long (column headings
/// under a legend): `#ID`, or `run N` (`index` counted from 1) without an id.
pub fn run_key(id: Option<i64>, index: usize) -> String {
    match id {
        Some(id) => format!("#{id}"),
        None => format!("run {}", index + 1),
    }
}

/// The name of a run in tables and plots.
pub fn run_name(run: &Run) -> String {
    name_with_id(&run.label, run.id)
}

#[cfg(test)]
#[path = "agree_tests.rs"]
mod agree_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    #[test]
    fn json_and_hist_take_one_run_csv_several() {
        let runs = [
            run_from_samples("a", &[1_000]),
            run_from_samples("b", &[2_000]),
        ];
        let e = export(&runs, Format::Json).unwrap_err().to_string();
        assert!(
            e.starts_with("--format json: export one run at a time"),
            "{e}"
        );
        let e = export(&runs, Format::Hist).unwrap_err().to_string();
        assert!(e.starts_with("--format hist: export one run"), "{e}");
        assert_eq!(export(&runs, Format::Csv).unwrap().lines().count(), 5);
    }
}
