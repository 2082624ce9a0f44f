//! `rtlab run`: a campaign from a scenario file, a preset, a load attribution, or
//! (with no arguments) the quick check of this machine.

use super::common::Context;
use crate::analysis::attribution::{self, Ranking};
use crate::analysis::risks::{risks, Risk};
use crate::analysis::verdict::{self, Requirement};
use crate::error::{bad_flag, SystemError, UsageError, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::format::html;
use crate::format::text::campaign::{attribution_text, risks_text, step_table};
use crate::record::{self, Run};
use crate::scenario::check;
use crate::scenario::runner::{campaign_steps, first_unfinished, step_view, Runner, StepRun};
use crate::scenario::{expand, parse, presets, PlannedStep, Scenario, DEFAULT_MAX_STEPS};
use crate::step::Machine;
use crate::store::{self, Store};
use crate::system;
use crate::units::{parse_positive_duration, DefaultUnit, TimeUnit};
use anyhow::{bail, Context as _, Result};
use clap::Args;
use rtlab_engine::rt::signals;
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Run a campaign: the same probe under several loads and settings, stored,
/// compared and judged in one command.
///
/// With no arguments: the quick check of this machine (latency on every CPU idle,
/// under CPU load, under memory load, under the dohell mix; about a minute), with
/// verdicts against 1 ms, the biggest risks found and an HTML report.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A scenario file (TOML); see `rtlab presets show quick` for the format.
    #[arg(value_name = "SCENARIO", conflicts_with_all = ["preset", "resume"])]
    scenario: Option<PathBuf>,
    /// Run a built-in scenario (`rtlab presets list`).
    #[arg(long, value_name = "NAME", conflicts_with = "resume")]
    preset: Option<String>,
    /// Load attribution: run the latency probe under no load, under each part of
    /// this mix alone and under the whole mix, then rank the parts.
    #[arg(long, value_name = "MIX", conflicts_with_all = ["scenario", "preset", "resume"])]
    attribute: Option<String>,
    /// Set every step's duration (scales the whole campaign).
    #[arg(long, value_name = "DUR")]
    duration: Option<String>,
    /// Requirement name=budget or preset (repeatable; replaces the scenario's).
    #[arg(long = "require", value_name = "NAME=DUR|PRESET")]
    requires: Vec<String>,
    /// Add the runs of an earlier campaign of the same scenario whose runs carry
    /// this label (another kernel) or tag to the final table and report. Checked
    /// before anything runs.
    #[arg(long, value_name = "LABEL|TAG")]
    compare_with: Vec<String>,
    /// Refuse a scenario whose matrix expands to more steps than this.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: u64,
    /// Continue an interrupted campaign (default: the latest) from its first
    /// unfinished step.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "-1")]
    resume: Option<i64>,
    /// Write the HTML report here (default: next to the store).
    #[arg(long, value_name = "PATH", value_parser = super::common::output_file)]
    html: Option<PathBuf>,
    /// Print one JSON document (format rtlab/1) instead of the tables.
    #[arg(long)]
    json: bool,
    /// No progress display.
    #[arg(short, long)]
    quiet: bool,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
    /// Label of the campaign's runs (default: "<kernel release> <preemption model>").
    #[arg(long, value_name = "TEXT", value_parser = super::common::label_value)]
    label: Option<String>,
    /// Tag every run (repeatable).
    #[arg(long = "tag", value_name = "TAG", value_parser = super::common::tag_value)]
    tags: Vec<String>,
}

/// Options stored with a campaign so that `--resume` plans the same steps.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Stored {
    scenario: String,
    file: String,
    duration: Option<String>,
    label: String,
    tags: Vec<String>,
    requires: Vec<String>,
    /// The --max-steps it was started with (resuming plans the same steps).
    #[serde(default)]
    max_steps: Option<u64>,
}

/// The JSON document of `rtlab run --json`.
#[derive(Debug, Serialize)]
struct Report<'a> {
    format: &'static str,
    campaign: i64,
    name: &'a str,
    status: &'static str,
    steps: Vec<StepJson<'a>>,
    verdicts: Vec<verdict::Verdict>,
    risks: &'a [Risk],
    attribution: &'a [Ranking],
    html: String,
    exit_code: i32,
}

#[derive(Debug, Serialize)]
struct StepJson<'a> {
    index: usize,
    name: &'a str,
    run: &'a Run,
}

fn requirements(texts: &[String], scn: &Scenario) -> Result<Vec<Requirement>> {
    if texts.is_empty() {
        return Ok(scn
            .requirements
            .iter()
            .map(|(name, &budget_ns)| Requirement {
                name: name.clone(),
                budget_ns,
            })
            .collect());
    }
    let mut out = Vec::new();
    for t in texts {
        out.extend(verdict::parse_requirement(t).map_err(|e| bad_flag("--require", e))?);
    }
    Ok(out)
}

/// The scenario `--attribute MIX` runs.
fn attribution_scenario(mix: &str) -> Result<String> {
    if !crate::loads::mix::MIXES.iter().any(|m| m.name == mix) {
        let names: Vec<&str> = crate::loads::mix::MIXES.iter().map(|m| m.name).collect();
        return Err(bad_flag(
            "--attribute",
            format!("'{mix}' is not a load mix (mixes: {})", names.join(", ")),
        ));
    }
    Ok(format!(
        "# Load attribution of {mix}: no load, each part alone, the whole mix.\n\
         name = \"attribution of {mix}\"\n\
         description = \"latency on every CPU under no load, each part of {mix} alone and the whole mix\"\n\
         [defaults]\nduration = \"20s\"\n\
         [[step]]\nname = \"latency\"\nprobe = \"latency\"\nload = \"{mix}\"\nattribute = true\n\
         [requirements]\ndeadline = \"1ms\"\n"
    ))
}

fn load_scenario(a: &RunArgs) -> Result<(String, String)> {
    if let Some(mix) = &a.attribute {
        return Ok((format!("attribution of {mix}"), attribution_scenario(mix)?));
    }
    if let Some(path) = &a.scenario {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read scenario {}: {e}", path.display())))?;
        return Ok((path.display().to_string(), text));
    }
    let name = a.preset.as_deref().unwrap_or("quick");
    let p = presets::get(name).ok_or_else(|| {
        bad_flag(
            "--preset",
            format!("no preset '{name}' (presets: {})", presets::names()),
        )
    })?;
    Ok((format!("preset {}", p.name), p.text.to_string()))
}

/// Runs `rtlab run`.
///
/// Everything is checked before the campaign is recorded: the scenario, the size
/// of its plan, every value of every step on this machine, the requirements,
/// --compare-with. A problem is exit 2 (3 when the system refuses RT scheduling)
/// with nothing stored.
pub fn run(ctx: &Context, a: RunArgs) -> Result<i32> {
    // From here on a signal raises the flag instead of killing the process: one
    // before the campaign exists ends with nothing stored, one after leaves the
    // campaign interrupted.
    let stop = signals::install();
    check_flags(&a)?;
    let db = store::default_path(ctx.db.as_deref())?;
    let fp = system::fingerprint();
    let machine = Machine::this();

    let (mut store, campaign, stored, scn, reqs, plan, from, earlier) = match a.resume {
        Some(id) => {
            let mut store = Store::open(&db)?;
            let id = if id < 0 {
                latest_interrupted(&store)?
            } else {
                id
            };
            let c = store.load_campaign(id)?;
            let stored: Stored = serde_json::from_str(&c.scenario).map_err(|_| {
                UsageError(format!(
                    "campaign {id} was not made by 'rtlab run' and cannot be resumed"
                ))
            })?;
            let scn = parse(&stored.file, &stored.scenario)?;
            let reqs = requirements(&stored.requires, &scn)?;
            let max_steps = if a.max_steps != DEFAULT_MAX_STEPS {
                a.max_steps
            } else {
                stored.max_steps.unwrap_or(DEFAULT_MAX_STEPS)
            };
            let plan = planned(&scn, stored.duration.as_deref(), max_steps)?;
            let from = first_unfinished(&store, id, plan.len())?;
            check_plan(&scn, &plan, from, &machine)?;
            let earlier = compare_with(Some(&store), &scn.name, &a.compare_with, Some(id))?;
            if stop.load(Ordering::Relaxed) {
                eprintln!("interrupted before campaign {id} was resumed; nothing changed");
                return Ok(EXIT_INTERRUPTED);
            }
            // Refused while another live process runs it.
            store.claim_campaign(id)?;
            (store, id, stored, scn, reqs, plan, from, earlier)
        }
        None => {
            let (file, text) = load_scenario(&a)?;
            let scn = parse(&file, &text)?;
            let stored = Stored {
                label: a
                    .label
                    .clone()
                    .or_else(|| scn.label.clone())
                    .unwrap_or_else(|| record::default_label(&fp)),
                scenario: text,
                file,
                duration: a.duration.clone(),
                tags: a.tags.clone(),
                requires: a.requires.clone(),
                max_steps: (a.max_steps != DEFAULT_MAX_STEPS).then_some(a.max_steps),
            };
            let reqs = requirements(&stored.requires, &scn)?;
            let plan = planned(&scn, stored.duration.as_deref(), a.max_steps)?;
            check_plan(&scn, &plan, 0, &machine)?;
            // An earlier campaign can only be in a store that exists: do not
            // create one just to find it missing.
            let existing = if db.exists() {
                Some(Store::open(&db)?)
            } else {
                None
            };
            let earlier = compare_with(existing.as_ref(), &scn.name, &a.compare_with, None)?;
            if stop.load(Ordering::Relaxed) {
                eprintln!("interrupted before the campaign started; nothing stored");
                return Ok(EXIT_INTERRUPTED);
            }
            let mut store = match existing {
                Some(s) => s,
                None => Store::open(&db)?,
            };
            let id = store.create_campaign(&scn.name, &serde_json::to_string(&stored)?, &fp)?;
            (store, id, stored, scn, reqs, plan, 0, earlier)
        }
    };

    let talk = !a.quiet && !a.json;
    if talk {
        eprintln!(
            "campaign {campaign}: {} ({} steps{}) on {}",
            scn.name,
            plan.len(),
            if from > 0 {
                format!(", resuming at step {}", from + 1)
            } else {
                String::new()
            },
            stored.label
        );
        for w in system::fingerprint_warnings(&fp) {
            eprintln!("  ! {}: {}", w.code, w.message);
        }
    }
    let runner = Runner {
        db: &db,
        campaign,
        label: &stored.label,
        tags: &stored.tags,
        stop,
        progress: std::io::stderr().is_terminal(),
        quiet: !talk,
    };
    let outcome = runner.run(&mut store, &plan, from)?;

    // The campaign's result: for each step, its latest complete run, else the
    // latest run it has.
    let steps = campaign_steps(&store, campaign)?;
    let mut shown: Vec<StepRun> = steps.clone();
    for id in earlier {
        shown.extend(campaign_steps(&store, id)?);
    }
    let found = risks(&steps, &reqs);
    let ranked = attribution::rank(&plan, &steps);
    let html_path = match &a.html {
        Some(p) => p.clone(),
        None => db
            .parent()
            .unwrap_or(Path::new("."))
            .join("reports")
            .join(format!("campaign-{campaign}.html")),
    };
    let display = step_view(&shown);
    let title = format!("rtlab run: {} (campaign {campaign})", scn.name);
    write_html(&html_path, &html::render(&title, &display, &reqs, a.unit)?)?;

    let verdicts = verdict::judge(
        &steps.iter().map(|s| s.run.clone()).collect::<Vec<_>>(),
        &reqs,
    );
    let failed = verdicts.iter().any(|v| !v.passed());
    let code = if outcome.interrupted {
        EXIT_INTERRUPTED
    } else if failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    let status = if outcome.interrupted {
        "interrupted"
    } else {
        "complete"
    };
    if a.json {
        let doc = Report {
            format: record::FORMAT,
            campaign,
            name: &scn.name,
            status,
            steps: steps
                .iter()
                .map(|s| StepJson {
                    index: s.index,
                    name: &s.name,
                    run: &s.run,
                })
                .collect(),
            verdicts,
            risks: &found,
            attribution: &ranked,
            html: html_path.display().to_string(),
            exit_code: code,
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!(
            "{}",
            render_text(campaign, &scn.name, status, &shown, &reqs, &found, a.unit)
        );
        if !ranked.is_empty() {
            println!("{}", attribution_text(&ranked));
        }
        println!("report: {}", html_path.display());
        if outcome.interrupted {
            println!("interrupted: continue with 'rtlab run --resume {campaign}'");
        }
    }
    Ok(code)
}

fn render_text(
    campaign: i64,
    name: &str,
    status: &str,
    steps: &[StepRun],
    reqs: &[Requirement],
    found: &[Risk],
    unit: TimeUnit,
) -> String {
    let mut out = format!("rtlab run  {name}  campaign {campaign}  [{status}]\n\n");
    out.push_str(&step_table(steps, reqs, unit));
    out.push_str(&risks_text(found));
    out.push('\n');
    out
}

fn write_html(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension("rtlab-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Refuses flags that no step could use, before anything else.
fn check_flags(a: &RunArgs) -> Result<()> {
    if let Some(d) = &a.duration {
        parse_positive_duration(d, DefaultUnit::Seconds).map_err(|e| bad_flag("--duration", e))?;
    }
    if let Some(t) = a.tags.iter().find(|t| t.trim().is_empty()) {
        return Err(bad_flag("--tag", format!("'{t}' is empty; give a word")));
    }
    if a.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
        return Err(bad_flag(
            "--label",
            "is empty; give a word such as the kernel's name",
        ));
    }
    if let Some(c) = a.compare_with.iter().find(|c| c.trim().is_empty()) {
        return Err(bad_flag(
            "--compare-with",
            format!("'{c}' is empty; give a label or tag"),
        ));
    }
    if let Some(dir) = a
        .html
        .as_deref()
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
    {
        if !dir.is_dir() {
            return Err(bad_flag(
                "--html",
                format!(
                    "{} is not a directory; create it first or write the report elsewhere",
                    dir.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The plan, counted before it is expanded and refused above `max_steps`.
fn planned(scn: &Scenario, duration: Option<&str>, max_steps: u64) -> Result<Vec<PlannedStep>> {
    expand(scn, duration, max_steps).map_err(|e| UsageError(format!("{}: {e}", scn.file)).into())
}

/// Checks `plan[from..]` before it runs: every value on this machine, and RT
/// scheduling when a step needs it.
fn check_plan(scn: &Scenario, plan: &[PlannedStep], from: usize, machine: &Machine) -> Result<()> {
    let todo = &plan[from.min(plan.len())..];
    check::check(scn, todo, machine)?;
    // The highest RT priority any step needs, tried once on a throwaway thread.
    let need = todo
        .iter()
        .filter_map(|s| s.params.step().rt_need().map(|n| (s, n)))
        .max_by_key(|(_, (_, prio, _))| *prio);
    if let Some((step, (policy, prio, key))) = need {
        if let Err(e) = check::try_rt(policy, prio) {
            let msg = format!(
                "SCHED_{} priority {prio} is refused to this process ({e}). Run as root, or give rtlab \
                 CAP_SYS_NICE (sudo setcap cap_sys_nice,cap_ipc_lock+ep $(command -v rtlab)), or raise the RT \
                 limit (ulimit -r 99, LimitRTPRIO=99); or measure without RT priority: priority = 0",
                policy.name().to_uppercase()
            );
            let located = check::locate(scn, step, plan.len(), key, &msg);
            return Err(SystemError(located.to_string()).into());
        }
    }
    Ok(())
}

/// For each --compare-with value, the newest other campaign of the scenario
/// `name` whose runs carry that label or tag; refused when there is none.
fn compare_with(
    store: Option<&Store>,
    name: &str,
    wanted: &[String],
    except: Option<i64>,
) -> Result<Vec<i64>> {
    let mut found = Vec::new();
    if wanted.is_empty() {
        return Ok(found);
    }
    let rows = match store {
        Some(s) => s.list_campaigns()?,
        None => Vec::new(),
    };
    'wanted: for want in wanted {
        if let Some(s) = store {
            for row in rows
                .iter()
                .filter(|r| Some(r.id) != except && r.name == name)
            {
                let steps = campaign_steps(s, row.id)?;
                if steps
                    .first()
                    .is_some_and(|st| st.run.label == *want || st.run.tags.contains(want))
                {
                    found.push(row.id);
                    continue 'wanted;
                }
            }
        }
        bail!(bad_flag(
            "--compare-with",
            format!("no earlier '{name}' campaign whose runs carry the label or tag '{want}' in the store (see 'rtlab results campaigns' and 'rtlab results list --label {want}'); nothing was run")
        ));
    }
    Ok(found)
}

fn latest_interrupted(store: &Store) -> Result<i64> {
    store
        .list_campaigns()?
        .into_iter()
        .find(|c| c.status == store::CampaignStatus::Interrupted)
        .map(|c| c.id)
        .ok_or_else(|| {
            UsageError("no interrupted campaign to resume (see 'rtlab results list')".into()).into()
        })
}
