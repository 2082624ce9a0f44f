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

use crate::tune::journal::{Journal, LOCK_WAIT};
use crate::tune::prio::thread;
use anyhow::Result;
use change::Want;
use fix::{BootFix, Ctx, Fix, Plan};
use journal::{Kept, Session};
use judge::Verdict;
use run::{Outcome, Setup};
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
    values: Vec<(PathBuf, change::Form, String)>,
    threads: Vec<(i32, String, crate::tune::prio::task::Setting)>,
}

impl Snapshot {
    /// Reads every value and thread that `plans` would change.
    pub fn take<'a>(
        root: &rtlab_engine::sysinfo::SysRoot,
        plans: impl Iterator<Item = &'a Plan>,
    ) -> Snapshot {
        let mut s = Snapshot::default();
        for w in plans.flat_map(|p| &p.wants) {
            match w {
                Want::Value { path, form, .. } => {
                    let p = root.path(path);
                    if let Ok(v) = change::read_value(&p) {
                        if !s.values.iter().any(|(q, _, _)| *q == p) {
                            s.values.push((p, *form, v));
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
        for (p, form, was) in &self.values {
            if kept.values.contains(p) {
                continue;
            }
            c.values += 1;
            match change::read_value(p) {
                Ok(now) if form.value(&now) == form.value(was) => {}
                Ok(now) => c
                    .differ
                    .push(format!("{} reads {now} (was {was})", p.display())),
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

/// What [`tune`] found and did.
#[derive(Debug)]
pub struct Tuned {
    /// Each candidate.
    pub candidates: Vec<Outcome>,
    /// The winners together, when more than one helped.
    pub together: Option<Outcome>,
    /// What `--apply` kept.
    pub applied: Option<Applied>,
    /// The system read back at the end.
    pub after: Compared,
}

/// Tries the candidates planned, then the winners together; keeps the
/// winners with `--apply`; reads every value back at the end.
pub fn tune(
    job: &Job,
    planned: Vec<(&'static Fix, Result<Plan, String>)>,
    setup: &mut Setup,
    session: &mut Session,
) -> Result<Tuned> {
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
    Ok(Tuned {
        candidates: outcomes,
        together,
        applied,
        after,
    })
}

/// The values and threads that the winners' changes hold.
fn held(root: &rtlab_engine::sysinfo::SysRoot, winners: &[&Outcome]) -> Held {
    let mut h = Held::default();
    for w in winners
        .iter()
        .filter_map(|o| o.plan.as_ref())
        .flat_map(|p| &p.wants)
    {
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
            applied.boot.push(format!(
                "{}: not kept, the kernel refused it now: {e}",
                o.name
            ));
            continue;
        }
        kept.changes.extend(session.keep()?);
        kept_journal.store(&kept)?;
        applied.kept.push(o.name.to_string());
        lasting.push((o.name, plan));
    }
    let l = persist::files(etc, &lasting, exe)?;
    applied.boot.extend(l.boot);
    let written = persist::write(etc, &l.files)?;
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
    r.failed = failed
        .iter()
        .map(|(c, e)| format!("{}: {e}", c.text()))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::windowed_run;
    use crate::record::Run;
    use crate::tune::audit::Input;
    use fix::{fix, Ctx};
    use rtlab_engine::rt::cpuset::CpuList;
    use rtlab_engine::rt::sched::Policy;
    use rtlab_engine::sysinfo::SysRoot;
    use std::sync::atomic::AtomicBool;

    /// A run whose tail is at `tail_us` µs: 20 000 wake-ups around 10 µs, every
    /// 200th late.
    fn scripted(seed: u64, tail_us: u64) -> Run {
        let samples: Vec<u64> = (0..20_000u64)
            .map(|i| {
                let jitter = (i * 7919 + seed * 104_729) % 1_000;
                if i % 200 == 199 {
                    tail_us * 1_000 + jitter
                } else {
                    10_000 + jitter
                }
            })
            .collect();
        windowed_run("scripted", &samples)
    }

    struct Bench {
        _dir: tempfile::TempDir,
        state: PathBuf,
        etc: PathBuf,
        root: SysRoot,
    }

    fn bench() -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        for (p, v) in [
            ("proc/sys/kernel/timer_migration", "1\n"),
            ("proc/sys/kernel/watchdog", "1\n"),
            ("proc/sys/kernel/nmi_watchdog", "0\n"),
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, v).unwrap();
        }
        Bench {
            state: dir.path().join("state"),
            etc: dir.path().join("etc"),
            root: SysRoot::new(root),
            _dir: dir,
        }
    }

    /// Tries `names` on the fake tree with runs scripted from what the files
    /// read: timer migration off and the watchdogs off each cut the tail by
    /// 30 µs, THP never changes nothing. Returns the outcome and the names of
    /// the runs with the values the files had while each was measured.
    fn tried(b: &Bench, names: &[&str], apply: bool) -> (Tuned, Vec<String>) {
        static STOP: AtomicBool = AtomicBool::new(false);
        let input = Input::read(b.root.clone());
        let (mut session, _) = Session::open(b.root.clone(), &b.state).unwrap();
        let exe = Path::new("/usr/bin/rtlab");
        let job = Job {
            fixes: names.iter().map(|n| fix(n).unwrap()).collect(),
            ctx: Ctx {
                root: &b.root,
                input: &input,
                measured: CpuList::parse("1").unwrap(),
                housekeeping: CpuList::parse("0").unwrap(),
                probe: (Policy::Fifo, 90),
                app: None,
            },
            apply: apply.then_some((b.etc.as_path(), exe)),
        };
        let planned = plan(&job.fixes, &job.ctx);
        let mut seen = Vec::new();
        let mut seed = 0;
        let root = b.root.clone();
        let mut measure = |_: &crate::step::latency::Params, _: &mut dyn crate::step::Observer| {
            let tm = root.read("/proc/sys/kernel/timer_migration").unwrap();
            let wd = root.read("/proc/sys/kernel/watchdog").unwrap();
            let tail = 100 - if tm == "0" { 30 } else { 0 } - if wd == "0" { 30 } else { 0 };
            seed += 1;
            Ok(scripted(seed, tail))
        };
        let mut id = 0;
        let root = b.root.clone();
        let mut record = |name: &str, mut run: Run| {
            id += 1;
            run.id = Some(id);
            let tm = root.read("/proc/sys/kernel/timer_migration").unwrap();
            seen.push(format!("{name} tm={tm}"));
            Ok(run)
        };
        let mut setup = Setup {
            probe: crate::step::latency::Params::default(),
            repeat: 3,
            noise: crate::analysis::interval::DEFAULT_NOISE,
            stop: &STOP,
            measure: &mut measure,
            record: &mut record,
            progress: &mut |_| {},
        };
        let t = tune(&job, planned, &mut setup, &mut session).unwrap();
        drop(setup);
        (t, seen)
    }

    #[test]
    fn arms_are_interleaved_the_change_is_on_only_in_its_own_runs_and_put_back() {
        let b = bench();
        let (t, seen) = tried(&b, &["timer_migration", "thp"], false);
        let (o, together, applied, after) = (t.candidates, t.together, t.applied, t.after);
        assert_eq!(
            seen[..6],
            [
                "timer_migration baseline #1 tm=1",
                "timer_migration changed #1 tm=0",
                "timer_migration baseline #2 tm=1",
                "timer_migration changed #2 tm=0",
                "timer_migration baseline #3 tm=1",
                "timer_migration changed #3 tm=0",
            ]
        );
        assert_eq!(o[0].verdict, Verdict::Helps, "{:?}", o[0].effects);
        assert_eq!((o[0].baseline.len(), o[0].changed.len()), (3, 3));
        assert_eq!(o[1].verdict, Verdict::NoRealEffect, "{:?}", o[1].effects);
        assert!(together.is_none(), "one winner: nothing to combine");
        assert!(applied.is_none());
        assert_eq!(
            b.root.read("/proc/sys/kernel/timer_migration").unwrap(),
            "1"
        );
        let thp = b
            .root
            .read("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap();
        assert_eq!(change::Form::Selector.value(&thp), "madvise");
        assert_eq!((after.values, after.differ.len()), (2, 0), "{after:?}");
        assert!(!journal::trial_path(&b.state).exists());
    }

    #[test]
    fn winners_are_measured_together_kept_with_apply_and_restore_undoes_all() {
        let b = bench();
        let (t, seen) = tried(&b, &["timer_migration", "watchdogs"], true);
        let (o, together, applied, after) = (t.candidates, t.together, t.applied, t.after);
        assert!(o.iter().all(|o| o.verdict == Verdict::Helps));
        let t = together.unwrap();
        assert_eq!(t.verdict, Verdict::Helps);
        assert_eq!(t.change, "timer_migration + watchdogs");
        assert!(seen.iter().any(|s| s == "together changed #3 tm=0"));
        let a = applied.unwrap();
        assert_eq!(a.kept, ["timer_migration", "watchdogs"]);
        assert_eq!(a.files, [b.etc.join(persist::SYSCTL)]);
        let conf = std::fs::read_to_string(b.etc.join(persist::SYSCTL)).unwrap();
        assert!(
            conf.ends_with("kernel.timer_migration = 0\nkernel.watchdog = 0\n"),
            "{conf}"
        );
        // Kept on, on purpose: not counted as a difference.
        assert_eq!(b.root.read("/proc/sys/kernel/watchdog").unwrap(), "0");
        assert!(after.differ.is_empty(), "{after:?}");
        let (session, recovered) = Session::open(b.root.clone(), &b.state).unwrap();
        let r = restore(&session, recovered.lines()).unwrap();
        assert!(r.failed.is_empty(), "{r:?}");
        assert_eq!(r.values.len(), 2);
        assert_eq!(
            b.root.read("/proc/sys/kernel/timer_migration").unwrap(),
            "1"
        );
        assert_eq!(b.root.read("/proc/sys/kernel/watchdog").unwrap(), "1");
        assert!(!b.etc.join(persist::SYSCTL).exists());
        let again = restore(&session, Vec::new()).unwrap();
        assert!(again.values.is_empty() && again.files.is_empty());
    }

    /// A process with a name of its own (a copy of sleep), killed when dropped.
    struct App {
        child: std::process::Child,
        _dir: tempfile::TempDir,
    }

    impl App {
        fn start() -> App {
            let dir = tempfile::tempdir().unwrap();
            let exe = dir.path().join("rtlabtuneapp");
            std::fs::copy("/bin/sleep", &exe).unwrap();
            let child = std::process::Command::new(&exe).arg("60").spawn().unwrap();
            // Until the kernel names it after its executable.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::fs::read_to_string(format!("/proc/{}/comm", child.id()))
                .map_or(true, |c| c.trim() != "rtlabtuneapp")
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            App { child, _dir: dir }
        }
    }

    impl Drop for App {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Every candidate this system allows is made, read back, put back and
    /// read back again exactly; the others say why not. Run with --nocapture
    /// to see what this system allowed.
    #[test]
    #[ignore = "needs root: changes and puts back the system's own settings"]
    fn every_candidate_this_system_allows_is_made_and_put_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::default();
        let input = Input::read(root.clone());
        let online = CpuList::parse(&input.fp.cpus_online).unwrap();
        let (measured, housekeeping) = match online.cpus() {
            [first, rest @ ..] if !rest.is_empty() => (
                CpuList::from_cpus(rest.to_vec()),
                CpuList::from_cpus(vec![*first]),
            ),
            _ => (online.clone(), CpuList::default()),
        };
        let _app = App::start();
        let app = fix::App {
            pattern: "^rtlabtuneapp$".into(),
            policy: (Policy::Fifo, 10),
        };
        let ctx = Ctx {
            root: &root,
            input: &input,
            measured,
            housekeeping,
            probe: (Policy::Fifo, 90),
            app: Some(&app),
        };
        let (mut session, _) = Session::open(root.clone(), dir.path()).unwrap();
        let mut made = 0;
        for (f, planned) in plan(&fix::FIXES.iter().collect::<Vec<_>>(), &ctx) {
            let Ok(p) = planned else {
                eprintln!("{}: not possible here: {}", f.name, planned.unwrap_err());
                continue;
            };
            let before = Snapshot::take(&root, std::iter::once(&p));
            match session.apply(&p.wants) {
                Err(e) => {
                    eprintln!("{}: refused: {e}", f.name);
                    assert!(
                        !session.changed(),
                        "{}: a refusal leaves nothing on",
                        f.name
                    );
                }
                Ok(a) => {
                    made += 1;
                    let on = before.compare(&Held::default());
                    let dma = p.wants.iter().any(|w| matches!(w, Want::DmaLatency { .. }));
                    assert!(
                        dma || !on.differ.is_empty() || a.made == 0,
                        "{}: {} made, nothing reads changed",
                        f.name,
                        a.made
                    );
                    eprintln!(
                        "{}: made {} change(s), {} skipped: {}",
                        f.name,
                        a.made,
                        a.skipped.len(),
                        on.differ.join("; ")
                    );
                    let failed = session.restore();
                    assert!(failed.is_empty(), "{}: {failed:?}", f.name);
                    let back = before.compare(&Held::default());
                    assert!(back.differ.is_empty(), "{}: {:?}", f.name, back.differ);
                }
            }
        }
        assert!(made > 0, "nothing could be tried here");
        assert!(!journal::trial_path(dir.path()).exists());
    }
}
