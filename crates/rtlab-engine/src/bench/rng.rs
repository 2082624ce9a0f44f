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

/// xoroshiro128+ (Blackman and Vigna, 2016, with the shifts and rotations
/// 55, 14, 36 of its first publication), the generator sysbench 1.0 draws its
/// random numbers from; [`Xoroshiro::unit`] turns 52 of its bits into a double
/// in `[0, 1)` as sysbench does. Used where a workload must cost what
/// sysbench's costs per random number.
#[derive(Debug, Clone)]
pub struct Xoroshiro([u64; 2]);

impl Xoroshiro {
    /// The all-zero state, which draws zeros for ever: what the memory
    /// bench's thread-local loop state holds before a thread's first event
    /// copies its generator in. Never drawn from.
    pub(super) const ZERO: Xoroshiro = Xoroshiro([0; 2]);

    /// A generator from any seed (its state is never all zero).
    pub fn new(seed: u64) -> Self {
        let mut r = Rng::new(seed);
        Xoroshiro([r.next_u64(), r.next_u64() | 1])
    }

    /// A generator seeded from the monotonic clock and `salt`.
    pub fn from_clock(salt: u64) -> Self {
        Xoroshiro::new(Rng::from_clock(salt).next_u64())
    }

    /// The next 64 bits: the sum of the two words of state, then one step.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, mut s1] = self.0;
        let out = s0.wrapping_add(s1);
        s1 ^= s0;
        let mut a = s0.rotate_left(55) ^ s1;
        // SAFETY: an empty assembly block with one register in and out: no
        // instruction, no memory. It keeps the optimiser from reassociating
        // the XORs.
        unsafe {
            std::arch::asm!("/* {0} */", inout(reg) a, options(pure, nomem, nostack, preserves_flags))
        };
        self.0 = [a ^ (s1 << 14), s1.rotate_left(36)];
        out
    }

    /// A double in `[0, 1)`: the top 52 bits as the fraction of a number in
    /// `[1, 2)`, minus 1.
    #[inline(always)]
    pub fn unit(&mut self) -> f64 {
        f64::from_bits(0x3FF << 52 | self.next_u64() >> 12) - 1.0
    }

    /// [`Self::unit`] with the state loaded from memory before the step and
    /// stored after it, word by word: what sysbench's loops do where a word
    /// of the block is loaded or stored between two draws (its generator
    /// lives in thread-local memory and the access is a compiler barrier), so
    /// that each draw waits for the previous one's stores.
    #[inline(always)]
    pub fn unit_in_memory(&mut self) -> f64 {
        let [p0, p1] = &mut self.0;
        // SAFETY: volatile accesses through references to this generator's
        // own words: valid, aligned and not shared.
        let mut x =
            unsafe { Xoroshiro([std::ptr::read_volatile(p0), std::ptr::read_volatile(p1)]) };
        let u = x.unit();
        // SAFETY: as above.
        unsafe {
            std::ptr::write_volatile(p0, x.0[0]);
            std::ptr::write_volatile(p1, x.0[1]);
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::{Rng, Xoroshiro};
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

    #[test]
    fn xoroshiro_follows_its_definition() {
        // From state (1, 2): the output is the sum, then the state steps.
        let mut x = Xoroshiro([1, 2]);
        assert_eq!(x.next_u64(), 3);
        let s1 = 2u64 ^ 1;
        assert_eq!(
            x.0,
            [1u64.rotate_left(55) ^ s1 ^ (s1 << 14), s1.rotate_left(36)]
        );
        let mut x = Xoroshiro::new(9);
        for _ in 0..1000 {
            assert!((0.0..1.0).contains(&x.unit()));
        }
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
