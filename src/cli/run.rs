//! `rtlab run`: a campaign from a scenario file, a preset, a load attribution, or
//! (with no arguments) the quick check of this machine.

use super::common::{self, Context};
use super::reportargs::{requirements, requirements_or, write_files, CiArgs};
use super::selection::campaign_pairings;
use crate::analysis::attribution;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::outcome::analyse;
use crate::analysis::repeats;
use crate::analysis::risks::risks;
use crate::analysis::verdict;
use crate::error::{bad_flag, EXIT_INTERRUPTED};
use crate::format::json::{self, CampaignDoc};
use crate::format::text::campaign::{attribution_text, decision_text, run_text};
use crate::format::text::decision::not_decided;
use crate::format::text::table::paragraph;
use crate::record;
use crate::scenario::campaign::{source, Prepared, Setup, Stored};
use crate::scenario::runner::{campaign_steps, Runner, StepRun};
use crate::scenario::PlannedStep;
use crate::scenario::DEFAULT_MAX_STEPS;
use crate::step::Machine;
use crate::store;
use crate::system;
use crate::units::{parse_positive_duration, DefaultUnit, TimeUnit};
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::signals;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Run a campaign: the same probe under several loads and settings, stored,
/// compared and judged in one command.
///
/// With no arguments: the quick check of this machine (latency on every CPU idle,
/// under CPU load, under memory load, under the dohell mix; about a minute), with
/// verdicts against 1 ms, the biggest risks found and an HTML report.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab run
  rtlab run --preset lab --duration 30s --label stock
  rtlab run my-board.toml --require gyro=500us --html board.html
  rtlab run --preset quick --require loop=1ms --junit rtlab-junit.xml
  rtlab run --attribute dohell --duration 10s
  rtlab run --preset quick --repeat 5 --duration 10s
  rtlab run my-board.toml --until-decided --max-repeats 8")]
pub struct RunArgs {
    /// A scenario file (TOML; the keys: rtlab help scenarios) [default: the quick
    /// check, preset quick].
    #[arg(value_name = "SCENARIO", conflicts_with_all = ["preset", "resume"])]
    scenario: Option<PathBuf>,
    /// Run a built-in scenario (`rtlab presets list`) [default: none].
    #[arg(long, value_name = "NAME", conflicts_with = "resume")]
    preset: Option<String>,
    /// Load attribution: run the latency probe under no load, under each part of
    /// this mix alone and under the whole mix, then rank the parts [default:
    /// no attribution].
    #[arg(long, value_name = "MIX", conflicts_with_all = ["scenario", "preset", "resume"])]
    attribute: Option<String>,
    /// Set every step's duration, scaling the whole campaign (a bare number is
    /// seconds) [default: each step's own].
    #[arg(long, value_name = "DUR")]
    duration: Option<String>,
    /// Explain the spikes of every latency step and the gaps of every noise
    /// step from kernel tracepoints (as `rtlab latency --trace` and `rtlab
    /// noise --trace`; a scenario may set `trace = true` instead).
    #[arg(long, conflicts_with = "resume")]
    trace: bool,
    /// Requirement name=budget (a bare number is µs) or preset (repeatable;
    /// replaces the scenario's) [default: the scenario's requirements].
    #[arg(long = "require", value_name = "NAME=DUR|PRESET")]
    requires: Vec<String>,
    /// Add the runs of an earlier campaign of the same scenario whose runs carry
    /// this label (another kernel) or tag to the final table and report. Checked
    /// before anything runs [default: none].
    #[arg(long, value_name = "LABEL|TAG")]
    compare_with: Vec<String>,
    /// Run every step N times, interleaved in rounds (A B C A B C, so that
    /// drift falls on every step alike); replaces each step's `repeat`
    /// [default: each step's own, 1 unless the scenario says; 3 with
    /// --until-decided].
    #[arg(long, value_name = "N", conflicts_with = "resume",
          value_parser = clap::value_parser!(u32).range(1..))]
    repeat: Option<u32>,
    /// Add rounds of every step while a verdict's repeats disagree, until
    /// every verdict is decided or --max-repeats is reached (then say what is
    /// not); exit 4 when the repeats still disagree.
    #[arg(long, conflicts_with = "resume")]
    until_decided: bool,
    /// The most repeats of each step --until-decided runs.
    #[arg(long, value_name = "M", default_value_t = DEFAULT_MAX_REPEATS, requires = "until_decided",
          value_parser = clap::value_parser!(u32).range(2..))]
    max_repeats: u32,
    /// Refuse a scenario whose matrix expands to more steps than this.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: u64,
    /// Continue an interrupted campaign from its first unfinished step
    /// [default: start a new one; given alone: the latest].
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "-1")]
    resume: Option<i64>,
    /// Write the HTML report here [default: next to the store].
    #[arg(long, value_name = "PATH", value_parser = super::common::output_file)]
    html: Option<PathBuf>,
    /// Print one JSON document (format rtlab/1) instead of the tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    ci: CiArgs,
    /// No progress line and no line per step; only the final result.
    #[arg(short, long)]
    quiet: bool,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
    /// Label of the campaign's runs [default: "<kernel release> <preemption
    /// model>"].
    #[arg(long, value_name = "TEXT", value_parser = super::common::label_value)]
    label: Option<String>,
    /// Tag every run (repeatable) [default: no tags].
    #[arg(long = "tag", value_name = "TAG", value_parser = super::common::tag_value)]
    tags: Vec<String>,
}

/// The most repeats `--until-decided` runs unless `--max-repeats` says.
const DEFAULT_MAX_REPEATS: u32 = 10;

/// The repeats `--until-decided` starts with unless `--repeat` says: the
/// fewest that can disagree with a majority.
const FIRST_ROUNDS: u32 = 3;

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
    let setup = Setup {
        db: &db,
        machine: &machine,
        compare_with: &a.compare_with,
        stopped: &|| stop.load(Ordering::Relaxed),
    };
    let prepared = match a.resume {
        Some(id) => {
            let max_steps = (a.max_steps != DEFAULT_MAX_STEPS).then_some(a.max_steps);
            let p = setup.resume((id >= 0).then_some(id), max_steps)?;
            if p.is_none() {
                eprintln!("interrupted before the campaign was resumed; nothing changed");
            }
            p
        }
        None => {
            let (file, text) = source(
                a.attribute.as_deref(),
                a.scenario.as_deref(),
                a.preset.as_deref(),
            )?;
            requirements(&a.requires)?;
            let label = match &a.label {
                Some(l) => l.clone(),
                None => crate::scenario::parse(&file, &text)?
                    .label
                    .unwrap_or_else(|| record::default_label(&fp)),
            };
            let stored = Stored {
                label,
                scenario: text,
                file,
                duration: a.duration.clone(),
                tags: a.tags.clone(),
                requires: a.requires.clone(),
                max_steps: (a.max_steps != DEFAULT_MAX_STEPS).then_some(a.max_steps),
                trace: a.trace,
                repeat: match a.until_decided {
                    true => Some(a.repeat.unwrap_or(FIRST_ROUNDS).min(a.max_repeats)),
                    false => a.repeat,
                },
                until_decided: a.until_decided.then_some(a.max_repeats),
            };
            let p = setup.start(stored, &fp, a.max_steps)?;
            if p.is_none() {
                eprintln!("interrupted before the campaign started; nothing stored");
            }
            p
        }
    };
    let Some(p) = prepared else {
        return Ok(EXIT_INTERRUPTED);
    };
    campaign(&a, p, &db, &fp, stop)
}

/// Runs a prepared campaign and prints its result; its exit code.
fn campaign(
    a: &RunArgs,
    p: Prepared,
    db: &Path,
    fp: &rtlab_engine::sysinfo::Fingerprint,
    stop: &'static std::sync::atomic::AtomicBool,
) -> Result<i32> {
    let Prepared {
        mut store,
        campaign,
        stored,
        scn,
        mut plan,
        from,
        earlier,
    } = p;
    let reqs = requirements_or(&stored.requires, &scn.requirements)?;
    let talk = !a.quiet && !a.json;
    if talk {
        let resuming = if from > 0 {
            format!(", resuming at step {}", from + 1)
        } else {
            String::new()
        };
        let most = match stored.until_decided {
            Some(m) => format!(", up to {m} repeats of each with --until-decided"),
            None => String::new(),
        };
        eprintln!(
            "campaign {campaign}: {} ({} steps{most}{resuming}) on {}",
            scn.name,
            plan.len(),
            stored.label
        );
        for w in system::fingerprint_warnings(fp) {
            eprint!(
                "{}",
                paragraph("  ! ", &format!("{}: {}", w.code, w.message))
            );
        }
    }
    let runner = Runner {
        db,
        campaign,
        label: &stored.label,
        tags: &stored.tags,
        stop,
        progress: crate::progress::wanted(a.quiet),
        quiet: !talk,
    };
    let mut open = Vec::new();
    let mut more = |store: &store::Store, plan: &[PlannedStep]| {
        next_round(store, campaign, &stored, plan, &reqs, talk, &mut open)
    };
    let outcome = runner.run(&mut store, &mut plan, from, &mut more)?;

    // The campaign's result: for each step, its latest complete run, else the
    // latest run it has.
    let steps = campaign_steps(&store, campaign)?;
    let mut shown: Vec<StepRun> = steps.clone();
    for id in earlier {
        shown.extend(campaign_steps(&store, id)?);
    }
    let found = risks(&steps, &reqs);
    let ranked = attribution::rank(&plan, &steps);
    let analysed = analyse(campaign_pairings(&shown), &reqs, DEFAULT_NOISE);
    let html_path = a
        .html
        .clone()
        .unwrap_or_else(|| store::report_path(db, campaign));
    let title = format!("rtlab run: {} (campaign {campaign})", scn.name);
    let html = crate::format::html::CampaignPage {
        title: &title,
        about: if outcome.interrupted {
            "interrupted"
        } else {
            "complete"
        },
        steps: &shown,
        reqs: &reqs,
        risks: &found,
        ranked: &ranked,
        unit: a.unit,
        outcome: &analysed,
    }
    .render()?;
    if a.html.is_none() {
        store::make_reports_dir(&html_path)?;
    }
    common::write_output("--html", Some(&html_path), &html)?;
    // A CI system gets this campaign's verdicts, those the exit code gives:
    // the runs --compare-with adds are shown beside them, not judged again.
    let ours: Vec<i64> = steps.iter().filter_map(|s| s.run.id).collect();
    let mut gated = analysed.clone();
    for p in &mut gated.parts {
        p.verdicts
            .retain(|v| v.run_id.is_some_and(|id| ours.contains(&id)));
    }
    write_files(&a.ci.files(&gated, &title)?)?;

    // Each step judged over its repeats (a step run once is an arm of one).
    let arms = repeats::arms(&steps);
    let verdicts = verdict::judge_arms(&arms, &reqs, DEFAULT_NOISE);
    let code = if outcome.interrupted {
        EXIT_INTERRUPTED
    } else {
        verdict::exit_code(&verdicts)
    };
    let status = if outcome.interrupted {
        "interrupted"
    } else {
        "complete"
    };
    let text = a.ci.text(&gated, || {
        Ok(if a.json {
            json::campaign(&CampaignDoc {
                campaign,
                name: &scn.name,
                status,
                steps: &steps,
                verdicts: &verdicts,
                risks: &found,
                attribution: &ranked,
                outcome: &analysed,
                html: html_path.display().to_string(),
                undecided: &open,
                exit_code: code,
            })?
        } else {
            let mut out = run_text(campaign, &scn.name, status, &shown, &reqs, &found, a.unit);
            if !ranked.is_empty() {
                out.push_str(&attribution_text(&ranked));
                out.push('\n');
            }
            out.push_str(&decision_text(&analysed, a.unit));
            let rounds = plan.iter().map(|p| p.repeat).max().unwrap_or(1);
            out.push_str(&not_decided(&open, rounds));
            out.push('\n');
            out.push_str(&format!("report: {}\n", html_path.display()));
            if outcome.interrupted {
                out.push_str(&format!(
                    "interrupted: continue with 'rtlab run --resume {campaign}'\n"
                ));
            }
            out
        })
    })?;
    common::write_output("--json", None, &text)?;
    Ok(code)
}

/// With `--until-decided`, the next round of every step while a verdict is
/// undecided and fewer than `--max-repeats` rounds ran; none otherwise. What
/// is still undecided is left in `open`.
fn next_round(
    store: &store::Store,
    campaign: i64,
    stored: &Stored,
    plan: &[PlannedStep],
    reqs: &[verdict::Requirement],
    talk: bool,
    open: &mut Vec<String>,
) -> Result<Vec<PlannedStep>> {
    let Some(max) = stored.until_decided else {
        return Ok(Vec::new());
    };
    let steps = campaign_steps(store, campaign)?;
    *open = repeats::undecided(&repeats::arms(&steps), reqs, DEFAULT_NOISE);
    let rounds = plan.iter().map(|p| p.repeat).max().unwrap_or(1);
    if open.is_empty() || rounds >= max {
        return Ok(Vec::new());
    }
    if talk {
        eprintln!(
            "after {rounds} repeats, undecided: {}; running round {}",
            open.join("; "),
            rounds + 1
        );
    }
    let (_, next) = stored.plan_rounds(None, Some(rounds + 1))?;
    Ok(next.into_iter().skip(plan.len()).collect())
}

/// Refuses flags that no step could use, before anything else.
fn check_flags(a: &RunArgs) -> Result<()> {
    if let Some(d) = &a.duration {
        parse_positive_duration(d, DefaultUnit::Seconds).map_err(|e| bad_flag("--duration", e))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::store::Store;

    const SCENARIO: &str = "name = \"r\"\n[[step]]\nname = \"idle\"\nprobe = \"latency\"\n";

    /// A campaign of SCENARIO, `--until-decided --max-repeats 4` from 3
    /// repeats, as far as the round of each maximum in `max_us` (the maxima
    /// its step runs saw, in plan order).
    fn campaign(max_us: &[u64]) -> (tempfile::TempDir, Store, i64, Stored, Vec<PlannedStep>) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let stored = Stored {
            scenario: SCENARIO.into(),
            file: "r.toml".into(),
            duration: None,
            label: "k".into(),
            tags: Vec::new(),
            requires: vec!["loop=1ms".into()],
            max_steps: None,
            trace: false,
            repeat: Some(3),
            until_decided: Some(4),
        };
        let rounds = max_us.len() as u32;
        let (_, plan) = stored.plan_rounds(None, Some(rounds)).unwrap();
        let fp = Default::default();
        let c = store.create_campaign("r", "", &fp).unwrap();
        for (p, us) in plan.iter().zip(max_us) {
            let run = run_from_samples("k", &[10_000, us * 1_000]);
            let id = store.save(&run).unwrap();
            store.add_campaign_run(c, &p.record(id)).unwrap();
        }
        (dir, store, c, stored, plan)
    }

    #[test]
    fn until_decided_adds_a_round_while_repeats_disagree_up_to_the_most() {
        let reqs = verdict::parse_requirement("loop=1ms").unwrap();
        let next = |max_us: &[u64], open: &mut Vec<String>| {
            let (_dir, store, c, stored, plan) = campaign(max_us);
            assert_eq!(plan.len(), 3);
            let names: Vec<String> = next_round(&store, c, &stored, &plan, &reqs, false, open)
                .unwrap()
                .iter()
                .map(|p| format!("{} {}", p.index, p.name))
                .collect();
            names
        };
        let mut open = Vec::new();
        // Every repeat within 1 ms by more than the noise: decided.
        assert!(next(&[400, 500, 300], &mut open).is_empty());
        assert!(open.is_empty());
        // Over it once: a fourth round.
        let more = next(&[400, 1_600, 300], &mut open);
        assert_eq!(more, ["3 idle #4"]);
        assert_eq!(
            open,
            ["idle against loop: within the budget in 2 of 3 repeats"]
        );
        // At the most repeats, nothing more, and what is open stays said.
        let (_dir, store, c, stored, four) = campaign(&[400, 1_600, 300, 200]);
        let mut open = Vec::new();
        assert!(
            next_round(&store, c, &stored, &four, &reqs, false, &mut open)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            open,
            ["idle against loop: within the budget in 3 of 4 repeats"]
        );
    }
}
