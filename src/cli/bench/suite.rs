//! `rtlab bench suite`: the `suite` preset, run as a campaign the way
//! `rtlab run --preset suite` runs it. --time is the budget of the whole suite
//! (each of the five steps gets a fifth); --dir and --fileio-size set the
//! fileio step, and the preset so changed runs as a scenario file.

use super::super::common::{Context, OutputArgs, SaveArgs};
use super::super::run::{self as campaign, RunArgs};
use crate::error::{bad_flag, BadValue, UsageError};
use crate::scenario::presets;
use crate::step::bench::fileio;
use crate::step::Machine;
use crate::units::{parse_positive_duration, DefaultUnit};
use anyhow::{Context as _, Result};
use clap::{Args, FromArgMatches, ValueEnum};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use toml_edit::DocumentMut;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Time budget for the whole suite, split evenly over the five benches
    /// (fileio's preparing comes on top; a bare number is seconds).
    #[arg(long, default_value = "60s", value_name = "DUR")]
    time: String,
    /// Directory for the fileio part.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// fileio set size (e.g. 512M, 3G; the satellite report used 3G).
    #[arg(long, default_value = "3G", value_name = "SIZE")]
    fileio_size: String,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// The preset the suite runs.
const PRESET: &str = "suite";

/// Runs `rtlab bench suite`: checks its flags, then runs the campaign. With
/// --no-save the campaign goes to a store of its own in a new temporary
/// directory, which is kept (with the HTML report) and named on stderr.
pub fn run(ctx: &Context, a: SuiteArgs) -> Result<i32> {
    let budget = parse_positive_duration(&a.time, DefaultUnit::Seconds)
        .map_err(|e| bad_flag("--time", e))?;
    let part = duration_text((budget / 5).max(1));
    let preset = presets::get(PRESET).context("the suite preset is built in")?;
    let mut doc: DocumentMut = preset.text.parse()?;
    let changed = set_fileio(&mut doc, &a.dir, &a.fileio_size)?;
    check_fileio(&doc.to_string())?;

    let scratch = if changed || a.save.no_save {
        Some(
            crate::files::private_dir("rtlab-suite-")
                .context("cannot create a temporary directory")?,
        )
    } else {
        None
    };
    let mut argv: Vec<OsString> = Vec::new();
    let file = match (&scratch, changed) {
        (Some(dir), true) => {
            let file = dir.path().join("suite.toml");
            crate::files::NewFile::at(&file)
                .write(doc.to_string().as_bytes())
                .with_context(|| format!("cannot write {}", file.display()))?;
            argv.push(file.clone().into());
            Some(file)
        }
        _ => {
            argv.extend(["--preset", PRESET].map(OsString::from));
            None
        }
    };
    argv.extend(campaign_flags(&part, &a.out, &a.save));
    let cmd = RunArgs::augment_args(clap::Command::new("run").no_binary_name(true));
    let args = RunArgs::from_arg_matches(&cmd.try_get_matches_from(argv)?)?;
    let ctx = match (&scratch, a.save.no_save) {
        (Some(dir), true) => Context {
            db: Some(dir.path().join("rtlab.db")),
        },
        _ => ctx.clone(),
    };
    let code = campaign::run(&ctx, args);
    if let Some(file) = file {
        let _ = std::fs::remove_file(file);
    }
    // Kept with --no-save (the store and its report); else removed.
    if let Some(dir) = scratch.filter(|_| a.save.no_save) {
        eprintln!(
            "--no-save: the campaign was stored in {} with its report, not in the results store",
            dir.keep().display()
        );
    }
    code
}

/// The flags of `rtlab run` the suite's options map to: each step's time, the
/// output options, the label and the tags (always `suite`).
fn campaign_flags(part: &str, out: &OutputArgs, save: &SaveArgs) -> Vec<OsString> {
    let mut v: Vec<String> = vec!["--duration".into(), part.into()];
    if let Some(unit) = out.unit.to_possible_value() {
        v.extend(["--unit".into(), unit.get_name().to_string()]);
    }
    if out.json {
        v.push("--json".into());
    }
    if out.quiet {
        v.push("--quiet".into());
    }
    if let Some(l) = &save.label {
        v.extend(["--label".into(), l.clone()]);
    }
    let mut tags = vec![PRESET.to_string()];
    tags.extend(save.tags.iter().filter(|t| *t != PRESET).cloned());
    for t in tags {
        v.extend(["--tag".into(), t]);
    }
    v.into_iter().map(OsString::from).collect()
}

/// Sets `dir` and `total_size` of the preset's fileio step; true when that
/// changed a value.
fn set_fileio(doc: &mut DocumentMut, dir: &Path, size: &str) -> Result<bool> {
    let step = doc
        .get_mut("step")
        .and_then(|s| s.as_array_of_tables_mut())
        .and_then(|steps| {
            steps
                .iter_mut()
                .find(|t| t.get("probe").and_then(|p| p.as_str()) == Some(fileio::KIND.name))
        })
        .context("the suite preset has a fileio step")?;
    let mut changed = false;
    for (key, value) in [
        ("dir", dir.display().to_string()),
        ("total_size", size.into()),
    ] {
        if step.get(key).and_then(|v| v.as_str()) != Some(value.as_str()) {
            step[key] = toml_edit::value(value);
            changed = true;
        }
    }
    Ok(changed)
}

/// Checks the fileio step of the scenario `text` on this machine, so that a
/// directory or size that cannot be used names the suite's flag.
fn check_fileio(text: &str) -> Result<()> {
    let doc: serde_json::Value = toml_edit::de::from_str(text)?;
    let steps = doc["step"].as_array().cloned().unwrap_or_default();
    let probe = fileio::KIND.probe.as_ref().context("fileio is a probe")?;
    for s in steps.into_iter().filter(|s| s["probe"] == probe.name) {
        let mut values = s.as_object().cloned().unwrap_or_default();
        values.retain(|k, _| probe.takes(k));
        let params = probe
            .params(values)
            .map_err(|e| UsageError(format!("the suite's fileio step: {e}")))?;
        params
            .step()
            .check(&Machine::this())
            .map_err(|e| match e.downcast::<BadValue>() {
                Ok(b) if b.flag == "--total-size" => BadValue {
                    flag: "--fileio-size".into(),
                    message: b.message.replace("--total-size", "--fileio-size"),
                }
                .into(),
                Ok(b) => b.into(),
                Err(e) => e,
            })?;
    }
    Ok(())
}

/// `ns` as the duration text a scenario takes, in the largest unit that
/// divides it: `12s`, `400ms`.
fn duration_text(ns: u64) -> String {
    for (unit, n) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(n) {
            return format!("{}{unit}", ns / n);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_split_in_readable_units() {
        assert_eq!(duration_text(12_000_000_000), "12s");
        assert_eq!(duration_text(400_000_000), "400ms");
        assert_eq!(duration_text(200_001_000), "200001us");
        assert_eq!(duration_text(7), "7ns");
    }

    #[test]
    fn the_fileio_flags_change_the_preset_only_when_they_differ() {
        let preset = presets::get(PRESET).unwrap();
        let mut doc: DocumentMut = preset.text.parse().unwrap();
        assert!(!set_fileio(&mut doc, Path::new("."), "3G").unwrap());
        assert_eq!(doc.to_string(), preset.text);
        assert!(set_fileio(&mut doc, Path::new("/mnt/usb"), "8M").unwrap());
        let text = doc.to_string();
        assert!(text.contains("dir = \"/mnt/usb\"") && text.contains("total_size = \"8M\""));
        crate::scenario::parse("suite", &text).unwrap();
    }

    #[test]
    fn the_campaign_gets_the_suite_tag_once() {
        let out = OutputArgs {
            json: true,
            quiet: false,
            unit: crate::units::TimeUnit::Ms,
        };
        let save = SaveArgs {
            no_save: false,
            label: Some("k1".into()),
            tags: vec!["suite".into(), "t".into()],
        };
        let flags: Vec<String> = campaign_flags("400ms", &out, &save)
            .into_iter()
            .map(|f| f.into_string().unwrap())
            .collect();
        assert_eq!(
            flags.join(" "),
            "--duration 400ms --unit ms --json --label k1 --tag suite --tag t"
        );
    }
}
