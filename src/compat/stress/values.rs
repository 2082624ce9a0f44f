//! The values stress and stress-ng take (worker counts, times, sizes, the
//! directory their files go in), read as the tools read them, and the words of
//! a scan error.

use super::getopt::ScanError;
use crate::error::{bad_flag, UsageError};
use anyhow::Result;
use std::path::Path;

/// The message of a scan error, in the words of `tool`.
pub fn scan_error(e: ScanError, tool: &str) -> anyhow::Error {
    let msg = match e {
        ScanError::Unknown(o) => format!("{tool} has no option {o} (see {tool} --help)"),
        ScanError::MissingValue(o) => format!("{o} needs a value"),
        ScanError::UnexpectedValue(o) => format!("{o} takes no value"),
        ScanError::Stray(a) => {
            format!("'{a}' is not an option; {tool} takes options only (see {tool} --help)")
        }
    };
    UsageError(msg).into()
}

/// The most workers of one kind (rtlab's load limit).
const MAX_WORKERS: u32 = 4096;

/// A worker count: 0 to 4096.
pub fn count(flag: &str, v: &str) -> Result<u32> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n <= MAX_WORKERS)
        .ok_or_else(|| {
            bad_flag(
                flag,
                format!("'{v}' is not a number of workers from 0 to {MAX_WORKERS}"),
            )
        })
}

/// A time as stress and stress-ng read it: whole seconds (a fraction is cut
/// off, as they cut it), bare or with s, m, h, d or y (a year of `year_s`).
pub fn seconds(flag: &str, v: &str, year_s: u64) -> Result<u64> {
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3_600),
        "d" => Some(86_400),
        "y" => Some(year_s),
        _ => None,
    };
    let whole = num.split_once('.').map_or(num, |(w, _)| w);
    let n = num.parse::<f64>().ok().and_then(|_| {
        if whole.is_empty() {
            Some(0)
        } else {
            whole.parse::<u64>().ok()
        }
    });
    match (n, mult) {
        (Some(n), Some(m)) => n
            .checked_mul(m)
            .ok_or_else(|| bad_flag(flag, format!("'{v}' is too long"))),
        _ => Err(bad_flag(
            flag,
            format!("'{v}' is not a time: a number of seconds, or with s, m, h, d or y (10s, 5m)"),
        )),
    }
}

/// A size in bytes with b, k, m or g (powers of 1024), above zero.
pub fn size(flag: &str, v: &str) -> Result<u64> {
    match crate::units::parse_size(v).map_err(|e| bad_flag(flag, e))? {
        0 => Err(bad_flag(
            flag,
            format!("'{v}' is zero; give a size such as 64M"),
        )),
        b => Ok(b),
    }
}

/// `bytes` as a load spec takes it, in the largest unit that divides it (`256M`).
pub fn size_text(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A vm size a worker can map: at least one page.
pub fn vm_size(flag: &str, bytes: u64) -> Result<u64> {
    let page = rtlab_engine::load::sys::page_size() as u64;
    if bytes < page {
        return Err(bad_flag(
            flag,
            format!("{bytes} bytes is below one page ({page})"),
        ));
    }
    Ok(bytes)
}

/// The directory the io and hdd workers write in, as the tools choose it: the
/// current one (stress-ng: or --temp-path), as an io load spec can hold it.
pub fn io_dir(dir: &Path, what: &str) -> Result<String> {
    let d = dir.to_str().unwrap_or_default();
    if d.is_empty() || d.contains(char::is_whitespace) {
        return Err(UsageError(format!(
            "{what} writes its files in '{}', a name with a space or not UTF-8, which rtlab's io load cannot take; use another directory",
            dir.display()
        ))
        .into());
    }
    Ok(d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_the_tools_read_them() {
        for (v, want) in [
            ("10", 10),
            ("10s", 10),
            ("10S", 10),
            ("2m", 120),
            ("2M", 120),
            ("1h", 3600),
            ("1d", 86_400),
            ("1y", 7),
            ("1.9", 1),
            ("0.5m", 0),
            (".5", 0),
        ] {
            assert_eq!(seconds("-t", v, 7).unwrap(), want, "{v}");
        }
        for v in ["", "x", "1ms", "-1", "1..2", "99999999999999999999"] {
            assert!(seconds("-t", v, 7).is_err(), "{v}");
        }
    }

    #[test]
    fn sizes_in_specs_are_short_and_exact() {
        for (b, t) in [
            (256 << 20, "256M"),
            (1 << 30, "1G"),
            (1 << 40, "1T"),
            (8192, "8K"),
            (4097, "4097"),
            (1536 << 20, "1536M"),
        ] {
            assert_eq!(size_text(b), t);
            assert_eq!(crate::units::parse_size(t).unwrap(), b);
        }
    }
}
