//! CPU lists in the kernel's notation (`0,2-3`), as used by `isolcpus`, cpusets and
//! `--cpus`.

use std::fmt;

/// A sorted set of CPU numbers without duplicates.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuList(Vec<usize>);

/// Why a CPU list could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuListError {
    /// The part of the text that is wrong.
    pub part: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' {} (write CPUs as a list like 0,2-3)",
            self.part, self.reason
        )
    }
}

impl std::error::Error for CpuListError {}

/// CPU numbers above this are refused: no Linux system has that many, and a typo
/// like `0-99999999` must not allocate a huge vector.
pub const MAX_CPU: usize = 8191;

impl CpuList {
    /// Parses `0,2-3`, `1`, `0-7:2` is not supported. Whitespace and an empty
    /// string give an empty list (the kernel writes an empty line for "none");
    /// an empty entry in a list (`0,,1`, `0,`) is a typo and refused.
    pub fn parse(text: &str) -> Result<CpuList, CpuListError> {
        let mut cpus = Vec::new();
        let text = text.trim();
        if text.is_empty() {
            return Ok(CpuList(cpus));
        }
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(CpuListError {
                    part: text.to_string(),
                    reason: "has an empty entry (two commas in a row, or one at an end)",
                });
            }
            let err = |reason| CpuListError {
                part: part.to_string(),
                reason,
            };
            let num = |s: &str| -> Result<usize, CpuListError> {
                let n: usize = s
                    .trim()
                    .parse()
                    .map_err(|_| err("is not a CPU number or range"))?;
                if n > MAX_CPU {
                    return Err(err("is above the largest CPU number Linux supports"));
                }
                Ok(n)
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(err("is a range whose start is above its end"));
                    }
                    cpus.extend(a..=b);
                }
                None => cpus.push(num(part)?),
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }

    /// A list from CPU numbers in any order.
    pub fn from_cpus(mut cpus: Vec<usize>) -> CpuList {
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }

    /// The CPUs in ascending order.
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// True when there is no CPU in the list.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `cpu` is in the list.
    pub fn contains(&self, cpu: usize) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }
}

impl fmt::Display for CpuList {
    /// Writes the compact kernel notation, `0,2-3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_kernel_notation() {
        assert_eq!(CpuList::parse("0,2-3").unwrap().cpus(), &[0, 2, 3]);
        assert_eq!(CpuList::parse(" 3,1,1 \n").unwrap().cpus(), &[1, 3]);
        assert!(CpuList::parse("").unwrap().is_empty());
    }

    #[test]
    fn refuses_nonsense_naming_the_part() {
        let e = CpuList::parse("0,x").unwrap_err();
        assert_eq!(e.part, "x");
        for typo in ["0,,1", "0,", ",1", " , "] {
            let e = CpuList::parse(typo).unwrap_err();
            assert!(e.to_string().contains("has an empty entry"), "{typo}: {e}");
        }
        assert!(CpuList::parse("3-1").is_err());
        assert!(CpuList::parse("0-99999999").is_err());
        assert!(CpuList::parse("-1").is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn any_text_is_refused_or_gives_a_sorted_bounded_list(text in "[0-9,\\- x]{0,24}") {
            if let Ok(l) = CpuList::parse(&text) {
                let cpus = l.cpus();
                prop_assert!(cpus.windows(2).all(|w| w[0] < w[1]), "{text}");
                prop_assert!(cpus.iter().all(|&c| c <= MAX_CPU), "{text}");
                prop_assert_eq!(CpuList::parse(&l.to_string()).unwrap(), l);
            }
        }
    }

    proptest! {
        #[test]
        fn display_parses_back(cpus in proptest::collection::vec(0usize..64, 0..20)) {
            let l = CpuList::from_cpus(cpus);
            prop_assert_eq!(CpuList::parse(&l.to_string()).unwrap(), l);
        }
    }
}
