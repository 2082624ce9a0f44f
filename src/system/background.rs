//! Other load on the machine during a run: the load average, the CPU time
//! of every other process and the real-time threads of other processes, read
//! from `/proc` when a measurement starts and when it ends ([`Background`]). A comparison that says "what differs:
//! nothing" while something else kept the CPUs busy would mislead.

use crate::record::Background;
use rtlab_engine::rt::process::{clock_ticks_per_s, own_cpu_ns};
use rtlab_engine::rt::sched;
use rtlab_engine::sysinfo::read_text;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

/// What `/proc` says at one moment.
#[derive(Debug, Clone)]
pub struct Sample {
    at: Instant,
    loadavg: f64,
    /// Busy time of all CPUs (ns).
    busy_ns: u64,
    /// CPU time of this process and its ended children (ns).
    own_ns: u64,
    /// Other processes' real-time threads ([`rt_threads`]).
    rt: Vec<String>,
}

impl Sample {
    /// Now; `None` when `/proc` cannot be read.
    pub fn now() -> Option<Sample> {
        let loadavg = read_text(Path::new("/proc/loadavg")).ok()?;
        let stat = read_text(Path::new("/proc/stat")).ok()?;
        Some(Sample {
            at: Instant::now(),
            loadavg: first_loadavg(&loadavg)?,
            busy_ns: busy_ticks(&stat)? * 1_000_000_000 / clock_ticks_per_s(),
            own_ns: own_cpu_ns(),
            rt: rt_threads(),
        })
    }

    /// What the machine did from this sample to `end`.
    pub fn until(&self, end: &Sample) -> Background {
        let elapsed = end.at.duration_since(self.at).as_nanos().max(1) as f64;
        let busy = end.busy_ns.saturating_sub(self.busy_ns);
        let own = end.own_ns.saturating_sub(self.own_ns);
        let mut rt_threads: Vec<String> = self.rt.iter().chain(&end.rt).cloned().collect();
        rt_threads.sort();
        rt_threads.dedup();
        Background {
            loadavg: (self.loadavg, end.loadavg),
            other_cpus: busy.saturating_sub(own) as f64 / elapsed,
            rt_threads,
        }
    }
}

/// The 1-minute load average of `/proc/loadavg`.
fn first_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The busy ticks of all CPUs of `/proc/stat`: user, nice, system, irq and
/// softirq of its `cpu` line (idle, iowait and the time a hypervisor gave to
/// others are not busy; guest time is within user).
fn busy_ticks(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal ...
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(at(0) + at(1) + at(2) + at(5) + at(6))
}

/// The real-time threads of user-space processes other than this one and its
/// children (its loads are recorded as loads), as `name fifo 95`, each name
/// and policy once. Every thread's policy is asked of the kernel
/// (`sched_getscheduler(2)` alone, no text to format or parse); only a real-time
/// thread's `/proc/PID/task/TID/stat` is read, for its name, its parent and
/// the flags that mark kernel threads. Reading every thread's `stat` instead
/// cost more than the rest of a short run's start-up together.
fn rt_threads() -> Vec<String> {
    rt_threads_apart_from(&std::process::id().to_string())
}

/// [`rt_threads`] of every process but `own` and its children.
fn rt_threads_apart_from(own: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let pid = p.file_name();
        let Some(pid) = pid
            .to_str()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let task_dir = p.path().join("task");
        // A process of one thread (every kernel thread, most daemons) needs no
        // listing: its task directory counts 2 links plus one per thread, and
        // its only thread's id is its own.
        let tids: Vec<i32> = if std::fs::metadata(&task_dir).is_ok_and(|m| m.nlink() == 3) {
            pid.parse().into_iter().collect()
        } else {
            let Ok(tasks) = std::fs::read_dir(&task_dir) else {
                continue;
            };
            tasks
                .flatten()
                .filter_map(|t| t.file_name().to_str()?.parse().ok())
                .collect()
        };
        for tid in tids {
            let realtime =
                sched::policy_of(tid).is_ok_and(|p| p.is_some_and(sched::Policy::is_realtime));
            if !realtime {
                continue;
            }
            let Ok(stat) = read_text(task_dir.join(tid.to_string()).join("stat")) else {
                continue;
            };
            if let Some(rt) = rt_thread(&stat, own) {
                if !out.contains(&rt) {
                    out.push(rt);
                }
            }
        }
    }
    out.sort();
    out
}

/// A thread's `stat` line as `name fifo 95` when it is a real-time thread of
/// a user-space process whose parent is not `own`.
fn rt_thread(stat: &str, own: &str) -> Option<String> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1;
    // Fields from the third on (state), so field n is at n - 3.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let flags: u64 = f.get(6)?.parse().ok()?;
    let policy = match *f.get(38)? {
        "1" => "fifo",
        "2" => "rr",
        _ => return None,
    };
    if flags & PF_KTHREAD != 0 || *f.get(1)? == own {
        return None;
    }
    Some(format!("{name} {policy} {}", f.get(37)?))
}

/// Runs `measure` and records in its run what else the machine did meanwhile.
pub fn recorded<E>(
    measure: impl FnOnce() -> Result<crate::record::Run, E>,
) -> Result<crate::record::Run, E> {
    let start = Sample::now();
    let mut run = measure()?;
    if let (Some(s), Some(e)) = (start, Sample::now()) {
        run.background = Some(s.until(&e));
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_lines_read_by_hand() {
        assert_eq!(first_loadavg("0.52 0.40 0.31 2/190 4242\n"), Some(0.52));
        assert_eq!(first_loadavg(""), None);
        let stat = "cpu  100 5 40 9000 30 2 3 7 0 0\ncpu0 50 2 20 4500 15 1 1 3 0 0\n";
        assert_eq!(busy_ticks(stat), Some(100 + 5 + 40 + 2 + 3));
        assert_eq!(busy_ticks("intr 1 2\n"), None);
        // pid (comm) state ppid ... flags (9th) ... rt_priority (40th) policy (41st).
        let stat = |comm: &str, ppid: &str, flags: u64, prio: u32, policy: u32| {
            let mut f = vec!["0".to_string(); 39];
            f[0] = "S".into();
            f[1] = ppid.into();
            f[6] = flags.to_string();
            f[37] = prio.to_string();
            f[38] = policy.to_string();
            format!("42 ({comm}) {}", f.join(" "))
        };
        assert_eq!(
            rt_thread(&stat("my (app)", "1", 0, 95, 1), "7"),
            Some("my (app) fifo 95".into())
        );
        assert_eq!(
            rt_thread(&stat("ctl", "1", 0, 10, 2), "7"),
            Some("ctl rr 10".into())
        );
        assert_eq!(rt_thread(&stat("bash", "1", 0, 0, 0), "7"), None);
        assert_eq!(
            rt_thread(&stat("irq/9", "2", 0x0020_0040, 50, 1), "7"),
            None
        );
        assert_eq!(rt_thread(&stat("load", "7", 0, 95, 1), "7"), None);
    }

    /// Two CPUs busy with others for one second of two: one CPU on average.
    #[test]
    fn other_cpus_are_busy_time_less_our_own() {
        let at = Instant::now();
        let start = Sample {
            at,
            loadavg: 0.1,
            busy_ns: 1_000_000_000,
            own_ns: 100,
            rt: vec!["hog fifo 95".into()],
        };
        let end = Sample {
            at: at + std::time::Duration::from_secs(2),
            loadavg: 1.9,
            busy_ns: 3_500_000_000,
            own_ns: 500_000_100,
            rt: vec!["app rr 10".into(), "hog fifo 95".into()],
        };
        let b = start.until(&end);
        assert_eq!(b.loadavg, (0.1, 1.9));
        assert!((b.other_cpus - 1.0).abs() < 1e-9, "{}", b.other_cpus);
        assert_eq!(b.rt_threads, ["app rr 10", "hog fifo 95"]);
        // Our own time is never counted as the others' less than nothing.
        let b = end.until(&end);
        assert_eq!(b.other_cpus, 0.0);
    }

    /// A real-time thread of another process is found and named, with its
    /// policy and priority.
    #[test]
    #[ignore = "needs root: chrt -f"]
    fn another_process_real_time_thread_is_named() {
        // `sh` starts it and exits: its parent is not this process.
        let out = std::process::Command::new("sh")
            .args(["-c", "chrt -f 7 sleep 30 >/dev/null 2>&1 & echo $!"])
            .output()
            .unwrap();
        let fifo = String::from_utf8(out.stdout).unwrap().trim().to_string();
        // chrt execs sleep: wait until it has (60 s at most).
        let deadline = Instant::now() + std::time::Duration::from_secs(60);
        while std::fs::read_to_string(format!("/proc/{fifo}/comm")).unwrap_or_default() != "sleep\n"
            && Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let rt = rt_threads();
        std::process::Command::new("kill")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(rt.contains(&"sleep fifo 7".to_string()), "{rt:?}");
    }

    /// A real-time thread among others of a process of many threads is
    /// found: its task directory is listed (this test's process, seen as
    /// another's; its harness has several threads).
    #[test]
    #[ignore = "needs root: SCHED_FIFO"]
    fn a_real_time_thread_of_a_process_of_many_is_named() {
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::Builder::new()
            .name("rtlab-bg-fifo".into())
            .spawn(move || {
                let tid = rtlab_engine::rt::gettid();
                sched::set_thread_policy(tid, sched::Policy::Fifo, 3).unwrap();
                tid_tx.send(tid).unwrap();
                // Blocked, not spinning, while it is looked for.
                let _ = done_rx.recv();
            })
            .unwrap();
        let tid = tid_rx.recv().unwrap();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let threads = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse::<u32>()
            .unwrap();
        let rt = rt_threads_apart_from("0");
        done_tx.send(()).unwrap();
        t.join().unwrap();
        assert!(threads > 1, "{threads} threads");
        assert!(
            rt.contains(&"rtlab-bg-fifo fifo 3".to_string()),
            "tid {tid}: {rt:?}"
        );
    }

    #[test]
    fn a_sample_of_this_machine_reads() {
        let s = Sample::now().expect("/proc is mounted");
        let b = s.until(&Sample::now().unwrap());
        assert!(b.other_cpus >= 0.0 && b.loadavg.0 >= 0.0, "{b:?}");
    }
}
