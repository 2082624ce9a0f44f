//! `rtlab load`: run a load generator on its own, and the hidden entry point of
//! load worker processes.

use super::common::{self, Context, OutputArgs, SaveArgs};
use super::loadargs::PlacementArgs;
use crate::error::{bad_flag, UsageError, EXIT_SYSTEM};
use crate::format::text::table::Table;
use crate::loadset::{LoadSet, WORKER_COMMAND};
use crate::loadspec;
use crate::record::{self, LoadRecord, Status};
use crate::system;
use crate::units::{parse_positive_duration, DefaultUnit};
use anyhow::{Context as _, Result};
use clap::Args;
use rtlab_engine::load::{Ctx, Load, LoadError, SharedCounters};
use rtlab_engine::rt::signals;
use serde_json::json;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Run a load generator: busy CPUs, page faults, memory bandwidth, disk writes,
/// file-system walks, /proc reads, messages, forks, timers, UDP, or a command.
///
/// Prints what each worker achieved (ops/s, MB/s, CPU, page faults, context
/// switches, RSS) at the end and saves it as a run of kind "load". Workers are
/// separate processes, SCHED_OTHER unless --load-policy says otherwise. Bare
/// numbers for -D are seconds.
#[derive(Debug, Args)]
pub struct LoadCmdArgs {
    /// The load: a kind or a whole spec ("cpu", "vm:2:256M", "msg threads", "dohell",
    /// "exec:make -j4"). See --list.
    #[arg(value_name = "SPEC", required_unless_present = "list")]
    spec: Vec<String>,
    /// List the load kinds with their keys, and the mixes with their parts.
    #[arg(long)]
    list: bool,
    /// Worker processes (the spec's workers=N).
    #[arg(short, long, value_name = "N")]
    workers: Option<u32>,
    /// Run this long, then stop (default: until Ctrl-C).
    #[arg(short = 'D', long, value_name = "DUR")]
    duration: Option<String>,
    /// cpu: the arithmetic: int, float, sqrt, prime or mix.
    #[arg(long, value_name = "METHOD")]
    method: Option<String>,
    /// cpu: duty cycle, the busy share of each 100 ms (e.g. 60%).
    #[arg(long, value_name = "PCT")]
    cpu_load: Option<String>,
    /// vm: bytes mapped per worker; memcopy: size of each buffer; io: bytes per file.
    #[arg(long, value_name = "SIZE")]
    bytes: Option<String>,
    /// vm: keep the mapping and re-dirty it instead of unmapping it.
    #[arg(long)]
    keep: bool,
    /// io: the directory written in (default /var/tmp).
    #[arg(long, value_name = "PATH")]
    dir: Option<String>,
    /// fswalk: where the walk starts (default /).
    #[arg(long, value_name = "PATH")]
    root: Option<String>,
    /// Run vm/memcopy loads even above 90% of MemAvailable.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    place: PlacementArgs,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// The spec text the positional words and the flags make together.
fn spec_text(a: &LoadCmdArgs) -> Result<String> {
    let mut text = a.spec.join(" ");
    if text.trim_start().starts_with("exec") {
        let keyed = [
            a.method.is_some(),
            a.cpu_load.is_some(),
            a.bytes.is_some(),
            a.keep,
            a.dir.is_some(),
            a.root.is_some(),
            a.force,
        ];
        if keyed.iter().any(|&k| k) {
            return Err(
                UsageError("exec takes only --workers; its spec is exec:COMMAND".into()).into(),
            );
        }
        if let Some(n) = a.workers {
            let cmd = text.trim_start()["exec".len()..].trim_start_matches(':');
            text = format!("exec:{n}:{cmd}");
        }
        return Ok(text);
    }
    let flags = [
        ("workers", a.workers.map(|n| n.to_string())),
        ("method", a.method.clone()),
        ("load", a.cpu_load.clone()),
        ("bytes", a.bytes.clone()),
        ("dir", a.dir.clone()),
        ("root", a.root.clone()),
    ];
    for (key, value) in flags {
        if let Some(v) = value {
            if v.contains(char::is_whitespace) {
                return Err(bad_flag(&format!("--{key}"), "cannot contain spaces"));
            }
            text.push_str(&format!(" {key}={v}"));
        }
    }
    for (key, on) in [("keep", a.keep), ("force", a.force)] {
        if on {
            text.push_str(&format!(" {key}"));
        }
    }
    Ok(text)
}

/// Runs `rtlab load`.
pub fn run(ctx: &Context, a: LoadCmdArgs) -> Result<i32> {
    if a.list {
        print!("{}", loadspec::listing());
        return Ok(0);
    }
    let text = spec_text(&a)?;
    let specs = loadspec::parse(&text).map_err(UsageError)?;
    let placement = a.place.placement()?;
    let duration = a
        .duration
        .as_deref()
        .map(|d| {
            parse_positive_duration(d, DefaultUnit::Seconds).map_err(|e| bad_flag("--duration", e))
        })
        .transpose()?
        .map(Duration::from_nanos);
    let fp = system::fingerprint();
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    let mut set = LoadSet::start(&specs, &placement)?;
    let mut warnings = set.start_warnings().to_vec();
    let t0 = Instant::now();
    let live = a.out.live();
    let mut all_ended = false;
    let mut last_draw = t0;
    let mut last_ops: Vec<u64> = set.progress().iter().map(|p| p.1).collect();
    loop {
        if stop.load(Ordering::Relaxed) || duration.is_some_and(|d| t0.elapsed() >= d) {
            break;
        }
        if set.alive() == 0 {
            all_ended = true;
            break;
        }
        if live && last_draw.elapsed() >= Duration::from_millis(500) {
            let now = set.progress();
            let secs = last_draw.elapsed().as_secs_f64();
            let rates: Vec<String> = now
                .iter()
                .zip(&last_ops)
                .map(|((kind, ops), before)| {
                    format!("{kind} {} ops/s", num((ops - before) as f64 / secs))
                })
                .collect();
            eprint!(
                "\r\x1b[K{:.0} s  {}",
                t0.elapsed().as_secs_f64(),
                rates.join("  ")
            );
            last_ops = now.iter().map(|p| p.1).collect();
            last_draw = Instant::now();
        }
        let step = duration
            .map(|d| d.saturating_sub(t0.elapsed()))
            .unwrap_or(Duration::MAX)
            .min(Duration::from_millis(20));
        std::thread::sleep(step);
    }
    if live {
        eprint!("\r\x1b[K");
    }
    let elapsed = t0.elapsed();
    let done = set.stop();
    warnings.extend(done.warnings);
    let by_signal = signals::received().is_some();
    let status = if all_ended {
        Status::Failed
    } else if duration.is_some() && !by_signal {
        Status::Complete
    } else {
        Status::Interrupted
    };
    let mut metrics = std::collections::BTreeMap::new();
    for r in &done.records {
        for key in [
            "ops_per_s",
            "mb_per_s",
            "cpu_pct_per_worker",
            "minor_faults_per_s",
        ] {
            if let Some(v) = r.achieved.get(key).and_then(|v| v.as_f64()) {
                *metrics.entry(format!("{}.{key}", r.kind)).or_insert(0.0) += v;
            }
        }
    }
    let mut run = a.save.new_run(
        "load",
        fp,
        started_at,
        json!({
            "spec": text,
            "duration_ns": duration.map(|d| d.as_nanos() as u64),
            "load_cpus": placement.cpus,
            "load_nice": placement.nice,
            "load_policy": placement.policy.name(),
            "load_priority": placement.priority,
        }),
    );
    run.status = status;
    run.exit_code = if all_ended {
        EXIT_SYSTEM
    } else {
        common::exit_code_for(status, by_signal, false)
    };
    run.duration_ns = elapsed.as_nanos() as u64;
    run.loads = done.records;
    run.metrics = metrics;
    run.warnings = warnings;
    common::finish(ctx, &a.save, &a.out, &mut run, |r| {
        let mut s = loads_table(&r.loads);
        for w in &r.warnings {
            s.push_str(&format!("warning [{}]: {}\n", w.code, w.message));
        }
        if r.status == Status::Failed {
            s.push_str("every load worker ended before the run did: see the warnings\n");
        }
        s
    })
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Rates every load has; the one other `_per_s` rate names the kind's op.
const COMMON_RATES: &[&str] = &[
    "ops_per_s",
    "ops_per_s_per_worker",
    "bytes_per_s",
    "mb_per_s",
    "minor_faults_per_s",
    "major_faults_per_s",
    "ctx_switches_per_s",
];

fn op_rate(r: &LoadRecord) -> Option<(&str, f64)> {
    r.achieved.iter().find_map(|(k, v)| {
        (k.ends_with("_per_s") && !COMMON_RATES.contains(&k.as_str()))
            .then(|| (k.as_str(), v.as_f64().unwrap_or(0.0)))
    })
}

/// ", restarts N, errors M" when there were any.
fn survived(r: &LoadRecord) -> String {
    ["restarts", "errors"]
        .iter()
        .filter_map(|k| {
            let n = r.totals.get(*k).copied().unwrap_or(0);
            (n > 0).then(|| format!(", {k} {n}"))
        })
        .collect()
}

fn achieved(r: &LoadRecord, key: &str) -> f64 {
    r.achieved.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0)
}

/// The table of loads and what each worker achieved.
pub fn loads_table(loads: &[LoadRecord]) -> String {
    if loads.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        "load", "worker", "pid", "ops/s", "MB/s", "CPU %", "minflt/s", "RSS MiB", "end",
    ]);
    for r in loads {
        for w in &r.per_worker {
            t.row(vec![
                format!("{} ({})", r.spec, r.kind),
                w.index.to_string(),
                w.pid.to_string(),
                num(w.ops_per_s),
                String::new(),
                num(w.cpu_pct),
                num(w.minor_faults_per_s),
                format!("{:.1}", w.max_rss_kib as f64 / 1024.0),
                w.end.clone(),
            ]);
        }
        t.row(vec![
            format!("{} ({})", r.spec, r.kind),
            "all".into(),
            String::new(),
            num(achieved(r, "ops_per_s")),
            num(achieved(r, "mb_per_s")),
            num(achieved(r, "cpu_pct_per_worker") * r.workers as f64),
            num(achieved(r, "minor_faults_per_s")),
            String::new(),
            op_rate(r)
                .map(|(k, v)| format!("{k} = {}{}", num(v), survived(r)))
                .unwrap_or_default(),
        ]);
    }
    let first = &loads[0];
    format!(
        "{}loads started in {:.0} ms, stopped in {:.0} ms; rates over {:.2} s\n",
        t.render(),
        first.start_ms,
        first.stop_ms,
        first.elapsed_ns as f64 / 1e9
    )
}

/// The hidden worker subcommand (started by [`LoadSet`], not by users).
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The inherited shared-counter descriptor.
    #[arg(long)]
    fd: i32,
    /// Slots in the counter block.
    #[arg(long)]
    slots: usize,
    /// This worker's slot.
    #[arg(long)]
    slot: usize,
    /// The load, as JSON.
    #[arg(long)]
    load: String,
}

/// Runs one load worker: reports `ready` (or `error input|system MSG`) on stdout,
/// then works until SIGTERM.
pub fn worker(a: WorkerArgs) -> Result<i32> {
    let stop = signals::install();
    let load: Load = serde_json::from_str(&a.load).context("the load spec JSON")?;
    if a.slot >= a.slots {
        return Err(UsageError(format!("slot {} of {}", a.slot, a.slots)).into());
    }
    // SAFETY: the supervisor passes a memfd it created for exactly this purpose;
    // nothing else in this process owns the descriptor.
    let counters = unsafe { SharedCounters::from_inherited(a.fd, a.slots) }.map_err(|e| {
        UsageError(format!(
            "{WORKER_COMMAND} is started by rtlab itself (counter descriptor {}: {})",
            a.fd,
            rtlab_engine::rt::errno_text(e)
        ))
    })?;
    let ctx = Ctx {
        counters: counters.slot(a.slot),
        stop,
    };
    let mut out = std::io::stdout();
    let result = load.run(&ctx, &mut || {
        let _ = out.write_all(b"ready\n");
        let _ = out.flush();
    });
    let mut out = std::io::stdout();
    let code = match result {
        Ok(()) => 0,
        Err(LoadError::Input(m)) => {
            let _ = writeln!(out, "error input {m}");
            2
        }
        Err(LoadError::System(m)) => {
            let _ = writeln!(out, "error system {m}");
            3
        }
    };
    let _ = out.flush();
    Ok(code)
}
