//! Keeping the measured CPUs out of deep idle states for a run (cyclictest's
//! `--deepest-idle-state`): the cpuidle states deeper than the limit are
//! disabled through sysfs, and each is set back as it was when the run ends.

use crate::error::SystemError;
use anyhow::Result;
use std::path::PathBuf;

fn states_dir(cpu: usize) -> PathBuf {
    PathBuf::from(format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle"))
}

/// The `disable` files of the states of `cpu` deeper than `deepest`.
fn deeper(cpu: usize, deepest: u32) -> Result<Vec<PathBuf>> {
    let dir = states_dir(cpu);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        SystemError(format!(
            "--deepest-idle-state: CPU {cpu} has no cpuidle states ({}: {e}); this kernel does not let idle states be limited",
            dir.display()
        ))
    })?;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix("state")
            .and_then(|n| n.parse::<u32>().ok())
        {
            if n > deepest {
                out.push(e.path().join("disable"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Refuses the limit when a CPU has no cpuidle states or its states cannot be
/// changed by this process.
pub fn check(cpus: &[usize], deepest: u32) -> Result<()> {
    for &cpu in cpus {
        for path in deeper(cpu, deepest)? {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| {
                    SystemError(format!(
                        "--deepest-idle-state: cannot disable {} ({e}); run as root",
                        path.display()
                    ))
                })?;
        }
    }
    Ok(())
}

/// Idle states disabled for a run; dropping it sets them back.
pub struct IdleLimit {
    saved: Vec<(PathBuf, String)>,
}

impl IdleLimit {
    /// Disables the states of `cpus` deeper than `deepest`.
    pub fn apply(cpus: &[usize], deepest: u32) -> Result<IdleLimit> {
        let mut limit = IdleLimit { saved: Vec::new() };
        for &cpu in cpus {
            for path in deeper(cpu, deepest)? {
                let was = rtlab_engine::sysinfo::read_text(&path).unwrap_or_else(|_| "0".into());
                std::fs::write(&path, "1").map_err(|e| {
                    SystemError(format!(
                        "--deepest-idle-state: cannot disable {} ({e})",
                        path.display()
                    ))
                })?;
                limit.saved.push((path, was.trim().to_string()));
            }
        }
        Ok(limit)
    }
}

impl Drop for IdleLimit {
    fn drop(&mut self) {
        for (path, was) in self.saved.iter().rev() {
            let _ = std::fs::write(path, was);
        }
    }
}
