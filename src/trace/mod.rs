//! Kernel tracing for `rtlab latency --trace` and `rtlab noise --trace`: a
//! tracefs instance of rtlab's
//! own (`instances/rtlab-PID`, never the global buffer), the scheduler, IRQ,
//! softirq, timer and idle events enabled in it with the `mono` clock (the
//! probe's CLOCK_MONOTONIC), its per-CPU `trace_pipe_raw` buffers read while
//! the probe runs by a thread kept off the measured CPUs, and every spike
//! marker the probe writes explained from them ([`analyse`]); with
//! `--timerlat`, the kernel's timerlat tracer in the same instance
//! ([`timerlat`]).

mod analyse;
mod event;
mod page;
mod spike;
#[cfg(test)]
mod tests;
mod timerlat;

pub use spike::TIMER_IRQ;

use crate::record::why::Why;
use crate::record::Warning;
use analyse::Analyser;
use anyhow::{Context, Result};
use event::{Decoder, EVENTS, PRINT};
use page::PageLayout;
use rtlab_engine::rt::{self, clock, cpuset::CpuList, sched};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Where tracefs is mounted when rtlab mounts it.
const TRACEFS: &str = "/sys/kernel/tracing";
/// Each CPU's buffer (KiB): about 100k events, a second or more of a busy
/// CPU at the reader's pace of one pass every [`READ_EVERY`].
const BUFFER_KB: u32 = 4096;
const READ_EVERY: Duration = Duration::from_millis(10);

/// Why `--trace` cannot be used here (the run goes on without it).
#[derive(Debug)]
pub struct Unavailable(pub String);

/// A running trace: the instance and the reader of its buffers. Dropping it
/// removes the instance.
pub struct Session {
    dir: PathBuf,
    threshold_ns: u64,
    available: Vec<String>,
    missing: Vec<String>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<Reader>>,
    timerlat: Option<timerlat::Running>,
}

/// The mount point of tracefs, mounted at [`TRACEFS`] when it is not.
fn tracefs() -> std::result::Result<PathBuf, Unavailable> {
    let mounts = rtlab_engine::sysinfo::read_text("/proc/mounts").unwrap_or_default();
    let mut points = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"tracefs")).then(|| PathBuf::from(f[1]))
        })
        .collect::<Vec<_>>();
    points.sort_by_key(|p| p != Path::new(TRACEFS));
    if let Some(p) = points.into_iter().next() {
        return Ok(p);
    }
    let out = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(PathBuf::from(TRACEFS)),
        Ok(o) => Err(Unavailable(format!(
            "tracefs is not mounted and mounting it failed ({}): as root, run 'mount -t tracefs nodev {TRACEFS}'",
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(e) => Err(Unavailable(format!(
            "tracefs is not mounted and 'mount' could not run ({e}): as root, run 'mount -t tracefs nodev {TRACEFS}'"
        ))),
    }
}

/// A tracefs file's text, read in large pieces: some of its files
/// (`header_page`) end after a short first read.
fn read_text(path: &Path) -> Result<String> {
    let mut f = File::open(path).with_context(|| path.display().to_string())?;
    let mut text = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match f.read(&mut buf)? {
            0 => break,
            n => text.extend_from_slice(&buf[..n]),
        }
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

fn write(dir: &Path, file: &str, value: &str) -> Result<()> {
    std::fs::write(dir.join(file), value).with_context(|| format!("writing '{value}' to {file}"))
}

impl Session {
    /// Creates the instance, enables the events (and the timerlat tracer with
    /// a period of `timerlat_us`), and starts reading. The reader avoids the
    /// CPUs in `measured` when any other is online.
    pub fn start(
        threshold_ns: u64,
        measured: &[usize],
        timerlat_us: Option<u64>,
    ) -> std::result::Result<Session, Unavailable> {
        let root = tracefs()?;
        remove_stale(&root.join("instances"));
        let dir = root.join(format!("instances/rtlab-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir(&dir) {
            return Err(Unavailable(match e.kind() {
                std::io::ErrorKind::PermissionDenied => format!(
                    "cannot create a tracefs instance in {} (permission denied): --trace needs root",
                    root.display()
                ),
                _ => format!("cannot create the tracefs instance {}: {e}", dir.display()),
            }));
        }
        let mut s = Session {
            dir,
            threshold_ns,
            available: Vec::new(),
            missing: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            reader: None,
            timerlat: None,
        };
        let reader = s
            .set_up(&root, measured, timerlat_us)
            .map_err(|e| Unavailable(format!("setting up the tracefs instance: {e:#}")))?;
        let stop = Arc::clone(&s.stop);
        let free: Vec<usize> = online_cpus()
            .into_iter()
            .filter(|c| !measured.contains(c))
            .collect();
        s.reader = Some(
            std::thread::Builder::new()
                .name("rtlab-trace".into())
                .spawn(move || {
                    if !free.is_empty() {
                        let _ = sched::set_thread_affinity(0, &free);
                    }
                    reader.run(&stop)
                })
                .map_err(|e| Unavailable(format!("cannot start the trace reader: {e}")))?,
        );
        Ok(s)
    }

    fn set_up(
        &mut self,
        root: &Path,
        measured: &[usize],
        timerlat_us: Option<u64>,
    ) -> Result<Reader> {
        let dir = self.dir.clone();
        let clocks = read_text(&dir.join("trace_clock"))?;
        if !clocks
            .split_whitespace()
            .any(|c| c.trim_matches(['[', ']']) == "mono")
        {
            anyhow::bail!(
                "the kernel has no 'mono' trace clock (it offers: {})",
                clocks.trim()
            );
        }
        write(&dir, "trace_clock", "mono")?;
        write(&dir, "buffer_size_kb", &BUFFER_KB.to_string())?;
        let events = root.join("events");
        let layout = PageLayout::parse(&read_text(&events.join("header_page"))?)?;
        let mut decoder = Decoder::default();
        let (psys, pname) = PRINT;
        decoder.add(
            psys,
            pname,
            &read_text(&events.join(format!("{psys}/{pname}/format")))?,
        )?;
        let mut waking = false;
        for (sys, name, optional) in EVENTS {
            // sched_wakeup only stands in for a missing sched_waking.
            if name == "sched_wakeup" && waking {
                continue;
            }
            let ev = dir.join(format!("events/{sys}/{name}"));
            match read_text(&ev.join("format")) {
                Ok(f) => {
                    decoder.add(sys, name, &f)?;
                    write(&ev, "enable", "1")?;
                    waking |= name == "sched_waking";
                    if !self.available.iter().any(|a| a == sys) {
                        self.available.push(sys.to_string());
                    }
                }
                Err(_) if name == "sched_waking" => {}
                Err(_) if optional => self.missing.push(missing_reason(sys, name)),
                Err(e) => anyhow::bail!("the kernel has no {sys}:{name} event ({e})"),
            }
        }
        let samples = match timerlat::offer(root, &dir, measured, timerlat_us) {
            Ok((running, samples)) => {
                self.timerlat = Some(running);
                self.available.push("timerlat".into());
                Some(samples)
            }
            Err(why) => {
                self.missing.extend(why);
                None
            }
        };
        let mut pipes = Vec::new();
        for cpu in online_cpus() {
            let path = dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            pipes.push((
                cpu,
                rt::open_read_nonblocking(&path).with_context(|| path.display().to_string())?,
            ));
        }
        write(&dir, "tracing_on", "1")?;
        Ok(Reader {
            pipes,
            page: vec![0; layout.size],
            layout,
            decoder,
            analyser: Analyser::default(),
            timerlat: samples,
        })
    }

    /// Why the timerlat tracer does not run, when it does not.
    pub fn timerlat_missing(&self) -> Option<&str> {
        let why = self.missing.iter().find(|m| m.starts_with("timerlat:"));
        why.filter(|_| self.timerlat.is_none()).map(String::as_str)
    }

    /// [`Session::start`], or, when the system cannot trace, `None` and a
    /// warning that says why (the run goes on without the analysis).
    pub fn start_or_warn(
        threshold_ns: u64,
        measured: &[usize],
        timerlat_us: Option<u64>,
        warnings: &mut Vec<Warning>,
    ) -> Option<Session> {
        match Session::start(threshold_ns, measured, timerlat_us) {
            Ok(s) => Some(s),
            Err(Unavailable(why)) => {
                let msg = format!("--trace: {why}; measured without the analysis");
                warnings.push(Warning::new("trace", msg));
                None
            }
        }
    }

    /// The instance's `trace_marker`, for the probe's spike markers.
    pub fn marker_path(&self) -> PathBuf {
        self.dir.join("trace_marker")
    }

    /// Stops tracing, reads what is left, and analyses.
    pub fn finish(mut self) -> Why {
        let _ = write(&self.dir, "tracing_on", "0");
        let reader = self.join();
        let lost = self.lost_events();
        let timerlat = reader
            .as_ref()
            .and_then(|r| r.timerlat.as_ref())
            .map(timerlat::Samples::summary);
        let (events, tally) = match reader {
            Some(r) => (r.analyser.events, r.analyser.tally),
            None => (0, Default::default()),
        };
        let spikes_total = tally.total;
        let (spikes, causes) = tally.finish();
        Why {
            threshold_ns: self.threshold_ns,
            available: std::mem::take(&mut self.available),
            missing: std::mem::take(&mut self.missing),
            resolution_ns: clock::resolution_ns(clock::ClockId::Monotonic).unwrap_or(1),
            events,
            events_lost: lost,
            spikes_total,
            spikes,
            causes,
            timerlat,
            subject: Default::default(),
        }
    }

    fn join(&mut self) -> Option<Reader> {
        self.stop.store(true, Ordering::Relaxed);
        self.reader.take().and_then(|h| h.join().ok())
    }

    /// Events the kernel overwrote or dropped, from every CPU's `stats`.
    fn lost_events(&self) -> u64 {
        online_cpus()
            .into_iter()
            .filter_map(|cpu| read_text(&self.dir.join(format!("per_cpu/cpu{cpu}/stats"))).ok())
            .map(|text| lost_in(&text))
            .sum()
    }
}

/// Events a CPU's `stats` says were overwritten or dropped.
fn lost_in(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events")
                .then(|| v.trim().parse::<u64>().ok())?
        })
        .sum()
}

impl Drop for Session {
    fn drop(&mut self) {
        self.join();
        self.timerlat.take();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Removes the instances of rtlab processes that no longer run (killed
/// before they could remove their own).
fn remove_stale(instances: &Path) {
    let Ok(dir) = std::fs::read_dir(instances) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix("rtlab-"));
        if pid
            .is_some_and(|p| p.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{p}")).exists())
        {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

fn missing_reason(sys: &str, name: &str) -> String {
    let what = match name {
        "cpu_idle" => "idle exit",
        "sched_wakeup" => "timer delay (neither sched_waking nor sched_wakeup)",
        "hrtimer_expire_entry" | "hrtimer_expire_exit" => "timer delay",
        "local_timer_entry" | "local_timer_exit" => {
            "timer interrupts (counted as what they interrupted)"
        }
        "softirq_entry" | "softirq_exit" => "softirqs",
        "nmi_handler" => "NMIs (counted as what they interrupted)",
        _ => "IRQ handlers",
    };
    format!("{what}: no {sys}:{name} event")
}

fn online_cpus() -> Vec<usize> {
    rtlab_engine::sysinfo::read_text("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| CpuList::parse(t.trim()).ok())
        .map(|l| l.cpus().to_vec())
        .unwrap_or_default()
}

/// The reading thread's state.
struct Reader {
    pipes: Vec<(usize, File)>,
    page: Vec<u8>,
    layout: PageLayout,
    decoder: Decoder,
    analyser: Analyser,
    timerlat: Option<timerlat::Samples>,
}

impl Reader {
    /// Reads until `stop`, then what is left.
    fn run(mut self, stop: &AtomicBool) -> Reader {
        loop {
            let done = stop.load(Ordering::Relaxed);
            let got = self.drain();
            if done {
                return self;
            }
            if !got {
                std::thread::sleep(READ_EVERY);
            }
        }
    }

    /// One pass over every CPU's buffer; whether anything was read.
    fn drain(&mut self) -> bool {
        let mut got = false;
        let page = &mut self.page;
        for (cpu, pipe) in &mut self.pipes {
            // A page at a time, until the buffer is empty (EAGAIN) or fails.
            while let Ok(n) = pipe.read(page) {
                if n == 0 {
                    break;
                }
                got = true;
                let (decoder, analyser) = (&self.decoder, &mut self.analyser);
                let timerlat = &mut self.timerlat;
                // A page that does not parse is skipped; its events are lost
                // to the analysis as events the kernel dropped would be.
                let _ = page::for_each_record(&page[..n], &self.layout, |ts, rec| {
                    if timerlat.as_mut().is_some_and(|t| t.take(*cpu, rec)) {
                        return;
                    }
                    if let Some((pid, ev)) = decoder.decode(rec) {
                        analyser.feed(*cpu, ts, pid, ev);
                    }
                });
            }
        }
        got
    }
}
