//! `rtlab report`: one run in depth, as text or as a self-contained HTML file.

use super::common::Context;
use super::reportargs::{finish, ReportFiles, RequireArgs};
use crate::analysis::risks::risks;
use crate::analysis::verdict::{self, Requirement};
use crate::format::text::{campaign::campaign_report, run::Report};
use crate::format::{Exporter, Options};
use crate::scenario::runner::{campaign_steps, step_view};
use crate::store::Store;
use crate::units::TimeUnit;
use anyhow::Result;
use clap::Args;

/// Report one stored run in depth: its table, verdicts, system and parameters.
///
/// The run is named by id, label (the newest complete run with that label) or
/// label@N. With --html, the report also holds the plots: histograms, percentiles,
/// per-thread histograms and latency over time.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run: an id (12), a label (the newest complete run with that label) or
    /// label@N (the Nth newest run with that label, any status; @1 is the newest).
    #[arg(value_name = "RUN", required_unless_present = "campaign")]
    run: Option<String>,
    /// Report a whole campaign (`rtlab run`) instead: its steps, verdicts, risks,
    /// and with --html every step's plots.
    #[arg(long, value_name = "ID", conflicts_with = "run")]
    campaign: Option<i64>,
    #[command(flatten)]
    req: RequireArgs,
    #[command(flatten)]
    files: ReportFiles,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

/// Runs `rtlab report`.
pub fn run(ctx: &Context, a: ReportArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = ctx.open_existing()?;
    if let Some(c) = a.campaign {
        return campaign(&store, c, &a, &reqs);
    }
    let run = store.load(store.resolve(a.run.as_deref().unwrap_or_default())?)?;
    let runs = std::slice::from_ref(&run);
    let title = format!("rtlab report: {} #{}", run.label, run.id.unwrap_or(0));
    let opts = Options {
        unit: a.unit,
        title: &title,
        reqs: &reqs,
    };
    let files = a.files.render(runs, &opts)?;
    let text = Report.serialize(runs, &opts)?;
    finish(&files, &text, &verdict::judge(runs, &reqs))
}

/// `rtlab report --campaign ID`: the step table, verdicts and risks, and the
/// campaign's HTML report when asked.
fn campaign(store: &Store, id: i64, a: &ReportArgs, reqs: &[Requirement]) -> Result<i32> {
    let c = store.load_campaign(id)?;
    let steps = campaign_steps(store, id)?;
    let runs = step_view(&steps);
    let title = format!("rtlab run: {} (campaign {id})", c.name);
    let opts = Options {
        unit: a.unit,
        title: &title,
        reqs,
    };
    let files = a.files.render(&runs, &opts)?;
    let text = campaign_report(&c, &steps, reqs, &risks(&steps, reqs), a.unit);
    finish(&files, &text, &verdict::judge(&runs, reqs))
}
