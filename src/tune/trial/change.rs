//! The changes `rtlab tune` makes, each one primitive: a value written to a
//! sysfs or procfs file, a thread's policy, priority or CPUs, a file system
//! mounted, a directory (a cgroup) made, this process moved to a cgroup, and
//! `/dev/cpu_dma_latency` held. Every change but the last is recorded in the
//! journal ([`super::journal`]) *before* it is made, read back after it is
//! made, and put back and read back again when its candidate ends; the hold
//! on `/dev/cpu_dma_latency` is a file descriptor, which the kernel closes when
//! the process ends however it ends.

use crate::tune::audit::{parse_mask, selected};
use crate::tune::prio::restore::{put_back, Put};
use crate::tune::prio::state::Entry;
use crate::tune::prio::task::{proc_dir, read_task, Setting};
use crate::tune::prio::thread;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::ESRCH;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How a value file reads, so that what is read back is compared with what
/// was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// The file's text, trimmed.
    #[default]
    Text,
    /// A selector (`always [madvise] never`): the bracketed word.
    Selector,
    /// A hexadecimal CPU mask (`00000003`, `3`).
    Mask,
    /// A CPU list (`0-1`).
    List,
    /// `cgroup.subtree_control`: the controllers read as a set; `+name`
    /// written enables one, `-name` disables it.
    Controllers,
}

impl Form {
    /// What the text of a file of this form stands for, for comparing.
    pub fn value(self, text: &str) -> String {
        let t = text.trim();
        match self {
            Form::Text => t.to_string(),
            Form::Selector => chosen(t).unwrap_or(t).to_string(),
            Form::Mask => parse_mask(t).map_or_else(|| t.to_string(), |l| l.to_string()),
            Form::List => CpuList::parse(t).map_or_else(|_| t.to_string(), |l| l.to_string()),
            Form::Controllers => controllers(t).into_iter().collect::<Vec<_>>().join(" "),
        }
    }

    /// What a file of this form reads after `written` is written over `before`.
    fn expected(self, before: &str, written: &str) -> String {
        match self {
            Form::Controllers => {
                let mut set = controllers(before);
                for w in written.split_whitespace() {
                    match (w.strip_prefix('+'), w.strip_prefix('-')) {
                        (Some(on), _) => set.insert(on.to_string()),
                        (_, Some(off)) => set.remove(off),
                        _ => false,
                    };
                }
                set.into_iter().collect::<Vec<_>>().join(" ")
            }
            _ => self.value(written),
        }
    }

    /// What to write to go back from `now` to `before` (both as read).
    fn undo(self, before: &str, now: &str) -> String {
        match self {
            Form::Controllers => {
                let (was, is) = (controllers(before), controllers(now));
                let on = was.difference(&is).map(|c| format!("+{c}"));
                let off = is.difference(&was).map(|c| format!("-{c}"));
                off.chain(on).collect::<Vec<_>>().join(" ")
            }
            Form::Selector => self.value(before),
            _ => before.trim().to_string(),
        }
    }
}

/// The choice marked in a selector file: `[madvise]` (mm) or `(full)`
/// (`sched/preempt`).
fn chosen(text: &str) -> Option<&str> {
    selected(text).or_else(|| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
    })
}

fn controllers(text: &str) -> BTreeSet<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// A change a candidate asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// Write `value` to the file `path` (a system path such as
    /// `/proc/sys/kernel/timer_migration`, read below the session's root).
    Value {
        /// The file.
        path: String,
        /// What to write.
        value: String,
        /// How it reads back.
        form: Form,
        /// A refusal skips this one value (an IRQ the kernel keeps where it
        /// is), rather than the whole candidate.
        optional: bool,
    },
    /// Give a thread this policy and priority and/or these CPUs.
    Thread {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// Its name.
        name: String,
        /// Its start time, to tell a reused tid.
        starttime: u64,
        /// Policy and priority.
        policy: Option<(Policy, i32)>,
        /// CPUs.
        affinity: Option<CpuList>,
        /// A refusal skips this thread rather than the whole candidate.
        optional: bool,
    },
    /// Mount a file system of type `fstype` at `target` when none is there.
    Mount {
        /// Where.
        target: String,
        /// Its type (`debugfs`).
        fstype: String,
    },
    /// Make the directory `path` (a cgroup); one already there is refused.
    Dir {
        /// The directory.
        path: String,
    },
    /// Move this process (its threads, and the measuring threads it starts)
    /// into the cgroup `dir` when measuring starts.
    Cgroup {
        /// The cgroup's directory.
        dir: String,
    },
    /// Hold `/dev/cpu_dma_latency` at `us` µs while the change is on.
    DmaLatency {
        /// The latency asked for.
        us: i32,
    },
}

/// A change made, as the journal records it: enough to put it back after a
/// crash, by another rtlab process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Change {
    /// A value written.
    Value {
        /// The file (below the session's root).
        path: PathBuf,
        /// Its text before (trimmed).
        before: String,
        /// What was written.
        after: String,
        /// How it reads.
        #[serde(default)]
        form: Form,
    },
    /// A thread changed, as `rtlab prio` records it.
    Thread {
        /// The record.
        entry: Entry,
    },
    /// A file system mounted.
    Mount {
        /// Where.
        target: PathBuf,
    },
    /// A directory made.
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// A process moved to another cgroup.
    Cgroup {
        /// The process.
        pid: u32,
        /// The cgroup it was in (its directory).
        from: PathBuf,
        /// The cgroup it was moved to.
        to: PathBuf,
    },
}

impl Change {
    /// What changed, readable: `/proc/sys/kernel/timer_migration 1 → 0`.
    pub fn text(&self) -> String {
        match self {
            Change::Value {
                path,
                before,
                after,
                form,
            } => format!(
                "{} {} → {}",
                path.display(),
                form.value(before),
                form.expected(before, after)
            ),
            Change::Thread { entry } => format!(
                "thread {} (tid {}) {}",
                entry.name,
                entry.tid,
                crate::tune::prio::outcome::setting_text(&entry.before)
            ),
            Change::Mount { target } => format!("mounted {}", target.display()),
            Change::Dir { path } => format!("made {}", path.display()),
            Change::Cgroup { pid, to, .. } => format!("moved pid {pid} to {}", to.display()),
        }
    }
}

/// Why a change could not be made or put back, with the kernel's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a value file: its text, or the kernel's refusal.
pub fn read_value(path: &Path) -> Result<String, Refused> {
    rtlab_engine::sysinfo::read_text(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| Refused(format!("reading {}: {}", path.display(), io_text(&e))))
}

/// Writes a value file (never creating it).
pub fn write_value(path: &Path, value: &str) -> Result<(), Refused> {
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| {
            Refused(format!(
                "writing {value} to {}: {}",
                path.display(),
                io_text(&e)
            ))
        })
}

/// An I/O error as the kernel said it, with its errno name.
pub fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    let words = text.split(" (os error").next().unwrap_or(&text);
    match e.raw_os_error() {
        Some(n) => format!("{words} ({})", errno_name(n)),
        None => text,
    }
}

fn errno_name(n: i32) -> String {
    use rtlab_engine::rt::{EACCES, EBUSY, EINVAL, EPERM, EROFS};
    match n {
        EPERM => "EPERM".into(),
        EACCES => "EACCES".into(),
        EBUSY => "EBUSY".into(),
        EINVAL => "EINVAL".into(),
        EROFS => "EROFS".into(),
        ESRCH => "ESRCH".into(),
        2 => "ENOENT".into(),
        5 => "EIO".into(),
        19 => "ENODEV".into(),
        28 => "ENOSPC".into(),
        95 => "EOPNOTSUPP".into(),
        n => format!("errno {n}"),
    }
}

/// A value file as its change will find it: what it reads, and what it
/// will read once `value` is written; `None` when it reads so already.
pub fn pending(path: &Path, value: &str, form: Form) -> Result<Option<String>, Refused> {
    let now = read_value(path)?;
    let want = form.expected(&now, value);
    Ok((form.value(&now) != want).then_some(now))
}

/// Writes a value whose `before` is recorded, and reads it back.
pub fn set_value(path: &Path, before: &str, value: &str, form: Form) -> Result<(), Refused> {
    write_value(path, value)?;
    let now = read_value(path)?;
    let want = form.expected(before, value);
    if form.value(&now) != want {
        return Err(Refused(format!(
            "{} reads {} after {value} was written (wanted {want})",
            path.display(),
            form.value(&now)
        )));
    }
    Ok(())
}

/// A thread's change, recorded as `rtlab prio` records one: `None` when the
/// thread has exited or already has what is asked.
pub fn thread_entry(
    pid: i32,
    tid: i32,
    starttime: u64,
    policy: Option<(Policy, i32)>,
    affinity: Option<&CpuList>,
) -> Result<Option<Entry>, Refused> {
    let Some(t) = read_task(proc_dir(), pid, tid, "", "").filter(|t| t.starttime == starttime)
    else {
        return Ok(None);
    };
    let snap = match thread::snapshot(tid) {
        Ok(s) => s,
        Err(e) if e.errno == ESRCH => return Ok(None),
        Err(e) => return Err(Refused(format!("reading thread {} ({tid}): {e}", t.name))),
    };
    let before = snap.setting();
    let want = Setting {
        policy: policy.map_or(before.policy, |(p, _)| Some(p)),
        priority: policy.map_or(before.priority, |(_, n)| n),
        affinity: affinity.map_or(before.affinity.clone(), |a| a.to_string()),
    };
    let policy_changed = want.policy != before.policy || want.priority != before.priority;
    let affinity_changed = want.affinity != before.affinity;
    if !policy_changed && !affinity_changed {
        return Ok(None);
    }
    Ok(Some(Entry {
        pid,
        tid,
        name: t.name,
        starttime,
        before,
        sched: Some(snap.sched),
        affinity_changed,
        policy_changed,
    }))
}

/// Changes a thread as recorded in `e`, to `policy` and `affinity`, and reads
/// it back.
pub fn set_thread(
    e: &Entry,
    policy: Option<(Policy, i32)>,
    affinity: Option<&CpuList>,
) -> Result<(), Refused> {
    let policy = policy.filter(|_| e.policy_changed);
    let affinity = affinity.filter(|_| e.affinity_changed);
    thread::apply(e.tid, policy, affinity)
        .map_err(|f| Refused(format!("thread {} ({}): {}", e.name, e.tid, f.message())))?;
    let now = thread::current_setting(e.tid).unwrap_or_else(|| e.before.clone());
    let kept = policy.is_some_and(|(p, n)| now.policy != Some(p) || now.priority != n)
        || affinity.is_some_and(|a| now.affinity != a.to_string());
    if kept {
        return Err(Refused(format!(
            "thread {} ({}) reads {} after the change",
            e.name,
            e.tid,
            crate::tune::prio::outcome::setting_text(&now)
        )));
    }
    Ok(())
}

/// Whether a file system is mounted at `target` (per `/proc/self/mounts`).
pub fn mounted(target: &Path) -> bool {
    rtlab_engine::sysinfo::read_text("/proc/self/mounts").is_ok_and(|m| {
        m.lines()
            .any(|l| l.split_whitespace().nth(1) == Some(&*target.to_string_lossy()))
    })
}

/// Runs `mount`/`umount` with `args`; the tool's own words on failure.
pub fn mount_tool(tool: &str, args: &[&str]) -> Result<(), Refused> {
    let out = std::process::Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| Refused(format!("'{tool}' could not run: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(Refused(format!(
        "{tool} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// The cgroup (v2) directory of process `pid`, below the cgroup2 mount `mount`.
pub fn cgroup_of(mount: &Path, pid: u32) -> Option<PathBuf> {
    let text = rtlab_engine::sysinfo::read_text(format!("/proc/{pid}/cgroup")).ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(rel.trim().trim_start_matches('/')))
}

/// Puts one change back and reads it back; what went wrong otherwise.
pub fn undo(c: &Change) -> Result<(), Refused> {
    match c {
        Change::Value {
            path,
            before,
            after: _,
            form,
        } => {
            let now = read_value(path)?;
            if form.value(&now) == form.value(before) {
                return Ok(());
            }
            write_value(path, &form.undo(before, &now))?;
            let back = read_value(path)?;
            if form.value(&back) != form.value(before) {
                return Err(Refused(format!(
                    "{} reads {} after it was put back (was {})",
                    path.display(),
                    form.value(&back),
                    form.value(before)
                )));
            }
            Ok(())
        }
        Change::Thread { entry } => match put_back(entry) {
            Put::Restored { .. } | Put::Gone => Ok(()),
            Put::Failed { reason, .. } => Err(Refused(format!(
                "thread {} ({}): {reason}",
                entry.name, entry.tid
            ))),
        },
        Change::Mount { target } => {
            if !mounted(target) {
                return Ok(());
            }
            mount_tool("umount", &[&target.to_string_lossy()])
        }
        Change::Dir { path } => match std::fs::remove_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Refused(format!(
                "removing {}: {}",
                path.display(),
                io_text(&e)
            ))),
        },
        Change::Cgroup { pid, from, to } => {
            // A process that has ended has left its cgroup.
            let pid_text = pid.to_string();
            let inside = std::fs::read_to_string(to.join("cgroup.procs"))
                .is_ok_and(|t| t.lines().any(|l| l.trim() == pid_text));
            if !inside {
                return Ok(());
            }
            write_value(&from.join("cgroup.procs"), &pid.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_compare_what_the_kernel_means() {
        assert_eq!(Form::Selector.value("always [madvise] never\n"), "madvise");
        assert_eq!(Form::Selector.value("none voluntary (full) lazy"), "full");
        assert_eq!(
            Form::Selector.expected("[always] madvise never", "never"),
            "never"
        );
        assert_eq!(
            Form::Selector.undo("always [madvise] never", "x"),
            "madvise"
        );
        assert_eq!(Form::Mask.value("00000000,00000003"), Form::Mask.value("3"));
        assert_eq!(Form::List.value("0,1"), "0-1");
        assert_eq!(
            Form::Controllers.expected("memory cpu", "+cpuset"),
            "cpu cpuset memory"
        );
        assert_eq!(
            Form::Controllers.undo("memory cpu", "cpu cpuset memory"),
            "-cpuset"
        );
        assert_eq!(Form::Controllers.undo("cpu cpuset", "cpu"), "+cpuset");
        assert_eq!(Form::Text.value(" 1\n"), "1");
    }

    #[test]
    fn a_value_is_set_read_back_and_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("enabled");
        std::fs::write(&p, "always [madvise] never\n").unwrap();
        let before = pending(&p, "never", Form::Selector).unwrap().unwrap();
        // A selector file reads as the choice in brackets; a plain file takes the word.
        std::fs::write(&p, "never").unwrap();
        assert_eq!(pending(&p, "never", Form::Selector).unwrap(), None);
        std::fs::write(&p, &before).unwrap();
        set_value(&p, &before, "never", Form::Selector).unwrap();
        let c = Change::Value {
            path: p.clone(),
            before: before.clone(),
            after: "never".into(),
            form: Form::Selector,
        };
        assert!(
            c.text().ends_with("enabled madvise → never"),
            "{}",
            c.text()
        );
        undo(&c).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "madvise");
        // Already as it was: nothing written.
        undo(&c).unwrap();
    }

    #[test]
    fn a_value_the_kernel_keeps_is_refused_with_what_it_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v");
        std::fs::write(&p, "1").unwrap();
        // A file that reads back something else than what was written: here a
        // directory in the way of the write.
        let missing = dir.path().join("absent");
        let e = write_value(&missing, "0").unwrap_err();
        assert!(e.0.contains("ENOENT"), "{e}");
        assert!(!missing.exists(), "never created");
        let e = read_value(&missing).unwrap_err();
        assert!(e.0.starts_with("reading "), "{e}");
    }
}
