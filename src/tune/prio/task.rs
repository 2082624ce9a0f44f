//! The threads of the system as `/proc` lists them: process, thread name, kernel
//! or not, policy, priority, CPUs and context switches.

use rtlab_engine::rt::sched::Policy;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where the threads are listed.
pub fn proc_dir() -> &'static Path {
    Path::new("/proc")
}

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
        let tasks = tasks_of(proc_dir(), true, |_, _, _| true);
        let me = std::process::id() as i32;
        let mine: Vec<&Task> = tasks.iter().filter(|t| t.pid == me).collect();
        assert!(!mine.is_empty());
        assert!(mine
            .iter()
            .all(|t| !t.kernel && !t.setting.affinity.is_empty()));
        // Kernel threads exist on every Linux system (kthreadd is pid 2).
        assert!(tasks.iter().any(|t| t.kernel));
    }
}
