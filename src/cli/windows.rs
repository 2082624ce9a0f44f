//! The monitor's stored series: `rtlab monitor --show` and `rtlab results windows`.

use super::common;
use crate::error::{bad_flag, UsageError};
use crate::format::text::windows;
use crate::store::{Level, Store, WindowFilter};
use crate::units::{parse_since, TimeUnit};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Which rows of the series to show.
#[derive(Debug, Args)]
pub struct WindowsArgs {
    /// Rows since this age or date (30m, 12h, 2d, 2026-05-01) [default: all].
    #[arg(long, value_name = "AGE|DATE")]
    since: Option<String>,
    /// Only this CPU's rows [default: every CPU].
    #[arg(long, value_name = "N")]
    cpu: Option<i64>,
    /// Only windows, hourly or daily rows [default: all].
    #[arg(long, value_enum)]
    level: Option<Level>,
    /// Only this host's rows [default: every host].
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Also draw each row's maximum over time into this SVG file [default: none].
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    plot: Option<PathBuf>,
}

impl WindowsArgs {
    /// The first selection flag given, if any.
    pub fn given(&self) -> Option<&'static str> {
        [
            ("--since", self.since.is_some()),
            ("--cpu", self.cpu.is_some()),
            ("--level", self.level.is_some()),
            ("--host", self.host.is_some()),
            ("--plot", self.plot.is_some()),
        ]
        .into_iter()
        .find_map(|(flag, set)| set.then_some(flag))
    }
}

/// `rtlab results windows`: the series with its output options.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results windows --since 1d
  rtlab results windows --level hour --cpu 1 --plot month.svg
  rtlab results windows --json")]
pub struct ResultsWindows {
    #[command(flatten)]
    select: WindowsArgs,
    /// One JSON document: an array of rows, with their histograms.
    #[arg(long)]
    json: bool,
    /// Unit of times.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

impl ResultsWindows {
    pub fn run(&self, store: &Store) -> Result<i32> {
        show(store, &self.select, self.json, self.unit)
    }
}

/// Prints the rows `a` selects as a table or JSON, and draws them when asked.
pub fn show(store: &Store, a: &WindowsArgs, json: bool, unit: TimeUnit) -> Result<i32> {
    let since_ns = match &a.since {
        Some(t) => {
            let at = parse_since(t, chrono::Utc::now()).map_err(|e| bad_flag("--since", e))?;
            let at = chrono::DateTime::parse_from_rfc3339(&at)?;
            Some(at.timestamp_nanos_opt().unwrap_or(0))
        }
        None => None,
    };
    let rows = store.windows(&WindowFilter {
        since_ns,
        cpu: a.cpu,
        host: a.host.clone(),
        level: a.level,
    })?;
    if let Some(path) = &a.plot {
        let Some(svg) = windows::plot(&rows)? else {
            return Err(UsageError("--plot: no windows match, nothing to draw".into()).into());
        };
        common::write_output("--plot", Some(path), &svg)?;
    }
    if json {
        common::print(&format!("{}\n", windows::json(&rows)));
    } else {
        common::print(&windows::table(&rows, unit));
    }
    Ok(0)
}
