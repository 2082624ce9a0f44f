//! Log-linear buckets: exact below 2^`sub_bits`, then 2^`sub_bits` buckets per
//! power of two (a bucket is at most 1/2^`sub_bits` of its values wide), values
//! from 2^`top_bit` in the last bucket. Integer arithmetic only: the bucket of
//! a value is a leading-zero count and two shifts.

/// A bucket layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLinear {
    /// Sub-buckets per power of two, as a power of two.
    pub sub_bits: u32,
    /// Values from 2^`top_bit` share the last bucket (`sub_bits < top_bit < 64`).
    pub top_bit: u32,
}

impl LogLinear {
    /// Buckets in all.
    pub const fn buckets(self) -> usize {
        (self.top_bit - self.sub_bits + 1) as usize * (1 << self.sub_bits)
    }

    /// The bucket of `ns`.
    #[inline]
    pub fn bucket(self, ns: u64) -> usize {
        let sub = 1u64 << self.sub_bits;
        let ns = ns.min((1 << self.top_bit) - 1);
        if ns < sub {
            return ns as usize;
        }
        // sub_bits ≤ e < top_bit, so the shift and the index stay in range.
        let e = 63 - ns.leading_zeros();
        let within = (ns >> (e - self.sub_bits)) & (sub - 1);
        ((e - self.sub_bits + 1) as u64 * sub + within) as usize
    }

    /// The smallest value of bucket `i` (`i <= buckets()`; `low(buckets())`
    /// is the end of the last bucket's nominal range, 2^`top_bit`).
    pub fn low(self, i: usize) -> u64 {
        let sub = 1usize << self.sub_bits;
        if i < sub {
            return i as u64;
        }
        let e = (i / sub) as u32 + self.sub_bits - 1;
        ((sub + i % sub) as u64) << (e - self.sub_bits)
    }
}
