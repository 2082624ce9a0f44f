//! Durations, sizes, counts and time units on the command line, in scenario
//! files and in imported files.
//!
//! Durations take a unit (`200us`, `1.5ms`, `30s`, `5m`, `2h`); a bare number uses
//! the flag's documented default unit. Sizes take binary multiples (`64K`, `256M`,
//! `3G`, also `KiB`/`MB` spellings, all powers of 1024 as in stress and sysbench).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The unit a bare duration number is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultUnit {
    /// Microseconds (cyclictest's `-i`, `--breaktrace`).
    Micros,
    /// Milliseconds.
    Millis,
    /// Seconds (cyclictest's `-D`).
    Seconds,
}

const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Splits `text` into its leading number and its unit. `what` names the kind of
/// value (`duration`) and `examples` shows good ones, for the error messages.
fn number_and_unit<'a>(
    text: &'a str,
    what: &str,
    examples: &str,
) -> Result<(&'a str, &'a str), String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("empty {what} (write e.g. {examples})"));
    }
    if t.starts_with('-') {
        return Err(format!("'{t}' is negative; a {what} must be positive"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{t}' does not start with a number (write e.g. {examples})"
        ));
    }
    Ok((num, unit))
}

/// Parses a duration to nanoseconds. Negative, non-numeric and unknown units are
/// errors that say what is accepted.
pub fn parse_duration(text: &str, default: DefaultUnit) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = number_and_unit(t, "duration", "200us, 1ms, 30s, 5m")?;
    let mult = if unit.is_empty() {
        match default {
            DefaultUnit::Micros => 1_000,
            DefaultUnit::Millis => 1_000_000,
            DefaultUnit::Seconds => 1_000_000_000,
        }
    } else {
        DURATION_UNITS
            .iter()
            .find(|(u, _)| *u == unit.trim())
            .map(|(_, m)| *m)
            .ok_or_else(|| format!("unknown unit '{unit}' in '{t}' (use ns, us, ms, s, m or h)"))?
    };
    scale(num, mult).ok_or_else(|| format!("'{t}' is not a number I can read or is too large"))
}

/// `num` (decimal, maybe fractional) times `mult`, exactly when possible.
fn scale(num: &str, mult: u64) -> Option<u64> {
    match num.split_once('.') {
        None => num.parse::<u64>().ok()?.checked_mul(mult),
        Some((int, frac)) => {
            if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
                return None;
            }
            let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
            if !frac.chars().all(|c| c.is_ascii_digit()) || frac.len() > 18 {
                return None;
            }
            // fraction = digits / 10^len, exactly; its share of `mult` is truncated
            // below 1 (ns or byte).
            let digits: u128 = if frac.is_empty() {
                0
            } else {
                frac.parse().ok()?
            };
            let share = digits * mult as u128 / 10u128.pow(frac.len() as u32);
            int.checked_mul(mult)?
                .checked_add(u64::try_from(share).ok()?)
        }
    }
}

/// Parses a duration that must be above zero.
pub fn parse_positive_duration(text: &str, default: DefaultUnit) -> Result<u64, String> {
    match parse_duration(text, default)? {
        0 => Err(format!("'{}' is zero; it must be above zero", text.trim())),
        v => Ok(v),
    }
}

/// Parses a size in bytes: `4096`, `64K`, `256M`, `3G`, `1T`, `16KiB`, `2MB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = number_and_unit(t, "size", "64K, 256M, 3G")?;
    let u = unit.trim().to_ascii_uppercase();
    let u = u.trim_end_matches("IB").trim_end_matches('B');
    let mult: u64 = match u {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown size unit '{unit}' in '{t}' (use K, M, G or T)"
            ))
        }
    };
    scale(num, mult).ok_or_else(|| format!("'{t}' is not a size I can read or is too large"))
}

/// A count (from a file or a flag): a whole number of things, at least 0, that fits in
/// 64 bits. The message says which of those it is not.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_)
            if t.starts_with('-') && t[1..].chars().all(|c| c.is_ascii_digit()) && t.len() > 1 =>
        {
            Err(format!("'{t}' is negative; a count is 0 or more"))
        }
        Err(_) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => Err(format!(
            "'{t}' is more than 64 bits can count ({}); no measurement has that many",
            u64::MAX
        )),
        Err(_) => Err(format!("'{t}' is not a whole number")),
    }
}

/// A frequency in words (`50 kHz`, `1.25 MHz`).
pub fn hz(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} MHz", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.3} kHz", v / 1e3)
    } else {
        format!("{v:.1} Hz")
    }
}

/// The unit times are shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    #[default]
    Us,
    /// Milliseconds.
    Ms,
}

impl TimeUnit {
    /// The unit's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
        }
    }

    fn divisor(self) -> f64 {
        match self {
            TimeUnit::Ns => 1.0,
            TimeUnit::Us => 1_000.0,
            TimeUnit::Ms => 1_000_000.0,
        }
    }

    /// A nanosecond value in this unit.
    pub fn convert(self, ns: f64) -> f64 {
        ns / self.divisor()
    }

    /// A value in this unit, as a table cell: integers for ns, one decimal for µs
    /// (100 ns resolution), three for ms.
    pub fn cell(self, ns: f64) -> String {
        let v = self.convert(ns);
        match self {
            TimeUnit::Ns => format!("{v:.0}"),
            TimeUnit::Us => format!("{v:.1}"),
            TimeUnit::Ms => format!("{v:.3}"),
        }
    }
}

/// A point in time given as an age before `now` (`30m`, `12h`, `2d`, `1w`) or
/// as a date (`2026-05-01`, RFC 3339), as RFC 3339 UTC with microseconds.
pub fn parse_since(text: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String, String> {
    let t = text.trim();
    let fmt =
        |d: chrono::DateTime<chrono::Utc>| d.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(fmt(d.with_timezone(&chrono::Utc)));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(fmt(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()));
    }
    let days = |suffix: char, per: u64| {
        t.strip_suffix(suffix)
            .and_then(|n| n.parse::<u64>().ok())
            .map(|n| n.saturating_mul(per * 86_400_000_000_000))
    };
    let ns = match days('d', 1).or_else(|| days('w', 7)) {
        Some(ns) => ns,
        None => parse_duration(t, DefaultUnit::Seconds)
            .map_err(|e| format!("{e}; give an age (30m, 12h, 2d, 1w) or a date (2026-05-01)"))?,
    };
    let age = chrono::Duration::nanoseconds(i64::try_from(ns).unwrap_or(i64::MAX));
    let start = now
        .checked_sub_signed(age)
        .ok_or_else(|| format!("'{t}' reaches before year 0"))?;
    Ok(fmt(start))
}

/// A human form of a nanosecond duration, in the largest unit that keeps it
/// readable: `850ns`, `12.5us`, `1.000ms`, `30s`.
pub struct Human(pub u64);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns < 1_000 {
            write!(f, "{ns}ns")
        } else if ns < 1_000_000 {
            write!(f, "{}us", trim(ns as f64 / 1e3))
        } else if ns < 1_000_000_000 {
            write!(f, "{}ms", trim(ns as f64 / 1e6))
        } else {
            write!(f, "{}s", trim(ns as f64 / 1e9))
        }
    }
}

/// A nanosecond duration exactly, in the largest unit that divides it, so that
/// parsing it gives the same nanoseconds: `200us`, `1500us`, `30s`, `999ns`.
pub fn exact(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_durations_parse_back_to_the_same_nanoseconds() {
        for ns in [
            0,
            1,
            999,
            1_000,
            1_500_000,
            200_000,
            30_000_000_000,
            86_400_000_000_001,
        ] {
            let text = exact(ns);
            assert_eq!(
                parse_duration(&text, DefaultUnit::Seconds),
                Ok(ns),
                "{text}"
            );
        }
        assert_eq!(exact(200_000), "200us");
        assert_eq!(exact(60_000_000_000), "60s");
    }

    #[test]
    fn durations_with_units() {
        let us = DefaultUnit::Micros;
        assert_eq!(parse_duration("200us", us), Ok(200_000));
        assert_eq!(parse_duration("1ms", us), Ok(1_000_000));
        assert_eq!(parse_duration("1.5ms", us), Ok(1_500_000));
        assert_eq!(parse_duration("30s", us), Ok(30_000_000_000));
        assert_eq!(parse_duration("5m", us), Ok(300_000_000_000));
        assert_eq!(parse_duration("400", us), Ok(400_000));
        assert_eq!(
            parse_duration("400", DefaultUnit::Seconds),
            Ok(400_000_000_000)
        );
        assert_eq!(parse_duration("0.25", DefaultUnit::Millis), Ok(250_000));
        assert_eq!(parse_duration("750ns", us), Ok(750));
    }

    #[test]
    fn bad_durations_say_why() {
        let us = DefaultUnit::Micros;
        assert!(parse_duration("1parsec", us)
            .unwrap_err()
            .contains("unknown unit 'parsec'"));
        assert!(parse_duration("-5", us).unwrap_err().contains("negative"));
        assert!(parse_positive_duration("0", us)
            .unwrap_err()
            .contains("zero"));
        assert!(parse_duration("ms", us).unwrap_err().contains("number"));
        assert!(parse_duration("1.2.3ms", us).is_err());
        assert!(parse_duration("99999999999999h", us).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("3G"), Ok(3 << 30));
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("12Q").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("-1M").is_err());
    }

    #[test]
    fn human_form() {
        assert_eq!(Human(850).to_string(), "850ns");
        assert_eq!(Human(12_500).to_string(), "12.5us");
        assert_eq!(Human(1_000_000).to_string(), "1ms");
        assert_eq!(Human(30_000_000_000).to_string(), "30s");
    }

    #[test]
    fn counts_say_what_they_are_not() {
        assert_eq!(parse_count(" 42 "), Ok(42));
        assert_eq!(parse_count(&u64::MAX.to_string()), Ok(u64::MAX));
        assert!(parse_count("-5").unwrap_err().contains("negative"));
        assert!(parse_count("18446744073709551616")
            .unwrap_err()
            .contains("more than 64 bits"));
        assert!(parse_count("1e3")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_count("").is_err());
        assert!(parse_count("-").unwrap_err().contains("not a whole number"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn parsers_never_panic(text in "\\PC{0,30}", digits in "[0-9.]{0,30}[a-zA-Zµ]{0,4}") {
            for t in [&text, &digits] {
                let _ = parse_duration(t, DefaultUnit::Micros);
                let _ = parse_size(t);
                let _ = parse_count(t);
            }
        }

        #[test]
        fn sizes_are_exact_or_refused(n in any::<u64>(), unit in proptest::sample::select(vec![("", 0u32), ("K", 10), ("M", 20), ("G", 30), ("T", 40)])) {
            let got = parse_size(&format!("{n}{}", unit.0));
            match n.checked_mul(1u64 << unit.1) {
                Some(v) => prop_assert_eq!(got, Ok(v)),
                None => prop_assert!(got.unwrap_err().contains("too large")),
            }
        }

        #[test]
        fn counts_round_trip_and_negatives_are_refused(n in any::<u64>()) {
            prop_assert_eq!(parse_count(&n.to_string()), Ok(n));
            if n > 0 {
                let negative = format!("-{n}");
                prop_assert!(parse_count(&negative).is_err());
            }
            let past = n as u128 + u64::MAX as u128 + 1;
            prop_assert!(parse_count(&past.to_string()).is_err());
        }
    }

    proptest! {
        #[test]
        fn ns_us_ms_conversions_agree(ns in 0u64..1u64<<50) {
            prop_assert_eq!(parse_duration(&format!("{ns}ns"), DefaultUnit::Micros), Ok(ns));
            let us = ns / 1000;
            prop_assert_eq!(parse_duration(&format!("{us}us"), DefaultUnit::Micros), Ok(us * 1000));
            prop_assert_eq!(parse_duration(&format!("{us}"), DefaultUnit::Micros), Ok(us * 1000));
            // Fractional ms with three decimals is exact to the µs.
            let text = format!("{}.{:03}ms", us / 1000, us % 1000);
            prop_assert_eq!(parse_duration(&text, DefaultUnit::Micros), Ok(us * 1000));
            let cell: f64 = TimeUnit::Us.convert(ns as f64);
            prop_assert!((cell * 1000.0 - ns as f64).abs() <= 1e-6 * ns as f64 + 1e-6);
        }
    }

    fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(s).unwrap().into()
    }

    #[test]
    fn since_takes_ages_and_dates() {
        let now = at("2026-05-10T12:00:00Z");
        let since = |t: &str| parse_since(t, now);
        assert_eq!(since("2d").unwrap(), "2026-05-08T12:00:00.000000Z");
        assert_eq!(since("1w").unwrap(), "2026-05-03T12:00:00.000000Z");
        assert_eq!(since("90m").unwrap(), "2026-05-10T10:30:00.000000Z");
        assert_eq!(since("2026-05-01").unwrap(), "2026-05-01T00:00:00.000000Z");
        let e = since("yesterday").unwrap_err();
        assert!(e.contains("2d"), "{e}");
    }

    proptest! {
        #[test]
        fn ages_in_hours_and_days_agree(n in 0u64..10_000) {
            let now = at("2026-05-10T12:00:00Z");
            prop_assert_eq!(parse_since(&format!("{n}d"), now).unwrap(), parse_since(&format!("{}h", n * 24), now).unwrap());
        }
    }
}
