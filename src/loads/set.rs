//! Starting, supervising and stopping load workers: the reusable load API of the
//! binary, for every command that takes `--load`.
//!
//! ```ignore
//! let specs = spec::parse("cpu:2")?;                  // or several specs
//! let set = LoadSet::start(&specs, &Placement::default())?;   // all workers ready
//! /* measure */
//! let done = set.stop();                              // Vec<LoadRecord> + warnings
//! run.loads = done.records;
//! ```
//!
//! Each worker is a child process running this binary's hidden `__load-worker`
//! subcommand (`/proc/self/exe`), so a load never shares the measuring process's
//! locked memory or threads. Every worker:
//! - runs SCHED_OTHER unless the [`Placement`] asks otherwise, with its nice value
//!   and CPU affinity applied between fork and exec;
//! - is the leader of its own process group (what it forks stays in that group and
//!   goes when the group is signalled) and gets `SIGTERM` when the thread that
//!   started it exits (`PR_SET_PDEATHSIG`): **start and stop a `LoadSet` from the
//!   same, long-lived thread** (normally the main thread);
//! - counts its work in a shared-memory block ([`SharedCounters`]), which outlives
//!   a crash of the worker.
//!
//! [`LoadSet::start`] returns once every worker has said `ready` (or fails, leaving
//! nothing running). [`LoadSet::stop`] sends `SIGTERM` to every group, waits up to
//! [`STOP_GRACE`], `SIGKILL`s what is left, reaps every worker (with its
//! `rusage`: CPU time, page faults, context switches, peak RSS), removes the files
//! a killed `io` worker may have left, and turns the counters into
//! [`LoadRecord`]s. Dropping a `LoadSet` without `stop` does the same cleanup.

use super::guard;
use super::placement::Placement;
use super::record::{self, Ended, Span, WorkerEnd};
use super::spec::LoadSpec;
use crate::error::{SystemError, UsageError};
use crate::record::{LoadRecord, Warning};
use anyhow::Result;
use rtlab_engine::load::{io, Load, SharedCounters};
use rtlab_engine::rt;
use rtlab_engine::rt::process::{self, SIGKILL, SIGTERM};
use rtlab_engine::rt::sched;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long workers may take to report ready.
pub const START_TIMEOUT: Duration = Duration::from_secs(3);
/// How long workers get to exit after `SIGTERM` before `SIGKILL`: a worker
/// exits within milliseconds of it, unless the machine is so busy that it is
/// not scheduled; only one that ignores it waits this long.
pub const STOP_GRACE: Duration = Duration::from_secs(2);
/// The hidden subcommand a worker process runs.
pub const WORKER_COMMAND: &str = "__load-worker";

struct Worker {
    spec: usize,
    index: u32,
    pid: i32,
    child: Child,
    ended: Option<Ended>,
}

impl Worker {
    /// Records how the worker ended once it has (waiting for it if `block`);
    /// true when it has ended.
    fn reap(&mut self, block: bool, early: bool, killed: bool) -> bool {
        if self.ended.is_none() {
            if let Some((exit, usage)) = process::wait_ended(self.pid, !block) {
                self.ended = Some(Ended {
                    exit,
                    usage,
                    early,
                    killed,
                });
            }
        }
        self.ended.is_some()
    }
}

/// Running loads.
pub struct LoadSet {
    specs: Vec<LoadSpec>,
    placement: Placement,
    workers: Vec<Worker>,
    counters: SharedCounters,
    ready_at: Instant,
    start_ms: f64,
    stopping: Option<Instant>,
    stop_ms: f64,
    warnings: Vec<Warning>,
}

/// What [`LoadSet::stop`] returns.
pub struct Stopped {
    /// One record per spec (a mix gives one per part).
    pub records: Vec<LoadRecord>,
    /// Workers that crashed, exited early or had to be killed (the warnings of the
    /// start are in [`LoadSet::start_warnings`]).
    pub warnings: Vec<Warning>,
}

/// Waits until `fd` is readable or `deadline` passes (`poll(2)`).
fn readable(fd: BorrowedFd<'_>, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        if process::readable_within(fd, left.as_millis().min(1000) as i32 + 1) {
            return true;
        }
    }
}

/// The first line a worker writes (`ready` or `error ...`), or `None` if it wrote
/// nothing before exiting or the deadline.
fn first_line(child: &mut Child, deadline: Instant) -> Option<String> {
    let out = child.stdout.as_mut()?;
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    while !line.contains(&b'\n') {
        if !readable(out.as_fd(), deadline) {
            return None;
        }
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => line.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&line);
    text.lines().next().map(str::to_string)
}

impl LoadSet {
    /// Checks the specs ([`guard::check`]), starts every worker and waits until
    /// all are ready. On any failure, whatever was started is stopped and removed.
    pub fn start(specs: &[LoadSpec], placement: &Placement) -> Result<LoadSet> {
        let warnings = guard::check(specs)?;
        let t0 = Instant::now();
        let total: usize = specs.iter().map(|s| s.workers as usize).sum();
        let counters = SharedCounters::create(total).map_err(|e| {
            SystemError(format!(
                "cannot create the load counters: {}",
                rt::errno_text(e)
            ))
        })?;
        let mut set = LoadSet {
            specs: specs.to_vec(),
            placement: placement.clone(),
            workers: Vec::with_capacity(total),
            counters,
            ready_at: t0,
            start_ms: 0.0,
            stopping: None,
            stop_ms: 0.0,
            warnings,
        };
        for (si, spec) in specs.iter().enumerate() {
            let json = serde_json::to_string(&spec.load)?;
            for index in 0..spec.workers {
                let slot = set.workers.len();
                let child = set.spawn(&json, slot).map_err(|e| {
                    let msg = format!("cannot start load '{}': {e}", spec.text);
                    if e.raw_os_error() == Some(rt::EPERM) {
                        anyhow::Error::from(SystemError(format!(
                            "{msg} (--load-policy fifo/rr needs root or CAP_SYS_NICE; a negative --load-nice needs the same)"
                        )))
                    } else if e.raw_os_error() == Some(rt::EINVAL) {
                        UsageError(format!("{msg} (check --load-cpus and --load-policy)")).into()
                    } else {
                        SystemError(msg).into()
                    }
                })?;
                set.workers.push(Worker {
                    spec: si,
                    index,
                    pid: child.id() as i32,
                    child,
                    ended: None,
                });
            }
        }
        let deadline = t0 + START_TIMEOUT;
        for w in &mut set.workers {
            let spec = &set.specs[w.spec];
            let line = first_line(&mut w.child, deadline).unwrap_or_else(|| "no answer".into());
            if line == "ready" {
                continue;
            }
            if let Some(m) = line.strip_prefix("error input ") {
                return Err(UsageError(format!("load '{}': {m}", spec.text)).into());
            }
            let why = match line.strip_prefix("error system ") {
                Some(m) => m.to_string(),
                None => format!(
                    "worker {} did not start within {} s ({line})",
                    w.index,
                    START_TIMEOUT.as_secs()
                ),
            };
            return Err(SystemError(format!("load '{}': {why}", spec.text)).into());
        }
        set.ready_at = Instant::now();
        set.start_ms = t0.elapsed().as_secs_f64() * 1e3;
        Ok(set)
    }

    fn spawn(&self, json: &str, slot: usize) -> std::io::Result<Child> {
        let fd = self.counters.raw_fd();
        let parent = std::process::id() as i32;
        let p = self.placement.clone();
        let mut cmd = Command::new("/proc/self/exe");
        cmd.arg(WORKER_COMMAND)
            .args(["--fd", &fd.to_string()])
            .args(["--slots", &self.counters.slots().to_string()])
            .args(["--slot", &slot.to_string()])
            .args(["--load", json])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0);
        let err = |e: i32| std::io::Error::from_raw_os_error(e);
        // SAFETY: the closure runs between fork and exec and makes only
        // async-signal-safe system calls (prctl, getppid, fcntl,
        // sched_setscheduler, setpriority, sched_setaffinity) on memory the
        // parent prepared; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                process::end_with_parent(SIGTERM, parent).map_err(err)?;
                rtlab_engine::load::shared::clear_cloexec(fd).map_err(err)?;
                sched::set_thread_policy(0, p.policy, p.priority).map_err(|e| err(e.errno))?;
                if let Some(n) = p.nice {
                    sched::set_thread_nice(0, n).map_err(|e| err(e.errno))?;
                }
                if let Some(cpus) = &p.cpus {
                    sched::set_thread_affinity(0, cpus).map_err(|e| err(e.errno))?;
                }
                Ok(())
            });
        }
        cmd.spawn()
    }

    /// Reaps workers that ended by themselves; returns how many still run.
    pub fn alive(&mut self) -> usize {
        let mut n = 0;
        for w in &mut self.workers {
            let was_running = w.ended.is_none();
            if w.reap(false, true, false) {
                if was_running {
                    // What it forked goes with it, now, before its pid can be reused.
                    process::send_signal(-w.pid, SIGKILL);
                }
            } else {
                n += 1;
            }
        }
        n
    }

    /// Work done so far by each spec: `(kind, ops)`, for live views.
    pub fn progress(&self) -> Vec<(&'static str, u64)> {
        self.specs
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let ops = (0..self.workers.len())
                    .filter(|&slot| self.workers[slot].spec == si)
                    .map(|slot| self.counters.slot(slot).snapshot().ops)
                    .sum();
                (s.load.kind(), ops)
            })
            .collect()
    }

    /// Warnings found when starting (a tmpfs io directory).
    pub fn start_warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Stops every worker and gathers what they did.
    pub fn stop(mut self) -> Stopped {
        self.alive();
        self.halt();
        let span = Span {
            elapsed: self
                .stopping
                .unwrap_or_else(Instant::now)
                .saturating_duration_since(self.ready_at),
            start_ms: self.start_ms,
            stop_ms: self.stop_ms,
        };
        let mut warnings = Vec::new();
        let records = (0..self.specs.len())
            .map(|si| self.record(si, &span, &mut warnings))
            .collect();
        Stopped { records, warnings }
    }

    /// SIGTERM every group, wait, SIGKILL the rest, reap, clean up files.
    fn halt(&mut self) {
        if self.stopping.is_some() {
            return;
        }
        let t0 = Instant::now();
        self.stopping = Some(t0);
        for w in self.workers.iter().filter(|w| w.ended.is_none()) {
            process::send_signal(-w.pid, SIGTERM);
        }
        let deadline = t0 + STOP_GRACE;
        while self.workers.iter().any(|w| w.ended.is_none()) && Instant::now() < deadline {
            for w in &mut self.workers {
                w.reap(false, false, false);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        for w in self.workers.iter_mut() {
            if w.ended.is_none() {
                process::send_signal(-w.pid, SIGKILL);
                w.reap(true, false, true);
            }
            // Anything the worker forked that outlived it goes with the group
            // (workers that ended early had theirs killed by `alive`).
            if w.ended.as_ref().is_some_and(|e| !e.early) {
                process::send_signal(-w.pid, SIGKILL);
            }
        }
        self.stop_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.remove_leftovers();
    }

    /// Removes files a killed `io` worker had not unlinked yet.
    fn remove_leftovers(&self) {
        for (si, spec) in self.specs.iter().enumerate() {
            let Load::Io { dir, .. } = &spec.load else {
                continue;
            };
            let prefixes: Vec<String> = self
                .workers
                .iter()
                .filter(|w| w.spec == si)
                .map(|w| io::file_prefix(w.pid as u32))
                .collect();
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    fn record(&self, si: usize, span: &Span, warnings: &mut Vec<Warning>) -> LoadRecord {
        let workers: Vec<WorkerEnd> = self
            .workers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.spec == si)
            .map(|(slot, w)| WorkerEnd {
                index: w.index,
                pid: w.pid,
                counts: self.counters.slot(slot).snapshot(),
                ended: w.ended.as_ref(),
            })
            .collect();
        record::record(&self.specs[si], &self.placement, &workers, span, warnings)
    }
}

impl Drop for LoadSet {
    fn drop(&mut self) {
        self.halt();
    }
}
