//! How the timing loop accounts for each event: rtlab's lean way, or sysbench
//! 1.0's, with what its event loop spends per event.
//!
//! sysbench's built-in tests (cpu, memory, fileio, threads, mutex) run through
//! one C loop. Per event it
//!
//! 1. checks for an error and reads the clock to compare with the time limit
//!    (and takes a number from the shared event counter when an event limit is
//!    set);
//! 2. asks the test for its next event;
//! 3. starts the thread's event timer: takes the timer's spin lock, reads the
//!    clock, releases the lock;
//! 4. runs the event;
//! 5. stops the timer: takes the lock, reads the clock, adds the event's time
//!    to the timer's count, sum, minimum and maximum, releases the lock;
//! 6. with a percentile asked for (95 unless `--percentile=0`), adds the
//!    event's time in milliseconds to the shared latency histogram: its
//!    logarithm gives one of 1024 buckets, and one of 128 copies of the
//!    histogram, picked at random, is incremented atomically;
//! 7. increments the thread's event counter.
//!
//! [`Accounting::Sysbench`] does the same, step for step: the clock read for
//! the time limit (when one is set), the timer's lock around both clock reads,
//! the event timed from its own start to its own end (without the loop around
//! it), and sysbench's histogram ([`LogHistogram`]: the logarithm and the
//! floor as libm runs them, a random copy, an atomic increment; left out, as
//! sysbench leaves it out, when the run's `Report::latency_histogram` says
//! so), which gives the percentile of the interval reports as sysbench's gives
//! its own. The event's time also goes into the thread's exact moments and
//! HdrHistogram, which are the run's statistics. The lock guards nothing that
//! another thread reads: it is there because sysbench takes it, so that an
//! event costs here what it costs there. One cost of sysbench's is left out:
//! its test returns step 2's event record (48 bytes) by value with only the
//! type written, and the loop's copy of it waits on a store the CPU cannot
//! forward to the wider loads; copied here the same way, that wait cost more
//! than sysbench's whole extra time per event (`bench/RESULTS.md`).
//! Where events are short (a 1 KiB memory block is written in some 40 ns) this
//! bookkeeping is most of an event's time, in sysbench and here alike, so that
//! events/s and MiB/s compare.
//!
//! [`Accounting::Lean`] reads the clock once per event (the end of one event is
//! the start of the next) and records into the moments and the HdrHistogram
//! (and, when interval reports ask for a percentile, a coarse histogram of its
//! own): a third of sysbench's cost per event, and each event's time includes
//! the loop's bookkeeping.

use super::live::Counts;
use super::rng::Xoroshiro;
use crate::rt::clock::Clock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The bookkeeping of the timing loop around each event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accounting {
    /// sysbench 1.0's: the time limit checked with a clock read of its own,
    /// the event timed from its own start under the thread's timer lock, its
    /// time added to sysbench's logarithmic histogram.
    #[default]
    Sysbench,
    /// One clock read per event, an HdrHistogram.
    Lean,
}

/// A thread's event timer, guarded by a spin lock as sysbench guards its own
/// (the lock is taken and released around each of the two clock reads of an
/// event). Only its own thread takes it; it is what sysbench spends.
pub(super) struct TimerLock {
    held: AtomicBool,
}

impl TimerLock {
    pub(super) fn new() -> Self {
        TimerLock {
            held: AtomicBool::new(false),
        }
    }

    /// Reads `clock` with the lock held; then runs `f` on the reading, still
    /// holding it.
    #[inline(always)]
    pub(super) fn read<C: Clock, T>(&self, clock: &C, f: impl FnOnce(u64) -> T) -> T {
        while self.held.swap(true, Ordering::Acquire) {
            std::hint::spin_loop();
        }
        let r = f(clock.now());
        self.held.store(false, Ordering::Release);
        r
    }
}

/// Buckets of sysbench's latency histogram.
pub const LOG_BUCKETS: usize = 1024;
/// The lowest value of its scale (ms); below it, the first bucket.
pub const LOG_LOW_MS: f64 = 0.001;
/// The highest value of its scale (ms); above it, the last bucket.
pub const LOG_HIGH_MS: f64 = 100_000.0;
/// Copies of the histogram that threads increment, one picked at random per
/// event, as in sysbench.
const COPIES: usize = 128;

/// Buckets per unit of ln(ms).
pub fn log_per_ln() -> f64 {
    (LOG_BUCKETS - 1) as f64 / (LOG_HIGH_MS.ln() - LOG_LOW_MS.ln())
}

/// The bucket of `ms` on sysbench's scale: the nearest step; below and above
/// the range, the first and the last.
pub fn log_bucket(ms: f64, per_ln: f64) -> usize {
    bucket_at(log_position(ms, per_ln).floor())
}

/// Where `ms` lies on sysbench's scale, in buckets, plus one half: its floor
/// is the bucket.
#[inline(always)]
fn log_position(ms: f64, per_ln: f64) -> f64 {
    (ms.ln() - LOG_LOW_MS.ln()) * per_ln + 0.5
}

/// The bucket of a floored position: below the scale the first, above it
/// the last.
#[inline(always)]
fn bucket_at(i: f64) -> usize {
    if i < 0.0 {
        0
    } else {
        (i as usize).min(LOG_BUCKETS - 1)
    }
}

/// `floor` as sysbench calls it, from glibc's libm: out of line, through a
/// pointer set once (glibc picks its `floor` when the library is loaded),
/// and on a CPU with SSE4.1 one rounding instruction. Rust's `f64::floor`
/// for a target without SSE4.1 is a software routine of some twenty
/// instructions, which made each event's bookkeeping dearer than sysbench's;
/// truncating instead would make it cheaper.
type Floor = unsafe fn(f64) -> f64;

/// The `floor` this CPU's glibc would pick.
fn libm_floor() -> Floor {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.1") {
        return floor_sse41;
    }
    floor_soft
}

/// `floor` in one SSE4.1 instruction (`roundsd`, towards minus infinity).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1")]
#[inline(never)]
fn floor_sse41(x: f64) -> f64 {
    use std::arch::x86_64::{_mm_cvtsd_f64, _mm_floor_sd, _mm_set_sd};
    let v = _mm_set_sd(x);
    _mm_cvtsd_f64(_mm_floor_sd(v, v))
}

/// `floor` as the target compiles it, out of line: the software routine on an
/// x86-64 CPU without SSE4.1, one instruction where the base instruction set
/// has it (arm64's `frintm`).
#[inline(never)]
fn floor_soft(x: f64) -> f64 {
    x.floor()
}

/// The value (ms) of bucket `i` of sysbench's scale.
pub fn log_value(i: usize) -> f64 {
    (i as f64 / log_per_ln() + LOG_LOW_MS.ln()).exp()
}

/// sysbench's latency histogram of a run: [`COPIES`] copies of
/// [`LOG_BUCKETS`] atomic counts, shared by all threads.
pub(super) struct LogHistogram {
    counts: Box<[AtomicU64]>,
    per_ln: f64,
    floor: Floor,
}

impl LogHistogram {
    /// Allocates and zeroes every copy (1 MiB).
    pub(super) fn new() -> Self {
        LogHistogram {
            counts: (0..COPIES * LOG_BUCKETS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            per_ln: log_per_ln(),
            floor: libm_floor(),
        }
    }

    /// Counts one event of `ns` in a copy picked with `rng`.
    #[inline]
    pub(super) fn record(&self, ns: u64, rng: &mut Xoroshiro) {
        let copy = (rng.next_u64() % COPIES as u64) as usize;
        // SAFETY: `libm_floor` picks the SSE4.1 floor only on a CPU that
        // has SSE4.1.
        let i = bucket_at(unsafe { (self.floor)(log_position(ns as f64 / 1e6, self.per_ln)) });
        self.counts[copy * LOG_BUCKETS + i].fetch_add(1, Ordering::Relaxed);
    }
}

impl Counts for LogHistogram {
    fn buckets(&self) -> usize {
        LOG_BUCKETS
    }

    fn add_to(&self, sum: &mut [u64]) {
        for copy in self.counts.chunks(LOG_BUCKETS) {
            for (s, c) in sum.iter_mut().zip(copy) {
                *s += c.load(Ordering::Relaxed);
            }
        }
    }

    fn value(&self, i: usize) -> u64 {
        (log_value(i) * 1e6).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_sysbench_s() {
        let per_ln = log_per_ln();
        let bucket = |ms: f64| log_bucket(ms, per_ln);
        assert_eq!(bucket(0.0), 0);
        assert_eq!(bucket(LOG_LOW_MS / 2.0), 0);
        assert_eq!(bucket(1e9), LOG_BUCKETS - 1);
        assert!((log_value(0) - LOG_LOW_MS).abs() < 1e-12);
        assert!((log_value(LOG_BUCKETS - 1) - LOG_HIGH_MS).abs() < 1e-6);
        // Neighbouring buckets are 1.8% apart; a value lands within half a step.
        let step = log_value(501) / log_value(500);
        assert!((1.0181..1.0183).contains(&step), "{step}");
        for ms in [0.0123, 0.185, 1.0, 42.0, 13_997.0] {
            let v = log_value(bucket(ms));
            assert!((v / ms - 1.0).abs() < 0.0091, "{ms} -> {v}");
        }
    }

    #[test]
    fn the_floor_picked_for_the_histogram_is_floor_at_every_bucket_edge() {
        let per_ln = log_per_ln();
        let h = LogHistogram::new();
        let mut values = vec![0.0, f64::MIN_POSITIVE, 1e-9, f64::INFINITY];
        // Every bucket's edges (where the position is a whole number) and the
        // values a few ulps either side of them.
        for i in 0..=LOG_BUCKETS {
            let edge = ((i as f64 - 0.5) / per_ln + LOG_LOW_MS.ln()).exp();
            let mut v = edge;
            for _ in 0..4 {
                v = v.next_down();
            }
            for _ in 0..9 {
                values.push(v);
                v = v.next_up();
            }
        }
        // Event times from 1 ns to a day, 1% apart.
        let mut ns = 1.0;
        while ns < 8.64e13 {
            values.push(ns / 1e6);
            ns *= 1.01;
        }
        // Both floors, where the CPU runs both, and the one picked.
        let mut floors: Vec<Floor> = vec![floor_soft, h.floor];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse4.1") {
            floors.push(floor_sse41);
        }
        for ms in values {
            let x = log_position(ms, per_ln);
            for floor in &floors {
                // SAFETY: the SSE4.1 floor is in the list only where the CPU
                // has SSE4.1.
                let f = unsafe { floor(x) };
                assert_eq!(f.to_bits(), x.floor().to_bits(), "{ms} ms");
                assert_eq!(bucket_at(f), log_bucket(ms, per_ln), "{ms} ms");
            }
        }
    }

    #[test]
    fn the_histogram_counts_every_event_in_its_bucket() {
        let h = LogHistogram::new();
        let mut rng = Xoroshiro::new(1);
        for _ in 0..500 {
            h.record(185_000, &mut rng);
        }
        h.record(44_000_000, &mut rng);
        let mut sum = vec![0; h.buckets()];
        h.add_to(&mut sum);
        assert_eq!(sum.iter().sum::<u64>(), 501);
        let i = log_bucket(0.185, log_per_ln());
        assert_eq!(sum[i], 500);
        assert!((h.value(i) as f64 / 185_000.0 - 1.0).abs() < 0.0091);
    }

    #[test]
    fn the_timer_lock_is_free_after_each_reading() {
        struct Fixed;
        impl Clock for Fixed {
            fn now(&self) -> u64 {
                42
            }
            fn sleep_until(&self, _: u64) -> Result<(), crate::rt::clock::SleepError> {
                Ok(())
            }
        }
        let t = TimerLock::new();
        assert_eq!(t.read(&Fixed, |v| v + 1), 43);
        assert!(!t.held.load(Ordering::Relaxed));
        assert_eq!(t.read(&Fixed, |v| v), 42);
    }
}
