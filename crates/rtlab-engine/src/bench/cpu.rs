//! The cpu bench: prime search by trial division, sysbench's `cpu` test.
//!
//! One event checks every number `c` in `3..max_prime` by dividing it by
//! `2..=⌊√c⌋` until a divisor is found, exactly sysbench's loop (same numbers,
//! same divisions, and the same machine work as its compiled form: see
//! `no_divisor_up_to` and `rem`). Unlike sysbench, the count is not thrown away: the limit goes
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
        // Through i64, whose conversions are one instruction each way on
        // x86-64 (as in sysbench's compiled loop); u64's take a dozen.
        let t = (c as i64 as f64).sqrt() as i64 as u64;
        n += u64::from(no_divisor_up_to(c, t));
    }
    n + u64::from(max_prime > 2)
}

/// Whether no `l` in `2..=t` divides `c`, trying them in order and stopping at
/// the first divisor. The first try, by 2, is a test of the low bit, as the
/// compiler makes it of sysbench's loop (which starts at the constant 2): the
/// same question, answered without a division. The others are divisions, one
/// per `l`, as in sysbench.
#[inline(always)]
fn no_divisor_up_to(c: u64, t: u64) -> bool {
    if t < 2 {
        return true;
    }
    if c.is_multiple_of(2) {
        return false;
    }
    let mut l = 3;
    while l <= t {
        if rem(c, l) == 0 {
            return false;
        }
        l += 1;
    }
    true
}

/// `c % l` (`l` > 0) by one 64-bit division, the instruction sysbench's
/// compiled loop uses. Left to itself, the compiler tests on x86-64 whether
/// both operands fit in 32 bits and then divides in 32 bits, which is faster
/// on some processors (13% more events/s here on an AMD EPYC) and would make
/// the events/s incomparable with sysbench's.
#[inline(always)]
fn rem(c: u64, l: u64) -> u64 {
    debug_assert!(l > 0);
    #[cfg(target_arch = "x86_64")]
    {
        let r: u64;
        // SAFETY: `div` divides rdx:rax by a register and touches no memory;
        // with rdx = 0 and a divisor above 0 (every caller's `l` is 3 or more)
        // the quotient fits in rax, so it cannot fault.
        unsafe {
            std::arch::asm!(
                "div {l}",
                l = in(reg) l,
                inout("rax") c => _,
                inout("rdx") 0u64 => r,
                options(pure, nomem, nostack),
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        c % l
    }
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

super::compiled_here!(Cpu);

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
    fn the_64_bit_division_gives_the_remainder() {
        for (c, l) in [
            (10, 3),
            (9, 3),
            (u64::MAX, 3),
            (1 << 40, 7),
            (12_345_678_901, 97),
        ] {
            assert_eq!(rem(c, l), c % l, "{c} % {l}");
        }
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
