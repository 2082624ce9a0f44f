//! `rtlab tune`: try each fix, measure its effect, keep what helps, restore the
//! rest (the work is `tune::trial`'s; this is the flags, the store and the
//! output).

use super::common::{self, Context, OutputArgs, SaveArgs};
use super::reportargs::requirements;
use crate::analysis::arms::Arm;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::verdict;
use crate::error::{bad_flag, SystemError, UsageError, EXIT_INTERRUPTED, EXIT_OK, EXIT_SYSTEM};
use crate::format::json;
use crate::record::Run;
use crate::step::latency::{self, Params};
use crate::step::loads::LoadArgs;
use crate::step::rt::{CpusArgs, IntervalArgs, PolicyArg, SchedArgs, SharedArgs};
use crate::step::value::{Cpus, Dur, Sec, Us};
use crate::step::Machine;
use crate::store::{CampaignStatus, CampaignStep};
use crate::tune::audit::{self, suggested_isolation, Input};
use crate::tune::journal::state_dir;
use crate::tune::trial::fix::{self, App, Ctx, Fix};
use crate::tune::trial::journal::Session;
use crate::tune::trial::judge::Verdict;
use crate::tune::trial::run::{Outcome, Setup};
use crate::tune::trial::{self, render, Job, Probe, Report};
use crate::units::exact;
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::signals;
use rtlab_engine::sysinfo::SysRoot;
use std::path::PathBuf;

/// Arguments of `rtlab tune` (its description is on `cli::Command::Tune`).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab tune --load cpu
  rtlab tune --try timer_migration,thp --repeat 5 -D 5s --load dohell
  rtlab tune --app ctrl-loop --app-priority fifo:80 --load cpu --html tune.html
  rtlab tune --load cpu --apply
  rtlab tune --restore")]
pub struct TuneArgs {
    /// Candidates to try: all, or their names separated by commas (rtlab tune
    /// --try list shows them).
    #[arg(long = "try", value_name = "all|NAME,...", default_value = "all")]
    try_: String,
    /// CPUs to measure and keep quiet; the others take what is moved away
    /// [default: the upper half of the online CPUs (never CPU 0), all of one].
    #[arg(short = 'a', long, value_name = "LIST")]
    cpus: Option<String>,
    #[command(flatten)]
    load: LoadArgs,
    /// Runs of each arm (baseline, changed), interleaved.
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeat: u32,
    /// Length of each run (a bare number is seconds).
    #[arg(short = 'D', long, value_name = "DUR", default_value = "10s")]
    duration: Dur<Sec>,
    /// Period of the measuring threads (a bare number is µs); 200us gives the
    /// 10 000 wake-ups a p99.9 needs in 2 s.
    #[arg(short, long, value_name = "DUR", default_value = "200us")]
    interval: Dur<Us>,
    /// SCHED_FIFO priority of the measuring threads (1-99).
    #[arg(short, long, value_name = "PRIO", default_value_t = 90)]
    priority: i32,
    /// A deadline (NAME=DUR, a bare number is µs) or preset (drone, messaging),
    /// repeatable: judged before and after tuning; exit 1 when the tuned system
    /// misses it [default: none].
    #[arg(long = "require", value_name = "NAME=DUR|PRESET")]
    requires: Vec<String>,
    /// Your application, for the app_priority candidate: a regular expression on
    /// its process name, as rtlab prio takes it [default: none].
    #[arg(long, value_name = "PATTERN")]
    app: Option<String>,
    /// The policy and priority app_priority tries for the application's threads
    /// (fifo:PRIO or rr:PRIO, PRIO 1-99).
    #[arg(long, value_name = "POLICY:PRIO", default_value = "fifo:80")]
    app_priority: String,
    /// Keep the changes that helped on, and make them last: a sysctl.d file,
    /// a tmpfiles.d file, an rtlab prio profile and its unit (below --etc), and
    /// the kernel command line for the rest.
    #[arg(long)]
    apply: bool,
    /// Where --apply writes its files.
    #[arg(long, value_name = "DIR", default_value = "/etc")]
    etc: PathBuf,
    /// Put back what rtlab tune left on (after a crash, or --apply) and remove
    /// the files --apply wrote; measures nothing.
    #[arg(long, conflicts_with_all = ["apply", "try_", "html"])]
    restore: bool,
    /// Write an HTML report with a before/after plot of each change that
    /// helped [default: none].
    #[arg(long, value_name = "PATH", value_parser = common::output_file)]
    html: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Everything checked before anything changes.
struct Checked {
    fixes: Vec<&'static Fix>,
    measured: CpuList,
    housekeeping: CpuList,
    app: Option<App>,
    probe: Params,
    reqs: Vec<verdict::Requirement>,
}

fn check(a: &TuneArgs, input: &Input) -> Result<Checked> {
    let fixes: Vec<&'static Fix> = match a.try_.trim() {
        "all" => fix::FIXES.iter().collect(),
        list => list
            .split(',')
            .map(|n| {
                fix::fix(n.trim()).ok_or_else(|| {
                    bad_flag(
                        "--try",
                        format!(
                            "no candidate '{}' (candidates: all, {})",
                            n.trim(),
                            fix::names()
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?,
    };
    if a.repeat == 0 || a.repeat > 100 {
        return Err(bad_flag(
            "--repeat",
            format!(
                "{} runs per arm: give 1 to 100 (3 is a sensible start)",
                a.repeat
            ),
        ));
    }
    let online = CpuList::parse(&input.fp.cpus_online).unwrap_or_default();
    let measured = match &a.cpus {
        Some(text) => CpuList::parse(text).map_err(|e| bad_flag("--cpus", e))?,
        None if online.cpus().len() < 2 => online.clone(),
        None => CpuList::parse(&suggested_isolation(input)).unwrap_or_else(|_| online.clone()),
    };
    Machine::this().check_cpus("--cpus", &measured)?;
    let housekeeping = CpuList::from_cpus(
        online
            .cpus()
            .iter()
            .copied()
            .filter(|&c| !measured.contains(c))
            .collect(),
    );
    let app = match &a.app {
        Some(pattern) => {
            let policy = crate::loads::placement::policy(&a.app_priority)
                .map_err(|e| bad_flag("--app-priority", e))?;
            if !policy.0.is_realtime() {
                return Err(bad_flag(
                    "--app-priority",
                    "give a real-time policy: fifo:PRIO or rr:PRIO",
                ));
            }
            crate::tune::prio::select::compile("--app", pattern).map_err(UsageError)?;
            Some(App {
                pattern: pattern.clone(),
                policy,
            })
        }
        None => None,
    };
    let probe = Params {
        period: IntervalArgs {
            interval: a.interval.clone(),
        },
        duration: Some(a.duration.clone()),
        measured: CpusArgs {
            cpus: Some(Cpus::new(measured.to_string())),
        },
        sched: SchedArgs {
            priority: Some(a.priority),
            policy: PolicyArg::Fifo,
        },
        // The system as the application finds it: rtlab holds nothing open
        // unless a candidate does.
        dma_latency: "off".into(),
        trace_points: 64,
        shared: SharedArgs {
            load: a.load.clone(),
            ..SharedArgs::default()
        },
        ..Params::default()
    };
    crate::step::Step::check(&probe, &Machine::this())?;
    Ok(Checked {
        fixes,
        measured,
        housekeeping,
        app,
        probe,
        reqs: requirements(&a.requires)?,
    })
}

/// Runs `rtlab tune`.
pub fn run(ctx: &Context, a: TuneArgs) -> Result<i32> {
    let state = state_dir()?;
    if a.restore {
        let (session, recovered) = Session::open(SysRoot::default(), &state)?;
        let r = trial::restore(&session, recovered.lines())?;
        common::print(&if a.out.json {
            json::tagged("tune-restore", &r)?
        } else {
            render::restored_text(&r)
        });
        return Ok(if r.failed.is_empty() {
            EXIT_OK
        } else {
            EXIT_SYSTEM
        });
    }
    if a.try_.trim() == "list" {
        let mut t = crate::tune::text_table(&["candidate", "what it changes"]);
        for f in fix::FIXES {
            t.row(vec![f.name.into(), f.title.into()]);
        }
        common::print(&t.render());
        return Ok(EXIT_OK);
    }
    let root = SysRoot::default();
    let input = Input::read(root.clone());
    let c = check(&a, &input)?;
    let stop = signals::install();
    let (mut session, recovered) = Session::open(root.clone(), &state)?;
    for l in recovered.lines() {
        eprintln!("{l}");
    }
    let job = Job {
        fixes: c.fixes.clone(),
        ctx: Ctx {
            root: &root,
            input: &input,
            measured: c.measured.clone(),
            housekeeping: c.housekeeping.clone(),
            probe: (Policy::Fifo, a.priority),
            app: c.app.as_ref(),
        },
        apply: None,
    };
    let planned = trial::plan(&job.fixes, &job.ctx);
    let tried = planned.iter().filter(|(_, p)| p.is_ok()).count();
    let step_ns = a.duration.get().unwrap_or(0);
    // Each candidate: its runs, and the winners together at most once more.
    let total_s = (tried as u64 + 1) * 2 * u64::from(a.repeat) * step_ns / 1_000_000_000;
    if !a.out.quiet {
        eprintln!(
            "rtlab tune: {tried} of {} candidates to try ({} not possible here), {} runs of {} each: about {} min at most",
            planned.len(),
            planned.len() - tried,
            (tried + 1) * 2 * a.repeat as usize,
            a.duration.text(),
            total_s.div_ceil(60)
        );
    }
    let exe = std::env::current_exe()?;
    let job = Job {
        apply: a.apply.then_some((a.etc.as_path(), exe.as_path())),
        ..job
    };
    let mut store = if a.save.no_save {
        None
    } else {
        Some(ctx.open_store()?)
    };
    let campaign = match store.as_mut() {
        Some(s) => Some(s.create_campaign(
            "tune",
            &serde_json::to_string(&serde_json::json!({
                "tune": {"try": a.try_, "cpus": c.measured.to_string(), "load": a.load.load,
                         "repeat": a.repeat, "duration": a.duration, "interval": a.interval}
            }))?,
            &input.fp,
        )?),
        None => None,
    };
    let mut index = 0i64;
    let quiet = a.out.quiet;
    let save = &a.save;
    let mut measure = |p: &Params, obs: &mut dyn crate::step::Observer| {
        common::audited(|| latency::measure(p, obs))
    };
    let mut record = |name: &str, mut run: Run| -> Result<Run> {
        save.apply(&mut run);
        run.tags.push("tune".into());
        if let (Some(s), Some(cid)) = (store.as_mut(), campaign) {
            let id = s.save(&run)?;
            run.id = Some(id);
            s.add_campaign_run(cid, &CampaignStep::of_name(index, name.into(), id))?;
        }
        index += 1;
        Ok(run)
    };
    let mut progress = |what: &str| {
        if !quiet {
            eprintln!("  {what}");
        }
    };
    let mut setup = Setup {
        probe: c.probe.clone(),
        repeat: a.repeat,
        noise: DEFAULT_NOISE,
        stop,
        measure: &mut measure,
        record: &mut record,
        progress: &mut progress,
    };
    let result = trial::tune(&job, planned, &mut setup, &mut session);
    let failed_back = session.restore();
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    drop(setup);
    if let (Some(s), Some(cid)) = (store.as_mut(), campaign) {
        let status = match (&result, interrupted) {
            (_, true) => CampaignStatus::Interrupted,
            (Ok(_), false) => CampaignStatus::Complete,
            (Err(_), false) => CampaignStatus::Failed,
        };
        s.set_campaign_status(cid, status)?;
    }
    let trial::Tuned {
        candidates,
        together,
        applied,
        after,
    } = result?;
    if !failed_back.is_empty() {
        return Err(SystemError(trial::run::NotRestored(failed_back).to_string()).into());
    }
    let before: Vec<Run> = candidates.iter().flat_map(|o| o.runs[0].clone()).collect();
    let tuned = tuned_runs(&candidates, together.as_ref());
    let mut arms = vec![Arm::new("before tuning", before)];
    if let Some(t) = tuned {
        arms.push(Arm::new("after tuning", t));
    }
    let verdicts = verdict::judge_arms(&arms, &c.reqs, DEFAULT_NOISE);
    let report = Report {
        probe: Probe {
            cpus: c.measured.to_string(),
            interval: exact(a.interval.get().unwrap_or(0)),
            duration: exact(step_ns),
            priority: format!("fifo/{}", a.priority),
            loads: a.load.load.clone(),
        },
        repeat: a.repeat,
        noise: DEFAULT_NOISE,
        campaign,
        recovered: recovered.lines(),
        candidates,
        together,
        boot: fix::boot_only(&audit::audit(&input)),
        after,
        applied,
        interrupted,
    };
    if let Some(path) = &a.html {
        common::write_output("--html", Some(path), &render::html(&report, a.out.unit)?)?;
    }
    if a.out.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a Report,
            verdicts: &'a [verdict::Verdict],
        }
        common::print(&json::tagged(
            "tune",
            &Doc {
                report: &report,
                verdicts: &verdicts,
            },
        )?);
    } else {
        let mut text = render::text(&report, a.out.unit);
        if !verdicts.is_empty() {
            text.push('\n');
            text.push_str(&crate::format::text::verdict::render_text(&verdicts));
        }
        common::print(&text);
    }
    if interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    let last: Vec<verdict::Verdict> = verdicts
        .iter()
        .filter(|v| arms.len() == 1 || v.label == "after tuning")
        .cloned()
        .collect();
    Ok(verdict::exit_code(&last))
}

/// The runs of the tuned system: the winners together, else the one winner.
fn tuned_runs(candidates: &[Outcome], together: Option<&Outcome>) -> Option<Vec<Run>> {
    if let Some(t) = together.filter(|t| !t.runs[1].is_empty()) {
        return Some(t.runs[1].clone());
    }
    let winners: Vec<&Outcome> = candidates
        .iter()
        .filter(|o| o.verdict == Verdict::Helps)
        .collect();
    match winners.as_slice() {
        [one] => Some(one.runs[1].clone()),
        _ => None,
    }
}

/// Puts back what an ended `rtlab tune` (crashed, killed) left on, before any
/// command runs: one `stat(2)` when nothing is left. `rtlab tune` does it
/// itself, and the processes rtlab starts (steps, load workers) leave it to
/// their parent.
pub fn recover(cmd: &super::Command) {
    use super::Command as C;
    if matches!(cmd, C::Tune(_) | C::Step(_) | C::LoadWorker(_)) {
        return;
    }
    let Ok(state) = state_dir() else { return };
    match crate::tune::trial::journal::recover(&state) {
        Ok(r) => {
            for l in r.lines() {
                eprintln!("{l}");
            }
        }
        Err(e) => eprintln!("rtlab: warning: {e:#}"),
    }
}
