//! `rtlab report`: one run in depth, as text or as a self-contained HTML file.

use super::common::Context;
use super::reportargs::{
    finish, requirements, requirements_or, NoiseArgs, ReportFiles, RequireArgs,
};
use super::selection::{campaign_pairings, chosen, described, ByArgs, FleetFilter};
use crate::analysis::attribution::{self, Ranking};
use crate::analysis::group::Group;
use crate::analysis::outcome::{analyse, of_runs};
use crate::analysis::risks::risks;
use crate::analysis::verdict::{self, Requirement};
use crate::format::html::CampaignPage;
use crate::format::text::{campaign::campaign_report, run::Report};
use crate::format::{json, Exporter, Options};
use crate::scenario::campaign::Stored;
use crate::scenario::runner::{campaign_steps, StepRun};
use crate::store::Store;
use crate::units::TimeUnit;
use anyhow::Result;
use clap::Args;

/// Report one stored run in depth: its table, verdicts, system and parameters.
///
/// The run is named by id, label (the newest complete run with that label) or
/// label@N; or runs are chosen by where and when they ran (--host, --kernel,
/// --tag, --kind, --since, --until), each reported in turn, or with --by each
/// host, kernel or tag as one run made of its runs. With --html, the report
/// also holds the plots: histograms, percentiles, per-thread histograms and
/// latency over time.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab report 12
  rtlab report stock@2 --html stock.html --require gyro=1ms
  rtlab report --campaign 3 --html campaign.html
  rtlab report --host board7 --since 7d --by kernel --require gyro=1ms")]
pub struct ReportArgs {
    /// The run: an id (12), a label (the newest complete run with that label) or
    /// label@N (the Nth newest run with that label, any status; @1 is the newest)
    /// [default: none; required unless --campaign, a filter (--host, ...) or
    /// --by].
    #[arg(
        value_name = "RUN",
        required_unless_present_any = CHOOSERS,
        conflicts_with_all = &CHOOSERS[1..]
    )]
    run: Option<String>,
    /// Report a whole campaign (`rtlab run`) instead: its steps, its verdicts
    /// against the requirements it ran with (--require replaces them), risks and
    /// load attribution, and with --html every step's plots. Exits as `run` did:
    /// 1 when a verdict fails [default: none].
    #[arg(long, value_name = "ID", conflicts_with = "run", conflicts_with_all = &CHOOSERS[1..])]
    campaign: Option<i64>,
    #[command(flatten)]
    fleet: FleetFilter,
    #[command(flatten)]
    by: ByArgs,
    #[command(flatten)]
    req: RequireArgs,
    #[command(flatten)]
    noise: NoiseArgs,
    #[command(flatten)]
    files: ReportFiles,
    /// Print one JSON document instead of the text: the run as stored (its spike
    /// analysis included), the requirements and the verdicts (times in ns).
    #[arg(long, conflicts_with = "campaign")]
    json: bool,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

/// What chooses the runs besides RUN: a campaign, the filters, --by.
const CHOOSERS: [&str; 8] = [
    "campaign", "by", "kind", "hosts", "kernels", "tag", "since", "until",
];

/// Runs `rtlab report`.
pub fn run(ctx: &Context, a: ReportArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = ctx.open_read()?;
    if let Some(c) = a.campaign {
        return campaign(&store, c, &a, reqs);
    }
    let ids = match &a.run {
        Some(sel) => vec![store.resolve(sel)?],
        None => chosen(&store, &a.fleet, a.by.by.is_some())?,
    };
    // Groups merge the series that stand for each run, and need no other.
    let load = match a.by.by {
        Some(_) => Store::load_primary,
        None => Store::load,
    };
    let runs = ids
        .iter()
        .map(|&id| load(&store, id))
        .collect::<Result<Vec<_>>>()?;
    let (runs, title, pairings) = match (a.by.by, runs.as_slice()) {
        (None, [run]) => {
            let title = format!("rtlab report: {} #{}", run.label, run.id.unwrap_or(0));
            (runs.clone(), title, of_runs(runs, 0))
        }
        (None, _) => {
            let title = format!("rtlab report: {} runs ({})", runs.len(), a.fleet.describe());
            (runs.clone(), title, of_runs(runs, 0))
        }
        (Some(by), _) => {
            let groups = a.by.groups(runs, by, &a.fleet)?;
            let merged: Vec<_> = groups.iter().map(Group::merged).collect();
            let infos: Vec<_> = groups.iter().map(|g| Some(g.info(by))).collect();
            let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
            let title = format!("rtlab report by {}: {}", by.name(), names.join(", "));
            // Each group is one run made of its runs, as its text reports it.
            let shown = described(&merged, &infos);
            (shown.clone(), title, of_runs(shown, 0))
        }
    };
    let runs = runs.as_slice();
    let opts = Options {
        unit: a.unit,
        title: &title,
        reqs: &reqs,
    };
    let o = analyse(pairings, &reqs, a.noise.noise);
    let files = a.files.render(&o, &opts)?;
    let verdicts = verdict::judge(runs, &reqs);
    let text = if a.json {
        json::report(runs, &reqs, &verdicts)?
    } else {
        Report.serialize(runs, &opts)?
    };
    finish(&files, &text, &verdicts)
}

/// `rtlab report --campaign ID`: the step table, verdicts, risks, load
/// attribution, the steps compared and the decision, and the campaign's HTML
/// report when asked. A campaign of
/// `rtlab run` is judged as it was: against its `--require` values or its
/// scenario's requirements (`reqs`, when given, replace them), and the exit code
/// is the one `run` gave.
fn campaign(store: &Store, id: i64, a: &ReportArgs, reqs: Vec<Requirement>) -> Result<i32> {
    let c = store.load_campaign(id)?;
    let steps = campaign_steps(store, id)?;
    let (reqs, ranked) = match Stored::of(&c) {
        Some(stored) => judged_as_run(id, &stored, &steps, reqs)?,
        None => (reqs, Vec::new()),
    };
    let found = risks(&steps, &reqs);
    let o = analyse(campaign_pairings(&steps), &reqs, a.noise.noise);
    let title = format!("rtlab run: {} (campaign {id})", c.name);
    let about = format!("{}, created {}", c.status.name(), c.created_at);
    let files = a.files.render_with(&o, &title, |title| {
        CampaignPage {
            title,
            about: &about,
            steps: &steps,
            reqs: &reqs,
            risks: &found,
            ranked: &ranked,
            unit: a.unit,
            outcome: &o,
        }
        .render()
    })?;
    let text = campaign_report(&c, &steps, &reqs, (&found, &ranked), &o, a.unit);
    finish(&files, &text, &o.verdicts())
}

/// The requirements `rtlab run` judged the campaign `id` against (`reqs` when
/// given instead) and its load attribution. A scenario that no longer reads is
/// said on stderr, and the campaign judged by its `--require` values alone.
pub(super) fn judged_as_run(
    id: i64,
    stored: &Stored,
    steps: &[StepRun],
    reqs: Vec<Requirement>,
) -> Result<(Vec<Requirement>, Vec<Ranking>)> {
    match stored.plan(None) {
        Ok((scn, plan)) => {
            let reqs = if reqs.is_empty() {
                requirements_or(&stored.requires, &scn.requirements)?
            } else {
                reqs
            };
            Ok((reqs, attribution::rank(&plan, steps)))
        }
        Err(e) => {
            eprintln!(
                "rtlab: note: the scenario of campaign {id} no longer reads ({e:#}): \
                 judged by its --require values alone"
            );
            let reqs = if reqs.is_empty() {
                requirements(&stored.requires)?
            } else {
                reqs
            };
            Ok((reqs, Vec::new()))
        }
    }
}
