//! A bounded time series that keeps the maximum of each block of samples, for
//! scatter plots. Fixed capacity, allocated up front; when it fills, adjacent points
//! are merged (keeping the larger) and the block doubles, so a run of any length
//! fits without allocating and without losing a peak.

use serde::{Deserialize, Serialize};

/// One point of a [`MaxTrace`]: the block starting at sample `first_sample` whose
/// largest value was `max_ns`, observed at `offset_ns` from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TracePoint {
    /// Index of the first sample of the block.
    pub first_sample: u64,
    /// Time of the largest sample, from the start of the series (ns).
    pub offset_ns: u64,
    /// Largest value in the block (ns).
    pub max_ns: u64,
}

/// Per-block maxima with a fixed number of points.
#[derive(Debug, Clone)]
pub struct MaxTrace {
    points: Vec<TracePoint>,
    len: usize,
    block: u64,
    in_block: u64,
    samples: u64,
}

impl MaxTrace {
    /// A trace of at most `capacity` points (at least 2), one point per sample until
    /// it fills.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(2);
        MaxTrace {
            points: vec![TracePoint::default(); capacity],
            len: 0,
            block: 1,
            in_block: 0,
            samples: 0,
        }
    }

    /// Adds one sample taken at `offset_ns`. Never allocates.
    #[inline]
    pub fn record(&mut self, offset_ns: u64, value_ns: u64) {
        if self.in_block == 0 {
            if self.len == self.points.len() {
                self.compact();
            }
            self.points[self.len] = TracePoint {
                first_sample: self.samples,
                offset_ns,
                max_ns: value_ns,
            };
            self.len += 1;
        } else {
            let p = &mut self.points[self.len - 1];
            if value_ns > p.max_ns {
                p.max_ns = value_ns;
                p.offset_ns = offset_ns;
            }
        }
        self.samples += 1;
        self.in_block += 1;
        if self.in_block == self.block {
            self.in_block = 0;
        }
    }

    /// Merges adjacent pairs and doubles the block size.
    fn compact(&mut self) {
        let half = self.len / 2;
        for i in 0..half {
            let (a, b) = (self.points[2 * i], self.points[2 * i + 1]);
            let keep = if b.max_ns > a.max_ns { b } else { a };
            self.points[i] = TracePoint {
                first_sample: a.first_sample,
                ..keep
            };
        }
        if self.len % 2 == 1 {
            self.points[half] = self.points[self.len - 1];
            self.len = half + 1;
        } else {
            self.len = half;
        }
        self.block *= 2;
    }

    /// Back to empty, writing every point (so its pages are present).
    pub fn reset(&mut self) {
        self.points.fill(TracePoint::default());
        self.len = 0;
        self.block = 1;
        self.in_block = 0;
        self.samples = 0;
    }

    /// The most points kept.
    pub fn capacity(&self) -> usize {
        self.points.len()
    }

    /// Samples per point at present.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// The points gathered so far.
    pub fn points(&self) -> &[TracePoint] {
        &self.points[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_every_sample_until_full() {
        let mut t = MaxTrace::new(8);
        for i in 0..8 {
            t.record(i * 10, i);
        }
        assert_eq!(t.points().len(), 8);
        assert_eq!(t.points()[3].max_ns, 3);
        assert_eq!(t.block(), 1);
    }

    proptest! {
        #[test]
        fn never_loses_the_maximum(values in proptest::collection::vec(0u64..1_000_000, 1..2000), cap in 2usize..64) {
            let mut t = MaxTrace::new(cap);
            for (i, &v) in values.iter().enumerate() { t.record(i as u64, v); }
            prop_assert!(t.points().len() <= cap);
            let max = *values.iter().max().unwrap();
            prop_assert_eq!(t.points().iter().map(|p| p.max_ns).max().unwrap(), max);
            // Points are in sample order and every maximum is a real sample value
            // at the recorded offset.
            for w in t.points().windows(2) { prop_assert!(w[0].first_sample < w[1].first_sample); }
            for p in t.points() { prop_assert_eq!(values[p.offset_ns as usize], p.max_ns); }
        }
    }
}
