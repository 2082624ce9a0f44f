//! The candidates `rtlab tune` tries: the audit's findings that can be changed
//! while the system runs, one small module each. A candidate reads the system
//! and either plans its changes ([`Plan`]: what it writes, how to make the
//! change by hand and for good) or says why it is not possible here (absent on
//! this kernel, already as recommended, nothing left to move): never a faked
//! change. Making, checking and putting back the changes is the same for all
//! ([`super::change`], [`super::journal::Session`]).
//!
//! Fixes the kernel takes only when it boots (isolcpus, nohz_full, rcu_nocbs,
//! PREEMPT_RT, ...) are not tried: [`boot_only`] lists them with the audit's
//! exact command line or configuration.

mod app_priority;
mod c_states;
mod cpu_dma_latency;
mod cpuset;
mod governor;
mod irq_affinity;
mod irq_threads;
mod ksm;
mod preempt;
mod rcu;
mod thp;
mod timer_migration;
mod watchdogs;
mod workqueue_mask;

use super::change::{Form, Want};
use crate::tune::audit::{Check, Input, Status};
use crate::tune::prio::profile::Rule;
use crate::tune::prio::task::{proc_dir, tasks_of, Task};
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::sysinfo::SysRoot;
use serde::Serialize;

/// One candidate.
#[derive(Debug, Clone, Copy)]
pub struct Fix {
    /// Its name for `--try` (the audit check's id where there is one).
    pub name: &'static str,
    /// What it changes, readable.
    pub title: &'static str,
    /// Reads the system: the changes to try, or why it is not possible here.
    pub plan: fn(&Ctx) -> Result<Plan, String>,
}

/// The application `--app` names, and what its threads are to get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    /// Regular expression on the process name (as `rtlab prio`).
    pub pattern: String,
    /// The policy and priority to try.
    pub policy: (Policy, i32),
}

/// What the candidates read.
pub struct Ctx<'a> {
    /// The system's files.
    pub root: &'a SysRoot,
    /// The audit's view of the system (fingerprint, kernel configuration).
    pub input: &'a Input,
    /// The CPUs measured: the ones to keep quiet.
    pub measured: CpuList,
    /// The online CPUs that are not measured, where the rest may go.
    pub housekeeping: CpuList,
    /// The measuring threads' policy and priority.
    pub probe: (Policy, i32),
    /// The application `--app` names.
    pub app: Option<&'a App>,
}

/// How a candidate's change is made and kept.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The changes, in order.
    pub wants: Vec<Want>,
    /// What changes, readable: `kernel.timer_migration 1 → 0`.
    pub change: String,
    /// The command that makes the change by hand.
    pub by_hand: String,
    /// For good, where no file does it: the kernel command line or where in
    /// the application.
    pub boot: Option<String>,
    /// For good, thread priorities and CPUs: `rtlab prio` rules.
    pub rules: Vec<Rule>,
    /// The measuring threads' policy and priority in the baseline and in the
    /// changed arm, when the candidate is about them (the application's
    /// threads, for which the measuring threads stand).
    pub probe: Option<[(Policy, i32); 2]>,
    /// Said after the kernel's refusal, when it has a known cause.
    pub refusal_note: Option<&'static str>,
}

/// Every candidate, in the order they are tried.
pub const FIXES: &[Fix] = &[
    app_priority::FIX,
    timer_migration::FIX,
    irq_affinity::FIX,
    workqueue_mask::FIX,
    rcu::FIX,
    irq_threads::FIX,
    cpu_dma_latency::FIX,
    c_states::FIX,
    governor::FIX,
    thp::FIX,
    ksm::FIX,
    watchdogs::FIX,
    preempt::FIX,
    cpuset::FIX,
];

/// The candidate called `name`.
pub fn fix(name: &str) -> Option<&'static Fix> {
    FIXES.iter().find(|f| f.name == name)
}

/// The names of all candidates, for messages.
pub fn names() -> String {
    FIXES.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// A sysctl set to `value`: `kernel.timer_migration` is
/// `/proc/sys/kernel/timer_migration`.
pub fn sysctl(c: &Ctx, key: &str, value: &str) -> Result<Plan, String> {
    let path = sysctl_path(key);
    let now = c
        .root
        .read(&path)
        .ok_or_else(|| format!("{path} is not there: this kernel has no {key}"))?;
    if now == value {
        return Err(format!("already {key} = {now}"));
    }
    Ok(Plan {
        wants: vec![value_want(&path, value, Form::Text, false)],
        change: format!("{key} {now} → {value}"),
        by_hand: format!("sysctl -w {key}={value}"),
        ..Plan::default()
    })
}

/// The file of a sysctl key.
pub fn sysctl_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

/// The sysctl key of a file below `/proc/sys`, if it is one.
pub fn sysctl_key(path: &str) -> Option<String> {
    path.strip_prefix("/proc/sys/").map(|k| k.replace('/', "."))
}

/// A value to write.
pub fn value_want(path: &str, value: &str, form: Form, optional: bool) -> Want {
    Want::Value {
        path: path.to_string(),
        value: value.to_string(),
        form,
        optional,
    }
}

/// A thread to change (skipped when the kernel refuses it).
pub fn thread_want(t: &Task, policy: Option<(Policy, i32)>, affinity: Option<CpuList>) -> Want {
    Want::Thread {
        pid: t.pid,
        tid: t.tid,
        name: t.name.clone(),
        starttime: t.starttime,
        policy,
        affinity,
        optional: true,
    }
}

/// `rtlab prio` rules that give `threads` the policy and priority `policy`
/// (their own, when `None`) and the CPUs `affinity`: one rule per policy and
/// priority, naming the threads.
pub fn rules(
    threads: &[&Task],
    policy: Option<(Policy, i32)>,
    affinity: Option<&str>,
) -> Vec<Rule> {
    let mut groups: Vec<((Policy, i32), Vec<String>)> = Vec::new();
    for t in threads {
        let own = (
            t.setting.policy.unwrap_or(Policy::Other),
            t.setting.priority,
        );
        let key = policy.unwrap_or(own);
        let name = regex::escape(&t.name);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) if !names.contains(&name) => names.push(name),
            Some(_) => {}
            None => groups.push((key, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|((policy, priority), names)| Rule {
            pattern: format!("^({})$", names.join("|")),
            full: false,
            threads: None,
            kernel_threads: threads.iter().any(|t| t.kernel),
            policy,
            priority,
            affinity: affinity.map(str::to_string),
            unit: None,
        })
        .collect()
}

/// The kernel threads whose name `wanted` accepts.
pub fn kernel_threads(wanted: impl Fn(&str) -> bool) -> Vec<Task> {
    tasks_of(proc_dir(), false, |_, name, _| wanted(name))
        .into_iter()
        .filter(|t| t.kernel)
        .collect()
}

/// Whether the CPU list `text` shares a CPU with `cpus`.
pub fn overlaps(text: &str, cpus: &CpuList) -> bool {
    CpuList::parse(text).is_ok_and(|l| l.cpus().iter().any(|&c| cpus.contains(c)))
}

/// The refusal when no CPU is left outside the measured ones.
pub fn no_housekeeping(what: &str) -> String {
    format!("every online CPU is measured: no CPU is left to take {what} (measure fewer, e.g. --cpus 1)")
}

/// A fix the kernel only takes when it boots (or is built), with the audit's
/// exact command line or configuration.
#[derive(Debug, Clone, Serialize)]
pub struct BootFix {
    /// The audit check.
    pub id: &'static str,
    /// What it is about.
    pub title: &'static str,
    /// As it is now.
    pub current: String,
    /// The kernel command line or configuration to use.
    pub fix: String,
}

/// The audit checks whose fix needs a reboot or another kernel.
const BOOT_ONLY: &[&str] = &[
    "preempt",
    "nohz_full",
    "cmdline_isolation",
    "isolated_cpus",
    "hz",
    "rt_group_sched",
    "debug_options",
    "hrtimers",
];

/// The boot-time fixes the audit recommends on this system (its checks that
/// warn or fail among [`BOOT_ONLY`]).
pub fn boot_only(checks: &[Check]) -> Vec<BootFix> {
    checks
        .iter()
        .filter(|c| BOOT_ONLY.contains(&c.id) && matches!(c.status, Status::Warn | Status::Fail))
        .map(|c| BootFix {
            id: c.id,
            title: c.title,
            current: c.current.clone(),
            fix: c.fix.clone(),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tune::audit;

    /// A context over the fake tree `root`, measuring CPU 1 of 0-1.
    pub(crate) fn ctx<'a>(root: &'a SysRoot, input: &'a Input) -> Ctx<'a> {
        Ctx {
            root,
            input,
            measured: CpuList::parse("1").unwrap(),
            housekeeping: CpuList::parse("0").unwrap(),
            probe: (Policy::Fifo, 90),
            app: None,
        }
    }

    /// A tree with `files` (path, content) below a new directory.
    pub(crate) fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = SysRoot::new(dir.path());
        (dir, root)
    }

    #[test]
    fn names_are_unique_and_found() {
        for f in FIXES {
            assert_eq!(fix(f.name).unwrap().name, f.name);
        }
        assert!(fix("rt_throttling").is_none(), "never RT throttling off");
        assert_eq!(
            sysctl_key("/proc/sys/kernel/watchdog").unwrap(),
            "kernel.watchdog"
        );
        assert_eq!(sysctl_path("vm.swappiness"), "/proc/sys/vm/swappiness");
    }

    #[test]
    fn a_sysctl_already_set_or_absent_is_not_possible_and_says_why() {
        let (_d, root) = tree(&[("/proc/sys/kernel/timer_migration", "0\n")]);
        let input = audit::Input::read(root.clone());
        let c = ctx(&root, &input);
        assert_eq!(
            sysctl(&c, "kernel.timer_migration", "0").unwrap_err(),
            "already kernel.timer_migration = 0"
        );
        assert_eq!(
            sysctl(&c, "kernel.nothing", "0").unwrap_err(),
            "/proc/sys/kernel/nothing is not there: this kernel has no kernel.nothing"
        );
        let p = sysctl(&c, "kernel.timer_migration", "1").unwrap();
        assert_eq!(p.change, "kernel.timer_migration 0 → 1");
        assert_eq!(p.by_hand, "sysctl -w kernel.timer_migration=1");
    }

    #[test]
    fn boot_only_fixes_come_from_the_audit() {
        let (_d, root) = tree(&[
            ("/proc/sys/kernel/osrelease", "6.18.1\n"),
            ("/sys/devices/system/cpu/online", "0-1\n"),
            ("/proc/sys/kernel/timer_migration", "1\n"),
        ]);
        let input = audit::Input::read(root);
        let checks = audit::audit(&input);
        let boot = boot_only(&checks);
        assert!(boot
            .iter()
            .all(|b| BOOT_ONLY.contains(&b.id) && !b.fix.is_empty()));
        let isolation = boot.iter().find(|b| b.id == "isolated_cpus").unwrap();
        assert!(
            isolation
                .fix
                .starts_with("boot with isolcpus=domain,managed_irq,1 "),
            "{boot:?}"
        );
        // A run-time fix is tried, not listed.
        assert!(checks
            .iter()
            .any(|c| c.id == "timer_migration" && c.status == Status::Warn));
        assert!(boot.iter().all(|b| b.id != "timer_migration"));
    }
}
