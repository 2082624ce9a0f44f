//! Trying candidates: for each, the baseline and the changed system measured
//! in turn (A B A B ...), `repeat` times, the change made before each changed
//! run and put back after it; then the winners together against the baseline.
//! The measurement is handed in ([`Setup::measure`]: the latency step in
//! `rtlab tune`, scripted runs in tests), and so is where each run goes
//! ([`Setup::record`]: the store's campaign).

use super::change::{Change, Refused};
use super::fix::{Fix, Plan};
use super::journal::{Applied, Session};
use super::judge::{self, Effect, Verdict};
use crate::error::SystemError;
use crate::record::{Run, Status};
use crate::step::latency::Params;
use crate::step::rt::{PolicyArg, SchedArgs};
use crate::step::Observer;
use anyhow::{bail, Result};
use rtlab_engine::rt::sched::Policy;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// Measures with the given parameters, the observer told when the measuring
/// threads start.
pub type Measure<'a> = &'a mut dyn FnMut(&Params, &mut dyn Observer) -> Result<Run>;
/// Keeps a run under a step name (saved in the campaign) and hands it back,
/// with its id.
pub type Record<'a> = &'a mut dyn FnMut(&str, Run) -> Result<Run>;

/// How candidates are tried.
pub struct Setup<'a> {
    /// The measuring step's parameters (the baseline's).
    pub probe: Params,
    /// Runs per arm.
    pub repeat: u32,
    /// The noise threshold (a fraction).
    pub noise: f64,
    /// The stop flag (SIGINT, SIGTERM).
    pub stop: &'static AtomicBool,
    /// The measurement.
    pub measure: Measure<'a>,
    /// Where runs go.
    pub record: Record<'a>,
    /// Told before each run: what is measured next.
    pub progress: &'a mut dyn FnMut(&str),
}

/// How one candidate ended.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Its name (`timer_migration`).
    pub name: &'static str,
    /// What it changes.
    pub title: &'static str,
    /// The change, with its values (empty when not possible).
    pub change: String,
    /// The command that makes it by hand.
    pub by_hand: String,
    /// The verdict.
    pub verdict: Verdict,
    /// For "no real effect": whether the intervals were narrow enough to see
    /// a real difference.
    pub decided: bool,
    /// Why it is not possible here, or why it stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Parts of the change the kernel refused (the rest was tried).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Each figure before and after.
    pub effects: Vec<Effect>,
    /// The baseline's runs (ids).
    pub baseline: Vec<i64>,
    /// The changed arm's runs (ids).
    pub changed: Vec<i64>,
    /// Its plan, when it was possible.
    #[serde(skip)]
    pub plan: Option<Plan>,
    /// The runs of both arms.
    #[serde(skip)]
    pub runs: [Vec<Run>; 2],
}

impl Outcome {
    /// A candidate not tried, and why.
    pub fn not_possible(fix: &Fix, reason: String) -> Outcome {
        Outcome {
            name: fix.name,
            title: fix.title,
            change: String::new(),
            by_hand: String::new(),
            verdict: Verdict::NotPossible,
            decided: false,
            reason: Some(reason),
            skipped: Vec::new(),
            effects: Vec::new(),
            baseline: Vec::new(),
            changed: Vec::new(),
            plan: None,
            runs: [Vec::new(), Vec::new()],
        }
    }

    fn planned(fix: &Fix, plan: Plan) -> Outcome {
        Outcome {
            change: plan.change.clone(),
            by_hand: plan.by_hand.clone(),
            reason: None,
            plan: Some(plan),
            ..Outcome::not_possible(fix, String::new())
        }
    }
}

/// The changes could not all be put back: trying stops at once.
#[derive(Debug)]
pub struct NotRestored(pub Vec<(Change, Refused)>);

impl std::fmt::Display for NotRestored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(c, e)| format!("{}: {e}", c.text()))
            .collect();
        write!(
            f,
            "could not put back {} (kept in the journal; 'rtlab tune --restore' tries again)",
            parts.join("; ")
        )
    }
}

impl std::error::Error for NotRestored {}

/// The measuring threads in `sched` (the baseline's when `None`).
fn probe_with(p: &Params, sched: Option<(Policy, i32)>) -> Params {
    let Some((policy, prio)) = sched else {
        return p.clone();
    };
    let policy = match policy {
        Policy::Fifo => PolicyArg::Fifo,
        Policy::Rr => PolicyArg::Rr,
        Policy::Batch => PolicyArg::Batch,
        Policy::Idle => PolicyArg::Idle,
        _ => PolicyArg::Other,
    };
    Params {
        sched: SchedArgs {
            policy,
            priority: Some(prio),
        },
        ..p.clone()
    }
}

/// Moves this process into the cgroup of a change as the measuring threads
/// start.
struct Enter<'a> {
    session: &'a mut Session,
    refused: Option<Refused>,
}

impl Observer for Enter<'_> {
    fn start(&mut self, _names: &[String]) {
        if let Err(e) = self.session.enter_cgroup() {
            self.refused = Some(e);
        }
    }
}

impl Setup<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One run of an arm, kept under `name`; `None` when a signal cut it short
    /// (it is kept all the same).
    fn arm(
        &mut self,
        name: &str,
        params: &Params,
        session: &mut Session,
    ) -> Result<(Option<Run>, Option<Refused>)> {
        (self.progress)(name);
        let mut enter = Enter {
            session,
            refused: None,
        };
        let run = (self.measure)(params, &mut enter)?;
        let refused = enter.refused;
        let run = (self.record)(name, run)?;
        let whole = run.status == Status::Complete && !self.stopped();
        Ok((whole.then_some(run), refused))
    }

    /// Tries `plan` (named `name`): `repeat` rounds of the baseline, then the
    /// change made, measured and put back.
    pub fn try_plan(&mut self, name: &str, plan: &Plan, session: &mut Session) -> Result<Tried> {
        let mut t = Tried::default();
        let [a, b] = match plan.probe {
            Some([a, b]) => [Some(a), Some(b)],
            None => [None, None],
        };
        let (base, changed) = (probe_with(&self.probe, a), probe_with(&self.probe, b));
        // Made and put back once before anything is measured: a change the
        // kernel refuses costs no measurement.
        if let Some(refused) = self.check(plan, session)? {
            t.refused = Some(refused);
            return Ok(t);
        }
        for r in 1..=self.repeat {
            if self.stopped() {
                t.interrupted = true;
                break;
            }
            let (run, _) = self.arm(&format!("{name} baseline #{r}"), &base, session)?;
            let Some(run) = run else {
                t.interrupted = true;
                break;
            };
            t.runs[0].push(run);
            let applied = match make(plan, session)? {
                Ok(a) => a,
                Err(refused) => {
                    t.refused = Some(refused);
                    break;
                }
            };
            for s in applied.skipped {
                if !t.skipped.contains(&s) {
                    t.skipped.push(s);
                }
            }
            let measured = self.arm(&format!("{name} changed #{r}"), &changed, session);
            let back = session.restore();
            if !back.is_empty() {
                bail!(SystemError(NotRestored(back).to_string()));
            }
            let (run, refused) = measured?;
            if let Some(e) = refused {
                t.refused = Some(e.0);
                break;
            }
            let Some(run) = run else {
                t.interrupted = true;
                break;
            };
            t.runs[1].push(run);
        }
        Ok(t)
    }

    /// Makes the change and puts it back at once: the kernel's refusal, if it
    /// refuses.
    fn check(&mut self, plan: &Plan, session: &mut Session) -> Result<Option<String>> {
        let refused = make(plan, session)?.err();
        let back = session.restore();
        if !back.is_empty() {
            bail!(SystemError(NotRestored(back).to_string()));
        }
        Ok(refused)
    }

    /// Tries every candidate of `planned` (a plan, or why there is none).
    pub fn try_all(
        &mut self,
        planned: Vec<(&'static Fix, Result<Plan, String>)>,
        session: &mut Session,
    ) -> Result<Vec<Outcome>> {
        let mut out = Vec::new();
        for (fix, plan) in planned {
            let plan = match plan {
                Ok(p) => p,
                Err(reason) => {
                    out.push(Outcome::not_possible(fix, reason));
                    continue;
                }
            };
            if self.stopped() {
                let mut o = Outcome::planned(fix, plan);
                o.verdict = Verdict::Interrupted;
                o.reason = Some("stopped before it was tried".into());
                out.push(o);
                continue;
            }
            let tried = self.try_plan(fix.name, &plan, session)?;
            out.push(self.judged(Outcome::planned(fix, plan), tried));
        }
        Ok(out)
    }

    /// The outcome of what was tried.
    pub fn judged(&self, mut o: Outcome, t: Tried) -> Outcome {
        o.baseline = t.runs[0].iter().filter_map(|r| r.id).collect();
        o.changed = t.runs[1].iter().filter_map(|r| r.id).collect();
        o.skipped = t.skipped;
        if let Some(reason) = t.refused {
            o.verdict = Verdict::NotPossible;
            o.reason = Some(reason);
        } else if t.interrupted || t.runs[1].is_empty() {
            o.verdict = Verdict::Interrupted;
            o.reason = Some("stopped by a signal".into());
        } else {
            let a: Vec<&Run> = t.runs[0].iter().collect();
            let b: Vec<&Run> = t.runs[1].iter().collect();
            o.effects = judge::effects(&a, &b, self.noise);
            o.verdict = judge::verdict(&o.effects);
            o.decided = judge::decided(&o.effects);
        }
        o.runs = t.runs;
        o
    }
}

/// Makes the change of `plan`: what was made, or why nothing was (the
/// kernel's refusal, said with the plan's note on it).
fn make(plan: &Plan, session: &mut Session) -> Result<std::result::Result<Applied, String>> {
    let applied = match session.apply(&plan.wants) {
        Ok(a) => a,
        Err(e) => {
            return Ok(Err(match plan.refusal_note {
                Some(note) => format!("{e}: {note}"),
                None => e.0,
            }))
        }
    };
    if applied.made > 0 {
        return Ok(Ok(applied));
    }
    let back = session.restore();
    if !back.is_empty() {
        bail!(SystemError(NotRestored(back).to_string()));
    }
    Ok(Err(match applied.skipped.as_slice() {
        [] => "nothing left to change".into(),
        all => format!("the kernel refused every part: {}", all.join("; ")),
    }))
}

/// What trying one plan gave.
#[derive(Debug, Default)]
pub struct Tried {
    /// The baseline's and the changed arm's complete runs.
    pub runs: [Vec<Run>; 2],
    /// Optional parts the kernel refused.
    pub skipped: Vec<String>,
    /// The kernel's refusal of the change.
    pub refused: Option<String>,
    /// A signal stopped it.
    pub interrupted: bool,
}

/// The plans of the candidates that helped, as one: every change, in order.
pub fn together(winners: &[&Outcome]) -> Option<Plan> {
    let plans: Vec<&Plan> = winners.iter().filter_map(|o| o.plan.as_ref()).collect();
    if plans.len() < 2 {
        return None;
    }
    Some(Plan {
        wants: plans.iter().flat_map(|p| p.wants.clone()).collect(),
        change: winners
            .iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
            .join(" + "),
        by_hand: plans
            .iter()
            .map(|p| p.by_hand.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        probe: plans.iter().find_map(|p| p.probe),
        ..Plan::default()
    })
}
