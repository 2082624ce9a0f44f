//! Loads run while a probe measures: started with warnings where they share CPUs
//! or SMT siblings with the probe's threads, stopped into their records.

use super::placement::{allowed_cpus, Placement};
use super::set::LoadSet;
use super::spec::LoadSpec;
use crate::record::{LoadRecord, Warning};
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;

/// Loads started for a measurement.
pub struct Running {
    set: Option<LoadSet>,
    /// Warnings known at start (shared CPUs, tmpfs io dir).
    pub warnings: Vec<Warning>,
}

impl Running {
    /// Starts the loads (if any) and works out whether they share CPUs with probe
    /// threads placed on `probe_cpus` (`None`: unpinned).
    pub fn start(
        specs: &[LoadSpec],
        placement: &Placement,
        probe_cpus: &[Option<usize>],
    ) -> Result<Running> {
        if specs.is_empty() {
            return Ok(Running {
                set: None,
                warnings: Vec::new(),
            });
        }
        let allowed = allowed_cpus();
        let load_cpus = placement.cpus.clone().unwrap_or_else(|| allowed.clone());
        let probe: Vec<usize> = if probe_cpus.iter().any(Option::is_none) {
            allowed
        } else {
            probe_cpus.iter().flatten().copied().collect()
        };
        let set = LoadSet::start(specs, placement)?;
        let mut warnings = sharing_warnings(&load_cpus, &probe, smt_siblings);
        warnings.extend_from_slice(set.start_warnings());
        Ok(Running {
            set: Some(set),
            warnings,
        })
    }

    /// Stops the loads; their records and any new warnings.
    pub fn finish(self) -> (Vec<LoadRecord>, Vec<Warning>) {
        match self.set {
            Some(set) => {
                let done = set.stop();
                (done.records, done.warnings)
            }
            None => (Vec::new(), Vec::new()),
        }
    }
}

/// The SMT siblings of `cpu` (itself included), from sysfs.
fn smt_siblings(cpu: usize) -> Option<CpuList> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    rtlab_engine::sysinfo::read_text(path)
        .ok()
        .and_then(|s| CpuList::parse(&s).ok())
}

/// Warnings when load CPUs are probe CPUs, or SMT siblings of them.
fn sharing_warnings(
    load: &[usize],
    probe: &[usize],
    siblings: impl Fn(usize) -> Option<CpuList>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let shared: Vec<usize> = probe.iter().copied().filter(|c| load.contains(c)).collect();
    if !shared.is_empty() {
        out.push(Warning::new(
            "load_cpu_shared",
            format!(
                "loads run on CPU {} where probe threads run too: the probe competes with them for those CPUs \
                 (use --load-cpus to keep them apart)",
                CpuList::from_cpus(shared)
            ),
        ));
    }
    let mut smt = Vec::new();
    for &p in probe {
        if let Some(sib) = siblings(p) {
            smt.extend(
                sib.cpus()
                    .iter()
                    .copied()
                    .filter(|&s| s != p && load.contains(&s) && !probe.contains(&s)),
            );
        }
    }
    if !smt.is_empty() {
        out.push(Warning::new(
            "load_smt_shared",
            format!(
                "loads run on CPU {}, SMT siblings of probe CPUs: they share a core's execution units and caches",
                CpuList::from_cpus(smt)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharing_is_reported() {
        let sib = |c: usize| Some(CpuList::from_cpus(vec![c & !1, c | 1]));
        let w = sharing_warnings(&[0, 1], &[0], sib);
        let codes: Vec<&str> = w.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["load_cpu_shared", "load_smt_shared"]);
        assert!(w[0].message.contains("CPU 0 "));
        assert!(w[1].message.contains("CPU 1,"));
        assert!(sharing_warnings(&[2, 3], &[0], sib).is_empty());
        let w = sharing_warnings(&[1], &[0], sib);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, "load_smt_shared");
    }
}
