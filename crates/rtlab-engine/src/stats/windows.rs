//! A run cut into time windows, each with a coarse histogram, so that the
//! analysis can tell how much a figure would move if the run were made again
//! (a block bootstrap over the windows: wake-ups close in time are alike, so
//! the windows, not the single values, are what is resampled).
//!
//! [`Windows`] has a fixed number of windows ([`WINDOWS`]), cut by sample
//! index: window `i` holds samples `i·block ..< (i+1)·block`. It starts with a
//! block of one sample; when every window is full, adjacent windows are added
//! pairwise (histograms add) and the block doubles, as [`super::trace::MaxTrace`]
//! compacts. So a run of any length fits in fixed memory, with between
//! `WINDOWS / 2` and `WINDOWS` windows once it has that many samples, and no
//! count is ever lost. Each window keeps the exact [`Moments`] of its values
//! and their counts in [`BUCKETS`] log-linear buckets: exact below 8 ns, then
//! 8 buckets per power of two (a bucket is at most 1/8 of its values wide),
//! values from 2^34 ns (17 s) in the last bucket.
//!
//! Memory: [`Windows::BYTES`] (about 34 KiB), allocated by [`Windows::new`];
//! recording is integer arithmetic on that memory and never allocates.

use super::loglin::LogLinear;
use super::Moments;
use serde::{Deserialize, Serialize};

/// Windows kept at most (a power of two).
pub const WINDOWS: usize = 32;
/// Sub-buckets per power of two, as a power of two: 8 sub-buckets.
pub const SUB_BITS: u32 = 3;
/// The buckets: values from 2^34 ns (17.2 s) share the last one.
const LAYOUT: LogLinear = LogLinear {
    sub_bits: SUB_BITS,
    top_bit: 34,
};
/// Buckets of one window's histogram.
pub const BUCKETS: usize = LAYOUT.buckets();

/// The bucket of `ns`: exact below 8 ns, then 8 buckets per power of two.
#[inline]
pub fn bucket(ns: u64) -> usize {
    LAYOUT.bucket(ns)
}

/// The smallest value of bucket `i` (`i <= BUCKETS`; `bucket_low(BUCKETS)` is
/// the end of the last bucket's nominal range, 2^34 ns).
pub fn bucket_low(i: usize) -> u64 {
    LAYOUT.low(i)
}

/// One window: the exact moments of its values and their bucket counts.
#[derive(Debug, Clone, Copy)]
struct Window {
    moments: Moments,
    counts: [u32; BUCKETS],
}

impl Window {
    const EMPTY: Window = Window {
        moments: Moments {
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
        },
        counts: [0; BUCKETS],
    };

    /// Adds another window's values. Counts saturate at 2^32 − 1: a window
    /// holds one block, and a block passes 2^32 values only after 2^36 values
    /// in all (19 hours of a bench at a million events a second per thread).
    fn add(&mut self, o: &Window) {
        self.moments.merge(&o.moments);
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a = a.saturating_add(*b);
        }
    }
}

/// A run cut into at most [`WINDOWS`] windows of equal sample counts (the last
/// one may be partial), each with its moments and coarse histogram.
#[derive(Debug, Clone)]
pub struct Windows {
    windows: Box<[Window]>,
    /// Windows in use; those from `len` on are empty.
    len: usize,
    /// Samples per window.
    block: u64,
    /// Samples in the last window, `0` when a new one is due.
    in_block: u64,
}

impl Default for Windows {
    fn default() -> Self {
        Self::new()
    }
}

impl Windows {
    /// The memory of one [`Windows`], in bytes.
    pub const BYTES: usize = WINDOWS * std::mem::size_of::<Window>();

    /// Allocates every window (see [`Windows::BYTES`]).
    pub fn new() -> Self {
        Windows {
            windows: vec![Window::EMPTY; WINDOWS].into_boxed_slice(),
            len: 0,
            block: 1,
            in_block: 0,
        }
    }

    /// Adds one value. Integer arithmetic on memory allocated beforehand; when
    /// the windows are full, they are added pairwise first (a few thousand
    /// additions, once each time the run doubles).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.in_block == 0 {
            self.next_window();
        }
        let w = &mut self.windows[self.len - 1];
        w.moments.record(ns);
        let c = &mut w.counts[bucket(ns)];
        *c = c.saturating_add(1);
        self.in_block += 1;
        if self.in_block == self.block {
            self.in_block = 0;
        }
    }

    /// Starts the next window, compacting first when all are in use. Out of
    /// line: it runs once a block.
    #[cold]
    #[inline(never)]
    fn next_window(&mut self) {
        if self.len == self.windows.len() {
            self.compact();
        }
        if self.in_block == 0 {
            self.len += 1;
        }
    }

    /// Adds adjacent windows pairwise (an odd last one stays alone) and doubles
    /// the block.
    fn compact(&mut self) {
        let half = self.len / 2;
        for i in 0..half {
            let b = self.windows[2 * i + 1];
            self.windows[i] = self.windows[2 * i];
            self.windows[i].add(&b);
        }
        if self.len % 2 == 1 {
            self.windows[half] = self.windows[self.len - 1];
        }
        let len = half + self.len % 2;
        self.windows[len..].fill(Window::EMPTY);
        self.len = len;
        self.block *= 2;
        self.in_block = self.last_fill();
    }

    /// Samples in the last window when it is partial, else 0.
    fn last_fill(&self) -> u64 {
        match self.len {
            0 => 0,
            n => self.windows[n - 1].moments.count % self.block,
        }
    }

    /// Back to empty, writing every window (so its pages are present).
    pub fn reset(&mut self) {
        self.windows.fill(Window::EMPTY);
        self.len = 0;
        self.block = 1;
        self.in_block = 0;
    }

    /// Samples per window at present.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// Windows in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The exact moments of every value recorded (the windows' added).
    pub fn moments(&self) -> Moments {
        let mut all = Moments::default();
        for w in &self.windows[..self.len] {
            all.merge(&w.moments);
        }
        all
    }

    /// Adds another run's windows, window by window (for the series of all
    /// threads): window `i` of both holds their samples `i·block ..`, so
    /// threads that wake at the same rate are added over the same time.
    /// The one with the smaller block is compacted to the other's first.
    pub fn merge(&mut self, o: &Windows) {
        if o.is_empty() {
            return;
        }
        while self.block < o.block {
            self.compact();
        }
        // Both blocks are powers of two and o.block <= self.block.
        let ratio = (self.block / o.block) as usize;
        for (j, w) in o.windows[..o.len].iter().enumerate() {
            self.windows[j / ratio].add(w);
        }
        self.len = self.len.max(o.len.div_ceil(ratio));
        self.in_block = self.last_fill();
    }

    /// The portable form: each window's moments and its buckets from the first
    /// to the last non-empty one.
    pub fn to_data(&self) -> WindowsData {
        WindowsData {
            block: self.block,
            sub_bits: SUB_BITS as u8,
            windows: self.windows[..self.len]
                .iter()
                .map(|w| {
                    let first = w.counts.iter().position(|&c| c > 0).unwrap_or(0);
                    let end = w
                        .counts
                        .iter()
                        .rposition(|&c| c > 0)
                        .map_or(first, |l| l + 1);
                    WindowData {
                        count: w.moments.count,
                        min_ns: w.moments.min,
                        max_ns: w.moments.max,
                        sum_ns: w.moments.sum as f64,
                        sum_sq: w.moments.sum_sq as f64,
                        first: first as u16,
                        counts: w.counts[first..end].iter().map(|&c| u64::from(c)).collect(),
                    }
                })
                .collect(),
        }
    }
}

/// The portable form of [`Windows`], as a run stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct WindowsData {
    /// Samples per window (the last one may hold fewer).
    pub block: u64,
    /// The bucket layout: 2^`sub_bits` buckets per power of two ([`SUB_BITS`]).
    pub sub_bits: u8,
    /// The windows in time order.
    pub windows: Vec<WindowData>,
}

/// One window of [`WindowsData`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct WindowData {
    /// Values in the window.
    pub count: u64,
    /// Smallest value (ns).
    pub min_ns: u64,
    /// Largest value (ns).
    pub max_ns: u64,
    /// Sum of the values (ns).
    pub sum_ns: f64,
    /// Sum of their squares (ns²).
    pub sum_sq: f64,
    /// Index of the first bucket in `counts`.
    pub first: u16,
    /// Counts of the buckets `first ..`, up to the last non-empty one.
    pub counts: Vec<u64>,
}

impl WindowsData {
    /// True when the run kept no windows (stored by an older rtlab, imported).
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Whether the layout is the one this rtlab reads ([`SUB_BITS`]) and every
    /// window's buckets lie within [`BUCKETS`].
    pub fn readable(&self) -> bool {
        self.sub_bits as u32 == SUB_BITS
            && self
                .windows
                .iter()
                .all(|w| w.first as usize + w.counts.len() <= BUCKETS)
    }

    /// Values in all windows (saturating: counts from a file may add up to
    /// more than 64 bits hold).
    pub fn count(&self) -> u64 {
        self.windows
            .iter()
            .fold(0u64, |a, w| a.saturating_add(w.count))
    }

    /// Adds another series' windows window by window, as [`Windows::merge`]
    /// does (for runs stored without a total, whose threads are merged).
    pub fn merge(&mut self, o: &WindowsData) {
        if o.windows.is_empty() {
            return;
        }
        if self.windows.is_empty() {
            *self = o.clone();
            return;
        }
        let (mut a, mut b) = (self.clone(), o.clone());
        if a.block < b.block {
            std::mem::swap(&mut a, &mut b);
        }
        let ratio = (a.block / b.block.max(1)).max(1) as usize;
        for (j, w) in b.windows.iter().enumerate() {
            let i = j / ratio;
            if i >= a.windows.len() {
                a.windows.push(WindowData::default());
            }
            a.windows[i].add(w);
        }
        *self = a;
    }
}

impl WindowData {
    /// Adds another window's values.
    fn add(&mut self, o: &WindowData) {
        if self.count == 0 {
            self.min_ns = o.min_ns;
        } else if o.count > 0 {
            self.min_ns = self.min_ns.min(o.min_ns);
        }
        self.max_ns = self.max_ns.max(o.max_ns);
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.sum_sq += o.sum_sq;
        if o.counts.is_empty() {
            return;
        }
        if self.counts.is_empty() {
            self.first = o.first;
        }
        let first = self.first.min(o.first) as usize;
        let end = (self.first as usize + self.counts.len()).max(o.first as usize + o.counts.len());
        let mut counts = vec![0; end - first];
        for (w, from) in [(&*self, self.first), (o, o.first)] {
            for (k, c) in w.counts.iter().enumerate() {
                counts[from as usize - first + k] += c;
            }
        }
        self.first = first as u16;
        self.counts = counts;
    }

    /// The count of bucket `i`.
    pub fn at(&self, i: usize) -> u64 {
        i.checked_sub(self.first as usize)
            .and_then(|k| self.counts.get(k))
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_ordered_and_at_most_an_eighth_wide() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(7), 7);
        assert_eq!(bucket(8), 8);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            let (lo, hi) = (bucket_low(i), bucket_low(i + 1));
            assert!(lo < hi, "{i}");
            assert_eq!(bucket(lo), i);
            assert_eq!(bucket(hi - 1), i);
            assert!((hi - lo) * 8 <= lo.max(8), "bucket {i}: {lo}..{hi}");
        }
        assert_eq!(bucket_low(BUCKETS), 1 << 34);
    }

    /// 34 KiB a thread: 32 windows of 1 KiB of counts and 64 bytes of moments.
    const _SMALL: () = assert!(Windows::BYTES <= 35 * 1024);

    #[test]
    fn fills_then_doubles_the_block() {
        let mut w = Windows::new();
        for v in 0..WINDOWS as u64 {
            w.record(v);
        }
        assert_eq!((w.len(), w.block()), (WINDOWS, 1));
        w.record(1_000);
        assert_eq!((w.len(), w.block()), (WINDOWS / 2 + 1, 2));
        let d = w.to_data();
        assert_eq!(d.windows[0].count, 2);
        assert_eq!((d.windows[0].min_ns, d.windows[0].max_ns), (0, 1));
        assert_eq!(d.windows[WINDOWS / 2].max_ns, 1_000);
        assert_eq!(d.count(), WINDOWS as u64 + 1);
    }

    #[test]
    fn reset_empties() {
        let mut w = Windows::new();
        for v in 0..1_000 {
            w.record(v);
        }
        w.reset();
        assert!(w.is_empty());
        assert_eq!(w.to_data().count(), 0);
        w.record(5);
        assert_eq!(w.to_data().windows[0].counts, vec![1]);
    }

    /// A value's bucket and its moments, as the windows keep them.
    fn expected(values: &[u64]) -> (Vec<u64>, Moments) {
        let mut counts = vec![0; BUCKETS];
        let mut m = Moments::default();
        for &v in values {
            counts[bucket(v)] += 1;
            m.record(v);
        }
        (counts, m)
    }

    fn totals(d: &WindowsData) -> (Vec<u64>, u64, u64, u64, f64) {
        let mut counts = vec![0; BUCKETS];
        for w in &d.windows {
            for (i, c) in counts.iter_mut().enumerate() {
                *c += w.at(i);
            }
        }
        let min = d.windows.iter().map(|w| w.min_ns).min().unwrap_or(u64::MAX);
        let max = d.windows.iter().map(|w| w.max_ns).max().unwrap_or(0);
        let sum = d.windows.iter().map(|w| w.sum_ns).sum();
        (counts, d.count(), min, max, sum)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// However often the windows compact, every value stays counted in its
        /// bucket, in sample order, and the windows hold one block each.
        #[test]
        fn compaction_keeps_every_count(values in proptest::collection::vec(0u64..1u64 << 36, 0..3_000)) {
            let mut w = Windows::new();
            for &v in &values { w.record(v); }
            let d = w.to_data();
            prop_assert!(d.readable());
            prop_assert!(d.windows.len() <= WINDOWS);
            let (counts, m) = expected(&values);
            // The run's moments are the windows', exactly.
            prop_assert_eq!(w.moments(), m);
            let (c, n, min, max, sum) = totals(&d);
            prop_assert_eq!(c, counts);
            prop_assert_eq!(n, m.count);
            if !values.is_empty() {
                prop_assert_eq!((min, max), (m.min, m.max));
                prop_assert!((sum - m.sum as f64).abs() <= 1e-9 * m.sum as f64);
            }
            // Window i holds samples i·block ..: its maximum is theirs.
            for (i, win) in d.windows.iter().enumerate() {
                let from = i * d.block as usize;
                let to = (from + d.block as usize).min(values.len());
                prop_assert_eq!(win.count as usize, to - from);
                prop_assert_eq!(win.max_ns, *values[from..to].iter().max().unwrap());
            }
            if values.len() >= WINDOWS {
                prop_assert!(d.windows.len() >= WINDOWS / 2);
            }
        }

        /// Merging two threads' windows (as for the total), in the engine or in
        /// the portable form, keeps every count.
        #[test]
        fn merging_keeps_every_count(
            a in proptest::collection::vec(0u64..1u64 << 30, 0..1_500),
            b in proptest::collection::vec(0u64..1u64 << 30, 0..1_500),
        ) {
            let (mut wa, mut wb) = (Windows::new(), Windows::new());
            for &v in &a { wa.record(v); }
            for &v in &b { wb.record(v); }
            let mut portable = wa.to_data();
            portable.merge(&wb.to_data());
            wa.merge(&wb);
            let all: Vec<u64> = a.iter().chain(&b).copied().collect();
            let (counts, m) = expected(&all);
            prop_assert_eq!(wa.moments(), m);
            for d in [wa.to_data(), portable] {
                prop_assert!(d.windows.len() <= WINDOWS);
                let (c, n, min, max, _) = totals(&d);
                prop_assert_eq!(&c, &counts);
                prop_assert_eq!(n, m.count);
                if !all.is_empty() {
                    prop_assert_eq!((min, max), (m.min, m.max));
                }
            }
        }
    }
}
