//! `rtlab report`: one run in depth, as text or as a self-contained HTML file.

use super::common::Context;
use super::compare::{finish, open_existing, warnings_text, ReportFiles, RequireArgs};
use crate::analysis::diff::system_fields;
use crate::analysis::risks::risks;
use crate::analysis::verdict::{self, Requirement};
use crate::format::text::latency::{self, series_table};
use crate::format::text::table::Table;
use crate::format::text::{
    self,
    campaign::{risks_text, step_table},
};
use crate::record::Run;
use crate::scenario::runner::{campaign_steps, step_view};
use crate::store::Store;
use crate::units::{Human, TimeUnit};
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

/// The text report of any kind of run.
fn text(run: &Run, unit: TimeUnit) -> String {
    let mut out = if run.kind == "latency" {
        latency::render(run, unit)
    } else {
        let mut out = format!(
            "rtlab {}  {}  [{}]\n{} observed\n",
            run.kind,
            run.label,
            run.status.name(),
            Human(run.duration_ns)
        );
        if !run.series.is_empty() {
            out.push('\n');
            out.push_str(&series_table(run, unit));
        }
        let warnings = warnings_text(std::slice::from_ref(run));
        if !warnings.is_empty() {
            out.push('\n');
            out.push_str(&warnings);
        }
        out
    };
    if !run.metrics.is_empty() {
        let mut t = Table::new(&["metric", "value"]);
        for (k, v) in &run.metrics {
            t.row(vec![k.clone(), v.to_string()]);
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    out.push_str("\nsystem:\n");
    for (k, v) in system_fields(run) {
        out.push_str(&format!("  {k:<16} {v}\n"));
    }
    out.push_str(&format!(
        "\nrun {} started {}, ended {}\ncommand: {}\nparameters: {}\n",
        run.id.unwrap_or(0),
        run.started_at,
        run.ended_at,
        run.command_line.join(" "),
        run.params
    ));
    out
}

/// Runs `rtlab report`.
pub fn run(ctx: &Context, a: ReportArgs) -> Result<i32> {
    let reqs = a.req.parse()?;
    let store = open_existing(ctx)?;
    if let Some(c) = a.campaign {
        return campaign(&store, c, &a, &reqs);
    }
    let run = store.load(store.resolve(a.run.as_deref().unwrap_or_default())?)?;
    let runs = std::slice::from_ref(&run);
    let verdicts = verdict::judge(runs, &reqs);
    let title = format!("rtlab report: {} #{}", run.label, run.id.unwrap_or(0));
    let files = a.files.render(&title, runs, &reqs, a.unit)?;
    let mut out = text(&run, a.unit);
    if !verdicts.is_empty() {
        out.push('\n');
        out.push_str(&text::verdict::render_text(&verdicts));
    }
    finish(&files, &out, &verdicts)
}

/// `rtlab report --campaign ID`: the step table, verdicts and risks, and the
/// campaign's HTML report when asked.
fn campaign(store: &Store, id: i64, a: &ReportArgs, reqs: &[Requirement]) -> Result<i32> {
    let c = store.load_campaign(id)?;
    let steps = campaign_steps(store, id)?;
    let runs = step_view(&steps);
    let verdicts = verdict::judge(&runs, reqs);
    let title = format!("rtlab run: {} (campaign {id})", c.name);
    let files = a.files.render(&title, &runs, reqs, a.unit)?;
    let mut out = format!(
        "rtlab run  {}  campaign {id}  [{}]  created {}\n\n",
        c.name,
        c.status.name(),
        c.created_at
    );
    out.push_str(&step_table(&steps, reqs, a.unit));
    out.push_str(&risks_text(&risks(&steps, reqs)));
    finish(&files, &out, &verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    #[test]
    fn bench_runs_show_their_metrics_and_system() {
        let mut run = run_from_samples("pi", &[]);
        run.kind = "bench.cpu".into();
        run.total = None;
        run.series.clear();
        run.id = Some(4);
        run.metrics.insert("events_per_s".into(), 1234.5);
        let t = text(&run, TimeUnit::Us);
        assert!(t.starts_with("rtlab bench.cpu  pi  [complete]\n"), "{t}");
        assert!(t.contains("events_per_s  1234.5"), "{t}");
        assert!(t.contains("  kernel           6.1.0\n"), "{t}");
        assert!(
            !t.contains("thread  samples"),
            "no series table without series"
        );
    }

    #[test]
    fn latency_runs_use_the_latency_table() {
        let t = text(&run_from_samples("rt", &[1_000, 3_000]), TimeUnit::Us);
        assert!(t.starts_with("rtlab latency  rt  [complete]"), "{t}");
        assert!(t.contains("\ncpu0          2"), "{t}");
    }
}
