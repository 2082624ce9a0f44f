//! `cpu`: busy arithmetic, with an optional duty cycle.

use super::{Ctx, LoadError};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Which arithmetic a `cpu` worker does. One op is one block of it, a few
/// microseconds of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// 64-bit integer multiply, xor-shift and rotate: 4096 rounds per op.
    Int,
    /// Double-precision multiply-add and divide: 4096 rounds per op.
    Float,
    /// Square roots of consecutive numbers: 4096 per op.
    Sqrt,
    /// Count the primes below 2000 by trial division (sysbench's cpu test): one
    /// count per op.
    Prime,
    /// The four above in turn, one op each.
    Mix,
}

impl Method {
    /// Every method, for help texts.
    pub const ALL: [(&'static str, Method); 5] = [
        ("int", Method::Int),
        ("float", Method::Float),
        ("sqrt", Method::Sqrt),
        ("prime", Method::Prime),
        ("mix", Method::Mix),
    ];
}

const ROUNDS: u64 = 4096;

fn int_block(seed: u64) -> u64 {
    let mut x = seed | 1;
    for i in 0..ROUNDS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ i;
    }
    x
}

fn float_block(seed: u64) -> f64 {
    let mut a = 1.0 + (seed % 7) as f64;
    let mut b = 0.5f64;
    for _ in 0..ROUNDS {
        a = a * 1.000_000_1 + b;
        b = (b + 0.25) / 1.000_000_3;
        if a > 1e12 {
            a /= 1e9;
        }
    }
    a + b
}

fn sqrt_block(seed: u64) -> f64 {
    let mut sum = 0.0f64;
    let base = (seed % 1_000_000) as f64;
    for i in 0..ROUNDS {
        sum += black_box(base + i as f64).sqrt();
    }
    sum
}

/// The number of primes below `max` (trial division up to the square root).
pub fn primes_below(max: u64) -> u64 {
    let mut n = 0;
    for c in 2..max {
        let mut is_prime = true;
        let mut d = 2;
        while d * d <= c {
            if c % d == 0 {
                is_prime = false;
                break;
            }
            d += 1;
        }
        n += is_prime as u64;
    }
    n
}

/// One op of `method` (`Mix` picks by `seed`).
fn op(method: Method, seed: u64) {
    match method {
        Method::Int => {
            black_box(int_block(black_box(seed)));
        }
        Method::Float => {
            black_box(float_block(black_box(seed)));
        }
        Method::Sqrt => {
            black_box(sqrt_block(black_box(seed)));
        }
        Method::Prime => {
            black_box(primes_below(black_box(2000)));
        }
        Method::Mix => {
            const EACH: [Method; 4] = [Method::Int, Method::Float, Method::Sqrt, Method::Prime];
            op(EACH[(seed % 4) as usize], seed);
        }
    }
}

/// Length of one duty-cycle period.
const PERIOD: Duration = Duration::from_millis(100);

/// Runs `method` until stopped, busy `load_pct` percent of each 100 ms period.
pub fn run(
    method: Method,
    load_pct: u32,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) -> Result<(), LoadError> {
    if !(1..=100).contains(&load_pct) {
        return Err(LoadError::Input(format!(
            "cpu load {load_pct}% is outside 1-100%"
        )));
    }
    ready();
    let mut seed = 0u64;
    if load_pct == 100 {
        while !ctx.stopped() {
            op(method, seed);
            seed += 1;
            ctx.counters.add(1, 0);
        }
        return Ok(());
    }
    let busy = PERIOD * load_pct / 100;
    while !ctx.stopped() {
        let start = Instant::now();
        while start.elapsed() < busy && !ctx.stopped() {
            op(method, seed);
            seed += 1;
            ctx.counters.add(1, 0);
        }
        if let Some(rest) = PERIOD.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};
    use super::*;

    #[test]
    fn prime_count_is_right() {
        assert_eq!(primes_below(10), 4);
        assert_eq!(primes_below(2000), 303);
    }

    #[test]
    fn every_method_does_work_and_stops() {
        for (_, method) in Method::ALL {
            let c = run_for(
                &Load::Cpu {
                    method,
                    load_pct: 100,
                },
                30,
            );
            assert!(c.ops > 0, "{method:?} did nothing");
        }
    }

    #[test]
    fn duty_cycle_does_less_work_than_full_load() {
        let load = Load::Cpu {
            method: Method::Int,
            load_pct: 10,
        };
        let c = run_for(&load, 250);
        assert!(c.ops > 0);
    }
}
