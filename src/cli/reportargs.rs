//! The flags `compare` and `report` share (`--require`, `--noise`, `--html`,
//! `--title`, `--plots`), and how they end: the files written whole, the text printed, the
//! exit code of the verdicts.

use super::common;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::outcome::Outcome;
use crate::analysis::verdict::{self, parse_requirement, Requirement, Verdict};
use crate::error::bad_flag;
use crate::format::html;
use crate::format::svg::plot_files;
use crate::format::Options;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// A file to write: its path, the flag that asked for it, its content.
pub type OutFile = (PathBuf, &'static str, String);

/// `--require`, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct RequireArgs {
    /// A deadline budget NAME=BUDGET (e.g. gyro=1ms; a bare number is µs) or a
    /// preset (drone, messaging); repeatable. A run passes when its observed
    /// maximum latency is within the budget by more than 5% of it (by less:
    /// undecided). Exit 1 if any run fails one, else 4 if one is undecided
    /// [default: none; for a campaign, the requirements it ran with].
    #[arg(long = "require", value_name = "NAME=BUDGET|PRESET")]
    require: Vec<String>,
}

impl RequireArgs {
    /// The requirements, presets expanded.
    pub fn parse(&self) -> Result<Vec<Requirement>> {
        requirements(&self.require)
    }
}

/// `--noise`, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// The noise threshold: a figure is better or worse than the baseline's
    /// only when their 95% intervals lie apart by more than this share of the
    /// baseline's value (a bare number is percent); within it, "≈ no real
    /// difference". A deadline held by less than this share of its budget is
    /// UNDECIDED (docs/decisions.md).
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = noise_value)]
    pub noise: f64,
}

/// A `--noise` value (`5%`, `5`, `0.5%`) as a fraction (0.05).
pub fn noise_value(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!(
            "'{text}' is no noise threshold: give a percentage from 0 to below 100 (e.g. 5%, \
             the default {:.0}%)",
            DEFAULT_NOISE * 100.0
        )),
    }
}

/// `--require` values as requirements, or, when none is given, `defaults`
/// (name → budget in ns, a scenario's requirements).
pub fn requirements_or(
    texts: &[String],
    defaults: &std::collections::BTreeMap<String, u64>,
) -> Result<Vec<Requirement>> {
    if !texts.is_empty() {
        return requirements(texts);
    }
    Ok(defaults
        .iter()
        .map(|(name, &budget_ns)| Requirement {
            name: name.clone(),
            budget_ns,
        })
        .collect())
}

/// `--require` values as requirements, presets expanded.
pub fn requirements(texts: &[String]) -> Result<Vec<Requirement>> {
    let mut out = Vec::new();
    for r in texts {
        out.extend(parse_requirement(r).map_err(|e| bad_flag("--require", e))?);
    }
    Ok(out)
}

/// HTML report and plot directory, shared by `compare` and `report`.
#[derive(Debug, Args)]
pub struct ReportFiles {
    /// Write a self-contained HTML report (inline SVG plots) to this file
    /// [default: none].
    #[arg(long, value_name = "FILE", value_parser = common::output_file)]
    html: Option<PathBuf>,
    /// Title of the HTML report [default: named after the runs].
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Write every plot as an SVG file into this directory (histograms.svg,
    /// percentiles.svg, run-ID-threads.svg, run-ID-time.svg) [default: none].
    #[arg(long, value_name = "DIR", value_parser = common::output_dir)]
    plots: Option<PathBuf>,
}

impl ReportFiles {
    /// The files to write: path, flag, content. Built completely before anything
    /// is written, so an error leaves nothing half-written. The HTML report
    /// renders `o` with each of its arms in depth (`Outcome::merged_runs`);
    /// `opts.title` is its title unless `--title` gives one. Plots are drawn
    /// per comparison.
    pub fn render(&self, o: &Outcome, opts: &Options) -> Result<Vec<OutFile>> {
        self.render_with(o, opts.title, |title| {
            html::render(title, o, &o.merged_runs(), opts.unit)
        })
    }

    /// The files of [`ReportFiles::render`], the HTML report made by `page`
    /// from its title: `title` unless `--title` gives one.
    pub fn render_with(
        &self,
        o: &Outcome,
        title: &str,
        page: impl FnOnce(&str) -> Result<String>,
    ) -> Result<Vec<OutFile>> {
        let mut out = Vec::new();
        if let Some(path) = &self.html {
            let title = self.title.as_deref().unwrap_or(title);
            out.push((path.clone(), "--html", page(title)?));
        }
        if let Some(dir) = &self.plots {
            for (name, svg) in part_plots(o)? {
                out.push((dir.join(name), "--plots", svg));
            }
        }
        Ok(out)
    }
}

/// The plot files of each comparison of `o` (runs of different kinds are
/// never drawn on one plot), one line per arm: with several comparisons,
/// the plots of comparison N are named `N-histograms.svg`, ...; a run's own
/// plots keep their names.
fn part_plots(o: &Outcome) -> Result<Vec<(String, String)>> {
    let numbered = o.parts.len() > 1;
    let mut out = Vec::new();
    for (i, p) in o.parts.iter().enumerate() {
        for (name, svg) in plot_files(&p.merged_runs())? {
            let shared = !name.starts_with("run-");
            let name = match numbered && shared {
                true => format!("{}-{name}", i + 1),
                false => name,
            };
            out.push((name, svg));
        }
    }
    Ok(out)
}

/// Writes each file through [`crate::files::NewFile`] (a new file with a random
/// name beside it, renamed into place), so that a reader never sees half a
/// file and a link planted at its name is replaced, never written through.
fn write_files(files: &[OutFile]) -> Result<()> {
    for (path, flag, content) in files {
        // Only --plots' own directory is ever made, below one that exists:
        // the flags' parsers checked that.
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
        {
            std::fs::create_dir(dir)
                .map_err(|e| bad_flag(flag, format!("cannot create {}: {e}", dir.display())))?;
        }
        crate::files::NewFile::at(path)
            .write(content.as_bytes())
            .map_err(|e| bad_flag(flag, format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Writes the files, prints `text` on stdout (a closed pipe is not an error) and
/// returns the exit code of the verdicts (see [`verdict::exit_code`]).
pub fn finish(files: &[OutFile], text: &str, verdicts: &[Verdict]) -> Result<i32> {
    write_files(files)?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    for (path, _, _) in files {
        eprintln!("wrote {}", path.display());
    }
    Ok(verdict::exit_code(verdicts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("sub/a.svg");
        write_files(&[(good.clone(), "--svg", "<svg/>".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "<svg/>");
        let bad = dir.path().join("a.svg/inside-a-file.svg");
        std::fs::write(dir.path().join("a.svg"), "x").unwrap();
        let e = write_files(&[(bad, "--html", "x".into())]).unwrap_err();
        assert!(e.to_string().starts_with("--html: cannot"), "{e}");
    }
}
