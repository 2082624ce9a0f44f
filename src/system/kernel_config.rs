//! The kernel configuration: where the running kernel's can be found and how to read
//! one (plain, or gzip-compressed like `/proc/config.gz`). The fingerprint, the audit
//! and `rtlab kconfig` all read it here.

use anyhow::{Context, Result};
use rtlab_engine::sysinfo::SysRoot;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads a kernel configuration file, plain or gzip-compressed (`/proc/config.gz`).
pub fn read(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        // Configurations compress about sixfold: room for the text at once.
        let mut text = String::with_capacity(bytes.len() * 8);
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .with_context(|| format!("{} is not a valid gzip file", path.display()))?;
        Ok(text)
    } else {
        String::from_utf8(bytes).with_context(|| format!("{} is not text", path.display()))
    }
}

/// The readable configurations of kernel `release` below `root`, in the order they
/// are looked for: `/proc/config.gz`, then `/boot/config-<release>`, then
/// `/lib/modules/<release>/build/.config`. Each comes with its path.
pub fn candidates<'a>(
    root: &'a SysRoot,
    release: &str,
) -> impl Iterator<Item = (PathBuf, String)> + 'a {
    [
        "/proc/config.gz".to_string(),
        format!("/boot/config-{release}"),
        format!("/lib/modules/{release}/build/.config"),
    ]
    .into_iter()
    .filter_map(|abs| {
        let path = root.path(&abs);
        read(&path).ok().map(|text| (path, text))
    })
}

/// The running kernel's configuration and where it came from, if any is readable.
pub fn running() -> Option<(String, String)> {
    let release = rtlab_engine::sysinfo::uname().release;
    candidates(&SysRoot::default(), &release)
        .next()
        .map(|(path, text)| (path.display().to_string(), text))
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
        assert_eq!(read(&plain).unwrap(), "CONFIG_HZ=250\n");
        let gz = dir.path().join("config.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"CONFIG_HZ=1000\n").unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(read(&gz).unwrap(), "CONFIG_HZ=1000\n");
        assert!(read(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn candidates_come_in_order_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path());
        assert_eq!(candidates(&root, "6.1.0-rt").count(), 0);
        std::fs::create_dir_all(dir.path().join("lib/modules/6.1.0-rt/build")).unwrap();
        std::fs::write(dir.path().join("lib/modules/6.1.0-rt/build/.config"), "B\n").unwrap();
        std::fs::create_dir_all(dir.path().join("boot")).unwrap();
        std::fs::write(dir.path().join("boot/config-6.1.0-rt"), "A\n").unwrap();
        let found: Vec<_> = candidates(&root, "6.1.0-rt").collect();
        assert_eq!(
            found,
            [
                (dir.path().join("boot/config-6.1.0-rt"), "A\n".to_string()),
                (
                    dir.path().join("lib/modules/6.1.0-rt/build/.config"),
                    "B\n".to_string()
                ),
            ]
        );
    }
}
