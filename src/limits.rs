//! How much input may make rtlab allocate. A size that comes from a flag, a
//! scenario or a file is checked before anything is allocated: against a fixed
//! cap where one makes sense, and against the memory the system has available,
//! as the vm and memcopy loads are (90% of MemAvailable). Past that, an
//! allocation either fails (and Rust aborts) or succeeds on paper and brings in
//! the OOM killer; both are worse than exit 2 with a message.

use rtlab_engine::sysinfo::meminfo_kib;

/// MemAvailable in bytes, when the kernel reports it.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    match meminfo_kib(&meminfo, "MemAvailable") {
        0 => None,
        kib => Some(kib.saturating_mul(1024)),
    }
}

/// The most one command may claim: 90% of MemAvailable (`None`: unknown).
pub fn memory_budget() -> Option<u64> {
    available_memory().map(|b| b / 10 * 9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_reports_its_available_memory() {
        assert!(available_memory().is_some_and(|b| b > 0));
    }
}
