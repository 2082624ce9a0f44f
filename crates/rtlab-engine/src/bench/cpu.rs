//! The cpu bench: prime search by trial division, sysbench's `cpu` test.
//!
//! One event checks every number `c` in `3..max_prime` by dividing it by
//! `2..=⌊√c⌋` until a divisor is found, exactly sysbench's loop (same numbers,
//! same divisions, and on x86-64 the same machine work as its compiled form,
//! written out in assembly). Unlike sysbench, the count is not thrown away: the limit goes
//! in and the count comes out through `black_box`, so the optimiser can neither
//! drop nor hoist the work, and the count (plus the prime 2, i.e. the primes below
//! `max_prime`) is recorded as a correctness check.

use super::{EventCtl, EventError, Tally, Workload};
use std::hint::black_box;

/// The number of primes below `max_prime`, found the way sysbench searches.
pub fn count_primes(max_prime: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    let n = x86_64::odd_primes_from_3(max_prime);
    #[cfg(not(target_arch = "x86_64"))]
    let n = portable::odd_primes_from_3(max_prime);
    n + u64::from(max_prime > 2)
}

/// sysbench's search as its compiled loop runs on x86-64, instruction for
/// instruction (gcc 12 at -O2, sysbench 1.0.20), with one addition: a count
/// of the numbers found prime, which sysbench throws away. The compiler here
/// would compare `l` with `⌊√c⌋` as integers; sysbench's loop converts each
/// `l` to a double and compares it with `√c`, and that work is part of an
/// event's. Each division is a 64-bit one, as in sysbench: left to itself,
/// the compiler would divide in 32 bits when both operands fit, which is
/// faster on some processors (13% more events/s on an AMD EPYC).
#[cfg(target_arch = "x86_64")]
mod x86_64 {
    /// The primes in `3..max_prime`: for each `c`, `√c` as a double (`c`
    /// converted as a signed number; a negative one, never here, takes the
    /// library's `sqrt` in sysbench and the instruction here); below 2, `c`
    /// is prime; an even `c` is not (the first try, by 2, is a test of the
    /// low bit, as the compiler makes it of a loop that starts at the
    /// constant 2); then `l` from 3 while `l ≤ √c` in floating point (`l`
    /// from 2^63, never here, converted as an unsigned number), one 64-bit
    /// division each, until one leaves no remainder.
    pub(super) fn odd_primes_from_3(max_prime: u64) -> u64 {
        let primes: u64;
        // SAFETY: registers only: no memory is touched, and every register
        // written is an output or declared clobbered.
        unsafe {
            std::arch::asm!(
                "xor r10d, r10d",
                "cmp r9, 3",
                "jbe 9f",
                "mov r8d, 3",
                "pxor xmm3, xmm3",
                // The outer loop 16 bytes past a 64-byte boundary, the inner
                // one (after `.p2align 3`) 56 past, as in sysbench's binary:
                // where a loop lies against those boundaries sets how fast the
                // front end feeds it.
                "jmp 2f",
                ".p2align 6",
                ".skip 16, 0x90",
                "2:",
                "pxor xmm0, xmm0",
                "cvtsi2sd xmm0, r8",
                "ucomisd xmm3, xmm0",
                "ja 8f",
                "sqrtsd xmm0, xmm0",
                "3:",
                "comisd xmm0, xmm2",
                "jb 6f",
                "test r8b, 1",
                "je 7f",
                "mov ecx, 2",
                "jmp 5f",
                ".p2align 3",
                "4:",
                "pxor xmm1, xmm1",
                "cvtsi2sd xmm1, rcx",
                "comisd xmm0, xmm1",
                "jb 6f",
                "22:",
                "mov rax, r8",
                "xor edx, edx",
                "div rcx",
                "test rdx, rdx",
                "je 7f",
                "5:",
                "add rcx, 1",
                "jns 4b",
                "mov rsi, rcx",
                "mov rdx, rcx",
                "pxor xmm1, xmm1",
                "shr rsi, 1",
                "and edx, 1",
                "or rsi, rdx",
                "cvtsi2sd xmm1, rsi",
                "addsd xmm1, xmm1",
                "comisd xmm0, xmm1",
                "jae 22b",
                "6:",
                "add r10, 1",
                "7:",
                "add r8, 1",
                "cmp r8, r9",
                "jne 2b",
                "jmp 9f",
                "8:",
                "sqrtsd xmm0, xmm0",
                "jmp 3b",
                "9:",
                in("r9") max_prime,
                in("xmm2") 2.0f64,
                out("r10") primes,
                out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("r8") _,
                out("xmm0") _, out("xmm1") _, out("xmm3") _,
                options(nomem, nostack),
            );
        }
        primes
    }
}

/// The search in Rust, for other machines: the same numbers and divisions.
#[cfg(any(test, not(target_arch = "x86_64")))]
mod portable {
    /// The primes in `3..max_prime`.
    pub(super) fn odd_primes_from_3(max_prime: u64) -> u64 {
        let mut n = 0;
        for c in 3..max_prime {
            // ⌊√c⌋ in floating point, as sysbench computes it; exact for c <
            // 2^52. Through i64, whose conversions are one instruction each.
            let t = (c as i64 as f64).sqrt() as i64 as u64;
            n += u64::from(no_divisor_up_to(c, t));
        }
        n
    }

    /// Whether no `l` in `2..=t` divides `c`, trying them in order and
    /// stopping at the first divisor; the first try, by 2, a test of the low
    /// bit (see the x86-64 loop), the others one division each.
    fn no_divisor_up_to(c: u64, t: u64) -> bool {
        if t < 2 {
            return true;
        }
        if c.is_multiple_of(2) {
            return false;
        }
        let mut l = 3;
        while l <= t {
            if c.is_multiple_of(l) {
                return false;
            }
            l += 1;
        }
        true
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
            // The loop other machines run, beside the assembly one here.
            let portable = portable::odd_primes_from_3(m as u64) + u64::from(m > 2);
            assert_eq!(portable, primes_below[m], "portable, below {m}");
        }
    }
}
