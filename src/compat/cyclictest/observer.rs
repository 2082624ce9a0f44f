//! What cyclictest prints while it measures and when it has measured: its
//! start-up lines, the status frame (redrawn in place on a terminal, the last
//! frame alone otherwise, the lines alone with `-q`), `-v` lines, the named
//! pipe of `-F`, and at the end the spikes, the histogram and the break.

use super::options::PolicyName;
use super::spikes::Spikes;
use super::summary::{self, ThreadInfo};
use super::verbose::SampleLines;
use crate::format::histfile::{self, Layout};
use crate::record::Run;
use crate::step::Observer;
use anyhow::Result;
use rtlab_engine::probe::latency::{LatencyConfig, LiveSnapshot};
use rtlab_engine::probe::samples::Sample;
use rtlab_engine::rt::fifo;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// What the output shows, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub quiet: bool,
    pub verbose: bool,
    pub nsecs: bool,
    pub refresh_on_max: bool,
    /// `-o`: one -v line per this many samples.
    pub oscope: u64,
    /// The histogram's buckets and columns.
    pub histogram: Option<(u64, Layout)>,
    pub histfile: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub fifo: Option<PathBuf>,
    /// `--spike`: trigger and how many spikes are listed.
    pub spike: Option<(u64, usize)>,
    /// `-b` was given: the thread ids and the break are printed at the end.
    pub breaktrace: bool,
    pub resolution: bool,
    /// `-v` came before `-a`: cyclictest says "Using N cpus." twice.
    pub verbose_before_affinity: bool,
    /// The CPUs `-a` gave, when it gave some.
    pub affinity_cpus: Option<usize>,
    /// The policy cyclictest names in its status line, and whether the threads
    /// run SCHED_OTHER under it.
    pub policy: (PolicyName, bool),
}

/// The personality's view of a run.
pub struct Watch<'a> {
    out: &'a Output,
    threads: Vec<ThreadInfo>,
    cpus: Vec<Option<usize>>,
    /// cyclictest's `-v` start-up line shows each thread's interval plus this (µs).
    interval_shown_plus: u64,
    /// The frame is redrawn in place (stdout is a terminal, neither -q nor -v).
    live: bool,
    drawn: bool,
    maxima: Vec<u64>,
    last: Vec<LiveSnapshot>,
    lines: Option<SampleLines>,
    spikes: Option<Spikes>,
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn loadavg() -> String {
    rtlab_engine::sysinfo::read_text("/proc/loadavg").unwrap_or_default()
}

impl<'a> Watch<'a> {
    /// The view of the threads `cfg` runs, showing what `out` asks.
    pub fn new(out: &'a Output, cfg: &LatencyConfig) -> Self {
        let n = cfg.threads.len();
        Watch {
            out,
            threads: (0..n)
                .map(|i| ThreadInfo {
                    priority: cfg.priority_of(i),
                    interval_us: cfg.interval_of(i) / 1000,
                })
                .collect(),
            cpus: cfg.threads.clone(),
            interval_shown_plus: cfg.distance_ns / 1000,
            live: !out.quiet && !out.verbose && std::io::stdout().is_terminal(),
            drawn: false,
            maxima: Vec::new(),
            last: vec![LiveSnapshot::default(); n],
            lines: out
                .verbose
                .then(|| SampleLines::reduced(out.nsecs, out.oscope)),
            spikes: out
                .spike
                .map(|(trigger, nodes)| Spikes::new(trigger, nodes, out.nsecs)),
        }
    }

    fn frame(&self) -> String {
        summary::frame(
            self.out.policy,
            &loadavg(),
            &self.threads,
            &self.last,
            self.out.nsecs,
        )
    }

    /// Serves the status lines to a reader of the `-F` pipe, if one is there.
    fn serve_fifo(&self) {
        if let Some(mut w) = self.out.fifo.as_deref().and_then(fifo::open_if_read) {
            let _ =
                w.write_all(summary::lines(&self.threads, &self.last, self.out.nsecs).as_bytes());
        }
    }

    /// What cyclictest prints when it has measured, after the run was saved:
    /// the last frame (not on a terminal, where it stands already), the status
    /// lines with -q, the spikes, the histogram (on stdout or in --histfile)
    /// and, with -b, the threads and the break.
    pub fn finish(&mut self, run: &Run) -> Result<()> {
        let out = self.out;
        let mut text = String::new();
        if !out.quiet && !out.verbose && !self.live {
            text.push_str(&self.frame());
        }
        if out.quiet && out.histogram.is_none() {
            text.push_str(&summary::lines(&self.threads, &self.last, out.nsecs));
        }
        if let Some(s) = &self.spikes {
            text.push_str(&s.render());
        }
        if let Some((_, layout)) = out.histogram {
            let hist = histfile::render(&histfile::columns(run)?, layout);
            match &out.histfile {
                Some(path) => crate::cli::common::write_output("--histfile", Some(path), &hist)?,
                None => text.push_str(&hist),
            }
        }
        if out.breaktrace {
            text.push_str("# Thread Ids:");
            for s in &self.last {
                text.push_str(&format!(" {:05}", s.tid));
            }
            text.push('\n');
            if let Some(b) = &run.breaktrace {
                let v = if out.nsecs {
                    b.latency_ns
                } else {
                    b.latency_ns / 1000
                };
                text.push_str(&format!("# Break thread: {}\n# Break value: {v}\n", b.tid));
            }
        }
        if let Some(lines) = self.lines.as_mut() {
            lines.flush();
        }
        print(&text);
        Ok(())
    }
}

impl Observer for Watch<'_> {
    fn dma_latency(&mut self, held: Result<i32, String>) {
        match held {
            Ok(us) => print(&format!("# /dev/cpu_dma_latency set to {us}us\n")),
            Err(why) => eprintln!("WARN: open /dev/cpu_dma_latency: {why}"),
        }
    }

    fn start(&mut self, _names: &[String]) {
        if !self.out.verbose {
            return;
        }
        let mut text = String::new();
        let plus = if self.out.histogram.is_some() {
            0
        } else {
            self.interval_shown_plus
        };
        for (i, t) in self.threads.iter().enumerate() {
            if let (Some(_), Some(cpu)) = (self.out.affinity_cpus, self.cpus[i]) {
                text.push_str(&format!("Thread {i} using cpu {cpu}.\n"));
            }
            text.push_str(&format!("Thread {i} Interval: {}\n", t.interval_us + plus));
        }
        print(&text);
    }

    fn latency(&mut self, snaps: &[LiveSnapshot]) {
        self.last = snaps.to_vec();
        self.serve_fifo();
        let maxima: Vec<u64> = snaps.iter().map(|s| s.max_ns).collect();
        let new_max = maxima != self.maxima;
        self.maxima = maxima;
        if self.live && (new_max || !self.out.refresh_on_max || !self.drawn) {
            let up = if self.drawn {
                summary::up(self.threads.len())
            } else {
                String::new()
            };
            print(&(up + &self.frame()));
            self.drawn = true;
        }
    }

    fn wants_samples(&self) -> bool {
        self.lines.is_some() || self.spikes.is_some()
    }

    fn samples(&mut self, thread: usize, samples: &[Sample]) {
        if let Some(lines) = self.lines.as_mut() {
            lines.write(thread, samples);
        }
        if let Some(s) = self.spikes.as_mut() {
            s.add(thread, samples);
        }
    }
}
