//! Starting or resuming a campaign: the options stored with it (so that
//! `--resume` plans the same steps), the plan checked on this machine, the
//! earlier campaigns it is compared with, and the campaign claimed in the store.
//! Everything is checked before the campaign is recorded: a problem leaves the
//! store as it was.

use super::check;
use super::runner::{campaign_steps, first_unfinished};
use super::{expand, parse, presets, PlannedStep, Scenario, Val, DEFAULT_MAX_STEPS};
use crate::error::{bad_flag, SystemError, UsageError};
use crate::step::Machine;
use crate::store::{self, Campaign, Store};
use anyhow::{bail, Result};
use rtlab_engine::sysinfo::Fingerprint;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Options stored with a campaign so that `--resume` plans the same steps.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stored {
    /// The scenario's TOML.
    pub scenario: String,
    /// Where it came from (a path, `preset NAME`).
    pub file: String,
    /// `--duration`: every step's duration.
    pub duration: Option<String>,
    /// Label of the campaign's runs.
    pub label: String,
    /// Tags of the campaign's runs.
    pub tags: Vec<String>,
    /// `--require` values (none: the scenario's requirements).
    pub requires: Vec<String>,
    /// The --max-steps it was started with (resuming plans the same steps).
    #[serde(default)]
    pub max_steps: Option<u64>,
    /// `--trace`: every latency step explains its spikes, every noise step its
    /// gaps, from kernel tracepoints.
    #[serde(default)]
    pub trace: bool,
    /// `--repeat`: every step runs this many times (else each its scenario's
    /// `repeat`).
    #[serde(default)]
    pub repeat: Option<u32>,
    /// `--until-decided`: whole rounds are added while a verdict or comparison
    /// is undecided, up to this many repeats of every step (`--max-repeats`).
    #[serde(default)]
    pub until_decided: Option<u32>,
}

impl Stored {
    /// The options `rtlab run` stored with campaign `c`; `None` for a campaign it
    /// did not make (one of imported runs).
    pub fn of(c: &Campaign) -> Option<Stored> {
        serde_json::from_str(&c.scenario).ok()
    }

    /// Its scenario and the plan `rtlab run` made of it, at most `max_steps`
    /// steps (default: the limit it was started with).
    pub fn plan(&self, max_steps: Option<u64>) -> Result<(Scenario, Vec<PlannedStep>)> {
        self.plan_rounds(max_steps, None)
    }

    /// [`Stored::plan`] with every step repeated `rounds` times (the rounds
    /// `--until-decided` added), when given.
    pub fn plan_rounds(
        &self,
        max_steps: Option<u64>,
        rounds: Option<u32>,
    ) -> Result<(Scenario, Vec<PlannedStep>)> {
        let scn = self.scenario(rounds)?;
        let max_steps = max_steps.or(self.max_steps).unwrap_or(DEFAULT_MAX_STEPS);
        let plan = planned(&scn, self.duration.as_deref(), self.trace, max_steps)?;
        Ok((scn, plan))
    }

    /// Its scenario, every step repeated `rounds` times when given, else
    /// `--repeat` times when that was given.
    fn scenario(&self, rounds: Option<u32>) -> Result<Scenario> {
        let mut scn = parse(&self.file, &self.scenario)?;
        if let Some(n) = rounds.or(self.repeat) {
            for step in &mut scn.steps {
                step.repeat = n;
            }
        }
        Ok(scn)
    }
}

/// The scenario a campaign runs, as its name and TOML: the attribution of a load
/// `mix`, a scenario file, or a preset (the quick check when none is named).
pub fn source(
    mix: Option<&str>,
    file: Option<&Path>,
    preset: Option<&str>,
) -> Result<(String, String)> {
    if let Some(mix) = mix {
        let text = presets::attribution(mix).ok_or_else(|| {
            let names: Vec<&str> = crate::loads::mix::MIXES.iter().map(|m| m.name).collect();
            bad_flag(
                "--attribute",
                format!("'{mix}' is not a load mix (mixes: {})", names.join(", ")),
            )
        })?;
        return Ok((format!("attribution of {mix}"), text));
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read scenario {}: {e}", path.display())))?;
        return Ok((path.display().to_string(), text));
    }
    let name = preset.unwrap_or("quick");
    let p = presets::get(name).ok_or_else(|| {
        bad_flag(
            "--preset",
            format!("no preset '{name}' (presets: {})", presets::names()),
        )
    })?;
    Ok((format!("preset {}", p.name), p.text.to_string()))
}

/// A campaign ready to run: recorded (or claimed, when resumed) in `store`, with
/// its plan checked from step `from` on.
pub struct Prepared {
    /// The store that holds it.
    pub store: Store,
    /// Its id.
    pub campaign: i64,
    /// Its stored options.
    pub stored: Stored,
    /// Its scenario.
    pub scn: Scenario,
    /// Its plan.
    pub plan: Vec<PlannedStep>,
    /// The first step to run.
    pub from: usize,
    /// Earlier campaigns shown beside it (`--compare-with`).
    pub earlier: Vec<i64>,
}

/// What `start` and `resume` need besides the campaign's own options.
pub struct Setup<'a> {
    /// The store's path.
    pub db: &'a Path,
    /// This machine, for the checks.
    pub machine: &'a Machine,
    /// `--compare-with` values.
    pub compare_with: &'a [String],
    /// Whether a signal arrived: checked last, before anything is recorded.
    pub stopped: &'a dyn Fn() -> bool,
}

impl Setup<'_> {
    /// A new campaign of `stored`'s scenario on the system `fp`; `None` when a
    /// signal arrived before it was recorded (nothing stored).
    pub fn start(
        &self,
        stored: Stored,
        fp: &Fingerprint,
        max_steps: u64,
    ) -> Result<Option<Prepared>> {
        let (scn, plan) = stored.plan_rounds(Some(max_steps), None)?;
        if let Some(most) = stored.until_decided {
            // Every round it may add must fit the limit too.
            stored.plan_rounds(Some(max_steps), Some(most))?;
        }
        check_plan(&scn, &plan, 0, self.machine)?;
        // An earlier campaign can only be in a store that exists: do not create
        // one just to find it missing.
        let existing = if store::exists(self.db) {
            Some(Store::open(self.db)?)
        } else {
            None
        };
        let earlier = compare_with(existing.as_ref(), &scn.name, self.compare_with, None)?;
        if (self.stopped)() {
            return Ok(None);
        }
        let mut store = match existing {
            Some(s) => s,
            None => Store::open(self.db)?,
        };
        let campaign = store.create_campaign(&scn.name, &serde_json::to_string(&stored)?, fp)?;
        Ok(Some(Prepared {
            store,
            campaign,
            stored,
            scn,
            plan,
            from: 0,
            earlier,
        }))
    }

    /// Campaign `id` (the latest interrupted one when `None`), from its first
    /// unfinished step; `max_steps` overrides the stored limit. `None` when a
    /// signal arrived before it was claimed (nothing changed).
    pub fn resume(&self, id: Option<i64>, max_steps: Option<u64>) -> Result<Option<Prepared>> {
        let mut store = Store::open(self.db)?;
        let id = match id {
            Some(id) => id,
            None => latest_interrupted(&store)?,
        };
        let c = store.load_campaign(id)?;
        let stored = Stored::of(&c).ok_or_else(|| {
            UsageError(format!(
                "campaign {id} was not made by 'rtlab run' and cannot be resumed"
            ))
        })?;
        // The rounds --until-decided added: as many as the campaign began.
        let began = c.steps.iter().map(|s| s.repeat).max();
        let rounds = stored.until_decided.and(stored.repeat.max(began));
        let (scn, plan) = stored.plan_rounds(max_steps, rounds)?;
        // Every planned step ran: only a campaign that repeats until decided
        // may have more to do (the rounds it judges still undecided).
        let from = match first_unfinished(&store, id, plan.len())? {
            Some(from) => from,
            None if stored.until_decided.is_some() => plan.len(),
            None => bail!(UsageError(format!(
                "campaign {id} has no unfinished step: nothing to resume"
            ))),
        };
        check_plan(&scn, &plan, from, self.machine)?;
        let earlier = compare_with(Some(&store), &scn.name, self.compare_with, Some(id))?;
        if (self.stopped)() {
            return Ok(None);
        }
        // Refused while another live process runs it.
        store.claim_campaign(id)?;
        Ok(Some(Prepared {
            store,
            campaign: id,
            stored,
            scn,
            plan,
            from,
            earlier,
        }))
    }
}

/// The plan, counted before it is expanded and refused above `max_steps`;
/// with `trace`, every latency and noise step traces (`--trace`), and a
/// scenario without one is refused.
fn planned(
    scn: &Scenario,
    duration: Option<&str>,
    trace: bool,
    max_steps: u64,
) -> Result<Vec<PlannedStep>> {
    let mut plan =
        expand(scn, duration, max_steps).map_err(|e| UsageError(format!("{}: {e}", scn.file)))?;
    if trace {
        let mut traced = 0;
        for step in &mut plan {
            let Some(flag) = step.params.step_mut().trace() else {
                continue;
            };
            *flag = true;
            step.values.retain(|(k, _)| k != "trace");
            step.values.push(("trace".into(), Val::Bool(true)));
            traced += 1;
        }
        if traced == 0 {
            bail!(bad_flag(
                "--trace",
                format!(
                    "{} has no latency or noise step to trace; tracing explains the spikes of \
                     latency steps and the gaps of noise steps",
                    scn.file
                )
            ));
        }
    }
    Ok(plan)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn traced(plan: &[PlannedStep]) -> Vec<(String, bool)> {
        plan.iter()
            .map(|s| match &s.params {
                crate::step::Params::Latency(p) => (s.name.clone(), p.tracing.trace),
                _ => (s.name.clone(), false),
            })
            .collect()
    }

    #[test]
    fn trace_turns_on_tracing_in_every_latency_step_only() {
        let p = presets::get("messaging").unwrap();
        let scn = parse("preset messaging", p.text).unwrap();
        let plan = planned(&scn, None, false, DEFAULT_MAX_STEPS).unwrap();
        assert!(traced(&plan).iter().all(|(_, t)| !t));
        let plan = planned(&scn, None, true, DEFAULT_MAX_STEPS).unwrap();
        let t = traced(&plan);
        assert_eq!(t[0], ("kernel".to_string(), true));
        assert_eq!(t.iter().filter(|(_, t)| *t).count(), 1, "{t:?}");
        assert!(plan[0]
            .values
            .contains(&("trace".to_string(), Val::Bool(true))));
    }

    #[test]
    fn trace_in_a_scenario_without_latency_steps_is_refused() {
        let scn = parse("s.toml", "name = \"b\"\n[[step]]\nprobe = \"bench.cpu\"\n").unwrap();
        let e = planned(&scn, None, true, DEFAULT_MAX_STEPS).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--trace: s.toml has no latency or noise step to trace; tracing explains the spikes \
             of latency steps and the gaps of noise steps"
        );
        let scn = parse("n.toml", "name = \"n\"\n[[step]]\nprobe = \"noise\"\n").unwrap();
        let plan = planned(&scn, None, true, DEFAULT_MAX_STEPS).unwrap();
        let crate::step::Params::Noise(p) = &plan[0].params else {
            panic!("not noise")
        };
        assert!(p.tracing.trace, "a noise step is traced");
    }

    #[test]
    fn a_scenario_sets_trace_in_its_defaults() {
        let text = "name = \"t\"\n[defaults]\ntrace = true\ntrace_threshold = \"50us\"\n\
                    [[step]]\nprobe = \"latency\"\n[[step]]\nprobe = \"bench.cpu\"\n";
        let scn = parse("t.toml", text).unwrap();
        let plan = planned(&scn, None, false, DEFAULT_MAX_STEPS).unwrap();
        let crate::step::Params::Latency(p) = &plan[0].params else {
            panic!("not latency")
        };
        assert!(p.tracing.trace);
        assert_eq!(p.tracing.trace_threshold, Some("50us".into()));
    }

    /// A store with a campaign of one SCHED_OTHER latency step, stored as
    /// `rtlab run --until-decided` (from 3 repeats, at most `until`) or
    /// `--repeat 3` (`until` None) stores it, interrupted, whose plan steps
    /// `done` saved complete runs (round `r` of the step is index `r - 1`).
    fn interrupted(until: Option<u32>, done: &[u32]) -> (tempfile::TempDir, i64) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let stored = Stored {
            scenario:
                "name = \"r\"\n[[step]]\nname = \"idle\"\nprobe = \"latency\"\npriority = 0\n"
                    .into(),
            file: "r.toml".into(),
            duration: Some("1s".into()),
            label: "k".into(),
            tags: Vec::new(),
            requires: Vec::new(),
            max_steps: None,
            trace: false,
            repeat: Some(3),
            until_decided: until,
        };
        let fp = Fingerprint::default();
        let text = serde_json::to_string(&stored).unwrap();
        let c = store.create_campaign("r", &text, &fp).unwrap();
        for &r in done {
            let run = crate::analysis::fixture::run_from_samples("k", &[10_000]);
            let id = store.save(&run).unwrap();
            let step = store::CampaignStep {
                step_index: i64::from(r) - 1,
                step_name: format!("idle #{r}"),
                base_name: "idle".into(),
                repeat: r,
                run_id: id,
            };
            store.add_campaign_run(c, &step).unwrap();
        }
        store
            .set_campaign_status(c, store::CampaignStatus::Interrupted)
            .unwrap();
        (dir, c)
    }

    #[test]
    fn resume_continues_the_rounds_a_campaign_began() {
        let machine = Machine::this();
        let resume = |dir: &tempfile::TempDir, c: i64| {
            let db = dir.path().join("r.db");
            let setup = Setup {
                db: &db,
                machine: &machine,
                compare_with: &[],
                stopped: &|| false,
            };
            setup
                .resume(Some(c), None)
                .map(|p| p.map(|p| (p.plan.len(), p.from)))
        };
        // Stopped in round 2 of 3: from its first unfinished step.
        let (dir, c) = interrupted(Some(5), &[1]);
        assert_eq!(resume(&dir, c).unwrap(), Some((3, 1)));
        // --until-decided had begun a 4th round: planned with it.
        let (dir, c) = interrupted(Some(5), &[1, 2, 3]);
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store
            .save(&crate::analysis::fixture::run_from_samples("k", &[10_000]))
            .unwrap();
        let fourth = store::CampaignStep {
            step_index: 3,
            step_name: "idle #4".into(),
            base_name: "idle".into(),
            repeat: 4,
            run_id: id,
        };
        store.add_campaign_run(c, &fourth).unwrap();
        drop(store);
        // Every planned step ran: what is undecided is judged again.
        assert_eq!(resume(&dir, c).unwrap(), Some((4, 4)));
        // Without --until-decided, a campaign whose steps all ran is done.
        let (dir, c) = interrupted(None, &[1, 2, 3]);
        let e = resume(&dir, c).unwrap_err();
        assert!(e.to_string().contains("no unfinished step"), "{e}");
    }
}
