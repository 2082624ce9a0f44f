//! The guard in front of every load: refuses what the machine cannot carry
//! before a worker starts.

use super::spec::LoadSpec;
use crate::error::UsageError;
use crate::limits::Bytes;
use crate::record::Warning;
use anyhow::Result;
use rtlab_engine::load::{io, Load};

/// Refuses loads the machine cannot carry (unless their spec says `force`):
/// memory beyond 90% of MemAvailable, io without the free space it needs.
pub fn check(specs: &[LoadSpec]) -> Result<Vec<Warning>> {
    let mut warnings = Vec::new();
    let guarded: Vec<&LoadSpec> = specs.iter().filter(|s| !s.force).collect();
    let need = guarded.iter().fold(0u64, |sum, s| {
        sum.saturating_add(s.load.memory_per_worker().saturating_mul(s.workers as u64))
    });
    let over_budget = crate::limits::memory_budget().is_some_and(|budget| need > budget);
    if let (true, Some(available)) = (over_budget, crate::limits::available_memory()) {
        let what: Vec<String> = guarded
            .iter()
            .filter(|s| s.load.memory_per_worker() > 0)
            .map(|s| {
                format!(
                    "'{}' = {} × {}",
                    s.text,
                    s.workers,
                    Bytes(s.load.memory_per_worker())
                )
            })
            .collect();
        return Err(UsageError(format!(
            "load {} needs {} of memory, more than 90% of MemAvailable ({}): the OOM killer would step in. \
             Use fewer workers or a smaller size, or add 'force' to the spec (rtlab load: --force) to run it anyway",
            what.join(" + "),
            Bytes(need),
            Bytes(available)
        ))
        .into());
    }
    for s in specs {
        if let Load::Io {
            dir,
            bytes,
            sync: false,
        } = &s.load
        {
            let need = bytes.saturating_mul(s.workers as u64) + (16 << 20);
            match io::free_bytes(dir) {
                Some(free) if free < need && !s.force => {
                    return Err(UsageError(format!(
                        "load '{}': {dir} has {} free, the io load needs {} (bytes per file × workers + 16 MiB); \
                         choose another dir= or a smaller bytes=, or add 'force' to write until the disk is full",
                        s.text,
                        Bytes(free),
                        Bytes(need)
                    ))
                    .into())
                }
                None => {
                    return Err(UsageError(format!(
                        "load '{}': io dir {dir} does not exist or is not accessible (set dir=PATH)",
                        s.text
                    ))
                    .into())
                }
                _ => {}
            }
            if io::on_tmpfs(dir) {
                warnings.push(Warning::new(
                    "load_io_tmpfs",
                    format!(
                        "io load dir {dir} is a tmpfs: its writes and fsyncs never reach a disk"
                    ),
                ));
            }
        }
    }
    Ok(warnings)
}
