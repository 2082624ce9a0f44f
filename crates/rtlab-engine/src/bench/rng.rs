//! A small, fast pseudo-random generator for workloads (xorshift64*, seeded
//! through splitmix64). Not for cryptography; statistically fine for picking
//! offsets and mutexes.

/// A xorshift64* generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from any seed (0 included).
    pub fn new(seed: u64) -> Self {
        // splitmix64 spreads similar seeds (thread indices) far apart.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    /// A generator seeded from the monotonic clock and `salt` (a thread index).
    pub fn from_clock(salt: u64) -> Self {
        use crate::rt::clock::{Clock, ClockId, SystemClock};
        Rng::new(SystemClock::new(ClockId::Monotonic).now() ^ salt.wrapping_mul(0x2545_F491))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for the
    /// ranges used here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A number in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;
    use proptest::prelude::*;

    #[test]
    fn spreads_over_the_range() {
        let mut r = Rng::new(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[r.below(10) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }

    proptest! {
        #[test]
        fn below_stays_in_range(seed: u64, n in 1u64..u64::MAX) {
            let mut r = Rng::new(seed);
            for _ in 0..20 {
                prop_assert!(r.below(n) < n);
                let u = r.unit();
                prop_assert!((0.0..1.0).contains(&u));
            }
        }
    }
}
