//! `rtlab cyclictest ARGS`, and rtlab run as `cyclictest`: cyclictest 2.x's
//! command line and defaults over rtlab's latency probe, cyclictest's output,
//! and the run stored like any rtlab run.
//!
//! The line is read as cyclictest reads it ([`args`], [`options`]), settled
//! into the latency step's parameters with cyclictest's defaults
//! ([`params`]), checked as `rtlab latency` checks it (a refusal names
//! cyclictest's option), measured, saved, and printed in cyclictest's layouts:
//! [`summary`], [`verbose`], [`spikes`], the histogram of
//! [`crate::format::histfile`] and [`json`]. cyclictest's exit code is 0 for a
//! run that ends by its loop count, its duration, `-b` or Ctrl-C.

pub mod args;
pub mod json;
pub mod observer;
pub mod options;
pub mod params;
pub mod spikes;
pub mod summary;
pub mod verbose;

use super::Session;
use crate::error::{BadValue, SystemError, UsageError};
use crate::record::Status;
use crate::step::{latency, Machine};
use anyhow::Result;
use rtlab_engine::rt::clock::{self, Clock, ClockId, SystemClock};

/// cyclictest's options as rtlab's latency parameters name them, for refusals.
const FLAGS: &[(&str, &str)] = &[
    ("--interval", "-i"),
    ("--loops", "-l"),
    ("--duration", "-D"),
    ("--cpus", "-a"),
    ("--threads", "-t"),
    ("--priority", "-p"),
    ("--distance", "-d"),
    ("--histogram-max", "-h"),
    ("--overflow-cycles", "-h"),
    ("--breaktrace", "-b"),
    ("--dma-latency", "--latency"),
    ("--offset", "-A"),
    ("--second-aligned", "--secaligned"),
    ("--main-cpus", "--mainaffinity"),
    ("--timer posix", "-x"),
];

/// An error of the latency step, naming cyclictest's option instead of rtlab's.
fn as_cyclictest(e: anyhow::Error) -> anyhow::Error {
    let rename = |flag: &str| {
        FLAGS
            .iter()
            .find(|(ours, _)| *ours == flag)
            .map_or(flag.to_string(), |(_, theirs)| theirs.to_string())
    };
    if let Some(b) = e.downcast_ref::<BadValue>() {
        return BadValue {
            flag: rename(&b.flag),
            message: b.message.clone(),
        }
        .into();
    }
    let text = e.to_string();
    let renamed = FLAGS.iter().find_map(|(ours, theirs)| {
        text.strip_prefix(&format!("{ours}:"))
            .map(|rest| format!("{theirs}:{rest}"))
    });
    match renamed {
        Some(t) if e.is::<SystemError>() => SystemError(t).into(),
        Some(t) => UsageError(t).into(),
        None => e,
    }
}

/// What `--help` prints.
const HELP: &str = "\
rtlab cyclictest: cyclictest 2.x's options, defaults and output, measured by rtlab
and stored in its results (rtlab cyclictest --no-store ..., or RTLAB_NO_STORE=1, to not).

Usage: rtlab cyclictest <options>     (or rtlab run as `cyclictest`)

-a [CPUSET] --affinity     pin threads to CPUSET round-robin (default: all CPUs)
-A USEC  --aligned=USEC    thread N's first wake-up N*USEC after the common start
-b USEC  --breaktrace=USEC stop when a latency exceeds USEC (--tracemark: ftrace mark)
-c CLOCK --clock=CLOCK     0 = CLOCK_MONOTONIC (default), 1 = CLOCK_REALTIME
         --default-system  leave /dev/cpu_dma_latency alone
         --deepest-idle-state=N  disable idle states deeper than N on the used CPUs
-d DIST  --distance=DIST   distance of thread intervals in us, default=500
-D TIME  --duration=TIME   run this long (s, or with m, h, d)
-F PATH  --fifo=PATH       serve the status lines on a named pipe
-h US    --histogram=US    histogram of US 1-us buckets after the run
-H US    --histofall=US    as -h, with a column of all threads
         --histfile=PATH   write the histogram to PATH instead of stdout
-i INTV  --interval=INTV   base interval of thread in us, default=1000
         --json=FILE       write the results as cyclictest's JSON to FILE
         --laptop          leave /dev/cpu_dma_latency alone
         --latency=PM_QOS  hold /dev/cpu_dma_latency at PM_QOS us, default 0 (-e)
-l LOOPS --loops=LOOPS     number of loops, default=0 (endless)
         --mainaffinity=CPUSET  run the main thread on CPUSET
-m       --mlockall        lock current and future memory
-M       --refresh_on_max  redraw the status only on a new maximum
-n                         clock_nanosleep (the default)
-N       --nsecs           values in ns
-o RED   --oscope=RED      with -v, one line per RED wake-ups (their maximum)
-p PRIO  --priority=PRIO   SCHED_FIFO priority (default: SCHED_OTHER, priority 0)
         --policy=NAME     other, normal, batch, idle, fifo or rr (-y)
         --priospread      thread N runs at PRIO - N
-q       --quiet           print a summary only on exit
-r       --relative        relative timer instead of absolute
-R       --resolution      check the clock's resolution
         --secaligned [USEC]  start at the next full second plus USEC
-s       --system          nanosleep(2) instead of clock_nanosleep
-S       --smp             one thread per CPU, pinned, same priority
         --spike=US        list wake-ups later than US (--spike-nodes=N of them)
-t [NUM] --threads[=NUM]   number of threads (alone: one per CPU), default=1
-u       --unbuffered      output line by line
-v       --verbose         every wake-up: thread:cycle:latency
-x       --posix_timers    POSIX interval timers instead of clock_nanosleep

Refused with the reason: --smi (rtlab does not read the SMI count) and
--dbg_cyclictest (cyclictest's own debugging). Options of cyclictest 1.x that
2.x dropped and rtlab reads: -n, -e, -y, --output.
";

/// cyclictest's check of the clock: it warns when the clock is coarser than
/// 1 ns, and with -R (shown always with -v) its resolution as reported and as
/// measured by reading it many times.
fn check_clock(id: ClockId, resolution: bool, verbose: bool) {
    if clock::resolution_ns(ClockId::Monotonic) != Some(1) {
        eprintln!("WARN: High resolution timers not available");
    }
    if !resolution {
        return;
    }
    let reported = clock::resolution_ns(id).unwrap_or(u64::MAX);
    let c = SystemClock::new(id);
    let mut prev = c.now();
    let mut finest = u64::MAX;
    for _ in 0..100_000 {
        let now = c.now();
        if now > prev {
            finest = finest.min(now - prev);
        }
        prev = now;
    }
    if verbose || finest > reported {
        eprintln!("WARN: reported clock resolution: {reported} nsec");
        eprintln!("WARN: measured clock resolution approximately: {finest} nsec");
    }
}

/// The time as cyclictest's JSON writes it.
fn now_text() -> String {
    chrono::Local::now()
        .format("%a, %d %b %Y %H:%M:%S %z")
        .to_string()
}

/// Runs cyclictest's command line `args` (without the program's name), storing
/// the run as `session` says.
pub fn main(session: &Session, args: &[String]) -> Result<i32> {
    if args.iter().any(|a| a == "--no-store") {
        return Err(UsageError(
            "--no-store is rtlab's: give it first, before cyclictest's options".into(),
        )
        .into());
    }
    let o = options::read(&args::parse(args)?)?;
    if o.help {
        print!("{HELP}");
        return Ok(0);
    }
    let machine = Machine::this();
    let setup = params::setup(&o, &machine)?;
    let plan = setup.params.plan(&machine).map_err(as_cyclictest)?;
    for note in &setup.notes {
        eprintln!("{note}");
    }
    let out = &setup.output;
    if let Some(path) = &out.fifo {
        rtlab_engine::rt::fifo::create(path)
            .map_err(|e| SystemError(format!("-F: cannot create {}: {e}", path.display())))?;
    }
    let clock_id = if o.clock == 1 {
        ClockId::Realtime
    } else {
        ClockId::Monotonic
    };
    check_clock(clock_id, out.resolution, out.verbose);
    if out.verbose {
        let using = out
            .affinity_cpus
            .map(|n| format!("Using {n} cpus.\n"))
            .unwrap_or_default();
        let configured = std::fs::read_dir("/sys/devices/system/cpu")
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        n.strip_prefix("cpu")
                            .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()))
                    })
                    .count()
            })
            .unwrap_or(machine.cpus.len());
        let first = if out.verbose_before_affinity {
            using.as_str()
        } else {
            ""
        };
        print!(
            "{first}Max CPUs = {configured}\nOnline CPUs = {}\n{using}",
            machine.cpus.len()
        );
    }
    let mut watch = observer::Watch::new(out, plan.config());
    let start = now_text();
    let mut measure = || latency::measure(&setup.params, &mut watch).map_err(as_cyclictest);
    // A run to store gets its audit summary read before measuring, as rtlab
    // latency's (its memory is free again before anything is measured).
    let mut run = match session.no_store {
        true => measure()?,
        false => crate::cli::common::audited(measure)?,
    };
    let end = now_text();
    session.save(&mut run)?;
    if let Some(path) = &out.json {
        let doc = json::Document {
            cmdline: &run.command_line.join(" "),
            start: &start,
            end: &end,
            return_code: 0,
            histogram: out.histogram.map_or(0, |h| h.0),
            nsecs: out.nsecs,
        };
        crate::cli::common::write_output("--json", Some(path), &json::render(&run, &doc))?;
    }
    watch.finish(&run)?;
    if let Some(w) = run.warnings.iter().find(|w| w.code == "samples_dropped") {
        eprintln!("rtlab: {}", w.message);
    }
    if let Some(path) = &out.fifo {
        let _ = std::fs::remove_file(path);
    }
    Ok(if run.status == Status::Failed { 1 } else { 0 })
}
