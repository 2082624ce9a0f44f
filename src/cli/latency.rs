//! `rtlab latency`: the cyclic timer-latency probe.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::compat::cyclictest::verbose::SampleLines;
use crate::format;
use crate::format::histfile::Layout;
use crate::step::latency::Params;
use crate::step::value::{Dur, Us};
use crate::step::Observer;
use crate::units::TimeUnit;
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::latency::LiveSnapshot;
use rtlab_engine::probe::samples::Sample;
use std::path::PathBuf;

/// Measure how late periodic real-time threads wake up.
///
/// One SCHED_FIFO thread (priority 90) per online CPU, pinned, sleeping on
/// CLOCK_MONOTONIC with absolute deadlines, memory locked and /dev/cpu_dma_latency
/// held at 0, until the loop count or duration is reached or Ctrl-C.
/// Bare numbers are µs for -i/-h/--deadline/--max-latency/--breaktrace and
/// seconds for -D, as in cyclictest, whose common short options (-a, -t, -S,
/// -n, -h, -H, -N, -v, -M) work here too; `rtlab cyclictest` takes all of its
/// options and prints its output.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab latency -D 10s
  rtlab latency -a 1 -p 80 -i 200us -D 60s --load cpu:1 --load-cpus 0
  rtlab latency -D 5m --max-latency 100us --histfile hist.txt --json > run.json")]
pub struct LatencyArgs {
    #[command(flatten)]
    params: Params,
    /// Write the 1-µs histogram in cyclictest's -h layout to this file [default:
    /// none].
    #[arg(long, value_name = "PATH", value_parser = common::output_file, display_order = 15)]
    histfile: Option<PathBuf>,
    /// As -h, and the histogram file gets cyclictest's -H column of all
    /// threads together (a bare number is µs) [default: off].
    #[arg(
        short = 'H',
        long,
        value_name = "DUR",
        conflicts_with = "histogram_max"
    )]
    histofall: Option<Dur<Us>>,
    /// One pinned thread per CPU (the default; cyclictest's -S).
    #[arg(short = 'S', long, conflicts_with_all = ["threads", "cpus"])]
    smp: bool,
    /// Sleep with clock_nanosleep (the default; cyclictest's -n).
    #[arg(short = 'n', long)]
    clock_nanosleep: bool,
    /// Print every wake-up as cyclictest's -v does (thread:cycle:latency, µs).
    #[arg(short = 'v', long, conflicts_with = "json")]
    verbose: bool,
    /// Times in ns (as --unit ns; cyclictest's -N).
    #[arg(short = 'N', long, conflicts_with = "unit")]
    nsecs: bool,
    /// Redraw the live view only when a maximum grows (cyclictest's -M).
    #[arg(short = 'M', long)]
    refresh_on_max: bool,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
    /// Print help (-h is cyclictest's histogram).
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// Runs `rtlab latency`.
pub fn run(ctx: &Context, mut a: LatencyArgs) -> Result<i32> {
    let layout = match a.histofall.take() {
        Some(h) => {
            a.params.histogram_max = h;
            Layout::WithTotal
        }
        None => Layout::PerThread,
    };
    if a.nsecs {
        a.out.unit = TimeUnit::Ns;
    }
    let live = match a.verbose {
        // -v prints every wake-up on the terminal: no progress line among them.
        true => super::observer::LiveObserver::new(&a.out),
        false => super::probe::live(&a.params, &a.out),
    };
    let watch = Watch {
        live,
        refresh_on_max: a.refresh_on_max,
        max_ns: Vec::new(),
        lines: a
            .verbose
            .then(|| SampleLines::new(a.out.unit == TimeUnit::Ns)),
    };
    let histfile = a.histfile.as_deref();
    super::probe::watched(ctx, &a.params, &a.out, &a.save, watch, |run| {
        let Some(path) = histfile else { return Ok(()) };
        let cols = format::histfile::columns(run)?;
        common::write_output_with("--histfile", Some(path), |out| {
            format::histfile::write(&cols, layout, out)
        })
    })
}

/// The live view, redrawn on every tick or only on a new maximum (-M), and
/// every wake-up on stdout (-v).
struct Watch {
    live: super::observer::LiveObserver,
    refresh_on_max: bool,
    max_ns: Vec<u64>,
    lines: Option<SampleLines>,
}

/// What -v printed stays whole when the run ends.
impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(lines) = self.lines.as_mut() {
            lines.flush();
        }
    }
}

impl Observer for Watch {
    fn start(&mut self, names: &[String]) {
        self.live.start(names);
    }

    fn latency(&mut self, snaps: &[LiveSnapshot]) {
        let maxima: Vec<u64> = snaps.iter().map(|s| s.max_ns).collect();
        if !self.refresh_on_max || maxima != self.max_ns {
            self.live.latency(snaps);
        }
        self.max_ns = maxima;
    }

    fn wants_samples(&self) -> bool {
        self.lines.is_some()
    }

    fn samples(&mut self, thread: usize, samples: &[Sample]) {
        if let Some(lines) = self.lines.as_mut() {
            lines.write(thread, samples);
        }
    }

    fn end(&mut self) {
        self.live.end();
    }
}
