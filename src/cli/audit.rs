//! `rtlab audit`: check a system's real-time readiness, one row per check.

use super::common::print;
use crate::error::{bad_flag, EXIT_FAILED, EXIT_OK};
use crate::format::json;
use crate::record::AuditSummary;
use crate::tune::audit::{self, Check, Input};
use anyhow::Result;
use clap::Args;
use rtlab_engine::sysinfo::SysRoot;
use std::path::PathBuf;

/// Arguments of `rtlab audit`.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab audit
  rtlab audit --strict --json > audit.json
  rtlab audit --root /mnt/board-rootfs -v")]
pub struct AuditArgs {
    /// Read /proc, /sys, /dev and /boot below this directory instead of / (a copy
    /// or mount of another system's tree) [default: /].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Exit 1 when any check fails.
    #[arg(long)]
    strict: bool,
    /// Show why and how to fix for passing checks too.
    #[arg(short, long)]
    verbose: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `rtlab audit`.
pub fn run(args: AuditArgs) -> Result<i32> {
    let root = match &args.root {
        Some(dir) if !dir.is_dir() => {
            return Err(bad_flag(
                "--root",
                format!(
                    "{} is not a directory (give the top of a system tree)",
                    dir.display()
                ),
            ))
        }
        Some(dir) => SysRoot::new(dir),
        None => SysRoot::default(),
    };
    let input = Input::read(root);
    let checks = audit::audit(&input);
    let summary = audit::summarize(&checks);
    if args.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            root: String,
            kernel_release: &'a str,
            kernel_config: Option<&'a str>,
            summary: &'a AuditSummary,
            checks: &'a [Check],
        }
        print(&json::tagged(
            "audit",
            &Doc {
                root: input.root.root().display().to_string(),
                kernel_release: &input.fp.kernel_release,
                kernel_config: input.config.as_ref().map(|(src, _)| src.as_str()),
                summary: &summary,
                checks: &checks,
            },
        )?);
    } else {
        print(&audit::render(&input, &checks, &summary, args.verbose));
    }
    Ok(if args.strict && summary.fail > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}
