//! `rtlab results import FILE...`: what cyclictest, sysbench and stress-ng
//! printed (or rtlab JSON) read into runs, several files making one campaign.

use super::common;
use crate::error::{EXIT_INTERRUPTED, EXIT_OK};
use crate::format::text;
use crate::import;
use crate::progress::{self, Progress};
use crate::store::{CampaignStatus, CampaignStep, Store};
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::signals;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab results import ct.txt
  rtlab results import ct.txt --label stock --tag lab
  rtlab results import cpu.txt memory.txt fileio.txt --label 'rt 6.6'
  rtlab results import --bundle board7.rtlab")]
pub struct ImportArgs {
    /// Files to import (cyclictest, sysbench, stress-ng or rtlab output; the
    /// format is read from the file); several files make one campaign
    /// [default: none; required without --bundle].
    #[arg(required_unless_present = "bundle", value_name = "FILE")]
    pub(super) files: Vec<PathBuf>,
    /// Copy the runs of this bundle (from 'rtlab results export --bundle') that
    /// the store does not have yet; running it again copies nothing twice
    /// [default: no bundle, the FILEs are read].
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "label", "tags", "sysbench_test"])]
    pub(super) bundle: Option<PathBuf>,
    /// Label of the imported runs [default: the kernel named in the file, else
    /// the file's name].
    #[arg(long, value_name = "TEXT", value_parser = common::label_value)]
    pub(super) label: Option<String>,
    /// Tag the imported runs (repeatable) [default: no tags].
    #[arg(long = "tag", value_name = "TAG", value_parser = common::tag_value)]
    pub(super) tags: Vec<String>,
    /// The sysbench test the files come from, checked against what the report
    /// says; sysbench 1.0's threads and mutex reports look alike, and are told
    /// apart by their events per thread (mutex runs one) unless this names one
    /// [default: read from the file].
    #[arg(long, value_name = "TEST", value_parser = clap::builder::PossibleValuesParser::new(import::SYSBENCH_TESTS))]
    pub(super) sysbench_test: Option<String>,
}

/// Imports the files of `a` into `store`.
pub fn run(store: &mut Store, a: &ImportArgs) -> Result<i32> {
    let opts = import::Options {
        label: a.label.clone(),
        sysbench_test: a.sysbench_test.clone(),
    };
    // Ctrl-C/SIGTERM stops between files: before writing, nothing is written;
    // while writing, the runs saved so far stay and the campaign says so.
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    // Every file is read and checked before anything is written.
    let mut runs = Vec::with_capacity(a.files.len());
    let progress = Progress::steps(
        progress::wanted(false),
        "file",
        "reading",
        a.files.len() as u64,
    );
    for f in &a.files {
        if stopped() {
            progress
                .suspend(|| eprintln!("interrupted while reading the files: nothing was imported"));
            return Ok(EXIT_INTERRUPTED);
        }
        let mut run = import::import_file(f, &opts)?;
        for t in &a.tags {
            if !run.tags.contains(t) {
                run.tags.push(t.clone());
            }
        }
        runs.push(run);
        progress.inc();
    }
    drop(progress);
    let campaign = if runs.len() > 1 {
        let scenario = std::env::args().collect::<Vec<_>>().join(" ");
        Some(store.create_campaign("import", &scenario, &runs[0].fingerprint)?)
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    let mut saved = 0;
    for (i, (run, file)) in runs.iter().zip(&a.files).enumerate() {
        if stopped() {
            break;
        }
        let id = store.save(run)?;
        saved += 1;
        if let Some(c) = campaign {
            let name = file.display().to_string();
            let step = CampaignStep {
                step_index: i as i64,
                base_name: name.clone(),
                step_name: name,
                repeat: 1,
                run_id: id,
            };
            store.add_campaign_run(c, &step)?;
        }
        let _ = write!(out, "{}", text::results::imported(id, run, file));
    }
    let interrupted = saved < runs.len();
    if let Some(c) = campaign {
        let status = if interrupted {
            CampaignStatus::Interrupted
        } else {
            CampaignStatus::Complete
        };
        store.set_campaign_status(c, status)?;
        let _ = writeln!(out, "campaign {c}: {saved} runs");
    }
    if interrupted {
        eprintln!(
            "interrupted: {saved} of {} files imported, the others not",
            runs.len()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}
