//! The decimal digits of an integer without the formatter: for the probe's
//! trace markers (written while measuring, where nothing may allocate or
//! format) and the 1-µs histogram file (20 000 numbers after a run).

/// The decimal digits of `v`, right-aligned in a buffer of ASCII zeros: they
/// are `digits[at..]`, and the zeros before them pad it to any width up to 20
/// (`u64::MAX` has 20 digits).
pub fn digits(mut v: u64) -> ([u8; 20], usize) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return (digits, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn the_digits_are_what_the_formatter_prints(v: u64) {
            let (d, at) = digits(v);
            proptest::prop_assert_eq!(std::str::from_utf8(&d[at..]).unwrap(), v.to_string());
            proptest::prop_assert!(d[..at].iter().all(|&b| b == b'0'));
        }
    }

    #[test]
    fn zero_is_one_digit() {
        let (d, at) = digits(0);
        assert_eq!(&d[at..], b"0");
        let (d, at) = digits(u64::MAX);
        assert_eq!((at, &d[..]), (0, &b"18446744073709551615"[..]));
    }
}
