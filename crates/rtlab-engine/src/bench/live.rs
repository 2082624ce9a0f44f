//! What a bench run shows while it runs: each thread's counters, published
//! after every event with relaxed stores, and, when interval reports are asked
//! for, a coarse histogram of its event times, so that the reporting thread can
//! give the rates and a percentile of each interval without touching the
//! threads' own statistics.

use super::Tally;
use crate::stats::loglin::LogLinear;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often to report while running, and which percentile of the event times
/// each report gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Report {
    /// Interval between reports (zero: none).
    pub every: Duration,
    /// Percentile (0-100) of the interval's event times in each report; 0: none.
    pub percentile: f64,
    /// sysbench's accounting: each event's time goes into sysbench's latency
    /// histogram, whose cost is part of an event's, as sysbench does unless
    /// `--percentile=0`. The lean accounting has no such histogram.
    pub latency_histogram: bool,
}

impl Report {
    /// No reports.
    pub const NONE: Report = Report {
        every: Duration::ZERO,
        percentile: 0.0,
        latency_histogram: true,
    };
}

/// Totals over all threads at one moment of the run, for interval reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Time since the start (ns).
    pub elapsed_ns: u64,
    /// Events so far.
    pub events: u64,
    /// Work so far.
    pub tally: Tally,
    /// Threads still running.
    pub running: u64,
    /// The [`Report::percentile`] of the times of the events that ended since
    /// the previous report (ns, within 1/32 of the value); 0 when none ended
    /// or no percentile was asked for.
    pub pct_ns: u64,
}

/// The buckets of [`IntervalHist`]: exact below 32 ns, then 32 per power of
/// two (values within 1/32); from 2^40 ns (18 minutes) up, the last one.
const LAYOUT: LogLinear = LogLinear {
    sub_bits: 5,
    top_bit: 40,
};
/// Buckets of [`IntervalHist`].
const BUCKETS: usize = LAYOUT.buckets();

/// The bucket of `ns`.
#[inline]
fn bucket(ns: u64) -> usize {
    LAYOUT.bucket(ns)
}

/// The largest value of bucket `i`.
fn bucket_top(i: usize) -> u64 {
    LAYOUT.low(i + 1) - 1
}

/// A thread's event times for interval percentiles: cumulative counts, written
/// by its thread alone (a plain load and store, no locked instruction) and read
/// by the reporting thread.
pub(super) struct IntervalHist {
    counts: Box<[AtomicU64]>,
}

impl IntervalHist {
    pub(super) fn new() -> Self {
        IntervalHist {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Counts one event of `ns`. Only the owning thread calls this.
    #[inline]
    pub(super) fn record(&self, ns: u64) {
        let c = &self.counts[bucket(ns)];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds the counts so far to `sum`.
    fn add_to(&self, sum: &mut [u64]) {
        for (s, c) in sum.iter_mut().zip(self.counts.iter()) {
            *s += c.load(Ordering::Relaxed);
        }
    }
}

/// Histograms whose counts so far a reporting thread can add up while they
/// are written: every thread's [`IntervalHist`], or sysbench's histogram.
pub(super) trait Counts {
    /// Buckets.
    fn buckets(&self) -> usize;
    /// Adds the counts so far to `sum` (one per bucket).
    fn add_to(&self, sum: &mut [u64]);
    /// The value (ns) that stands for bucket `i`.
    fn value(&self, i: usize) -> u64;
}

impl Counts for [IntervalHist] {
    fn buckets(&self) -> usize {
        BUCKETS
    }

    fn add_to(&self, sum: &mut [u64]) {
        for h in self {
            h.add_to(sum);
        }
    }

    fn value(&self, i: usize) -> u64 {
        bucket_top(i)
    }
}

/// Interval percentiles over all threads: the counts at the previous report.
pub(super) struct Percentiles {
    prev: Vec<u64>,
    now: Vec<u64>,
}

impl Percentiles {
    /// For a histogram of `buckets` buckets.
    pub(super) fn new(buckets: usize) -> Self {
        Percentiles {
            prev: vec![0; buckets],
            now: vec![0; buckets],
        }
    }

    /// Percentile `p` of the events counted in `hist` since the last call;
    /// sysbench's rank rule (the value at which the running count reaches
    /// `floor(n × p / 100 + 0.5)`, at least 1).
    pub(super) fn since_last(&mut self, hist: &(impl Counts + ?Sized), p: f64) -> u64 {
        self.now.iter_mut().for_each(|c| *c = 0);
        hist.add_to(&mut self.now);
        let n: u64 = self
            .now
            .iter()
            .zip(&self.prev)
            .map(|(a, b)| a.saturating_sub(*b))
            .sum();
        let mut result = 0;
        if n > 0 && p > 0.0 {
            let rank = ((n as f64 * p / 100.0 + 0.5).floor() as u64).max(1);
            let mut seen = 0;
            for (i, (a, b)) in self.now.iter().zip(&self.prev).enumerate() {
                seen += a.saturating_sub(*b);
                if seen >= rank {
                    result = hist.value(i);
                    break;
                }
            }
        }
        std::mem::swap(&mut self.prev, &mut self.now);
        result
    }
}

/// Live counters of one thread: events and tally, stored relaxed after every
/// event, read by the reporting thread. Padded to its own cache lines.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct LiveSlot {
    events: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    fsyncs: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    ops: AtomicU64,
}

impl LiveSlot {
    #[inline]
    pub(super) fn publish(&self, events: u64, t: &Tally) {
        self.events.store(events, Ordering::Relaxed);
        self.reads.store(t.reads, Ordering::Relaxed);
        self.writes.store(t.writes, Ordering::Relaxed);
        self.fsyncs.store(t.fsyncs, Ordering::Relaxed);
        self.bytes_read.store(t.bytes_read, Ordering::Relaxed);
        self.bytes_written.store(t.bytes_written, Ordering::Relaxed);
        self.ops.store(t.ops, Ordering::Relaxed);
    }

    pub(super) fn read(&self) -> (u64, Tally) {
        (
            self.events.load(Ordering::Relaxed),
            Tally {
                reads: self.reads.load(Ordering::Relaxed),
                writes: self.writes.load(Ordering::Relaxed),
                fsyncs: self.fsyncs.load(Ordering::Relaxed),
                bytes_read: self.bytes_read.load(Ordering::Relaxed),
                bytes_written: self.bytes_written.load(Ordering::Relaxed),
                ops: self.ops.load(Ordering::Relaxed),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_hold_their_values() {
        let mut last = 0;
        for v in 0..5000u64 {
            assert!(bucket(v) >= last, "{v}");
            last = bucket(v);
        }
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12_345, (1 << LAYOUT.top_bit) - 1]) {
            let i = bucket(v);
            let top = bucket_top(i);
            assert!(
                top >= v && (top - v) as f64 <= v as f64 / 32.0,
                "{v}: {top}"
            );
            assert_eq!(bucket(top), i);
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn interval_percentiles_count_only_the_new_events() {
        let h = [IntervalHist::new(), IntervalHist::new()];
        let mut p = Percentiles::new(BUCKETS);
        let h = &h[..];
        for v in 1..=100 {
            h[(v % 2) as usize].record(v * 1000);
        }
        let p95 = p.since_last(h, 95.0);
        assert!((95_000..=98_000).contains(&p95), "{p95}");
        assert_eq!(p.since_last(h, 95.0), 0, "nothing new");
        h[0].record(7);
        assert_eq!(p.since_last(h, 50.0), 7);
        h[1].record(7);
        assert_eq!(p.since_last(h, 0.0), 0);
    }
}
