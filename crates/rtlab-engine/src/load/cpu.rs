//! `cpu`: busy arithmetic, with stress-ng's methods and its duty cycle.
//!
//! One op is one call of the method: for stress-ng's methods, the work of one
//! call of the stress-ng method of that name (the same sizes and kinds of
//! operations, written here; see [`Method`]). stress-ng counts "bogo ops",
//! which its own manual says are not a benchmark, and from 0.15 scales them
//! per method; rtlab counts one op per call. Compare ops/s of one method
//! between runs of rtlab, not with stress-ng's figures.
//!
//! Below 100% a worker works in slices and sleeps between them, as stress-ng
//! does: after each busy slice ([`Slice`]) it sleeps `(100 − P) / P` times the
//! CPU time the slice took, corrected by how much longer than asked the
//! previous sleep was. The load achieved is the worker's CPU time over the
//! run, recorded with the other loads' figures.

use super::{Ctx, LoadError};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Which arithmetic a `cpu` worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// rtlab's own: 64-bit integer multiply, xor-shift and rotate, 4096 rounds.
    Int,
    /// rtlab's own: int, float, sqrt and prime in turn, one op each.
    Mix,
    /// stress-ng's `ackermann`: the Ackermann function A(3, 7), naively
    /// recursive (about 700 000 calls).
    Ackermann,
    /// stress-ng's `crc16`: CCITT CRC-16, bit by bit, of every prefix of a
    /// random 1 KiB buffer.
    Crc16,
    /// stress-ng's `double`: 1000 rounds of double-precision add, multiply,
    /// divide, sine and cosine.
    Double,
    /// stress-ng's `fft`: a 4096-point complex fast Fourier transform.
    Fft,
    /// stress-ng's `fibonacci`: the Fibonacci sequence in 64 bits until the
    /// top bit is set.
    Fibonacci,
    /// stress-ng's `float`: [`Method::Double`]'s rounds in single precision.
    Float,
    /// stress-ng's `int32`: 1000 rounds of 32-bit add, xor, shift, multiply,
    /// divide and random operands.
    Int32,
    /// stress-ng's `int64`: [`Method::Int32`]'s rounds in 64 bits.
    Int64,
    /// stress-ng's `matrixprod`: the product of two 128 × 128 matrices of
    /// random numbers, and the sum of its elements.
    Matrixprod,
    /// stress-ng's `prime`: count the 10 000 primes below 104 730 by trial
    /// division by 6k ± 1.
    Prime,
    /// stress-ng's `sqrt`: 16 384 random 32-bit numbers squared back from
    /// their square roots.
    Sqrt,
    /// stress-ng's `all`: each of stress-ng's methods here in turn, one op each.
    All,
}

impl Method {
    /// Every method by name, for the spec grammar and help texts.
    pub const ALL: [(&'static str, Method); 14] = [
        ("int", Method::Int),
        ("mix", Method::Mix),
        ("ackermann", Method::Ackermann),
        ("crc16", Method::Crc16),
        ("double", Method::Double),
        ("fft", Method::Fft),
        ("fibonacci", Method::Fibonacci),
        ("float", Method::Float),
        ("int32", Method::Int32),
        ("int64", Method::Int64),
        ("matrixprod", Method::Matrixprod),
        ("prime", Method::Prime),
        ("sqrt", Method::Sqrt),
        ("all", Method::All),
    ];

    /// The method named `name`.
    pub fn named(name: &str) -> Option<Method> {
        Method::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Method::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }
}

/// The methods `all` runs in turn.
const STRESS_NG: [Method; 11] = [
    Method::Ackermann,
    Method::Crc16,
    Method::Double,
    Method::Fft,
    Method::Fibonacci,
    Method::Float,
    Method::Int32,
    Method::Int64,
    Method::Matrixprod,
    Method::Prime,
    Method::Sqrt,
];

/// stress-ng 0.15's other cpu methods, each with the method here whose work
/// is closest (the same kind of arithmetic: integer logic, floating point,
/// transcendental functions, recursion, checksums, transforms).
pub const STRESS_NG_CLOSEST: &[(&str, Method)] = &[
    ("apery", Method::Double),
    ("bitops", Method::Int64),
    ("callfunc", Method::Ackermann),
    ("cdouble", Method::Double),
    ("cfloat", Method::Float),
    ("clongdouble", Method::Double),
    ("collatz", Method::Int64),
    ("correlate", Method::Matrixprod),
    ("decimal32", Method::Float),
    ("decimal64", Method::Double),
    ("decimal128", Method::Double),
    ("dither", Method::Int32),
    ("div8", Method::Int32),
    ("div16", Method::Int32),
    ("div32", Method::Int32),
    ("div64", Method::Int64),
    ("div128", Method::Int64),
    ("euler", Method::Double),
    ("explog", Method::Double),
    ("factorial", Method::Double),
    ("fletcher16", Method::Crc16),
    ("float16", Method::Float),
    ("float32", Method::Float),
    ("float64", Method::Double),
    ("float80", Method::Double),
    ("float128", Method::Double),
    ("floatconversion", Method::Float),
    ("gamma", Method::Double),
    ("gcd", Method::Int64),
    ("gray", Method::Int32),
    ("hamming", Method::Crc16),
    ("hanoi", Method::Ackermann),
    ("hyperbolic", Method::Double),
    ("idct", Method::Fft),
    ("int128", Method::Int64),
    ("int16", Method::Int32),
    ("int8", Method::Int32),
    ("int128float", Method::Float),
    ("int128double", Method::Double),
    ("int128longdouble", Method::Double),
    ("int128decimal32", Method::Float),
    ("int128decimal64", Method::Double),
    ("int128decimal128", Method::Double),
    ("int64float", Method::Float),
    ("int64double", Method::Double),
    ("int64longdouble", Method::Double),
    ("int32float", Method::Float),
    ("int32double", Method::Double),
    ("int32longdouble", Method::Double),
    ("intconversion", Method::Int32),
    ("ipv4checksum", Method::Crc16),
    ("jmp", Method::Int32),
    ("lfsr32", Method::Int32),
    ("ln2", Method::Double),
    ("logmap", Method::Double),
    ("longdouble", Method::Double),
    ("loop", Method::Int32),
    ("nsqrt", Method::Sqrt),
    ("omega", Method::Double),
    ("parity", Method::Int32),
    ("phi", Method::Double),
    ("pi", Method::Double),
    ("psi", Method::Double),
    ("queens", Method::Ackermann),
    ("rand", Method::Int32),
    ("rand48", Method::Int64),
    ("rgb", Method::Int32),
    ("sieve", Method::Prime),
    ("stats", Method::Double),
    ("trig", Method::Double),
    ("union", Method::Int64),
    ("zeta", Method::Double),
];

/// The method here closest to stress-ng's method `name`, for a name this
/// load does not implement.
pub fn closest_to_stress_ng(name: &str) -> Option<Method> {
    STRESS_NG_CLOSEST
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| *m)
}

/// How long a busy slice lasts below 100% load (stress-ng's
/// `--cpu-load-slice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Slice {
    /// This many ops (stress-ng's negative values; its default is 64).
    Ops(u32),
    /// This many milliseconds of CPU time (stress-ng's positive values).
    Millis(u32),
    /// A random length between 0 and 0.5 s of CPU time (stress-ng's 0).
    Random,
}

impl Default for Slice {
    fn default() -> Self {
        Slice::Ops(64)
    }
}

/// The longest slice stress-ng takes, in ops or milliseconds.
pub const SLICE_MAX: u32 = 5000;

/// A worker's random numbers (xorshift64).
struct Rand(u64);

impl Rand {
    #[inline]
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    #[inline]
    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
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

/// The integer rounds of `int32` and `int64`, for one word type.
macro_rules! int_rounds {
    ($name:ident, $t:ty) => {
        /// 1000 rounds of mixed integer operations on two words, with four
        /// random operands per round.
        fn $name(r: &mut Rand) -> ($t, $t) {
            let (mut a, mut b) = (r.u32() as $t, r.u32() as $t);
            for _ in 0..1000 {
                a = a.wrapping_add(b);
                b ^= a;
                a >>= 1;
                b = (b << 2).wrapping_sub(a);
                a = !a;
                b ^= 0x0f0f_0f0f as $t;
                a = a.wrapping_mul(3).wrapping_add(2) / 77;
                b = b.wrapping_mul(7).wrapping_sub(3) / 3;
                a = (a << 1) | 1;
                b = (b << 2) | 3;
                a = a.wrapping_mul(r.u32() as $t);
                b ^= r.u32() as $t;
                a = a.wrapping_add(r.u32() as $t) / 7;
                b = b.wrapping_sub(r.u32() as $t) / 9;
                a |= 0x1000_1000 as $t;
                b &= 0xfefe_fffe as $t;
            }
            (a, b)
        }
    };
}

int_rounds!(int32, u32);
int_rounds!(int64, u64);

/// The floating-point rounds of `float` and `double`, for one type.
macro_rules! fp_rounds {
    ($name:ident, $t:ty) => {
        /// 1000 rounds of add, multiply, divide, sine and cosine on four
        /// values, kept in range by their fractional parts.
        fn $name(r: &mut Rand) -> $t {
            let keep = |x: $t| if x.abs() > 1.0 { x.fract() + 0.1 } else { x };
            let (mut a, mut b, mut c, mut d): ($t, $t, $t, $t) = (
                0.187_28,
                (r.u32() as f64 / 65536.0) as $t,
                (r.u32() as f64 / 65536.0) as $t,
                0.0,
            );
            for _ in 0..1000 {
                a += b;
                b = a * c;
                c = keep(a - b);
                d = keep(a / 8.1);
                a = keep(c / 5.1923);
                b = c + a;
                c = b * b.sin();
                d += b + a.sin();
                a = (b + c).cos();
                b *= c;
                c += 1.5;
                d -= c.sin();
                a *= b.cos();
                b += c.cos();
                c = (a + b).sin() / 2.344;
                b = d - 0.5;
            }
            a + b + c + d
        }
    };
}

fp_rounds!(float, f32);
fp_rounds!(double, f64);

/// 16 384 random 32-bit numbers: each one's square root squared and rounded,
/// which gives the number back; the count of those that did not.
fn sqrt(r: &mut Rand) -> u32 {
    let mut wrong = 0;
    for _ in 0..16_384 {
        let n = r.u32();
        let s = black_box(f64::from(n)).sqrt();
        wrong += u32::from((s * s).round() as u32 != n);
    }
    wrong
}

/// Whether `n` is prime: trial division by 2, 3 and 6k ± 1 up to √n.
fn is_prime(n: u32) -> bool {
    if n <= 3 {
        return n >= 2;
    }
    if n.is_multiple_of(2) || n.is_multiple_of(3) {
        return false;
    }
    let max = f64::from(n).sqrt() as u32 + 1;
    let mut i = 5;
    while i < max {
        if n.is_multiple_of(i) || n.is_multiple_of(i + 2) {
            return false;
        }
        i += 6;
    }
    true
}

/// The primes below 104 730 (there are 10 000).
fn prime() -> u32 {
    (0..104_730).filter(|&n| is_prime(black_box(n))).count() as u32
}

/// The Fibonacci number at which the sequence first sets the top bit of a
/// 64-bit word.
fn fibonacci() -> u64 {
    let (mut f1, mut f2) = (0u64, black_box(1u64));
    loop {
        let f = f1 + f2;
        f1 = f2;
        f2 = f;
        if f >> 63 == 1 {
            return f;
        }
    }
}

/// The Ackermann function, naively recursive.
#[inline(never)]
fn ackermann(m: u32, n: u32) -> u32 {
    match (m, n) {
        (0, n) => n + 1,
        (m, 0) => ackermann(m - 1, 1),
        (m, n) => ackermann(m - 1, ackermann(m, n - 1)),
    }
}

/// CCITT CRC-16 of `data` bit by bit (reflected polynomial 0x8408, start
/// 0xffff, inverted at the end).
fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0xffffu16;
    for &byte in data {
        let mut v = byte;
        for _ in 0..8 {
            let xor = (v ^ crc as u8) & 1 == 1;
            crc >>= 1;
            if xor {
                crc ^= 0x8408;
            }
            v >>= 1;
        }
    }
    !crc
}

/// Side of the matrices of `matrixprod`.
const MATRIX: usize = 128;
/// Points of `fft`.
const FFT_POINTS: usize = 4096;

/// A worker's buffers, made before it starts working.
struct Scratch {
    a: Vec<f64>,
    b: Vec<f64>,
    product: Vec<f64>,
    /// Complex points as (re, im), and the transform's second buffer.
    fft: Vec<(f64, f64)>,
    fft_tmp: Vec<(f64, f64)>,
    crc: Vec<u8>,
}

impl Scratch {
    /// The buffers `method` needs (none for most).
    fn for_method(method: Method) -> Scratch {
        let uses = |m: Method| method == m || method == Method::All;
        let n = |yes: bool, len: usize| if yes { len } else { 0 };
        let (mat, fft, crc) = (
            n(uses(Method::Matrixprod), MATRIX * MATRIX),
            n(uses(Method::Fft), FFT_POINTS),
            n(uses(Method::Crc16), 1024),
        );
        Scratch {
            a: vec![0.0; mat],
            b: vec![0.0; mat],
            product: vec![0.0; mat],
            fft: vec![(0.0, 0.0); fft],
            fft_tmp: vec![(0.0, 0.0); fft],
            crc: vec![0; crc],
        }
    }
}

/// Two random 128 × 128 matrices in `[0, 1)`, their product, and the sum of
/// its elements.
fn matrixprod(s: &mut Scratch, r: &mut Rand) -> f64 {
    for (a, b) in s.a.iter_mut().zip(s.b.iter_mut()) {
        *a = f64::from(r.u32()) / f64::from(u32::MAX);
        *b = f64::from(r.u32()) / f64::from(u32::MAX);
    }
    for i in 0..MATRIX {
        for j in 0..MATRIX {
            let mut sum = 0.0;
            for k in 0..MATRIX {
                sum += s.a[i * MATRIX + k] * s.b[k * MATRIX + j];
            }
            s.product[i * MATRIX + j] = sum;
        }
    }
    s.product.iter().sum()
}

/// One level of a radix-2 decimation-in-time transform: `out` gets the
/// transform of the points of `inp` at `start`, `start + step`, ...; each
/// butterfly computes its twiddle factor.
fn fft_level(inp: &[(f64, f64)], out: &mut [(f64, f64)], start: usize, step: usize, n: usize) {
    if n == 1 {
        out[0] = inp[start];
        return;
    }
    let half = n / 2;
    let (even, odd) = out.split_at_mut(half);
    fft_level(inp, even, start, step * 2, half);
    fft_level(inp, odd, start + step, step * 2, half);
    for k in 0..half {
        let (s, c) = (-2.0 * std::f64::consts::PI * k as f64 / n as f64).sin_cos();
        let (e, o) = (even[k], odd[k]);
        let t = (o.0 * c - o.1 * s, o.0 * s + o.1 * c);
        even[k] = (e.0 + t.0, e.1 + t.1);
        odd[k] = (e.0 - t.0, e.1 - t.1);
    }
}

/// The 4096-point transform of the sequence 0, 1, ..., 62, 0, 1, ...; the sum
/// of the magnitudes' squares.
fn fft(s: &mut Scratch) -> f64 {
    for (i, p) in s.fft_tmp.iter_mut().enumerate() {
        *p = ((i % 63) as f64, 0.0);
    }
    fft_level(&s.fft_tmp, &mut s.fft, 0, 1, FFT_POINTS);
    s.fft.iter().map(|(re, im)| re * re + im * im).sum()
}

/// The CRC of every prefix of a random 1 KiB buffer; their XOR.
fn crc16_op(s: &mut Scratch, r: &mut Rand) -> u16 {
    for b in s.crc.iter_mut() {
        *b = r.u32() as u8;
    }
    (1..s.crc.len()).fold(0, |x, n| x ^ crc16(black_box(&s.crc[..n])))
}

/// One worker's state: its method, random numbers, buffers, and the turn of
/// `mix` and `all`.
struct Worker {
    method: Method,
    rand: Rand,
    scratch: Scratch,
    turn: usize,
}

impl Worker {
    fn new(method: Method) -> Worker {
        Worker {
            method,
            rand: Rand(0x2545_F491_4F6C_DD1D),
            scratch: Scratch::for_method(method),
            turn: 0,
        }
    }

    /// One op.
    fn op(&mut self) {
        let m = match self.method {
            Method::Mix => {
                const EACH: [Method; 4] = [Method::Int, Method::Float, Method::Sqrt, Method::Prime];
                EACH[self.next_turn(EACH.len())]
            }
            Method::All => STRESS_NG[self.next_turn(STRESS_NG.len())],
            m => m,
        };
        let r = &mut self.rand;
        match m {
            Method::Int => {
                black_box(int_block(black_box(r.next())));
            }
            Method::Ackermann => {
                black_box(ackermann(black_box(3), black_box(7)));
            }
            Method::Crc16 => {
                black_box(crc16_op(&mut self.scratch, r));
            }
            Method::Double => {
                black_box(double(r));
            }
            Method::Fft => {
                black_box(fft(&mut self.scratch));
            }
            Method::Fibonacci => {
                black_box(fibonacci());
            }
            Method::Float => {
                black_box(float(r));
            }
            Method::Int32 => {
                black_box(int32(r));
            }
            Method::Int64 => {
                black_box(int64(r));
            }
            Method::Matrixprod => {
                black_box(matrixprod(&mut self.scratch, r));
            }
            Method::Prime => {
                black_box(prime());
            }
            Method::Sqrt => {
                black_box(sqrt(r));
            }
            Method::Mix | Method::All => unreachable!("resolved to one method above"),
        }
    }

    fn next_turn(&mut self, n: usize) -> usize {
        let t = self.turn % n;
        self.turn = t + 1;
        t
    }
}

/// The longest sleep at a time: the worker checks its stop flag between.
const NAP: Duration = Duration::from_millis(100);

/// Sleeps `d` (`None`: until stopped) in naps of at most [`NAP`], returning
/// early once stopped.
fn sleep(d: Option<Duration>, ctx: &Ctx) {
    let end = d.map(|d| Instant::now() + d);
    while !ctx.stopped() {
        let left = end.map_or(NAP, |e| e.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(NAP));
    }
}

/// CPU time of this thread (s).
fn cpu_s() -> f64 {
    crate::probe::net::thread_cpu_ns() as f64 / 1e9
}

/// Runs `method` until stopped: busy all the time at 100%, never at 0%, and
/// otherwise in busy slices with sleeps between, as stress-ng's `--cpu-load`
/// and `--cpu-load-slice`.
pub fn run(
    method: Method,
    load_pct: u32,
    slice: Slice,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) -> Result<(), LoadError> {
    if load_pct > 100 {
        return Err(LoadError::Input(format!(
            "cpu load {load_pct}% is outside 0-100%"
        )));
    }
    let mut w = Worker::new(method);
    ready();
    let op = |w: &mut Worker| {
        w.op();
        ctx.counters.add(1, 0);
    };
    match load_pct {
        0 => sleep(None, ctx),
        100 => {
            while !ctx.stopped() {
                op(&mut w);
            }
        }
        p => {
            let mut bias = 0.0;
            while !ctx.stopped() {
                let t1 = cpu_s();
                match slice {
                    Slice::Ops(n) => {
                        for _ in 0..n {
                            op(&mut w);
                            if ctx.stopped() {
                                break;
                            }
                        }
                    }
                    Slice::Millis(_) | Slice::Random => {
                        let secs = match slice {
                            Slice::Millis(ms) => f64::from(ms) / 1e3,
                            _ => f64::from(w.rand.u32() >> 16) / 131_072.0,
                        };
                        loop {
                            op(&mut w);
                            if cpu_s() >= t1 + secs || ctx.stopped() {
                                break;
                            }
                        }
                    }
                }
                let busy = cpu_s() - t1;
                let delay = f64::from(100 - p) * busy / f64::from(p) - bias;
                if delay < 0.0 {
                    bias = 0.0;
                    continue;
                }
                let t2 = Instant::now();
                sleep(Some(Duration::from_secs_f64(delay)), ctx);
                // What the sleep overran is taken from the next one.
                bias = t2.elapsed().as_secs_f64() - delay;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{run_for, run_until};
    use super::super::Load;
    use super::*;

    #[test]
    fn every_method_has_its_name_and_does_work() {
        for (name, method) in Method::ALL {
            assert_eq!(Method::named(name), Some(method));
            assert_eq!(method.name(), name);
            let c = run_for(
                &Load::Cpu {
                    method,
                    load_pct: 100,
                    slice: Slice::default(),
                },
                30,
            );
            assert!(c.ops > 0, "{method:?} did nothing");
        }
        assert_eq!(Method::named("nope"), None);
    }

    #[test]
    fn stress_ng_s_other_methods_have_a_closest_one() {
        assert_eq!(closest_to_stress_ng("decimal64"), Some(Method::Double));
        assert_eq!(closest_to_stress_ng("sieve"), Some(Method::Prime));
        assert_eq!(closest_to_stress_ng("matrixprod"), None);
        for (name, m) in STRESS_NG_CLOSEST {
            assert!(Method::named(name).is_none(), "{name} is implemented");
            assert!(STRESS_NG.contains(m), "{name} -> {m:?}");
        }
        // stress-ng 0.15.06 has 83 methods besides all (float16 where the
        // compiler has it): these 72 and the 11 here.
        assert_eq!(STRESS_NG_CLOSEST.len() + STRESS_NG.len(), 83);
    }

    #[test]
    fn the_methods_compute_what_they_say() {
        assert_eq!(fibonacci(), 12_200_160_415_121_876_738);
        assert_eq!(ackermann(3, 7), 1021);
        assert_eq!(ackermann(2, 3), 9);
        assert_eq!(prime(), 10_000);
        assert_eq!(crc16(b"123456789"), 0x906E, "CRC-16/X-25's check value");
        let mut r = Rand(7);
        assert_eq!(sqrt(&mut r), 0, "every square root squares back");
        assert!(double(&mut r).is_finite() && float(&mut r).is_finite());
        let (a, b) = int64(&mut r);
        assert_ne!(a, b);
        let mut s = Scratch::for_method(Method::All);
        // The product of matrices in [0, 1): each element is below 128.
        let sum = matrixprod(&mut s, &mut r);
        assert!(
            (0.0..(MATRIX * MATRIX * MATRIX) as f64).contains(&sum),
            "{sum}"
        );
        // Parseval: the energy of the transform is n times the signal's.
        let energy: f64 = (0..FFT_POINTS).map(|i| ((i % 63) as f64).powi(2)).sum();
        let e = fft(&mut s);
        assert!((e / (energy * FFT_POINTS as f64) - 1.0).abs() < 1e-9, "{e}");
        assert_eq!(
            s.fft[0].0,
            (0..FFT_POINTS).map(|i| (i % 63) as f64).sum::<f64>()
        );
    }

    #[test]
    fn all_and_mix_take_their_methods_in_turn() {
        let mut w = Worker::new(Method::All);
        let turns: Vec<usize> = (0..13).map(|_| w.next_turn(STRESS_NG.len())).collect();
        assert_eq!(&turns[..12], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0]);
        assert_eq!(Scratch::for_method(Method::Int).a.len(), 0);
        assert_eq!(
            Scratch::for_method(Method::Matrixprod).a.len(),
            MATRIX * MATRIX
        );
    }

    /// This thread's time on a CPU and waiting for one (ns), from
    /// `/proc/self/task/TID/schedstat`; `None` where the kernel has none.
    fn sched_ns() -> Option<(u64, u64)> {
        let path = format!("/proc/self/task/{}/schedstat", crate::rt::gettid());
        let text = std::fs::read_to_string(path).ok()?;
        let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
        Some((f.next()??, f.next()??))
    }

    #[test]
    fn half_load_is_busy_half_of_the_time_it_does_not_wait_for() {
        // The share of CPU time among the time the worker ran or slept by
        // choice (the time it waited for a CPU left out, so that a busy
        // machine does not change it): about one half, judged generously.
        for slice in [Slice::Millis(10), Slice::Ops(8)] {
            let stop = std::sync::atomic::AtomicBool::new(false);
            let counters = super::super::Counters::default();
            let share = std::thread::scope(|s| {
                let h = s.spawn(|| {
                    let (cpu0, wait0) = sched_ns()?;
                    let t0 = Instant::now();
                    let ctx = Ctx {
                        counters: &counters,
                        stop: &stop,
                    };
                    run(Method::Int, 50, slice, &ctx, &mut || {}).unwrap();
                    let wall = t0.elapsed().as_nanos() as u64;
                    let (cpu1, wait1) = sched_ns()?;
                    let (cpu, wait) = (cpu1 - cpu0, wait1 - wait0);
                    Some(cpu as f64 / wall.saturating_sub(wait).max(1) as f64)
                });
                std::thread::sleep(Duration::from_secs(2));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                h.join().unwrap()
            });
            let Some(share) = share else { return };
            assert!((0.25..=0.75).contains(&share), "{slice:?}: busy {share:.2}");
            assert!(counters.snapshot().ops > 0);
        }
    }

    #[test]
    fn a_duty_cycle_and_zero_load_work_and_stop() {
        for (load_pct, slice) in [
            (10, Slice::Ops(4)),
            (50, Slice::Millis(5)),
            (50, Slice::Random),
        ] {
            let load = Load::Cpu {
                method: Method::Int,
                load_pct,
                slice,
            };
            assert!(run_for(&load, 100).ops > 0);
        }
        let idle = Load::Cpu {
            method: Method::Int,
            load_pct: 0,
            slice: Slice::default(),
        };
        assert_eq!(run_until(&idle, 50, |_| true).ops, 0);
    }
}
