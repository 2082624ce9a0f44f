//! `rtlab prio`: list, set, run, apply, save, unit and restore thread priorities.

use crate::error::{bad_flag, SystemError, UsageError, EXIT_FAILED, EXIT_OK, EXIT_SYSTEM};
use crate::format::text::table::Table;
use crate::tune::prio::profile::{dropin_path, Profile, Rule};
use crate::tune::prio::state::{self, Entry, Journal, State};
use crate::tune::prio::{
    self, check_cpus, compile, select, tasks_of, validate, Selector, Setting, Snapshot, Target,
    Task,
};
use crate::tune::{json_document, print, text_table};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::mem::raise_memlock_limit;
use rtlab_engine::rt::sched::{Policy, ThreadSched};
use rtlab_engine::rt::ESRCH;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Arguments of `rtlab prio`.
#[derive(Debug, Args)]
pub struct PrioArgs {
    #[command(subcommand)]
    command: PrioCommand,
}

#[derive(Debug, Subcommand)]
enum PrioCommand {
    /// Threads with pid, tid, names, policy, priority, affinity and context switches.
    List(ListArgs),
    /// Set policy/priority/affinity of every thread of the matching processes
    /// (recorded, so `prio restore` undoes it).
    Set(SetArgs),
    /// Run a command with a policy, priority and affinity (like chrt/taskset).
    Run(RunArgs),
    /// Apply a profile (TOML rules); idempotent. --check only reports drift.
    Apply(ApplyArgs),
    /// Capture the current settings of processes as a profile.
    Save(SaveArgs),
    /// Print systemd drop-ins (CPUSchedulingPolicy/Priority, LimitRTPRIO,
    /// LimitMEMLOCK, CPUAffinity) for a profile.
    Unit(UnitArgs),
    /// Undo what `prio set` and `prio apply` changed since the last restore.
    Restore(RestoreArgs),
}

/// Policies that can be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PolicyArg {
    /// SCHED_FIFO (real-time).
    Fifo,
    /// SCHED_RR (real-time, round robin).
    Rr,
    /// SCHED_OTHER (normal).
    Other,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
}

impl From<PolicyArg> for Policy {
    fn from(p: PolicyArg) -> Policy {
        match p {
            PolicyArg::Fifo => Policy::Fifo,
            PolicyArg::Rr => Policy::Rr,
            PolicyArg::Other => Policy::Other,
            PolicyArg::Batch => Policy::Batch,
            PolicyArg::Idle => Policy::Idle,
        }
    }
}

/// How processes are picked.
#[derive(Debug, Args)]
struct MatchArgs {
    /// Match PATTERN against the whole command line, not the process name.
    #[arg(short, long)]
    full: bool,
    /// Only threads whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    threads: Option<String>,
    /// Include kernel threads (left alone otherwise).
    #[arg(long)]
    kernel_threads: bool,
}

impl MatchArgs {
    fn selector(&self, pattern: &str) -> Result<Selector> {
        if pattern.trim().is_empty() {
            return Err(UsageError(
                "PATTERN is empty, which matches every process; give '.' if every process is meant"
                    .into(),
            )
            .into());
        }
        Ok(Selector {
            pattern: compile("PATTERN", pattern).map_err(UsageError)?,
            text: pattern.to_string(),
            full: self.full,
            threads: match &self.threads {
                Some(t) => Some(compile("--threads", t).map_err(UsageError)?),
                None => None,
            },
            kernel_threads: self.kernel_threads,
        })
    }
}

/// What to set.
#[derive(Debug, Args)]
struct SchedArgs {
    /// Scheduling policy.
    #[arg(long, value_enum)]
    policy: Option<PolicyArg>,
    /// Priority: 1-99 for fifo/rr, 0 for the others (default 0).
    #[arg(short, long, value_name = "PRIO", allow_negative_numbers = true)]
    priority: Option<i32>,
    /// CPUs to allow (e.g. 2-3).
    #[arg(long, value_name = "LIST")]
    affinity: Option<String>,
}

impl SchedArgs {
    fn target(&self) -> Result<Target> {
        let policy = match (self.policy, self.priority) {
            (None, Some(_)) => {
                return Err(bad_flag(
                    "--priority",
                    "needs --policy (e.g. --policy fifo --priority 50)",
                ))
            }
            (None, None) => None,
            (Some(p), prio) => {
                let p = Policy::from(p);
                let prio = match prio {
                    Some(n) => n,
                    None if p.is_realtime() => {
                        return Err(bad_flag("--priority", format!("{p} needs a priority 1-99")))
                    }
                    None => 0,
                };
                validate(p, prio).map_err(|e| bad_flag("--priority", e))?;
                Some((p, prio))
            }
        };
        let affinity = match &self.affinity {
            Some(a) => {
                let l = CpuList::parse(a).map_err(|e| bad_flag("--affinity", e))?;
                if l.is_empty() {
                    return Err(bad_flag(
                        "--affinity",
                        "empty CPU list (e.g. --affinity 2-3)",
                    ));
                }
                check_cpus(&l, &prio::online_cpus()).map_err(|e| bad_flag("--affinity", e))?;
                Some(l)
            }
            None => None,
        };
        if policy.is_none() && affinity.is_none() {
            return Err(UsageError(
                "nothing to set: give --policy/--priority and/or --affinity".into(),
            )
            .into());
        }
        if policy.is_some_and(|(_, prio)| prio == 99) {
            warn_priority_99("--priority 99");
        }
        Ok(Target { policy, affinity })
    }
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Regular expression on the process name (all processes when absent).
    pattern: Option<String>,
    /// Only threads with a real-time policy (fifo, rr, deadline).
    #[arg(long)]
    rt_only: bool,
    /// Match PATTERN against the whole command line.
    #[arg(short, long)]
    full: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct SetArgs {
    /// Regular expression on the process name (pgrep-like), or a PID.
    pattern: String,
    #[command(flatten)]
    sched: SchedArgs,
    #[command(flatten)]
    matching: MatchArgs,
    /// Show what would change, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Also change PID 1 and the kernel's per-CPU threads (migration, ksoftirqd,
    /// rcu, idle_inject, cpuhp, watchdog), which are left alone otherwise.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    sched: SchedArgs,
    /// Raise RLIMIT_MEMLOCK to unlimited (or at least to its hard limit) so the
    /// command can mlockall (Linux drops a lock across exec, so the command must
    /// lock its own memory).
    #[arg(long)]
    mlock: bool,
    /// The command and its arguments (after --).
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(Debug, Args)]
struct ApplyArgs {
    /// The profile (TOML).
    profile: PathBuf,
    /// Report threads that differ from the profile and exit 1 if any; change nothing.
    #[arg(long)]
    check: bool,
    /// Also change PID 1 and the kernel's per-CPU threads (see `prio set --force`).
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct SaveArgs {
    /// Where to write the profile.
    #[arg(value_parser = super::common::output_file)]
    profile: PathBuf,
    /// Regular expression on the process name (default: every process with a
    /// real-time thread).
    pattern: Option<String>,
    #[command(flatten)]
    matching: MatchArgs,
    /// Overwrite an existing profile.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct UnitArgs {
    /// The profile (TOML).
    profile: PathBuf,
    /// Write the drop-ins below this directory (e.g. /etc/systemd/system) instead
    /// of printing them.
    #[arg(long, value_name = "DIR", value_parser = super::common::output_dir)]
    dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct RestoreArgs {
    /// Show what would be restored, change nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
}

/// Warns about priority 99 (`what` names where it was asked for).
fn warn_priority_99(what: &str) {
    eprintln!(
        "warning: {what} is the top priority: a thread there that spins starves threaded IRQs and kernel RT threads; 80-90 leaves them room"
    );
}

/// Runs `rtlab prio`.
pub fn run(args: PrioArgs) -> Result<i32> {
    match args.command {
        PrioCommand::List(a) => list(a),
        PrioCommand::Set(a) => set(a),
        PrioCommand::Run(a) => run_cmd(a),
        PrioCommand::Apply(a) => apply(a),
        PrioCommand::Save(a) => save(a),
        PrioCommand::Unit(a) => unit(a),
        PrioCommand::Restore(a) => restore(a),
    }
}

fn proc_dir() -> &'static Path {
    Path::new("/proc")
}

fn list(a: ListArgs) -> Result<i32> {
    let tasks = tasks_of(proc_dir(), a.full, |_, _, _| true);
    let selected: Vec<&Task> = match &a.pattern {
        Some(p) => {
            let s = Selector {
                pattern: compile("PATTERN", p).map_err(UsageError)?,
                text: p.clone(),
                full: a.full,
                threads: None,
                kernel_threads: true,
            };
            select(&tasks, &s).0
        }
        None => tasks.iter().collect(),
    };
    let shown: Vec<&Task> = selected
        .into_iter()
        .filter(|t| {
            !a.rt_only
                || t.setting
                    .policy
                    .is_some_and(|p| p.is_realtime() || p == Policy::Deadline)
        })
        .collect();
    if a.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            threads: &'a [&'a Task],
        }
        print(&json_document("prio.list", &Doc { threads: &shown })?);
        return Ok(EXIT_OK);
    }
    let mut t = Table::new(&[
        "pid", "tid", "process", "thread", "policy", "prio", "affinity", "vol-cs", "invol-cs",
    ]);
    for x in &shown {
        t.row(vec![
            x.pid.to_string(),
            x.tid.to_string(),
            if x.kernel {
                format!("[{}]", x.process)
            } else {
                x.process.clone()
            },
            x.name.clone(),
            x.setting.policy.map_or("?".into(), |p| p.to_string()),
            x.setting.priority.to_string(),
            x.setting.affinity.clone(),
            x.voluntary_ctxt_switches.to_string(),
            x.nonvoluntary_ctxt_switches.to_string(),
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!("{} threads\n", shown.len()));
    print(&out);
    Ok(EXIT_OK)
}

fn setting_text(s: &Setting) -> String {
    format!("{} cpus {}", s.policy_text(), s.affinity)
}

/// The outcome of changing threads, printed as a table and a summary line.
#[derive(Default)]
struct Outcome {
    table: Vec<Vec<String>>,
    changed: usize,
    unchanged: usize,
    failed: usize,
    gone: usize,
}

impl Outcome {
    fn row(&mut self, t: &Task, before: &Setting, after: String, result: String) {
        self.table.push(vec![
            t.pid.to_string(),
            t.tid.to_string(),
            t.name.clone(),
            setting_text(before),
            after,
            result,
        ]);
    }

    fn render(&self, verb: &str, skipped_kernel: usize, protected: usize) -> String {
        let mut t = text_table(&["pid", "tid", "thread", "before", "after", "result"]);
        for r in &self.table {
            t.row(r.clone());
        }
        let mut out = t.render();
        out.push_str(&format!(
            "{} {verb}, {} already as wanted, {} failed",
            self.changed, self.unchanged, self.failed
        ));
        if self.gone > 0 {
            out.push_str(&format!(", {} exited meanwhile", self.gone));
        }
        if skipped_kernel > 0 {
            out.push_str(&format!(
                "; {skipped_kernel} kernel threads left alone (--kernel-threads to include them)"
            ));
        }
        if protected > 0 {
            out.push_str(&format!(
                "; {protected} protected threads left alone (see the warnings)"
            ));
        }
        out.push('\n');
        out
    }

    /// 0 when every change was made; 3 when the system refused every thread it
    /// was asked to change (permissions, as documented for exit 3); 1 when some
    /// were changed and others refused.
    fn code(&self) -> i32 {
        if self.failed == 0 {
            EXIT_OK
        } else if self.changed == 0 && self.unchanged == 0 {
            EXIT_SYSTEM
        } else {
            EXIT_FAILED
        }
    }
}

/// Leaves out the threads rtlab must not change: PID 1 and the kernel's per-CPU
/// threads unless `force` (see [`prio::protection`]), SCHED_DEADLINE threads
/// always (their runtime, deadline and period could not be put back). Warns once
/// per reason, naming the threads; returns the others and how many were left out.
/// When every thread is left out, that is a usage error (exit 2): nothing changed.
fn guard(items: Vec<(&Task, Target)>, force: bool) -> Result<(Vec<(&Task, Target)>, usize)> {
    const DEADLINE: &str = "SCHED_DEADLINE threads are never changed: rtlab could not put back their runtime, deadline and period";
    let mut left: BTreeMap<&'static str, Vec<&Task>> = BTreeMap::new();
    let mut kept = Vec::new();
    for (t, target) in items {
        let reason = if t.setting.policy == Some(Policy::Deadline) {
            Some(DEADLINE)
        } else {
            prio::protection(t).filter(|_| !force)
        };
        match reason {
            Some(r) => left.entry(r).or_default().push(t),
            None => kept.push((t, target)),
        }
    }
    let protected: usize = left.values().map(Vec::len).sum();
    for (reason, tasks) in &left {
        let mut names: Vec<String> = tasks
            .iter()
            .take(4)
            .map(|t| format!("{} (pid {}, tid {})", t.name, t.pid, t.tid))
            .collect();
        if tasks.len() > 4 {
            names.push(format!("and {} more", tasks.len() - 4));
        }
        let how = if *reason == DEADLINE {
            ""
        } else {
            "; --force changes them anyway"
        };
        eprintln!("warning: left alone: {}: {reason}{how}", names.join(", "));
    }
    if kept.is_empty() && protected > 0 {
        return Err(UsageError(format!(
            "nothing changed: every matching thread ({protected}) is protected (see the warnings)"
        ))
        .into());
    }
    Ok((kept, protected))
}

/// What one thread needs, decided under the journal's lock.
enum Step<'a> {
    /// Already as wanted.
    Unchanged(Setting, Setting),
    /// Exited since it was listed.
    Gone,
    /// Could not be read.
    Unreadable(prio::Failure),
    /// To change: (before, policy, affinity).
    Change(Setting, Option<(Policy, i32)>, Option<&'a CpuList>),
}

/// Changes each (thread, target) that drifts.
///
/// Under the journal's lock, each thread is read afresh (another rtlab may have
/// changed it since it was listed: that must not pass for its original), the
/// originals of the threads to change are recorded and the journal written
/// *before* anything changes (a restore finds them even if rtlab is killed
/// midway), then the threads are changed, and the records of changes that failed
/// are taken back out.
fn change(items: &[(&Task, Target)], dry_run: bool) -> Result<Outcome> {
    let mut o = Outcome::default();
    if dry_run {
        for (t, target) in items {
            let before = &t.setting;
            let want = setting_text(&target.applied_to(before));
            if target.drift(before).is_empty() {
                o.unchanged += 1;
                o.row(t, before, want, "already".into());
            } else {
                o.changed += 1;
                o.row(t, before, want, "would change".into());
            }
        }
        return Ok(o);
    }
    let journal = Journal::lock(&state::path()?, state::LOCK_WAIT)?;
    let earlier = journal.load()?;
    let mut st = earlier.clone();
    let mut steps = Vec::with_capacity(items.len());
    for (t, target) in items {
        // A tid reused since the listing belongs to another thread.
        let alive = prio::read_task(proc_dir(), t.pid, t.tid, &t.process, "")
            .is_some_and(|now| now.starttime == t.starttime);
        let snap: Snapshot = match alive.then(|| prio::snapshot(t.tid)) {
            Some(Ok(s)) => s,
            None => {
                steps.push(Step::Gone);
                continue;
            }
            Some(Err(e)) if e.errno == ESRCH => {
                steps.push(Step::Gone);
                continue;
            }
            Some(Err(error)) => {
                steps.push(Step::Unreadable(prio::Failure {
                    error,
                    what: "reading",
                }));
                continue;
            }
        };
        let before = snap.setting();
        let want = target.applied_to(&before);
        if target.drift(&before).is_empty() {
            steps.push(Step::Unchanged(before, want));
            continue;
        }
        let policy_changed = want.policy != before.policy || want.priority != before.priority;
        let affinity_changed = want.affinity != before.affinity;
        st.record(Entry {
            pid: t.pid,
            tid: t.tid,
            name: t.name.clone(),
            starttime: t.starttime,
            before: before.clone(),
            sched: Some(snap.sched),
            affinity_changed,
            policy_changed,
        });
        steps.push(Step::Change(
            before,
            target.policy.filter(|_| policy_changed),
            target.affinity.as_ref().filter(|_| affinity_changed),
        ));
    }
    if st != earlier {
        journal.store(&st)?;
    }
    let mut taken_back = false;
    for ((t, target), step) in items.iter().zip(steps) {
        match step {
            Step::Unchanged(before, want) => {
                o.unchanged += 1;
                o.row(t, &before, setting_text(&want), "already".into());
            }
            Step::Gone => {
                o.gone += 1;
                o.row(t, &t.setting, "-".into(), "exited".into());
            }
            Step::Unreadable(f) => {
                o.failed += 1;
                let now = setting_text(&t.setting);
                o.row(t, &t.setting, now, format!("FAILED {}", f.message()));
            }
            Step::Change(before, policy, affinity) => match prio::apply(t.tid, policy, affinity) {
                Ok(()) => {
                    let after = prio::current_setting(t.tid).map_or_else(
                        || setting_text(&target.applied_to(&before)),
                        |n| setting_text(&n),
                    );
                    o.changed += 1;
                    o.row(t, &before, after, "changed".into());
                }
                Err(f) => {
                    st.revert(t.tid, t.starttime, &earlier);
                    taken_back = true;
                    if f.error.errno == ESRCH {
                        o.gone += 1;
                        o.row(t, &before, "-".into(), "exited".into());
                    } else {
                        o.failed += 1;
                        let now = prio::current_setting(t.tid).unwrap_or(before.clone());
                        o.row(
                            t,
                            &before,
                            setting_text(&now),
                            format!("FAILED {}", f.message()),
                        );
                    }
                }
            },
        }
    }
    if taken_back {
        journal.store(&st)?;
    }
    Ok(o)
}

fn set(a: SetArgs) -> Result<i32> {
    let target = a.sched.target()?;
    let selector = a.matching.selector(&a.pattern)?;
    let tasks = tasks_of(proc_dir(), selector.full, |pid, name, cmd| {
        selector.matches_process(pid, name, cmd)
    });
    let (hits, skipped) = select(&tasks, &selector);
    if hits.is_empty() {
        eprintln!(
            "no thread matches '{}'{}",
            a.pattern,
            if skipped > 0 {
                format!(" ({skipped} kernel threads do; add --kernel-threads)")
            } else {
                String::new()
            }
        );
        return Ok(EXIT_FAILED);
    }
    let items: Vec<(&Task, Target)> = hits.into_iter().map(|t| (t, target.clone())).collect();
    let (items, protected) = guard(items, a.force)?;
    let o = change(&items, a.dry_run)?;
    print(&o.render(
        if a.dry_run { "would change" } else { "changed" },
        skipped,
        protected,
    ));
    Ok(o.code())
}

fn run_cmd(a: RunArgs) -> Result<i32> {
    use std::os::unix::process::CommandExt;
    let target = a.sched.target()?;
    if a.mlock {
        let reached = raise_memlock_limit()
            .map_err(std::io::Error::from_raw_os_error)
            .map_err(|e| SystemError(format!("--mlock: cannot raise RLIMIT_MEMLOCK ({e})")))?;
        if let Some(bytes) = reached {
            eprintln!(
                "warning: --mlock: RLIMIT_MEMLOCK raised only to its hard limit, {} KiB (unlimited needs CAP_SYS_RESOURCE or LimitMEMLOCK=infinity)",
                bytes / 1024
            );
        }
    }
    // rtlab is single-threaded here: the calling thread is the process, and its
    // policy and affinity are inherited across exec.
    prio::apply(0, target.policy, target.affinity.as_ref())
        .map_err(|f| SystemError(format!("cannot set {}", f.message())))?;
    let err = std::process::Command::new(&a.command[0])
        .args(&a.command[1..])
        .exec();
    Err(UsageError(format!("cannot run '{}': {err}", a.command[0])).into())
}

/// Each thread's final target over all rules (a later rule wins), in tid order,
/// and the rules that matched nothing.
fn resolve<'a>(
    tasks: &'a [Task],
    rules: &[crate::tune::prio::profile::Compiled],
) -> (Vec<(&'a Task, Target)>, Vec<usize>) {
    let mut by_tid: BTreeMap<i32, (&Task, Target)> = BTreeMap::new();
    let mut unmatched = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let (hits, _) = select(tasks, &r.selector);
        if hits.is_empty() {
            unmatched.push(i + 1);
        }
        for t in hits {
            by_tid.insert(t.tid, (t, r.target.clone()));
        }
    }
    (by_tid.into_values().collect(), unmatched)
}

fn apply(a: ApplyArgs) -> Result<i32> {
    let (profile, rules) = Profile::read(&a.profile)?;
    let full = rules.iter().any(|r| r.selector.full);
    let tasks = tasks_of(proc_dir(), full, |pid, name, cmd| {
        rules
            .iter()
            .any(|r| r.selector.matches_process(pid, name, cmd))
    });
    for (i, r) in profile.rule.iter().enumerate() {
        if r.policy.is_realtime() && r.priority == 99 {
            warn_priority_99(&format!("rule {} priority 99", i + 1));
        }
    }
    let online = prio::online_cpus();
    for (i, r) in rules.iter().enumerate() {
        if let Some(cpus) = &r.target.affinity {
            check_cpus(cpus, &online).map_err(|e| {
                UsageError(format!(
                    "{}: rule {} affinity: {e}",
                    a.profile.display(),
                    i + 1
                ))
            })?;
        }
    }
    let (items, unmatched) = resolve(&tasks, &rules);
    for n in &unmatched {
        eprintln!(
            "note: rule {n} (pattern '{}') matches no running process",
            profile.rule[n - 1].pattern
        );
    }
    if !a.check {
        let (items, protected) = guard(items, a.force)?;
        let o = change(&items, false)?;
        print(&o.render("changed", 0, protected));
        return Ok(o.code());
    }
    let mut t = text_table(&["pid", "tid", "thread", "drift"]);
    let mut drifting = 0;
    for (task, target) in &items {
        let d = target.drift(&task.setting);
        if !d.is_empty() {
            drifting += 1;
            t.row(vec![
                task.pid.to_string(),
                task.tid.to_string(),
                task.name.clone(),
                d.join(", "),
            ]);
        }
    }
    let mut out = String::new();
    if drifting > 0 {
        out.push_str(&t.render());
    }
    out.push_str(&format!(
        "{drifting} of {} matching threads differ from {}\n",
        items.len(),
        a.profile.display()
    ));
    print(&out);
    Ok(if drifting > 0 { EXIT_FAILED } else { EXIT_OK })
}

fn save(a: SaveArgs) -> Result<i32> {
    if a.profile.exists() && !a.force {
        return Err(UsageError(format!(
            "{} exists; give --force to overwrite it",
            a.profile.display()
        ))
        .into());
    }
    let tasks = tasks_of(proc_dir(), a.matching.full, |_, _, _| true);
    let selected: Vec<&Task> = match &a.pattern {
        Some(p) => select(&tasks, &a.matching.selector(p)?).0,
        None => {
            let rt_pids: std::collections::BTreeSet<i32> = tasks
                .iter()
                .filter(|t| {
                    (a.matching.kernel_threads || !t.kernel)
                        && t.setting.policy.is_some_and(Policy::is_realtime)
                })
                .map(|t| t.pid)
                .collect();
            let own = std::process::id() as i32;
            tasks
                .iter()
                .filter(|t| rt_pids.contains(&t.pid) && t.pid != own)
                .collect()
        }
    };
    let all_cpus = rtlab_engine::sysinfo::SysRoot::default()
        .read("/sys/devices/system/cpu/online")
        .unwrap_or_default();
    let mut profile = Profile::default();
    let mut push = |r: Rule| {
        if !profile.rule.contains(&r) {
            profile.rule.push(r);
        }
    };
    for t in &selected {
        let Some(policy) = t.setting.policy.filter(|p| *p != Policy::Deadline) else {
            continue;
        };
        let main = selected.iter().find(|m| m.tid == t.pid).map(|m| &m.setting);
        let is_main = t.tid == t.pid;
        if !is_main && main == Some(&t.setting) {
            continue;
        }
        push(Rule {
            pattern: format!("^{}$", regex::escape(&t.process)),
            full: false,
            threads: (!is_main).then(|| format!("^{}$", regex::escape(&t.name))),
            kernel_threads: t.kernel,
            policy,
            priority: t.setting.priority,
            affinity: (t.setting.affinity != all_cpus).then(|| t.setting.affinity.clone()),
            unit: None,
        });
    }
    if profile.rule.is_empty() {
        eprintln!(
            "no process to capture{}",
            a.pattern
                .as_ref()
                .map(|p| format!(" matches '{p}'"))
                .unwrap_or_else(|| " (none has a real-time thread; give a PATTERN)".into())
        );
        return Ok(EXIT_FAILED);
    }
    std::fs::write(&a.profile, profile.to_toml()?)
        .with_context(|| format!("cannot write {}", a.profile.display()))?;
    println!(
        "{} rules saved to {}",
        profile.rule.len(),
        a.profile.display()
    );
    Ok(EXIT_OK)
}

fn unit(a: UnitArgs) -> Result<i32> {
    let (profile, _) = Profile::read(&a.profile)?;
    let mut out = String::new();
    for (unit, text) in profile.units() {
        match &a.dir {
            Some(dir) => {
                let path = dropin_path(dir, &unit);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::write(&path, &text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                out.push_str(&format!("wrote {}\n", path.display()));
            }
            None => {
                let path = dropin_path(Path::new("/etc/systemd/system"), &unit);
                out.push_str(&format!("# {}\n{text}\n", path.display()));
            }
        }
    }
    out.push_str("# then: systemctl daemon-reload, and restart the services\n");
    print(&out);
    Ok(EXIT_OK)
}

/// What restore gives a recorded thread, and the setting that results.
fn restore_target(e: &Entry, now: &Setting) -> (Option<ThreadSched>, Option<CpuList>, Setting) {
    let affinity = if e.affinity_changed {
        CpuList::parse(&e.before.affinity).ok()
    } else {
        None
    };
    let sched = match (e.policy_changed, e.sched) {
        (false, _) => None,
        (true, Some(s)) => Some(s),
        // A journal of an older rtlab: the policy and priority it recorded, with
        // the nice value and reset-on-fork flag the thread has now.
        (true, None) => e
            .before
            .policy
            .filter(|p| *p != Policy::Deadline)
            .and_then(|p| {
                let now = rtlab_engine::rt::sched::thread_sched(e.tid).ok()?;
                Some(ThreadSched {
                    policy: p.raw(),
                    priority: e.before.priority,
                    ..now
                })
            }),
    };
    let want = Setting {
        policy: sched.map_or(now.policy, |s| s.known_policy()),
        priority: sched.map_or(now.priority, |s| s.priority),
        affinity: affinity
            .as_ref()
            .map_or(now.affinity.clone(), |a| a.to_string()),
    };
    (sched, affinity, want)
}

/// What differs between what restore asked for and what the thread has now,
/// empty when it has exactly that.
fn restore_misses(
    sched: Option<&ThreadSched>,
    affinity: Option<&CpuList>,
    now: &Snapshot,
) -> Vec<String> {
    let mut d = Vec::new();
    if let Some(s) = sched {
        if *s != now.sched {
            d.push(format!(
                "{} (wanted {})",
                prio::sched_text(&now.sched),
                prio::sched_text(s)
            ));
        }
    }
    if let Some(a) = affinity {
        if *a != now.affinity {
            d.push(format!("CPUs {} (wanted {a})", now.affinity));
        }
    }
    d
}

/// Puts every recorded thread back, under the journal's lock: policy, priority,
/// nice and reset-on-fork flag as recorded, and the CPUs, each read back to
/// confirm. What could not be restored stays in the journal for the next try.
fn restore(a: RestoreArgs) -> Result<i32> {
    let path = state::path()?;
    if State::load(&path)?.entries.is_empty() {
        println!("nothing to restore ({} does not exist)", path.display());
        return Ok(EXIT_OK);
    }
    let journal = if a.dry_run {
        None
    } else {
        Some(Journal::lock(&path, state::LOCK_WAIT)?)
    };
    let st = match &journal {
        Some(j) => j.load()?,
        None => State::load(&path)?,
    };
    let mut left = State::default();
    let mut o = Outcome::default();
    for e in &st.entries {
        let current = prio::read_task(proc_dir(), e.pid, e.tid, &e.name, "")
            .filter(|t| t.starttime == e.starttime);
        let Some(t) = current else {
            o.gone += 1;
            continue;
        };
        let (sched, affinity, want) = restore_target(e, &t.setting);
        let want_text = setting_text(&want);
        if a.dry_run {
            o.changed += 1;
            o.row(&t, &t.setting, want_text, "would restore".into());
            continue;
        }
        let done = prio::put_back(e.tid, sched.as_ref(), affinity.as_ref()).and_then(|()| {
            prio::snapshot(e.tid).map_err(|error| prio::Failure {
                error,
                what: "reading back",
            })
        });
        match done {
            Ok(now) => {
                let misses = restore_misses(sched.as_ref(), affinity.as_ref(), &now);
                if misses.is_empty() {
                    o.changed += 1;
                    o.row(&t, &t.setting, want_text, "restored".into());
                } else {
                    o.failed += 1;
                    o.row(
                        &t,
                        &t.setting,
                        setting_text(&now.setting()),
                        format!("FAILED the kernel kept {}", misses.join(", ")),
                    );
                    left.entries.push(e.clone());
                }
            }
            Err(f) if f.error.errno == ESRCH => o.gone += 1,
            Err(f) => {
                o.failed += 1;
                o.row(
                    &t,
                    &t.setting,
                    setting_text(&t.setting),
                    format!("FAILED {}", f.message()),
                );
                left.entries.push(e.clone());
            }
        }
    }
    if let Some(j) = &journal {
        j.store(&left)?;
    }
    print(&o.render(
        if a.dry_run {
            "would restore"
        } else {
            "restored"
        },
        0,
        0,
    ));
    Ok(o.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: i32, name: &str, kernel: bool, policy: Policy) -> Task {
        Task::for_test(pid, name, kernel, policy)
    }

    #[test]
    fn exit_3_only_when_every_thread_was_refused() {
        let code = |changed, unchanged, failed, gone| {
            Outcome {
                changed,
                unchanged,
                failed,
                gone,
                ..Outcome::default()
            }
            .code()
        };
        assert_eq!(code(0, 0, 0, 0), EXIT_OK);
        assert_eq!(code(3, 1, 0, 1), EXIT_OK);
        assert_eq!(code(1, 0, 1, 0), EXIT_FAILED);
        assert_eq!(code(0, 1, 1, 0), EXIT_FAILED);
        assert_eq!(code(0, 0, 4, 0), EXIT_SYSTEM);
        assert_eq!(code(0, 0, 1, 2), EXIT_SYSTEM);
    }

    #[test]
    fn guard_leaves_out_protected_threads_unless_forced() {
        let tasks = [
            task(1, "init", false, Policy::Other),
            task(18, "migration/0", true, Policy::Fifo),
            task(40, "irq/9-acpi", true, Policy::Fifo),
            task(500, "app", false, Policy::Other),
            task(600, "dl", false, Policy::Deadline),
        ];
        let target = Target {
            policy: Some((Policy::Fifo, 10)),
            affinity: None,
        };
        let items = || {
            tasks
                .iter()
                .map(|t| (t, target.clone()))
                .collect::<Vec<_>>()
        };
        let pids = |kept: &[(&Task, Target)]| kept.iter().map(|(t, _)| t.pid).collect::<Vec<_>>();
        let (kept, left) = guard(items(), false).unwrap();
        assert_eq!((pids(&kept), left), (vec![40, 500], 3));
        // --force reaches PID 1 and the per-CPU threads, never a deadline thread.
        let (kept, left) = guard(items(), true).unwrap();
        assert_eq!((pids(&kept), left), (vec![1, 18, 40, 500], 1));
        // Nothing left to change: a usage error, exit 2.
        let err = guard(vec![(&tasks[0], target.clone())], false).unwrap_err();
        assert!(
            err.is::<UsageError>() && err.to_string().contains("protected"),
            "{err}"
        );
    }
}
