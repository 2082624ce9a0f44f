//! How much input may make rtlab allocate. A size that comes from a flag, a
//! scenario or a file is checked before anything is allocated: against a fixed
//! cap where one makes sense, and against the memory the system has available,
//! as the vm and memcopy loads are (90% of MemAvailable). Past that, an
//! allocation either fails (and Rust aborts) or succeeds on paper and brings in
//! the OOM killer; both are worse than exit 2 with a message.

use crate::error::bad_flag;
use anyhow::Result;
use rtlab_engine::sysinfo::meminfo_kib;
use std::fmt;

/// MemAvailable in bytes, when the kernel reports it.
pub fn available_memory() -> Option<u64> {
    let meminfo = rtlab_engine::sysinfo::read_text("/proc/meminfo").ok()?;
    match meminfo_kib(&meminfo, "MemAvailable") {
        0 => None,
        kib => Some(kib.saturating_mul(1024)),
    }
}

/// The most one command may claim: 90% of MemAvailable (`None`: unknown).
pub fn memory_budget() -> Option<u64> {
    available_memory().map(budget_of)
}

/// The most one command may claim of `available` bytes: 90%.
pub fn budget_of(available: u64) -> u64 {
    available / 10 * 9
}

/// A byte count in binary units, for messages: `1.5 GiB`.
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut u = 0;
        while v >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[u])
        }
    }
}

/// What a command would allocate: `bytes`, `what` says of what, `fix` says
/// how to ask for less.
pub struct Need<'a> {
    /// Bytes in all.
    pub bytes: u64,
    /// Of what (`one 30GiB block`).
    pub what: &'a str,
    /// How to ask for less (`give a smaller --block-size`).
    pub fix: &'a str,
}

/// Refuses, naming `flag`, a command whose allocations pass `budget` (from
/// [`memory_budget`]; `None`: not checked).
pub fn check_memory(flag: &str, need: &Need, budget: Option<u64>) -> Result<()> {
    match budget {
        Some(budget) if need.bytes > budget => Err(bad_flag(
            flag,
            format!(
                "{} needs {} of memory, more than 90% of MemAvailable ({}): the allocation would fail or the OOM killer would step in; {}",
                need.what,
                Bytes(need.bytes),
                Bytes(budget),
                need.fix
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_shown_in_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(30 << 30).to_string(), "30.0 GiB");
    }

    #[test]
    fn a_need_above_the_budget_is_refused_naming_the_flag() {
        let need = |bytes| Need {
            bytes,
            what: "one 2 GiB block",
            fix: "give a smaller --block-size",
        };
        let e = check_memory("--block-size", &need(2 << 30), Some(1 << 30)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("--block-size: one 2 GiB block needs 2.0 GiB"),
            "{msg}"
        );
        assert!(msg.contains("MemAvailable (1.0 GiB)"), "{msg}");
        assert!(msg.ends_with("give a smaller --block-size"), "{msg}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(check_memory("--x", &need(1 << 30), Some(1 << 30)).is_ok());
        assert!(check_memory("--x", &need(u64::MAX), None).is_ok());
    }

    #[test]
    fn this_machine_reports_its_available_memory() {
        assert!(available_memory().is_some_and(|b| b > 0));
    }
}
