//! Thread priorities: list the threads of the system with their policy, priority
//! and affinity; change them by process pattern (what `pgrep | xargs chrt -p` did),
//! remembering what was changed so it can be undone; profiles and systemd units.

pub mod profile;
pub mod state;

use regex::Regex;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy, SchedError, ThreadSched};
use rtlab_engine::rt::{EINVAL, EPERM, ESRCH};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `PF_KTHREAD` in `/proc/PID/stat` flags (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// One thread as read from `/proc/PID/task/TID`.
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The process's name (`comm` of its main thread).
    pub process: String,
    /// The thread's name.
    pub name: String,
    /// The process's command line, arguments joined by spaces (empty for kernel
    /// threads, and when it was not needed for matching).
    #[serde(skip)]
    pub cmdline: String,
    /// Whether it is a kernel thread.
    pub kernel: bool,
    /// Start time in clock ticks after boot, to tell a reused tid apart.
    #[serde(skip)]
    pub starttime: u64,
    /// The scheduling setting.
    #[serde(flatten)]
    pub setting: Setting,
    /// Voluntary context switches.
    pub voluntary_ctxt_switches: u64,
    /// Involuntary context switches.
    pub nonvoluntary_ctxt_switches: u64,
}

/// Policy, priority and affinity of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// Scheduling policy (`None`: a policy rtlab does not know).
    pub policy: Option<Policy>,
    /// RT priority (0 for the normal policies).
    pub priority: i32,
    /// Allowed CPUs, kernel notation.
    pub affinity: String,
}

impl Setting {
    /// `fifo/50`, `other`.
    pub fn policy_text(&self) -> String {
        match self.policy {
            Some(p) if p.is_realtime() => format!("{p}/{}", self.priority),
            Some(p) => p.to_string(),
            None => "?".into(),
        }
    }
}

/// `/proc/PID/task/TID/stat` fields: (comm, flags, starttime, rt_priority, policy).
fn parse_stat(text: &str) -> Option<(String, u64, u64, i32, i32)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // Fields after the comm start with field 3 (state); see proc(5).
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).copied();
    Some((
        comm,
        field(9)?.parse().ok()?,
        field(22)?.parse().ok()?,
        field(40)?.parse().ok()?,
        field(41)?.parse().ok()?,
    ))
}

fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Reads one thread; `None` when it vanished meanwhile.
pub fn read_task(
    proc_dir: &Path,
    pid: i32,
    tid: i32,
    process: &str,
    cmdline: &str,
) -> Option<Task> {
    let dir = proc_dir.join(format!("{pid}/task/{tid}"));
    let (name, flags, starttime, rt_priority, policy) =
        parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)?;
    let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
    let num = |f| {
        status_field(&status, f)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Some(Task {
        pid,
        tid,
        process: process.to_string(),
        name,
        cmdline: cmdline.to_string(),
        kernel: flags & PF_KTHREAD != 0,
        starttime,
        setting: Setting {
            policy: Policy::from_raw(policy),
            priority: rt_priority,
            affinity: status_field(&status, "Cpus_allowed_list")
                .unwrap_or("")
                .to_string(),
        },
        voluntary_ctxt_switches: num("voluntary_ctxt_switches"),
        nonvoluntary_ctxt_switches: num("nonvoluntary_ctxt_switches"),
    })
}

fn numeric_entries(dir: &Path) -> Vec<i32> {
    let mut ids: Vec<i32> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

/// A process's arguments joined by spaces (empty for kernel threads).
fn read_cmdline(process_dir: &Path) -> String {
    std::fs::read(process_dir.join("cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The threads of the processes in `/proc` for which `wanted(pid, name, cmdline)` holds; only
/// their threads are read, so a narrow pattern stays cheap on a busy system; a process
/// or thread that vanishes while being read is left out. The
/// command lines are read only when `cmdlines` is set (else they are empty).
pub fn tasks_of(
    proc_dir: &Path,
    cmdlines: bool,
    wanted: impl Fn(i32, &str, &str) -> bool,
) -> Vec<Task> {
    let mut out = Vec::new();
    for pid in numeric_entries(proc_dir) {
        let base = proc_dir.join(pid.to_string());
        let Ok(comm) = std::fs::read_to_string(base.join("comm")) else {
            continue;
        };
        let cmdline = if cmdlines {
            read_cmdline(&base)
        } else {
            String::new()
        };
        let comm = comm.trim();
        if !wanted(pid, comm, &cmdline) {
            continue;
        }
        for tid in numeric_entries(&base.join("task")) {
            if let Some(t) = read_task(proc_dir, pid, tid, comm, &cmdline) {
                out.push(t);
            }
        }
    }
    out
}

/// Which threads a pattern selects.
#[derive(Debug, Clone)]
pub struct Selector {
    /// Matched against the process name, or the command line with `full`; a
    /// plain number selects that PID.
    pub pattern: Regex,
    /// The pattern as given.
    pub text: String,
    /// Match the whole command line instead of the process name.
    pub full: bool,
    /// Only threads whose name matches this.
    pub threads: Option<Regex>,
    /// Include kernel threads.
    pub kernel_threads: bool,
}

/// Why a pattern was refused.
pub fn compile(flag: &str, pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| {
        let detail = e.to_string();
        let last = detail.lines().last().unwrap_or("").trim().to_string();
        format!("{flag}: '{pattern}' is not a valid regular expression ({last}); escape special characters, e.g. 'a\\.out'")
    })
}

impl Selector {
    /// Whether the process (by PID, name or command line) matches; threads and
    /// kernel threads are judged by [`select`].
    pub fn matches_process(&self, pid: i32, name: &str, cmdline: &str) -> bool {
        match self.text.parse::<i32>() {
            Ok(want) => pid == want,
            Err(_) if self.full && !cmdline.is_empty() => self.pattern.is_match(cmdline),
            Err(_) => self.pattern.is_match(name),
        }
    }
}

/// The threads a selector picks, and how many kernel threads it left out.
pub fn select<'a>(tasks: &'a [Task], s: &Selector) -> (Vec<&'a Task>, usize) {
    let own = std::process::id() as i32;
    let mut skipped_kernel = 0;
    let mut out = Vec::new();
    for t in tasks.iter().filter(|t| t.pid != own) {
        if !s.matches_process(t.pid, &t.process, &t.cmdline)
            || s.threads.as_ref().is_some_and(|r| !r.is_match(&t.name))
        {
            continue;
        }
        if t.kernel && !s.kernel_threads {
            skipped_kernel += 1;
            continue;
        }
        out.push(t);
    }
    (out, skipped_kernel)
}

/// What to set; `None` fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Policy and priority.
    pub policy: Option<(Policy, i32)>,
    /// CPUs.
    pub affinity: Option<CpuList>,
}

impl Target {
    /// The setting a thread has after applying this target.
    pub fn applied_to(&self, s: &Setting) -> Setting {
        Setting {
            policy: self.policy.map_or(s.policy, |(p, _)| Some(p)),
            priority: self.policy.map_or(s.priority, |(_, prio)| prio),
            affinity: self
                .affinity
                .as_ref()
                .map_or(s.affinity.clone(), |a| a.to_string()),
        }
    }

    /// What differs between a thread's setting and this target, readable; empty
    /// when nothing does.
    pub fn drift(&self, s: &Setting) -> Vec<String> {
        let want = self.applied_to(s);
        let mut d = Vec::new();
        if want.policy != s.policy || want.priority != s.priority {
            d.push(format!("{} (want {})", s.policy_text(), want.policy_text()));
        }
        if want.affinity != s.affinity {
            d.push(format!("CPUs {} (want {})", s.affinity, want.affinity));
        }
        d
    }
}

/// A thread's setting read back with `sched_getscheduler(2)`/`sched_getaffinity(2)`
/// (cheaper than `/proc`, used to confirm a change).
pub fn current_setting(tid: i32) -> Option<Setting> {
    snapshot(tid).ok().map(|s| s.setting())
}

/// Everything about a thread's scheduling that rtlab changes and puts back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Policy, RT priority, nice, reset-on-fork.
    pub sched: ThreadSched,
    /// Allowed CPUs.
    pub affinity: CpuList,
}

impl Snapshot {
    /// The policy, priority and CPUs, as listed and compared with a [`Target`].
    pub fn setting(&self) -> Setting {
        Setting {
            policy: self.sched.known_policy(),
            priority: self.sched.priority,
            affinity: self.affinity.to_string(),
        }
    }
}

/// `fifo/20 nice -5 reset-on-fork`, `policy 7/0 nice 0`: a scheduling state as
/// shown in messages.
pub fn sched_text(s: &ThreadSched) -> String {
    let policy = match s.known_policy() {
        Some(p) if p.is_realtime() => format!("{p}/{}", s.priority),
        Some(p) => p.to_string(),
        None => format!("policy {}/{}", s.policy, s.priority),
    };
    let flag = if s.reset_on_fork {
        " reset-on-fork"
    } else {
        ""
    };
    format!("{policy} nice {}{flag}", s.nice)
}

/// Reads a thread's scheduling state with `sched_getscheduler(2)`,
/// `sched_getparam(2)`, `getpriority(2)` and `sched_getaffinity(2)`.
pub fn snapshot(tid: i32) -> Result<Snapshot, SchedError> {
    Ok(Snapshot {
        sched: sched::thread_sched(tid)?,
        affinity: CpuList::from_cpus(sched::thread_affinity(tid)?),
    })
}

/// Why a thread is left alone unless forced, `None` when rtlab may change it.
/// PID 1 and the kernel's own per-CPU machinery keep the system alive: a
/// mistaken pattern must not reach them.
pub fn protection(t: &Task) -> Option<&'static str> {
    if t.pid == 1 {
        return Some(
            "PID 1 is init: every service it starts inherits its policy and CPUs, and if it starves the system cannot be managed or shut down",
        );
    }
    if !t.kernel {
        return None;
    }
    let n = t.name.as_str();
    let per_cpu = |prefix: &str| {
        n.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|cpu| !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()))
    };
    Some(if per_cpu("migration") {
        "migration/N is the CPU's stopper thread: it moves tasks off the CPU and runs stop_machine and CPU hotplug at the top priority; below another thread they stall"
    } else if per_cpu("ksoftirqd") {
        "ksoftirqd/N runs the CPU's pending softirqs (network, timers, block I/O); starved, they pile up and the CPU's I/O stalls"
    } else if n.starts_with("rcu_") || per_cpu("rcuc") {
        "RCU threads end grace periods: starved, freed memory is never reclaimed and the kernel reports RCU stalls until the system hangs"
    } else if per_cpu("idle_inject") {
        "idle_inject/N forces idle time for thermal and power capping: changed, the CPU can overheat or miss its power limit"
    } else if per_cpu("cpuhp") {
        "cpuhp/N brings its CPU up and down (hotplug, suspend): changed, hotplug can deadlock"
    } else if per_cpu("watchdog") || n == "watchdogd" {
        "the watchdog threads detect lockups: changed, they report false lockups (or reboot the machine) or miss real ones"
    } else {
        return None;
    })
}

/// The CPUs that are online (`/sys/devices/system/cpu/online`; this thread's
/// affinity when sysfs is not there).
pub fn online_cpus() -> CpuList {
    rtlab_engine::sysinfo::SysRoot::default()
        .read("/sys/devices/system/cpu/online")
        .and_then(|s| CpuList::parse(&s).ok())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| CpuList::from_cpus(sched::thread_affinity(0).unwrap_or_default()))
}

/// Refuses a CPU list naming a CPU that is not online: the kernel would drop it
/// silently (or refuse the whole list), and the thread would never have the
/// CPUs asked for.
pub fn check_cpus(list: &CpuList, online: &CpuList) -> Result<(), String> {
    match list.cpus().iter().find(|c| !online.contains(**c)) {
        Some(bad) => Err(format!(
            "CPU {bad} does not exist or is offline (online CPUs: {online})"
        )),
        None => Ok(()),
    }
}

/// Why changing a thread failed.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The refusal.
    pub error: SchedError,
    /// What was being set.
    pub what: &'static str,
}

impl Failure {
    /// A readable reason with the way out.
    pub fn message(&self) -> String {
        match self.error.errno {
            EPERM => format!(
                "{}: permission denied (needs root or CAP_SYS_NICE, or an RLIMIT_RTPRIO at least the priority for own processes)",
                self.what
            ),
            ESRCH => format!("{}: the thread exited", self.what),
            EINVAL => format!("{}: invalid for this thread or system ({})", self.what, self.error),
            _ => format!("{}: {}", self.what, self.error),
        }
    }
}

/// Applies a setting to one thread: affinity first, then policy (so an RT thread
/// never runs a moment on a CPU it should leave). The nice value and the
/// reset-on-fork flag stay as they are.
pub fn apply(
    tid: i32,
    policy: Option<(Policy, i32)>,
    affinity: Option<&CpuList>,
) -> Result<(), Failure> {
    let sched = match policy {
        Some((p, prio)) => {
            let now = sched::thread_sched(tid).map_err(|error| Failure {
                error,
                what: "policy",
            })?;
            Some(ThreadSched {
                policy: p.raw(),
                priority: prio,
                ..now
            })
        }
        None => None,
    };
    put_back(tid, sched.as_ref(), affinity)
}

/// Gives one thread exactly these scheduling state and CPUs (each when given):
/// affinity first, then policy, priority, nice and reset-on-fork.
pub fn put_back(
    tid: i32,
    sched: Option<&ThreadSched>,
    affinity: Option<&CpuList>,
) -> Result<(), Failure> {
    if let Some(cpus) = affinity {
        sched::set_thread_affinity(tid, cpus.cpus()).map_err(|error| Failure {
            error,
            what: "affinity",
        })?;
    }
    if let Some(s) = sched {
        sched::set_thread_sched(tid, s).map_err(|error| Failure {
            error,
            what: "policy",
        })?;
    }
    Ok(())
}

/// Checks a policy/priority pair the way `sched_setscheduler(2)` will.
pub fn validate(policy: Policy, priority: i32) -> Result<(), String> {
    let (lo, hi) = policy.priority_range();
    if policy == Policy::Deadline {
        return Err("deadline cannot be set by rtlab; use fifo or rr".into());
    }
    if priority < lo || priority > hi {
        return Err(if policy.is_realtime() {
            format!("{priority} is outside 1-99 for {policy}")
        } else {
            format!("{policy} takes priority 0, not {priority} (use --policy fifo or rr for a real-time priority)")
        });
    }
    Ok(())
}

#[cfg(test)]
impl Task {
    /// A single-threaded task at priority 0 on CPUs 0-1, for tests.
    pub(crate) fn for_test(pid: i32, name: &str, kernel: bool, policy: Policy) -> Task {
        Task {
            pid,
            tid: pid,
            process: name.into(),
            name: name.into(),
            cmdline: String::new(),
            kernel,
            starttime: 1,
            setting: Setting {
                policy: Some(policy),
                priority: 0,
                affinity: "0-1".into(),
            },
            voluntary_ctxt_switches: 0,
            nonvoluntary_ctxt_switches: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_the_name() {
        // 52 fields as in proc(5); the comm contains ") (".
        let mut fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        fields[9 - 3] = (PF_KTHREAD | 0x40).to_string();
        fields[22 - 3] = "123456".into();
        fields[40 - 3] = "50".into();
        fields[41 - 3] = "1".into();
        let text = format!("42 (a) (b c) {}\n", fields.join(" "));
        let (comm, flags, start, prio, policy) = parse_stat(&text).unwrap();
        assert_eq!(comm, "a) (b c");
        assert!(flags & PF_KTHREAD != 0);
        assert_eq!((start, prio, policy), (123456, 50, 1));
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn this_process_is_listed_with_its_threads() {
        let tasks = tasks_of(Path::new("/proc"), true, |_, _, _| true);
        let me = std::process::id() as i32;
        let mine: Vec<&Task> = tasks.iter().filter(|t| t.pid == me).collect();
        assert!(!mine.is_empty());
        assert!(mine
            .iter()
            .all(|t| !t.kernel && !t.setting.affinity.is_empty()));
        // Kernel threads exist on every Linux system (kthreadd is pid 2).
        assert!(tasks.iter().any(|t| t.kernel));
    }

    #[test]
    fn priorities_are_validated_like_the_kernel() {
        assert!(validate(Policy::Fifo, 50).is_ok());
        assert!(validate(Policy::Fifo, 0).is_err());
        assert!(validate(Policy::Rr, 100).is_err());
        assert!(validate(Policy::Other, 0).is_ok());
        assert!(validate(Policy::Other, 5)
            .unwrap_err()
            .contains("priority 0"));
        assert!(validate(Policy::Deadline, 0).is_err());
    }

    fn task(pid: i32, name: &str, kernel: bool) -> Task {
        Task::for_test(pid, name, kernel, Policy::Other)
    }

    #[test]
    fn pid_1_and_the_kernels_per_cpu_threads_are_protected() {
        assert!(protection(&task(1, "systemd", false))
            .unwrap()
            .contains("PID 1 is init"));
        for name in [
            "migration/0",
            "migration/17",
            "ksoftirqd/3",
            "rcu_preempt",
            "rcu_tasks_kthread",
            "rcuc/2",
            "idle_inject/1",
            "cpuhp/0",
            "watchdog/5",
            "watchdogd",
        ] {
            assert!(protection(&task(50, name, true)).is_some(), "{name}");
            // The same name on a user process is not the kernel's.
            assert!(protection(&task(50, name, false)).is_none(), "{name}");
        }
        for name in [
            "irq/24-eth0",
            "rcuop/0",
            "kworker/0:1",
            "ksoftirqd",
            "migration/",
            "migration/x",
            "kthreadd",
        ] {
            assert!(protection(&task(50, name, true)).is_none(), "{name}");
        }
    }

    #[test]
    fn cpus_must_be_online() {
        let online = CpuList::parse("0-1").unwrap();
        assert!(check_cpus(&CpuList::parse("1").unwrap(), &online).is_ok());
        let e = check_cpus(&CpuList::parse("0,99").unwrap(), &online).unwrap_err();
        assert!(
            e.contains("CPU 99 does not exist") && e.contains("0-1"),
            "{e}"
        );
        assert!(online_cpus().contains(sched::thread_affinity(0).unwrap()[0]));
    }

    #[test]
    fn a_snapshot_of_this_thread_matches_proc() {
        let s = snapshot(0).unwrap();
        let me = std::process::id() as i32;
        let t = read_task(Path::new("/proc"), me, rtlab_engine::rt::gettid(), "", "").unwrap();
        assert_eq!(s.setting(), t.setting);
        assert_eq!(current_setting(0), Some(t.setting));
    }

    #[test]
    fn sched_text_shows_every_field() {
        let s = ThreadSched {
            policy: Policy::Fifo.raw(),
            priority: 20,
            nice: -5,
            reset_on_fork: true,
        };
        assert_eq!(sched_text(&s), "fifo/20 nice -5 reset-on-fork");
        let odd = ThreadSched {
            policy: 7,
            priority: 0,
            nice: 0,
            reset_on_fork: false,
        };
        assert_eq!(sched_text(&odd), "policy 7/0 nice 0");
    }

    #[test]
    fn drift_names_what_differs() {
        let s = Setting {
            policy: Some(Policy::Other),
            priority: 0,
            affinity: "0-3".into(),
        };
        let t = Target {
            policy: Some((Policy::Fifo, 50)),
            affinity: Some(CpuList::parse("2-3").unwrap()),
        };
        assert_eq!(t.drift(&s), ["other (want fifo/50)", "CPUs 0-3 (want 2-3)"]);
        let done = t.applied_to(&s);
        assert!(t.drift(&done).is_empty());
    }
}
