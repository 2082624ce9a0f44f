//! `--timerlat`: the kernel's `timerlat` tracer in rtlab's own instance, as
//! rtla runs it. Its per-CPU threads wake on a timer of the probe's period on
//! the measured CPUs and record two latencies per activation, the timer IRQ's
//! and the thread's, as `ftrace:timerlat` entries in the instance's buffer.
//! The `osnoise/` options it reads are global: rtlab sets them only when no
//! buffer runs `timerlat` or `osnoise`, and puts back what it changed.

use super::event::{int, Field, Format};
use super::read_text;
use crate::record::why::{Timerlat, TimerlatCpu};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tracer, and the `osnoise` one whose options it shares.
const TRACER: &str = "timerlat";
const OSNOISE: &str = "osnoise";

/// The kernel's bounds of `osnoise/timerlat_period_us`.
const PERIOD_US: std::ops::RangeInclusive<u64> = 100..=1_000_000;

/// The `timerlat` entry's `context` of a timer IRQ sample (1 is the thread's;
/// 2, a user-space thread's, rtlab does not start).
const IRQ: i64 = 0;
const THREAD: i64 = 1;

/// Whether the kernel lists `tracer` in `dir`'s `available_tracers`.
fn offers(dir: &Path, tracer: &str) -> bool {
    read_text(&dir.join("available_tracers"))
        .unwrap_or_default()
        .split_whitespace()
        .any(|t| t == tracer)
}

/// What the kernel offers, for `why.missing` when `--timerlat` was not asked
/// for (none of it is touched).
fn not_asked(root: &Path) -> Vec<String> {
    [TRACER, OSNOISE]
        .into_iter()
        .map(|t| match (offers(root, t), t) {
            (false, _) => absent(t),
            (true, TRACER) => "timerlat: the kernel has the tracer; --timerlat splits IRQ \
                               versus thread latency (its threads wake with the probe's period)"
                .to_string(),
            (true, _) => "osnoise: the kernel has the tracer; rtlab latency uses only its \
                          options, for timerlat"
                .to_string(),
        })
        .collect()
}

fn absent(t: &str) -> String {
    match t {
        TRACER => {
            "timerlat: the kernel has no timerlat tracer (IRQ versus thread latency is not split)"
                .into()
        }
        _ => format!("{t}: the kernel has no {t} tracer"),
    }
}

/// The timerlat tracer running in an instance. Dropping it sets the
/// instance's tracer back to `nop` and puts back the options it changed.
#[derive(Debug)]
pub struct Running {
    instance: PathBuf,
    saved: Vec<(PathBuf, String)>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = std::fs::write(self.instance.join("current_tracer"), "nop");
        for (path, value) in self.saved.iter().rev() {
            let _ = std::fs::write(path, value);
        }
    }
}

/// Who runs `timerlat` or `osnoise` already (their options are shared).
fn in_use(root: &Path) -> Option<String> {
    let instances = std::fs::read_dir(root.join("instances"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path());
    std::iter::once(root.to_path_buf())
        .chain(instances)
        .find_map(|dir| {
            let t = read_text(&dir.join("current_tracer")).ok()?;
            let t = t.trim();
            [TRACER, OSNOISE].contains(&t).then(|| {
                let who = match dir.strip_prefix(root) {
                    Ok(p) if p.as_os_str().is_empty() => "the top-level buffer".to_string(),
                    Ok(p) => p.display().to_string(),
                    Err(_) => dir.display().to_string(),
                };
                format!("{who} runs the {t} tracer, whose osnoise/ options rtlab would change")
            })
        })
}

/// With a period (`--timerlat`), starts the tracer in `instance` on the
/// `measured` CPUs (every online CPU when the probe's threads are not
/// pinned); else, or when it cannot, the lines for `why.missing`.
pub fn offer(
    root: &Path,
    instance: &Path,
    measured: &[usize],
    period_us: Option<u64>,
) -> Result<(Running, Samples), Vec<String>> {
    let Some(us) = period_us else {
        return Err(not_asked(root));
    };
    let cpus = match measured {
        [] => super::online_cpus(),
        m => m.to_vec(),
    };
    start(root, instance, &cpus, us).map_err(|e| vec![e])
}

/// Starts `timerlat` in `instance` on `cpus` with a period of `period_us`,
/// or says why it cannot; nothing is changed when it cannot.
fn start(
    root: &Path,
    instance: &Path,
    cpus: &[usize],
    period_us: u64,
) -> Result<(Running, Samples), String> {
    if !offers(root, TRACER) {
        return Err(absent(TRACER));
    }
    if !offers(root, OSNOISE) {
        return Err("timerlat: the kernel has no osnoise tracer, whose options it reads".into());
    }
    if !offers(instance, TRACER) {
        return Err(
            "timerlat: the kernel allows the tracer only in the top-level buffer, \
                    which rtlab leaves to the user"
                .into(),
        );
    }
    if !PERIOD_US.contains(&period_us) {
        return Err(format!(
            "timerlat: its period is 100 µs to 1 s, the probe's interval is {period_us} µs"
        ));
    }
    if let Some(who) = in_use(root) {
        return Err(format!("timerlat: {who}"));
    }
    let format = read_text(&root.join("events/ftrace/timerlat/format"))
        .map_err(|e| format!("timerlat: no ftrace/timerlat event format ({e:#})"))?;
    let samples = Samples::new(&format).map_err(|e| format!("timerlat: {e:#}"))?;
    let cpus = cpus
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let options = [
        ("cpus", cpus),
        ("timerlat_period_us", period_us.to_string()),
        ("stop_tracing_us", "0".into()),
        ("stop_tracing_total_us", "0".into()),
    ];
    let mut run = Running {
        instance: instance.to_path_buf(),
        saved: Vec::new(),
    };
    for (name, value) in options {
        let path = root.join("osnoise").join(name);
        let was = read_text(&path).map_err(|e| format!("timerlat: reading {name}: {e:#}"))?;
        std::fs::write(&path, &value)
            .map_err(|e| format!("timerlat: writing '{value}' to osnoise/{name}: {e}"))?;
        run.saved.push((path, was.trim().to_string()));
    }
    std::fs::write(instance.join("current_tracer"), TRACER)
        .map_err(|e| format!("timerlat: the kernel refused the tracer: {e}"))?;
    Ok((run, samples))
}

/// One CPU's samples so far.
#[derive(Debug, Default, Clone, Copy)]
struct Acc {
    irq: (u64, u64, u64),
    thread: (u64, u64, u64),
}

fn add((n, sum, max): &mut (u64, u64, u64), ns: u64) {
    *n += 1;
    *sum += ns;
    *max = (*max).max(ns);
}

/// The `ftrace:timerlat` records of the buffers, summed up per CPU.
#[derive(Debug, Clone)]
pub struct Samples {
    id: u16,
    context: Field,
    latency: Field,
    per_cpu: BTreeMap<usize, Acc>,
}

impl Samples {
    /// Knows the entry from its `format` file.
    pub fn new(format: &str) -> anyhow::Result<Samples> {
        let f = Format::parse(format)?;
        Ok(Samples {
            id: f.id,
            context: f.field("context")?,
            latency: f.field("timer_latency")?,
            per_cpu: BTreeMap::new(),
        })
    }

    /// Counts record `r` of `cpu` when it is a timerlat entry; whether it was.
    pub fn take(&mut self, cpu: usize, r: &[u8]) -> bool {
        if r.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) != Some(self.id) {
            return false;
        }
        let ns = int(r, self.latency) as u64;
        let acc = self.per_cpu.entry(cpu).or_default();
        match int(r, self.context) {
            IRQ => add(&mut acc.irq, ns),
            THREAD => add(&mut acc.thread, ns),
            _ => {}
        }
        true
    }

    /// The worst IRQ and thread latencies, overall and per CPU.
    pub fn summary(&self) -> Timerlat {
        let avg = |(n, sum, _): (u64, u64, u64)| sum.checked_div(n).unwrap_or(0);
        let per_cpu: Vec<TimerlatCpu> = self
            .per_cpu
            .iter()
            .map(|(&cpu, a)| TimerlatCpu {
                cpu,
                samples: a.irq.0,
                irq_avg_ns: avg(a.irq),
                irq_max_ns: a.irq.2,
                thread_avg_ns: avg(a.thread),
                thread_max_ns: a.thread.2,
            })
            .collect();
        Timerlat {
            irq_max_ns: per_cpu.iter().map(|c| c.irq_max_ns).max().unwrap_or(0),
            thread_max_ns: per_cpu.iter().map(|c| c.thread_max_ns).max().unwrap_or(0),
            samples: per_cpu.iter().map(|c| c.samples).sum(),
            per_cpu,
        }
    }
}

#[cfg(test)]
#[path = "timerlat_tests.rs"]
mod tests;
