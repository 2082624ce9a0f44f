//! The system fingerprint as the binary records it: the engine's fingerprint plus the
//! running kernel's configuration (which may need gunzipping), the warnings
//! every measuring command attaches to its run, and what else the machine did
//! while it measured (`background`).

pub mod background;
pub mod kernel_config;

use crate::record::Warning;
use rtlab_engine::sysinfo::{self, Fingerprint};

/// The fingerprint of this system, with the kernel configuration when available.
pub fn fingerprint() -> Fingerprint {
    match kernel_config::running() {
        Some((src, text)) => sysinfo::collect(Some((&src, text))),
        None => sysinfo::collect(None),
    }
}

/// The warnings a fingerprint alone justifies.
pub fn fingerprint_warnings(fp: &Fingerprint) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(h) = &fp.hypervisor {
        w.push(Warning::new(
            "vm",
            format!(
                "running under a hypervisor ({h}): maxima reflect the hypervisor's scheduling of virtual CPUs, not this kernel alone"
            ),
        ));
    }
    if let Some(c) = &fp.container {
        w.push(Warning::new(
            "container",
            format!("running in a container ({c}): priorities and cpu_dma_latency may be limited by the runtime"),
        ));
    }
    if fp.sched_rt_runtime_us == Some(-1) {
        w.push(Warning::new(
            "rt_throttling_off",
            "RT throttling is disabled (sched_rt_runtime_us = -1): a runaway SCHED_FIFO task can hang the machine",
        ));
    }
    let slow_governor = fp.governors.iter().any(|g| {
        matches!(
            g.as_str(),
            "powersave" | "ondemand" | "conservative" | "schedutil"
        )
    });
    if slow_governor {
        w.push(Warning::new(
            "governor",
            format!(
                "CPU frequency governor is {}: frequency changes add latency (use 'performance')",
                fp.governors.join(",")
            ),
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_gives_the_hypervisor_warning() {
        let fp = Fingerprint {
            hypervisor: Some("kvm".into()),
            ..Fingerprint::default()
        };
        let w = fingerprint_warnings(&fp);
        assert!(w
            .iter()
            .any(|w| w.code == "vm" && w.message.contains("maxima reflect the hypervisor")));
    }
}
