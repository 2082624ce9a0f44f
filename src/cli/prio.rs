//! `rtlab prio`: list, set, run, apply, save, unit and restore thread priorities.

mod args;

use super::common::print;
use crate::error::{SystemError, UsageError, EXIT_FAILED, EXIT_OK};
use crate::format::json;
use crate::format::text::table::paragraph;
use crate::tune::prio::guard::guard;
use crate::tune::prio::profile::Profile;
use crate::tune::prio::restore::{restore, Restored};
use crate::tune::prio::select::{no_match, select, tasks_matching, Selector};
use crate::tune::prio::target::{top_priority_warning, Target};
use crate::tune::prio::task::{proc_dir, tasks_of, Task};
use crate::tune::prio::{apply, capture, change, list, thread, unit};
use anyhow::{Context, Result};
use args::{ApplyArgs, ListArgs, RestoreArgs, RunArgs, SaveArgs, SetArgs, UnitArgs};
use clap::{Args, Subcommand};
use rtlab_engine::rt::mem::raise_memlock_limit;

/// Arguments of `rtlab prio`.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab prio list --rt-only
  rtlab prio set 'irq/.*eth0' --policy fifo -p 85 --kernel-threads
  rtlab prio restore")]
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

/// Prints a warning on stderr.
fn warn(message: &str) {
    eprint!("{}", paragraph("warning: ", message));
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
        PrioCommand::Restore(a) => restore_cmd(a),
    }
}

fn list(a: ListArgs) -> Result<i32> {
    let tasks = tasks_of(proc_dir(), a.full, |_, _, _| true);
    let selector = a
        .pattern
        .as_deref()
        .map(|p| Selector::new(p, a.full, None, true))
        .transpose()
        .map_err(UsageError)?;
    let shown = list::shown(&tasks, selector.as_ref(), a.rt_only);
    if a.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            threads: &'a [&'a Task],
        }
        print(&json::tagged("prio.list", &Doc { threads: &shown })?);
    } else {
        print(&list::table(&shown));
    }
    Ok(EXIT_OK)
}

/// Changes `items` (unless `dry_run`) after leaving out the protected threads
/// (warned about), prints the outcome and returns its exit code.
fn change_and_report(
    items: Vec<(&Task, Target)>,
    force: bool,
    dry_run: bool,
    skipped: usize,
) -> Result<i32> {
    let guarded = guard(items, force);
    guarded.warnings.iter().for_each(|w| warn(w));
    let protected = guarded.protected;
    let o = change::change(&guarded.kept()?, dry_run)?;
    let verb = if dry_run { "would change" } else { "changed" };
    print(&o.render(verb, skipped, protected));
    Ok(o.code())
}

fn set(a: SetArgs) -> Result<i32> {
    let target = a.sched.target()?;
    let selector = a.matching.selector(&a.pattern)?;
    let tasks = tasks_matching(&[&selector]);
    let (hits, skipped) = select(&tasks, &selector);
    if hits.is_empty() {
        eprintln!("{}", no_match(&a.pattern, skipped));
        return Ok(EXIT_FAILED);
    }
    let items = hits.into_iter().map(|t| (t, target.clone())).collect();
    change_and_report(items, a.force, a.dry_run, skipped)
}

fn run_cmd(a: RunArgs) -> Result<i32> {
    use std::os::unix::process::CommandExt;
    let target = a.sched.target()?;
    if a.mlock {
        let reached = raise_memlock_limit()
            .map_err(std::io::Error::from_raw_os_error)
            .map_err(|e| SystemError(format!("--mlock: cannot raise RLIMIT_MEMLOCK ({e})")))?;
        if let Some(bytes) = reached {
            warn(&format!("--mlock: RLIMIT_MEMLOCK raised only to its hard limit, {} KiB (unlimited needs CAP_SYS_RESOURCE or LimitMEMLOCK=infinity)", bytes / 1024));
        }
    }
    // rtlab is single-threaded here: the calling thread is the process, and its
    // policy and affinity are inherited across exec.
    thread::apply(0, target.policy, target.affinity.as_ref())
        .map_err(|f| SystemError(format!("cannot set {}", f.message())))?;
    let err = std::process::Command::new(&a.command[0])
        .args(&a.command[1..])
        .exec();
    Err(UsageError(format!("cannot run '{}': {err}", a.command[0])).into())
}

fn apply(a: ApplyArgs) -> Result<i32> {
    let (profile, rules) = Profile::read(&a.profile)?;
    let tasks = apply::tasks_for(&rules);
    for n in apply::top_priority_rules(&profile) {
        warn(&top_priority_warning(&format!("rule {n} priority 99")));
    }
    apply::check_online(&a.profile, &rules)?;
    let (items, unmatched) = apply::resolve(&tasks, &rules);
    for n in unmatched {
        let pattern = &profile.rule[n - 1].pattern;
        eprintln!("note: rule {n} (pattern '{pattern}') matches no running process");
    }
    if !a.check {
        return change_and_report(items, a.force, false, 0);
    }
    let (report, drifting) = apply::drift_report(&items, &a.profile);
    print(&report);
    Ok(if drifting > 0 { EXIT_FAILED } else { EXIT_OK })
}

fn save(a: SaveArgs) -> Result<i32> {
    if a.profile.exists() && !a.force {
        let shown = a.profile.display();
        return Err(UsageError(format!("{shown} exists; give --force to overwrite it")).into());
    }
    let tasks = tasks_of(proc_dir(), a.matching.full, |_, _, _| true);
    let selected = match &a.pattern {
        Some(p) => select(&tasks, &a.matching.selector(p)?).0,
        None => capture::rt_processes(&tasks, a.matching.kernel_threads),
    };
    let profile = capture::capture(&selected);
    if profile.rule.is_empty() {
        let why = a.pattern.as_ref().map_or_else(
            || " (none has a real-time thread; give a PATTERN)".into(),
            |p| format!(" matches '{p}'"),
        );
        eprintln!("no process to capture{why}");
        return Ok(EXIT_FAILED);
    }
    let file = crate::files::NewFile::at(&a.profile);
    let file = if a.force { file } else { file.no_replace() };
    file.write(profile.to_toml()?.as_bytes())
        .with_context(|| format!("cannot write {}", a.profile.display()))?;
    let n = profile.rule.len();
    print(&format!("{n} rules saved to {}\n", a.profile.display()));
    Ok(EXIT_OK)
}

fn unit(a: UnitArgs) -> Result<i32> {
    let (profile, _) = Profile::read(&a.profile)?;
    print(&unit::write_or_show(&profile, a.dir.as_deref())?);
    Ok(EXIT_OK)
}

fn restore_cmd(a: RestoreArgs) -> Result<i32> {
    match restore(a.dry_run)? {
        Restored::Nothing(path) => {
            print(&format!(
                "nothing to restore ({} does not exist)\n",
                path.display()
            ));
            Ok(EXIT_OK)
        }
        Restored::Done(o) => {
            let verb = if a.dry_run {
                "would restore"
            } else {
                "restored"
            };
            print(&o.render(verb, 0, 0));
            Ok(o.code())
        }
    }
}
