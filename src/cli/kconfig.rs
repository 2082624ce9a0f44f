//! `rtlab kconfig`: compare kernel configurations and check one for latency.

use super::common::print;
use crate::error::{bad_flag, EXIT_FAILED, EXIT_OK};
use crate::format::json;
use crate::tune::kconfig::{check, diff, Config};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// Arguments of `rtlab kconfig`.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab kconfig check
  rtlab kconfig diff config-6.6-stock config-6.6-rt --summary")]
pub struct KconfigArgs {
    #[command(subcommand)]
    command: KconfigCommand,
}

#[derive(Debug, Subcommand)]
enum KconfigCommand {
    /// What was removed, added or changed between two configurations, grouped by
    /// subsystem, headline settings (preemption, HZ, governor, tick, debug) first.
    Diff(DiffArgs),
    /// What in a configuration helps or hurts latency (default: the running kernel's).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab kconfig diff config-6.6-stock config-6.6-rt
  rtlab kconfig diff old.config new.config --summary --json
  rtlab kconfig diff old.config new.config --image old/bzImage new/bzImage")]
struct DiffArgs {
    /// The old configuration (.config or config.gz).
    old: PathBuf,
    /// The new configuration (.config or config.gz).
    new: PathBuf,
    /// Kernel images built from OLD and NEW, to show the size change [default:
    /// none].
    #[arg(long, num_args = 2, value_names = ["OLD_IMAGE", "NEW_IMAGE"])]
    image: Option<Vec<PathBuf>>,
    /// Only the headline and the per-subsystem counts, not every symbol.
    #[arg(long)]
    summary: bool,
    /// Print one JSON document instead of the report.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab kconfig check
  rtlab kconfig check /boot/config-6.6.0-rt --strict")]
struct CheckArgs {
    /// The configuration (.config or config.gz) [default: /proc/config.gz, then
    /// /boot/config-$(uname -r)].
    config: Option<PathBuf>,
    /// Exit 1 when anything hurts latency.
    #[arg(long)]
    strict: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `rtlab kconfig`.
pub fn run(args: KconfigArgs) -> Result<i32> {
    match args.command {
        KconfigCommand::Diff(a) => run_diff(a),
        KconfigCommand::Check(a) => run_check(a),
    }
}

fn image_size(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path)
        .map_err(|e| bad_flag("--image", format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(bad_flag(
            "--image",
            format!("{} is not a file", path.display()),
        ));
    }
    Ok(meta.len())
}

fn run_diff(a: DiffArgs) -> Result<i32> {
    let old = Config::read(&a.old)?;
    let new = Config::read(&a.new)?;
    let image = match &a.image {
        Some(paths) => Some(diff::ImageSizes {
            old_bytes: image_size(&paths[0])?,
            new_bytes: image_size(&paths[1])?,
        }),
        None => None,
    };
    let mut d = diff::diff(
        &a.old.display().to_string(),
        &old,
        &a.new.display().to_string(),
        &new,
    );
    d.image = image;
    for (path, c) in [(&a.old, &old), (&a.new, &new)] {
        if !c.duplicates.is_empty() {
            eprintln!(
                "warning: {} sets {} more than once; the last value counts",
                path.display(),
                c.duplicates.join(", ")
            );
        }
    }
    print(&if a.json {
        json::tagged("kconfig.diff", &d)?
    } else {
        diff::render(&d, a.summary)
    });
    Ok(EXIT_OK)
}

fn run_check(a: CheckArgs) -> Result<i32> {
    let (source, config) = match &a.config {
        Some(p) => (p.display().to_string(), Config::read(p)?),
        None => Config::running()?,
    };
    let findings = check::check(&config);
    let hurts = check::hurting(&findings);
    if a.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            config: &'a str,
            version: &'a Option<String>,
            preempt_model: &'a str,
            hurts: usize,
            helps: usize,
            findings: &'a [check::Finding],
        }
        print(&json::tagged(
            "kconfig.check",
            &Doc {
                config: &source,
                version: &config.version,
                preempt_model: config.preempt_model(),
                hurts,
                helps: findings.len() - hurts,
                findings: &findings,
            },
        )?);
    } else {
        print(&check::render(&source, &config, &findings));
    }
    Ok(if a.strict && hurts > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}
