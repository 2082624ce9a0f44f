//! The cpu bench: prime search by trial division, sysbench's `cpu` test.
//!
//! One event checks every number `c` in `3..max_prime` by dividing it by
//! `2..=⌊√c⌋` until a divisor is found, exactly sysbench's loop (same numbers,
//! same divisions). Unlike sysbench, the count is not thrown away: the limit goes
//! in and the count comes out through `black_box`, so the optimiser can neither
//! drop nor hoist the work, and the count (plus the prime 2, i.e. the primes below
//! `max_prime`) is recorded as a correctness check.

use super::{EventCtl, EventError, Tally, Workload};
use std::hint::black_box;

/// The number of primes below `max_prime`, found the way sysbench searches.
pub fn count_primes(max_prime: u64) -> u64 {
    let mut n = 0;
    for c in 3..max_prime {
        // ⌊√c⌋ in floating point, as sysbench computes it; exact for c < 2^52.
        let t = (c as f64).sqrt() as u64;
        let mut l = 2;
        while l <= t {
            if c % l == 0 {
                break;
            }
            l += 1;
        }
        if l > t {
            n += 1;
        }
    }
    n + u64::from(max_prime > 2)
}

/// The cpu workload.
#[derive(Debug, Clone, Copy)]
pub struct Cpu {
    /// Upper limit (exclusive) of the numbers checked (sysbench `--cpu-max-prime`).
    pub max_prime: u64,
}

impl Workload for Cpu {
    type Thread = ();
    fn thread(&self, _: usize) {}

    #[inline]
    fn event(&self, _: &mut (), tally: &mut Tally, _: &EventCtl) -> Result<bool, EventError> {
        tally.ops += black_box(count_primes(black_box(self.max_prime)));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_prime_counts() {
        assert_eq!(count_primes(2), 0);
        assert_eq!(count_primes(3), 1);
        assert_eq!(count_primes(10), 4);
        assert_eq!(count_primes(100), 25);
        assert_eq!(count_primes(2000), 303);
        assert_eq!(count_primes(10_000), 1229);
        assert_eq!(count_primes(20_000), 2262);
    }

    #[test]
    fn agrees_with_a_sieve() {
        let limit = 5000usize;
        let mut composite = vec![false; limit];
        let mut primes_below = vec![0u64; limit + 1];
        for i in 2..limit {
            primes_below[i + 1] = primes_below[i] + u64::from(!composite[i]);
            if !composite[i] {
                for j in (i * i..limit).step_by(i) {
                    composite[j] = true;
                }
            }
        }
        for m in [0, 1, 2, 3, 4, 5, 17, 18, 97, 1000, 4999] {
            assert_eq!(count_primes(m as u64), primes_below[m], "below {m}");
        }
    }
}
