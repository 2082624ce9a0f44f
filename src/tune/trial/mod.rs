//! `rtlab tune`: try each fix the audit suggests that can be changed at run
//! time, measure what it does under the user's load, keep what helps, put back
//! the rest.
//!
//! The candidates ([`fix`]) read the system and plan their changes, or say why
//! they are not possible here. Each change is recorded in a journal before it
//! is made and put back when its candidate ends ([`journal`], [`change`]); the
//! baseline and the changed system are measured in turn, repeated ([`run`]),
//! and judged as `rtlab compare` judges ([`judge`]); the winners are then
//! measured together. With `--apply` the winners stay on and are written down
//! to last ([`persist`]). At the end every value a candidate could touch is
//! read again and compared with what it was at the start ([`Snapshot`]).

pub mod change;
pub mod fix;
pub mod journal;
pub mod judge;
pub mod persist;
pub mod render;
pub mod run;

use change::Want;
use fix::{BootFix, Ctx, Fix, Plan};
use journal::{Kept, Session};
use judge::Verdict;
use run::{Outcome, Setup};
use anyhow::Result;
use crate::tune::journal::{Journal, LOCK_WAIT};
use crate::tune::prio::thread;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What the measuring runs were.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// The CPUs measured.
    pub cpus: String,
    /// Their period.
    pub interval: String,
    /// Each run's length.
    pub duration: String,
    /// Policy and priority of the measuring threads (`fifo/90`).
    pub priority: String,
    /// The loads (specs).
    pub loads: Vec<String>,
}

/// Every value the candidates could change, as read at the start.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    values: Vec<(PathBuf, String)>,
    threads: Vec<(i32, String, crate::tune::prio::task::Setting)>,
}

impl Snapshot {
    /// Reads every value and thread that `plans` would change.
    pub fn take<'a>(root: &rtlab_engine::sysinfo::SysRoot, plans: impl Iterator<Item = &'a Plan>) -> Snapshot {
        let mut s = Snapshot::default();
        for w in plans.flat_map(|p| &p.wants) {
            match w {
                Want::Value { path, .. } => {
                    let p = root.path(path);
                    if let Ok(v) = change::read_value(&p) {
                        if !s.values.iter().any(|(q, _)| *q == p) {
                            s.values.push((p, v));
                        }
                    }
                }
                Want::Thread { tid, name, .. } => {
                    if let Some(now) = thread::current_setting(*tid) {
                        s.threads.push((*tid, name.clone(), now));
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// Reads everything again: how many values were compared, and those that
    /// differ (leaving out what `kept` holds, changed on purpose).
    pub fn compare(&self, kept: &Held) -> Compared {
        let mut c = Compared::default();
        for (p, was) in &self.values {
            if kept.values.contains(p) {
                continue;
            }
            c.values += 1;
            match change::read_value(p) {
                Ok(now) if now == *was => {}
                Ok(now) => c.differ.push(format!("{} reads {now} (was {was})", p.display())),
                Err(e) => c.differ.push(e.0),
            }
        }
        for (tid, name, was) in &self.threads {
            // A thread that ended has nothing left to compare.
            let Some(now) = thread::current_setting(*tid) else {
                continue;
            };
            if kept.threads.contains(tid) {
                continue;
            }
            c.threads += 1;
            if now != *was {
                c.differ.push(format!(
                    "thread {name} ({tid}) is {} (was {})",
                    crate::tune::prio::outcome::setting_text(&now),
                    crate::tune::prio::outcome::setting_text(was)
                ));
            }
        }
        c
    }
}

/// The system read back at the end.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Compared {
    /// Values read again.
    pub values: usize,
    /// Threads read again.
    pub threads: usize,
    /// What is not as it was.
    pub differ: Vec<String>,
}

/// What `--apply` keeps changed on purpose: value files and threads.
#[derive(Debug, Clone, Default)]
pub struct Held {
    values: Vec<PathBuf>,
    threads: Vec<i32>,
}

/// What `--apply` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// The candidates kept on.
    pub kept: Vec<String>,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// What only the kernel command line or the application can make last.
    pub boot: Vec<String>,
}

/// Everything `rtlab tune` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// How it measured.
    pub probe: Probe,
    /// Runs per arm.
    pub repeat: u32,
    /// The noise threshold (a fraction).
    pub noise: f64,
    /// The campaign its runs are stored in.
    pub campaign: Option<i64>,
    /// What an earlier `rtlab tune` left on and was put back first.
    pub recovered: Vec<String>,
    /// Each candidate.
    pub candidates: Vec<Outcome>,
    /// The winners together, when more than one helped.
    pub together: Option<Outcome>,
    /// Fixes that need a reboot or another kernel, not tried.
    pub boot: Vec<BootFix>,
    /// The system read back at the end.
    pub after: Compared,
    /// What `--apply` kept, when asked.
    pub applied: Option<Applied>,
    /// A signal stopped it.
    pub interrupted: bool,
}

/// What to try.
pub struct Job<'a> {
    /// The candidates, in order.
    pub fixes: Vec<&'static Fix>,
    /// What they read.
    pub ctx: Ctx<'a>,
    /// `--apply`: the directory the files go below (`/etc`), and the rtlab
    /// executable the unit runs.
    pub apply: Option<(&'a Path, &'a Path)>,
}

/// Plans every candidate of `fixes`: a plan, or why it is not possible here.
pub fn plan(fixes: &[&'static Fix], ctx: &Ctx) -> Vec<(&'static Fix, Result<Plan, String>)> {
    fixes.iter().map(|&f| (f, (f.plan)(ctx))).collect()
}

/// Tries the candidates planned, then the winners together; keeps the
/// winners with `--apply`; reads every value back at the end.
pub fn tune(
    job: &Job,
    planned: Vec<(&'static Fix, Result<Plan, String>)>,
    setup: &mut Setup,
    session: &mut Session,
) -> Result<(Vec<Outcome>, Option<Outcome>, Option<Applied>, Compared)> {
    let before = Snapshot::take(
        job.ctx.root,
        planned.iter().filter_map(|(_, p)| p.as_ref().ok()),
    );
    let outcomes = setup.try_all(planned, session)?;
    let winners: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Helps)
        .collect();
    let together = match run::together(&winners) {
        Some(plan) if !setup.stop.load(std::sync::atomic::Ordering::Relaxed) => {
            let tried = setup.try_plan("together", &plan, session)?;
            let all = Outcome {
                name: "together",
                title: "the changes that helped, together",
                change: plan.change.clone(),
                by_hand: plan.by_hand.clone(),
                verdict: Verdict::NoRealEffect,
                decided: false,
                reason: None,
                skipped: Vec::new(),
                effects: Vec::new(),
                baseline: Vec::new(),
                changed: Vec::new(),
                plan: Some(plan),
                runs: [Vec::new(), Vec::new()],
            };
            Some(setup.judged(all, tried))
        }
        _ => None,
    };
    let interrupted = setup.stop.load(std::sync::atomic::Ordering::Relaxed);
    let applied = match job.apply {
        Some((etc, exe)) if !interrupted => Some(keep(&winners, session, etc, exe)?),
        _ => None,
    };
    let kept = match &applied {
        Some(_) => held(job.ctx.root, &winners),
        None => Held::default(),
    };
    let after = before.compare(&kept);
    Ok((outcomes, together, applied, after))
}

/// The values and threads that the winners' changes hold.
fn held(root: &rtlab_engine::sysinfo::SysRoot, winners: &[&Outcome]) -> Held {
    let mut h = Held::default();
    for w in winners.iter().filter_map(|o| o.plan.as_ref()).flat_map(|p| &p.wants) {
        match w {
            Want::Value { path, .. } => h.values.push(root.path(path)),
            Want::Thread { tid, .. } => h.threads.push(*tid),
            _ => {}
        }
    }
    h
}

/// Makes the winners' changes again and leaves them on, recorded in the
/// journal of what `--apply` kept, and writes the files that make them last.
fn keep(winners: &[&Outcome], session: &mut Session, etc: &Path, exe: &Path) -> Result<Applied> {
    let state = session
        .path()
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let kept_journal = Journal::<Kept>::lock(&journal::kept_path(&state), LOCK_WAIT)?;
    let mut kept = kept_journal.load()?;
    let mut applied = Applied::default();
    let mut lasting: Vec<(&str, &Plan)> = Vec::new();
    for o in winners {
        let Some(plan) = &o.plan else { continue };
        if let Err(e) = session.apply(&plan.wants) {
            applied.boot.push(format!("{}: not kept, the kernel refused it now: {e}", o.name));
            continue;
        }
        kept.changes.extend(session.keep()?);
        kept_journal.store(&kept)?;
        applied.kept.push(o.name.to_string());
        lasting.push((o.name, plan));
    }
    let (files, boot) = persist::files(etc, &lasting, exe)?;
    applied.boot.extend(boot);
    let written = persist::write(etc, &files)?;
    applied.files = written.iter().map(|w| w.path.clone()).collect();
    for w in written {
        kept.files.retain(|k| k.path != w.path);
        kept.files.push(w);
    }
    kept_journal.store(&kept)?;
    Ok(applied)
}

/// What `rtlab tune --restore` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Restored {
    /// What an ended `rtlab tune` had left on, put back.
    pub recovered: Vec<String>,
    /// What `--apply` kept, put back.
    pub values: Vec<String>,
    /// Files removed.
    pub files: Vec<String>,
    /// What could not be put back or removed, with why.
    pub failed: Vec<String>,
}

/// Puts back everything `rtlab tune` left: what an ended run had on (done by
/// opening `session`), what `--apply` kept, and the files it wrote.
pub fn restore(session: &Session, recovered: Vec<String>) -> Result<Restored> {
    let state = session
        .path()
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let j = Journal::<Kept>::lock(&journal::kept_path(&state), LOCK_WAIT)?;
    let kept = j.load()?;
    let mut r = Restored {
        recovered,
        ..Restored::default()
    };
    let (done, failed) = journal::put_back_all(&kept.changes);
    r.values = done;
    r.failed = failed.iter().map(|(c, e)| format!("{}: {e}", c.text())).collect();
    for w in &kept.files {
        match persist::remove(w) {
            Ok(said) => r.files.push(said),
            Err(said) => r.failed.push(said),
        }
    }
    j.store(&Kept {
        changes: failed.into_iter().map(|(c, _)| c).collect(),
        // A file changed by hand since is the user's now: not kept for removal.
        files: Vec::new(),
    })?;
    Ok(r)
}
