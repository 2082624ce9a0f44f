//! `rtlab audit`: check a system's real-time readiness, one row per check.

use crate::error::{bad_flag, EXIT_FAILED, EXIT_OK};
use crate::record::AuditSummary;
use crate::tune::audit::{self, Check, Input, Status};
use crate::tune::{json_document, print, text_table};
use anyhow::Result;
use clap::Args;
use rtlab_engine::sysinfo::SysRoot;
use std::fmt::Write;
use std::path::PathBuf;

/// Arguments of `rtlab audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Read /proc, /sys, /dev and /boot below this directory instead of / (a copy
    /// or mount of another system's tree).
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
        print(&json_document(
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
        print(&render(&input, &checks, &summary, args.verbose));
    }
    Ok(if args.strict && summary.fail > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

fn render(input: &Input, checks: &[Check], s: &AuditSummary, verbose: bool) -> String {
    let fp = &input.fp;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} on {} ({} CPUs{})",
        if fp.kernel_release.is_empty() {
            "unknown kernel"
        } else {
            &fp.kernel_release
        },
        fp.preempt.name(),
        if fp.hostname.is_empty() {
            "?"
        } else {
            &fp.hostname
        },
        fp.cpu_count,
        match &input.config {
            Some((src, _)) => format!(", config {src}"),
            None => ", no kernel config found".into(),
        }
    );
    out.push('\n');
    let mut t = text_table(&["status", "check", "current", "recommended"]);
    for c in checks {
        t.row(vec![
            c.status.name().into(),
            c.title.into(),
            c.current.clone(),
            c.recommended.clone(),
        ]);
    }
    out.push_str(&t.render());
    let detailed: Vec<&Check> = checks
        .iter()
        .filter(|c| verbose || matches!(c.status, Status::Warn | Status::Fail))
        .collect();
    if !detailed.is_empty() {
        out.push('\n');
    }
    for c in detailed {
        let _ = writeln!(out, "{} {} [{}]", c.status.name(), c.title, c.id);
        let _ = writeln!(out, "    why: {}", c.why);
        if !c.fix.is_empty() {
            let _ = writeln!(out, "    fix: {}", c.fix);
        }
    }
    let _ = writeln!(
        out,
        "\n{} ok, {} warn, {} fail, {} n.a.",
        s.ok, s.warn, s.fail, s.na
    );
    out
}
