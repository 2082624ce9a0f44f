//! Runs a plan of steps as a campaign.
//!
//! Each step is a child `rtlab` process (the subcommand of its probe, with
//! `--json -q` and the campaign's store), in a process group of its own so that the
//! runner alone decides when a step is interrupted. A step that crashes cannot take
//! the campaign with it; every step saves its own run, and the runner maps it to
//! the campaign. Ctrl-C stops the current step (it saves what it gathered as
//! `interrupted`), keeps the completed ones, and marks the campaign interrupted so
//! that `rtlab run --resume` continues from the first unfinished step. A step
//! stopped before it had gathered anything (in its first milliseconds) saves no
//! run; the campaign is interrupted all the same. A step that fails marks the
//! campaign failed. Children get SIGINT when the runner dies, so a killed runner
//! leaves no step or echo server behind. When every planned step has run, the
//! caller may add steps (`--until-decided`: another interleaved round) and the
//! campaign goes on with them; each step's base name and repeat are recorded,
//! and [`by_base`] groups a campaign's step runs by them.

use super::{PlannedStep, Val};
use crate::error::{SystemError, UsageError, EXIT_INTERRUPTED};
use crate::record::{Run, Status};
use crate::store::{CampaignStatus, Store};
use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use rtlab_engine::rt::process::{self, SIGINT};
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the runner needs besides the plan.
pub struct Runner<'a> {
    /// The store every step saves to.
    pub db: &'a Path,
    /// Campaign id.
    pub campaign: i64,
    /// Label of every run.
    pub label: &'a str,
    /// Tags of every run.
    pub tags: &'a [String],
    /// The stop flag (SIGINT/SIGTERM).
    pub stop: &'static AtomicBool,
    /// Show a progress line (stderr is a terminal, no --quiet), also with --json.
    pub progress: bool,
    /// No line per step.
    pub quiet: bool,
}

/// A step that ran.
#[derive(Debug, Clone)]
pub struct StepRun {
    /// Its place in the plan.
    pub index: usize,
    /// Its name (`idle #2`).
    pub name: String,
    /// Its name without the repeat (`idle`): the same for each repeat.
    pub base: String,
    /// Which repeat it is (1-based).
    pub repeat: u32,
    /// The run it saved.
    pub run: Run,
}

/// How the campaign went.
#[derive(Debug)]
pub struct Outcome {
    /// True when Ctrl-C/SIGTERM stopped it.
    pub interrupted: bool,
}

/// Asked when every planned step has run: the steps to run next (another
/// round of every step), or none to end the campaign.
pub type More<'a> = &'a mut dyn FnMut(&Store, &[PlannedStep]) -> Result<Vec<PlannedStep>>;

impl Runner<'_> {
    /// Runs `plan[from..]`, then what `more` adds, and records every run in
    /// the campaign. The campaign ends `complete`, `interrupted` (a signal), or
    /// `failed` (an error), never `running`.
    pub fn run(
        &self,
        store: &mut Store,
        plan: &mut Vec<PlannedStep>,
        from: usize,
        more: More,
    ) -> Result<Outcome> {
        let result = self.run_steps(store, plan, from, more);
        let status = match &result {
            Ok(true) => CampaignStatus::Interrupted,
            Ok(false) => CampaignStatus::Complete,
            Err(_) if self.stop.load(Ordering::Relaxed) => CampaignStatus::Interrupted,
            Err(_) => CampaignStatus::Failed,
        };
        let marked = store.set_campaign_status(self.campaign, status);
        let interrupted = result?;
        marked?;
        Ok(Outcome { interrupted })
    }

    /// Runs the steps; true when a signal stopped them.
    fn run_steps(
        &self,
        store: &mut Store,
        plan: &mut Vec<PlannedStep>,
        from: usize,
        more: More,
    ) -> Result<bool> {
        let bar = self.bar(plan.len() as u64, from as u64);
        let mut at = from.min(plan.len());
        let interrupted = loop {
            if self.steps(store, &plan[at..], plan.len(), bar.as_ref())? {
                break true;
            }
            at = plan.len();
            let next = more(store, plan)?;
            if next.is_empty() {
                break false;
            }
            plan.extend(next);
            if let Some(b) = &bar {
                b.set_length(plan.len() as u64);
            }
        };
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok(interrupted)
    }

    /// Runs `todo` (steps of a plan of `len`); true when a signal stopped
    /// them.
    fn steps(
        &self,
        store: &mut Store,
        todo: &[PlannedStep],
        len: usize,
        bar: Option<&ProgressBar>,
    ) -> Result<bool> {
        for step in todo {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(true);
            }
            if let Some(b) = bar {
                b.set_message(step.name.clone());
            }
            let (code, run, stderr) = self.run_step(step, bar)?;
            let Some(run) = run else {
                if self.stop.load(Ordering::Relaxed) {
                    // Stopped before it printed a run (in its first moments, before
                    // it could catch the signal): nothing gathered, nothing lost.
                    return Ok(true);
                }
                return Err(step_failure(step, code, &stderr));
            };
            let id = run.id.context("a step's run was not saved")?;
            store.add_campaign_run(self.campaign, &step.record(id))?;
            let stopped = code == EXIT_INTERRUPTED
                || run.status == Status::Interrupted && self.stop.load(Ordering::Relaxed);
            match bar {
                Some(b) => {
                    b.inc(1);
                    if !self.quiet {
                        b.println(step_line(step, &run, len));
                    }
                }
                None if !self.quiet => eprintln!("{}", step_line(step, &run, len)),
                None => {}
            }
            if stopped {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn bar(&self, len: u64, pos: u64) -> Option<ProgressBar> {
        if !self.progress {
            return None;
        }
        let b = ProgressBar::new(len);
        b.set_style(crate::progress::steps_style());
        b.set_prefix("step");
        b.set_position(pos);
        b.enable_steady_tick(Duration::from_millis(200));
        Some(b)
    }

    /// Runs one step's child (with its local echo server, when it asks for one);
    /// returns its exit code, its run (when it printed one) and its stderr.
    fn run_step(
        &self,
        step: &PlannedStep,
        bar: Option<&ProgressBar>,
    ) -> Result<(i32, Option<Run>, String)> {
        let _server = LocalServer::start(step)?;
        let exe = std::env::current_exe().context("cannot find the rtlab executable")?;
        let params = serde_json::to_string(&step.params)?;
        let mut cmd = Command::new(exe);
        cmd.args(["__step", "--params", &params])
            .args(["--json", "--quiet", "--label", self.label])
            // In the environment, not the command line: a URL may hold a password.
            .env(crate::store::DB_ENV, self.db)
            .env(
                crate::record::COMMAND_ENV,
                serde_json::to_string(&crate::record::invoked_as())?,
            );
        for t in self.tags {
            cmd.args(["--tag", t]);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        end_with_parent(&mut cmd);
        let mut child = cmd.spawn().context("cannot start a step")?;
        // Read both pipes on threads so that a chatty child cannot block on a full
        // pipe while the runner waits for it.
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let out_t = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let err_t = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let started = Instant::now();
        let mut signalled = false;
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break st;
            }
            if self.stop.load(Ordering::Relaxed) && !signalled {
                process::send_signal(child.id() as i32, SIGINT);
                signalled = true;
            }
            if let (Some(b), Some(planned)) = (bar, step.planned_ns) {
                let done = started.elapsed().as_nanos() as f64 / planned as f64;
                b.set_message(format!("{} {:.0}%", step.name, (done * 100.0).min(100.0)));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = out_t.join().unwrap_or_default();
        let stderr = err_t.join().unwrap_or_default();
        let code = status.code().unwrap_or(EXIT_INTERRUPTED);
        let run = serde_json::from_str::<Run>(&stdout).ok();
        Ok((code, run, stderr))
    }
}

/// `rtlab net serve` on the step's target, for a `net` step with
/// `local_server = true`; stopped (SIGINT, then waited for) when dropped.
struct LocalServer {
    child: std::process::Child,
}

impl LocalServer {
    fn start(step: &PlannedStep) -> Result<Option<LocalServer>> {
        let value = |k: &str| step.values.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        if value("local_server") != Some(&Val::Bool(true)) {
            return Ok(None);
        }
        let target = value("target").map(|v| v.to_string()).unwrap_or_default();
        let exe = std::env::current_exe().context("cannot find the rtlab executable")?;
        let mut cmd = Command::new(exe);
        cmd.args(["net", "serve", "--bind", &target]);
        if value("tcp") == Some(&Val::Bool(true)) {
            cmd.arg("--tcp");
        }
        if let Some(Val::Int(p)) = value("server_priority").filter(|v| **v != Val::Int(0)) {
            cmd.args(["--priority", &p.to_string()]);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        end_with_parent(&mut cmd);
        let mut child = cmd.spawn().context("cannot start the local echo server")?;
        // The server says "listening on ..." once it is bound, or fails.
        let mut err = std::io::BufReader::new(child.stderr.take().expect("piped"));
        let mut first = String::new();
        std::io::BufRead::read_line(&mut err, &mut first)?;
        if !first.contains("listening on") {
            let _ = child.wait();
            let mut rest = String::new();
            let _ = err.read_to_string(&mut rest);
            bail!(UsageError(format!(
                "step {} ({}): the local echo server on {target} did not start: {}{}",
                step.index + 1,
                step.name,
                first.trim(),
                rest.trim()
            )));
        }
        // Keep draining its stderr so that it can never block on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        Ok(Some(LocalServer { child }))
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        process::send_signal(self.child.id() as i32, SIGINT);
        let _ = self.child.wait();
    }
}

/// Makes the child get SIGINT (it then saves what it gathered and ends) when the
/// runner dies, even by SIGKILL: a step or echo server never outlives its runner.
fn end_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe calls (prctl(2), getppid(2)); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            process::end_with_parent(SIGINT, parent).map_err(std::io::Error::from_raw_os_error)
        });
    }
}

/// One line about a finished step.
fn step_line(step: &PlannedStep, run: &Run, steps: usize) -> String {
    let head = format!(
        "step {}/{} {}: {} run {}",
        step.index + 1,
        steps,
        step.name,
        run.status.name(),
        run.id.unwrap_or(0),
    );
    let best = run.sweep.as_ref().and_then(|s| {
        s.curves
            .iter()
            .filter_map(|c| c.best_hz.map(|hz| (hz, c)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    });
    match (&run.total, best) {
        (Some(t), _) => format!(
            "{head}, p99 {}, max {}",
            crate::units::Human(t.summary.p99_ns),
            crate::units::Human(t.summary.max_ns)
        ),
        (None, Some((hz, c))) => format!(
            "{head}, highest held {} ({}, {}){}",
            crate::units::hz(hz),
            c.method,
            c.load,
            c.cut()
        ),
        (None, None) => head,
    }
}

/// The error for a step that saved no run, by its exit code.
fn step_failure(step: &PlannedStep, code: i32, stderr: &str) -> anyhow::Error {
    let msg = format!(
        "step {} ({}) failed: its {} run exited {code}: {}",
        step.index + 1,
        step.name,
        step.probe.name,
        stderr.trim()
    );
    match code {
        3 => SystemError(msg).into(),
        _ => UsageError(msg).into(),
    }
}

/// For each step of a campaign, its latest complete run, else its latest run.
pub fn campaign_steps(store: &Store, campaign: i64) -> Result<Vec<StepRun>> {
    let c = store.load_campaign(campaign)?;
    let mut best: Vec<StepRun> = Vec::new();
    for s in &c.steps {
        let run = store.load(s.run_id)?;
        let index = s.step_index as usize;
        let step = StepRun {
            index,
            name: s.step_name.clone(),
            base: s.base_name.clone(),
            repeat: s.repeat,
            run,
        };
        match best.iter_mut().find(|b| b.index == index) {
            Some(b) if b.run.status != Status::Complete || step.run.status == Status::Complete => {
                *b = step
            }
            Some(_) => {}
            None => best.push(step),
        }
    }
    best.sort_by_key(|s| s.index);
    Ok(best)
}

/// The repeats of one campaign step: its step runs under one base name.
#[derive(Debug, Clone)]
pub struct Repeats<'a> {
    /// The base name (`idle`).
    pub name: &'a str,
    /// Its step runs, by repeat.
    pub steps: Vec<&'a StepRun>,
}

/// Groups the step runs of a campaign (or of campaigns shown side by side) by
/// campaign and base name, in the order each step first ran; each group's
/// runs by repeat. The repeats of one step are what is compared and judged as
/// one.
pub fn by_base(steps: &[StepRun]) -> Vec<Repeats<'_>> {
    let mut at: HashMap<(Option<i64>, &str), usize> = HashMap::new();
    let mut out: Vec<Repeats<'_>> = Vec::new();
    for s in steps {
        let key = (s.run.campaign, s.base.as_str());
        match at.get(&key) {
            Some(&i) => out[i].steps.push(s),
            None => {
                at.insert(key, out.len());
                out.push(Repeats {
                    name: &s.base,
                    steps: vec![s],
                });
            }
        }
    }
    for g in &mut out {
        g.steps.sort_by_key(|s| s.repeat);
    }
    out
}

/// The runs of steps, labelled `step · label` so that reports name the steps.
pub fn step_view(steps: &[StepRun]) -> Vec<Run> {
    steps
        .iter()
        .map(|s| {
            let mut r = s.run.clone();
            r.label = format!("{} · {}", s.name, r.label);
            r
        })
        .collect()
}

/// The first step of `plan` without a completed run in the campaign; `None`
/// when every step has one.
pub fn first_unfinished(store: &Store, campaign: i64, plan_len: usize) -> Result<Option<usize>> {
    let c = store.load_campaign(campaign)?;
    let mut done = vec![false; plan_len];
    for s in &c.steps {
        let run = store.load(s.run_id)?;
        if run.status == Status::Complete {
            if let Some(d) = done.get_mut(s.step_index as usize) {
                *d = true;
            }
        }
    }
    Ok(done.iter().position(|d| !d))
}
