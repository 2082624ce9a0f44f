//! What the probe runs and what it hands back: its configuration, the
//! set-up errors of its threads, and their results.

use super::{LoopEnd, SpikeMarks, ThreadStats};
use crate::rt::clock::ClockId;
use crate::rt::mem::PageFaults;
use crate::rt::sched::deadline::DlParams;
use crate::rt::sched::{Policy, SchedError};

/// How a measuring thread waits for its next period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimerMode {
    /// `clock_nanosleep(TIMER_ABSTIME)` until the period's time.
    #[default]
    Absolute,
    /// `clock_nanosleep` for the interval from each wake-up (cyclictest's `-r`).
    Relative,
    /// `nanosleep(2)` for the interval from each wake-up (cyclictest's `-s`).
    Nanosleep,
    /// A POSIX interval timer that signals the thread (cyclictest's `-x`).
    Posix,
}

/// The whole probe's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyConfig {
    /// One entry per thread: the CPU it is pinned to, or `None` for no pinning.
    pub threads: Vec<Option<usize>>,
    /// Base period (ns).
    pub interval_ns: u64,
    /// Thread `i` uses period `interval + i·distance` (ns), as cyclictest's `-d`.
    pub distance_ns: u64,
    /// Scheduling policy of the measuring threads.
    pub policy: Policy,
    /// Priority (1..=99 for fifo/rr, 0 otherwise).
    pub priority: i32,
    /// The SCHED_DEADLINE reservation, with [`Policy::Deadline`].
    pub dl: Option<DlParams>,
    /// Thread `i` runs at `priority − i` (cyclictest's `--priospread`).
    pub priospread: bool,
    /// Clock to sleep on and read.
    pub clock: ClockId,
    /// How the threads wait for their periods.
    pub timer: TimerMode,
    /// Thread `i`'s first period begins `i·offset` after the common start (ns;
    /// cyclictest's `-A`).
    pub offset_ns: u64,
    /// Start at the next full second of the clock plus this (ns) rather than
    /// at once (cyclictest's `--secaligned`).
    pub second_aligned: Option<u64>,
    /// Wake-ups per thread (0 = no limit).
    pub loops: u64,
    /// Duration (ns; 0 = no limit).
    pub duration_ns: u64,
    /// Deadline (ns); `None`: each thread's own period.
    pub deadline_ns: Option<u64>,
    /// Breaktrace threshold (ns).
    pub breaktrace_ns: Option<u64>,
    /// On a breaktrace, write an ftrace marker and stop tracing.
    pub trace_marker: bool,
    /// Write a spike marker for every wake-up at or above a threshold.
    pub spike_marks: Option<SpikeMarks>,
    /// 1-µs buckets kept per thread.
    pub hist_max_us: u32,
    /// Wake-up numbers of the first histogram overflows kept per thread.
    pub overflow_cycles: usize,
    /// Points kept in each thread's time series.
    pub trace_points: usize,
    /// Every wake-up goes to the main thread ([`Watch::samples`]) through a
    /// ring of this many samples per thread (0: none).
    pub sample_ring: usize,
    /// How often the main thread takes the samples from the rings (ns; at
    /// most the `tick` given to [`run`]). Without rings it wakes once a tick,
    /// for the live values, and when the threads end.
    pub poll_ns: u64,
    /// Each thread keeps its histograms and time series (false: its moments
    /// and counters only, for a watcher that histograms the samples itself).
    pub thread_histograms: bool,
    /// Open performance counters on every thread for its loop.
    pub perf: bool,
}

impl LatencyConfig {
    /// The period of thread `i` (ns).
    pub fn interval_of(&self, i: usize) -> u64 {
        self.interval_ns + i as u64 * self.distance_ns
    }

    /// The priority of thread `i`.
    pub fn priority_of(&self, i: usize) -> i32 {
        if self.priospread {
            self.priority - i as i32
        } else {
            self.priority
        }
    }
}

/// A thread could not be set up as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// `sched_setaffinity` refused the CPU.
    Affinity {
        /// Thread index.
        thread: usize,
        /// The CPU asked for.
        cpu: usize,
        /// The refusal.
        err: SchedError,
    },
    /// `sched_setscheduler` refused the policy/priority.
    Policy {
        /// Thread index.
        thread: usize,
        /// The refusal.
        err: SchedError,
    },
    /// `timer_create` refused the thread's POSIX timer.
    Timer {
        /// Thread index.
        thread: usize,
        /// The errno.
        errno: i32,
    },
    /// The spike markers' `trace_marker` file could not be opened.
    Marker {
        /// The errno.
        errno: i32,
    },
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Affinity { thread, cpu, err } => {
                write!(f, "thread {thread}: cannot pin to CPU {cpu}: {err}")
            }
            SetupError::Policy { thread, err } => {
                write!(
                    f,
                    "thread {thread}: cannot set the scheduling policy: {err}"
                )
            }
            SetupError::Timer { thread, errno } => write!(
                f,
                "thread {thread}: cannot create a POSIX timer: {}",
                crate::rt::errno_text(*errno)
            ),
            SetupError::Marker { errno } => write!(
                f,
                "cannot open the trace marker file: {}",
                crate::rt::errno_text(*errno)
            ),
        }
    }
}

impl std::error::Error for SetupError {}

/// What one thread hands back on join.
#[derive(Debug, Clone)]
pub struct ThreadResult {
    /// Thread index.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Kernel thread id.
    pub tid: i32,
    /// Its period (ns).
    pub interval_ns: u64,
    /// Its priority.
    pub priority: i32,
    /// What it gathered.
    pub stats: ThreadStats,
    /// Why it stopped.
    pub end: LoopEnd,
    /// Samples the main thread did not take in time (with a sample ring).
    pub dropped_samples: u64,
    /// The page faults it took while measuring, from just before its first sleep
    /// to just after its last wake-up: 0 when everything the loop touches was
    /// resident and locked beforehand.
    pub faults: PageFaults,
    /// Its performance counters over the loop, and its voluntary and
    /// involuntary context switches (with `perf`).
    pub perf: Option<(
        [crate::perf::Reading; crate::perf::EVENTS.len()],
        (u64, u64),
    )>,
}

/// A breaktrace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakInfo {
    /// Thread index that saw it.
    pub thread: usize,
    /// Its tid.
    pub tid: i32,
    /// Wake-up number (0-based).
    pub cycle: u64,
    /// The latency (ns).
    pub latency_ns: u64,
}

/// The probe's result.
#[derive(Debug, Clone)]
pub struct LatencyOutcome {
    /// Per-thread results, in thread order.
    pub threads: Vec<ThreadResult>,
    /// The first breaktrace event, if any.
    pub breaktrace: Option<BreakInfo>,
    /// Whether a marker was written to ftrace's `trace_marker` (and tracing stopped).
    pub trace_marker_written: bool,
    /// Time from the common start to the last join (ns).
    pub elapsed_ns: u64,
}

impl LatencyOutcome {
    /// The page faults all measuring threads took while measuring.
    pub fn faults(&self) -> PageFaults {
        self.threads
            .iter()
            .fold(PageFaults::default(), |sum, t| sum + t.faults)
    }
}
