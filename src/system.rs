//! The system fingerprint as the binary records it: the engine's fingerprint plus the
//! running kernel's configuration (which may need gunzipping), and the warnings
//! every measuring command attaches to its run.

use crate::record::Warning;
use anyhow::{Context, Result};
use rtlab_engine::sysinfo::{self, Fingerprint};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads a kernel configuration file, plain or gzip-compressed (`/proc/config.gz`).
pub fn read_kernel_config(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .with_context(|| format!("{} is not a valid gzip file", path.display()))?;
        Ok(text)
    } else {
        String::from_utf8(bytes).with_context(|| format!("{} is not text", path.display()))
    }
}

/// Where the running kernel's configuration can be found: `/proc/config.gz`, then
/// `/boot/config-<release>`, then `/lib/modules/<release>/build/.config`.
pub fn running_kernel_config_paths(release: &str) -> Vec<PathBuf> {
    vec![
        PathBuf::from("/proc/config.gz"),
        PathBuf::from(format!("/boot/config-{release}")),
        PathBuf::from(format!("/lib/modules/{release}/build/.config")),
    ]
}

/// The running kernel's configuration and where it came from, if any is readable.
pub fn running_kernel_config() -> Option<(String, String)> {
    let release = sysinfo::collect(None).kernel_release;
    running_kernel_config_paths(&release)
        .into_iter()
        .find_map(|p| {
            read_kernel_config(&p)
                .ok()
                .map(|t| (p.display().to_string(), t))
        })
}

/// The fingerprint of this system, with the kernel configuration when available.
pub fn fingerprint() -> Fingerprint {
    match running_kernel_config() {
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
    use std::io::Write;

    #[test]
    fn reads_plain_and_gzipped_configs() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("config");
        std::fs::write(&plain, "CONFIG_HZ=250\n").unwrap();
        assert_eq!(read_kernel_config(&plain).unwrap(), "CONFIG_HZ=250\n");
        let gz = dir.path().join("config.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"CONFIG_HZ=1000\n").unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(read_kernel_config(&gz).unwrap(), "CONFIG_HZ=1000\n");
        assert!(read_kernel_config(&dir.path().join("missing")).is_err());
    }

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
