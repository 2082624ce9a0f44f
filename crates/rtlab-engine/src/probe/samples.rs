//! Every wake-up of a measuring thread, handed to the main thread while it runs
//! (what cyclictest's `-v` prints): a bounded single-producer, single-consumer
//! ring per thread.
//!
//! The ring is allocated (and every slot written) before measuring. The
//! measuring thread pushes with relaxed stores and one release store, never
//! allocates, locks or waits: when the main thread has fallen behind and the
//! ring is full, the sample is dropped and counted instead.

use std::sync::atomic::{AtomicU64, Ordering};

/// One wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    /// Wake-up number of the thread (0-based).
    pub cycle: u64,
    /// How late it woke (ns).
    pub latency_ns: u64,
    /// When it woke, on the probe's clock (ns).
    pub at_ns: u64,
}

#[derive(Debug, Default)]
struct Slot {
    cycle: AtomicU64,
    latency_ns: AtomicU64,
    at_ns: AtomicU64,
}

/// A bounded ring of [`Sample`]s from one producer (the measuring thread) to one
/// consumer (the main thread).
#[derive(Debug)]
pub struct SampleRing {
    slots: Box<[Slot]>,
    /// Samples pushed so far (the producer's index).
    tail: AtomicU64,
    /// Samples taken so far (the consumer's index).
    head: AtomicU64,
    /// Samples the producer found no room for.
    dropped: AtomicU64,
}

impl SampleRing {
    /// A ring of at least `capacity` samples (rounded up to a power of two, at
    /// least 2), every slot written.
    pub fn new(capacity: usize) -> Self {
        let n = capacity.max(2).next_power_of_two();
        SampleRing {
            slots: (0..n).map(|_| Slot::default()).collect(),
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// How many samples it holds at most.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, index: u64) -> &Slot {
        &self.slots[(index as usize) & (self.slots.len() - 1)]
    }

    /// Hands `s` to the consumer; counts it as dropped when the ring is full.
    /// Only the one producer thread may call this.
    #[inline]
    pub fn push(&self, s: Sample) {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) >= self.slots.len() as u64 {
            let d = self.dropped.load(Ordering::Relaxed);
            self.dropped.store(d + 1, Ordering::Relaxed);
            return;
        }
        let slot = self.slot(tail);
        slot.cycle.store(s.cycle, Ordering::Relaxed);
        slot.latency_ns.store(s.latency_ns, Ordering::Relaxed);
        slot.at_ns.store(s.at_ns, Ordering::Relaxed);
        self.tail.store(tail + 1, Ordering::Release);
    }

    /// Appends every sample pushed since the last call to `out`, oldest first,
    /// and returns how many. Only the one consumer thread may call this.
    pub fn drain_into(&self, out: &mut Vec<Sample>) -> usize {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        for i in head..tail {
            let slot = self.slot(i);
            out.push(Sample {
                cycle: slot.cycle.load(Ordering::Relaxed),
                latency_ns: slot.latency_ns.load(Ordering::Relaxed),
                at_ns: slot.at_ns.load(Ordering::Relaxed),
            });
        }
        self.head.store(tail, Ordering::Release);
        (tail - head) as usize
    }

    /// Samples dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Empty again, nothing dropped (before measuring; no thread may use it).
    pub fn reset(&self) {
        self.tail.store(0, Ordering::Relaxed);
        self.head.store(0, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(cycle: u64) -> Sample {
        Sample {
            cycle,
            latency_ns: cycle * 10,
            at_ns: cycle * 1000,
        }
    }

    #[test]
    fn samples_come_out_in_order_and_a_full_ring_drops_and_counts() {
        let r = SampleRing::new(3);
        assert_eq!(r.capacity(), 4);
        for c in 0..6 {
            r.push(s(c));
        }
        assert_eq!(r.dropped(), 2);
        let mut out = Vec::new();
        assert_eq!(r.drain_into(&mut out), 4);
        assert_eq!(out, (0..4).map(s).collect::<Vec<_>>());
        // Room again after the drain, and the ring wraps.
        for c in 6..9 {
            r.push(s(c));
        }
        out.clear();
        assert_eq!(r.drain_into(&mut out), 3);
        assert_eq!(out[0], s(6));
        assert_eq!(r.dropped(), 2);
        r.reset();
        assert_eq!((r.dropped(), r.drain_into(&mut out)), (0, 0));
    }

    #[test]
    fn a_producer_thread_and_a_consumer_lose_nothing_they_do_not_count() {
        let r = std::sync::Arc::new(SampleRing::new(64));
        let p = std::sync::Arc::clone(&r);
        let producer = std::thread::spawn(move || {
            for c in 0..100_000 {
                p.push(s(c));
            }
        });
        let mut got = Vec::new();
        while !producer.is_finished() {
            r.drain_into(&mut got);
        }
        producer.join().unwrap();
        r.drain_into(&mut got);
        assert_eq!(got.len() as u64 + r.dropped(), 100_000);
        assert!(got.windows(2).all(|w| w[0].cycle < w[1].cycle));
        assert!(got.iter().all(|x| x.latency_ns == x.cycle * 10));
    }
}
