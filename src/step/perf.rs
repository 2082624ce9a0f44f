//! `--perf`, the option every measuring step flattens: performance counters
//! (task clock, context switches, migrations, page faults, and the hardware
//! counters where the machine has them) recorded with the run, per measuring
//! thread where the probe has its own threads, else for rtlab's whole process
//! and the processes it starts.

use crate::error::{SystemError, UsageError};
use crate::record::perf::{self as record, PerfRecord, PerfThread};
use crate::record::{Run, RunParams, Status};
use anyhow::Result;
use clap::Args;
use rtlab_engine::perf::{Counters, Reading, EVENTS};
use serde::{Deserialize, Serialize};
use std::os::unix::process::ExitStatusExt;
use std::time::Instant;

/// Runs of `rtlab perf -- CMD`: a command's counters, no series.
pub const KIND: super::Kind = super::Kind::other("perf").periods(false, false);

/// The `--perf` option.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct PerfArgs {
    /// Record performance counters with the run (perf stat's task-clock,
    /// context switches, migrations, page faults, cycles, instructions, ...;
    /// those the machine lacks are shown as not supported).
    #[arg(long)]
    pub perf: bool,
}

/// What one measuring thread counted: readings and getrusage's voluntary and
/// involuntary switches.
pub type ThreadReadings = ([Reading; EVENTS.len()], (u64, u64));

/// Why no counter can be opened here, for an error naming `--perf`.
fn refused(errno: Option<i32>) -> anyhow::Error {
    let why = errno.map_or(
        "no counter is supported here".into(),
        rtlab_engine::rt::errno_text,
    );
    SystemError(format!(
        "--perf: the kernel refuses performance counters ({why}): run as root, or allow them with 'sysctl kernel.perf_event_paranoid=2' (or lower); without --perf the run measures the same"
    ))
    .into()
}

/// Refuses with exit 3 when no counter can be opened on this machine.
pub fn check_available() -> Result<()> {
    let c = Counters::this_thread();
    match (c.any_open(), c.refusal()) {
        (true, _) => Ok(()),
        (false, e) => Err(refused(e)),
    }
}

impl PerfArgs {
    /// Refuses `--perf` when the machine opens no counter (exit 3).
    pub fn check(&self) -> Result<()> {
        if self.perf {
            check_available()?;
        }
        Ok(())
    }

    /// Counters of this process and everything it starts from now, when asked.
    pub fn start_process(&self) -> Result<Option<ProcessCounters>> {
        if !self.perf {
            return Ok(None);
        }
        let c = ProcessCounters::start();
        if !c.c.any_open() {
            return Err(refused(c.c.refusal()));
        }
        Ok(Some(c))
    }
}

/// Counters running over rtlab's process and its children.
#[derive(Debug)]
pub struct ProcessCounters {
    c: Counters,
    start: Instant,
}

impl ProcessCounters {
    /// Counters of this process and everything it starts from now (after
    /// [`PerfArgs::check`]: a counter the kernel refuses keeps its reason).
    pub fn start() -> ProcessCounters {
        ProcessCounters {
            c: Counters::process(0, false),
            start: Instant::now(),
        }
    }

    /// Stops them (after the threads and processes they count have ended) and
    /// makes the record.
    pub fn finish(self) -> PerfRecord {
        self.c.disable();
        PerfRecord {
            elapsed_ns: self.start.elapsed().as_nanos() as u64,
            scope: "process".into(),
            total: record::counters(&self.c.read(), self.c.switches()),
            threads: Vec::new(),
        }
    }
}

/// The record of per-thread readings, each with its series' name and tid.
pub fn of_threads<'a>(
    elapsed_ns: u64,
    threads: impl Iterator<Item = (String, i32, Option<&'a ThreadReadings>)>,
) -> Option<PerfRecord> {
    let threads: Vec<PerfThread> = threads
        .filter_map(|(name, tid, r)| {
            r.map(|(readings, switches)| PerfThread {
                name,
                tid: Some(tid),
                counters: record::counters(readings, *switches),
            })
        })
        .collect();
    (!threads.is_empty()).then(|| PerfRecord::of_threads(elapsed_ns, threads))
}

/// Runs `command` (a program and its arguments) under counters that start at
/// its `exec` and follow every thread and process it starts, as `perf stat`
/// does; the run (kind `perf`) has the command's exit code (128 + N when
/// signal N ended it).
pub fn measure_command(command: &[String]) -> anyhow::Result<Run> {
    check_available()?;
    let Some((program, args)) = command.split_first() else {
        return Err(UsageError("no command given: write it after --".into()).into());
    };
    let fp = crate::system::fingerprint();
    let label = crate::record::default_label(&fp);
    let started_at = crate::record::now_rfc3339();
    // Ctrl-C goes to the command; rtlab waits for it and reports.
    let _ = rtlab_engine::rt::signals::install();
    let counters = Counters::process(0, true);
    let t0 = Instant::now();
    let mut child = std::process::Command::new(program)
        .args(args)
        .spawn()
        .map_err(|e| UsageError(format!("cannot run '{program}': {e}")))?;
    let status = child.wait()?;
    let elapsed_ns = t0.elapsed().as_nanos() as u64;
    counters.disable();
    let (code, signal) = match (status.code(), status.signal()) {
        (Some(c), _) => (c, None),
        (None, Some(s)) => (128 + s, Some(s)),
        (None, None) => (1, None),
    };
    let params = RunParams::Recorded(serde_json::json!({ "command": command }));
    let mut run = Run::new(KIND.name, label, fp, started_at, params);
    run.duration_ns = elapsed_ns;
    run.status = if signal.is_some() {
        Status::Interrupted
    } else {
        Status::Complete
    };
    run.exit_code = code;
    run.perf = Some(PerfRecord {
        elapsed_ns,
        scope: "command".into(),
        total: record::counters(&counters.read(), counters.switches()),
        threads: Vec::new(),
    });
    Ok(run)
}
