//! Running a probe from the command line, the same way for every probe (and
//! for a campaign's step): the live view and the progress line on a
//! terminal, the audit read before measuring, then the run labelled, saved
//! and printed with the view its kind has, the same as for a stored run.

use super::common::{self, Context, OutputArgs, SaveArgs};
use super::observer::LiveObserver;
use crate::error::EXIT_INTERRUPTED;
use crate::record::Run;
use crate::step::bench::Interrupted;
use crate::step::{Observer, Step};
use anyhow::Result;
use clap::Args;

/// A probe's subcommand: its parameters, then the output and saving options.
#[derive(Debug, Args)]
pub struct ProbeArgs<P: Args> {
    #[command(flatten)]
    pub params: P,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

impl<P: Args + Step> ProbeArgs<P> {
    /// Measures, saves and prints the run.
    pub fn run(&self, ctx: &Context) -> Result<i32> {
        run(ctx, &self.params, &self.out, &self.save)
    }
}

/// Measures `step` with the live view `out` asks for, saves and prints the run.
pub fn run(ctx: &Context, step: &dyn Step, out: &OutputArgs, save: &SaveArgs) -> Result<i32> {
    watched(ctx, step, out, save, live(step, out), |_| Ok(()))
}

/// The live view `out` asks for, with the progress line of `step`.
pub fn live(step: &dyn Step, out: &OutputArgs) -> LiveObserver {
    LiveObserver::new(out).with_progress(step.kind().command, step.planned_ns())
}

/// Measures `step` watched by `obs` (gone before anything is printed); hands
/// the run to `made` (files written beside it), then labels, saves and
/// prints it. A signal before anything was measured (fileio preparing its
/// files) is exit 130 with nothing saved.
pub fn watched(
    ctx: &Context,
    step: &dyn Step,
    out: &OutputArgs,
    save: &SaveArgs,
    mut obs: impl Observer,
    made: impl FnOnce(&Run) -> Result<()>,
) -> Result<i32> {
    let measured = common::audited(|| step.run(&mut obs));
    drop(obs);
    let mut run = match measured {
        Err(e) if e.is::<Interrupted>() => {
            eprintln!("rtlab: {e}");
            return Ok(EXIT_INTERRUPTED);
        }
        other => other?,
    };
    save.apply(&mut run);
    made(&run)?;
    let unit = out.unit;
    common::finish(ctx, save, out, &mut run, |r| {
        crate::format::text::run::measured(r, unit)
    })
}
