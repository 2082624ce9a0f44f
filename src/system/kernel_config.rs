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
/// are looked for ([`candidate_paths`]). Each comes with its path.
pub fn candidates<'a>(
    root: &'a SysRoot,
    release: &str,
) -> impl Iterator<Item = (PathBuf, String)> + 'a {
    candidate_paths(root, release)
        .into_iter()
        .filter_map(|path| read(&path).ok().map(|text| (path, text)))
}

/// Where the configuration of kernel `release` is looked for below `root`, in
/// order: `/proc/config.gz`, then `/boot/config-<release>`, then
/// `/lib/modules/<release>/build/.config`.
fn candidate_paths(root: &SysRoot, release: &str) -> [PathBuf; 3] {
    [
        root.path("/proc/config.gz"),
        root.path(&format!("/boot/config-{release}")),
        root.path(&format!("/lib/modules/{release}/build/.config")),
    ]
}

/// Where a run keeps the lines it reads of the running kernel's configuration
/// for the rest of the boot: in `/run` (memory, emptied at each boot), in a
/// directory of root's own.
pub const CACHE_DIR: &str = "/run/rtlab";
const CACHE_FILE: &str = "kernel-config";
const CACHE_MAGIC: &str = "rtlab kernel configuration lines 1";

/// The first configuration of [`candidates`] that `accept` takes, reduced to
/// the lines `keep` keeps (in their order), with its path and what `accept`
/// makes of the reduction. Decompressing and scanning a whole configuration
/// costs a run about a millisecond; with `cache` (a directory), the reduction
/// is read from there while the boot and the candidate files are those it was
/// made from (boot id; device, inode, size and time of each file) and `kept`
/// names what `keep` keeps (a build that reads other lines reads the file
/// again), and written there otherwise. A run reads the same lines either
/// way. A reduction that `accept` refuses is never kept: the whole text is used.
pub fn first_reduced<T>(
    root: &SysRoot,
    release: &str,
    cache: Option<&Path>,
    (kept, keep): (&str, impl Fn(&str) -> bool),
    accept: impl Fn(&str) -> Option<T>,
) -> Option<(PathBuf, String, T)> {
    let paths = candidate_paths(root, release);
    let cache = cache.and_then(|dir| Some((dir, cache_key(root, &paths, kept)?)));
    if let Some((path, text)) = cache
        .as_ref()
        .and_then(|(dir, key)| cached(dir, key, &paths))
    {
        if let Some(t) = accept(&text) {
            return Some((path, text, t));
        }
    }
    let (path, full) = paths.iter().find_map(|path| {
        let text = read(path).ok()?;
        accept(&text).map(|_| (path.clone(), text))
    })?;
    let mut reduced = String::new();
    for line in full.lines().filter(|l| keep(l)) {
        reduced.push_str(line);
        reduced.push('\n');
    }
    match accept(&reduced) {
        Some(t) => {
            if let Some((dir, key)) = &cache {
                // Best effort: without it the next run reads the whole text again.
                let _ = store_cache(dir, key, &path, &reduced);
            }
            Some((path, reduced, t))
        }
        None => accept(&full).map(|t| (path, full, t)),
    }
}

/// What a reduction is valid for: the lines it keeps (`kept`), this boot, and
/// each candidate file as it is (or its absence).
fn cache_key(root: &SysRoot, paths: &[PathBuf], kept: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let boot = root
        .read("/proc/sys/kernel/random/boot_id")
        .filter(|b| !b.is_empty() && !b.contains('\n'))?;
    let kept = kept.replace('\n', " ");
    let mut key = format!("keeps {kept}\nboot {boot}\n");
    for path in paths {
        let path = path.to_str().filter(|p| !p.contains('\n'))?;
        match std::fs::metadata(path) {
            Ok(m) => key.push_str(&format!(
                "{path} {} {} {} {}.{:09}\n",
                m.dev(),
                m.ino(),
                m.size(),
                m.mtime(),
                m.mtime_nsec()
            )),
            Err(_) => key.push_str(&format!("{path} -\n")),
        }
    }
    Some(key)
}

/// Whether `dir` may hold the cache: a directory (not a link to one) of this
/// user's own that no one else may write.
fn trusted_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(dir).is_ok_and(|m| {
        m.is_dir() && m.uid() == rtlab_engine::rt::process::effective_uid() && m.mode() & 0o022 == 0
    })
}

/// The path and the reduction kept in `dir` for `key`, if any.
fn cached(dir: &Path, key: &str, paths: &[PathBuf]) -> Option<(PathBuf, String)> {
    if !trusted_dir(dir) {
        return None;
    }
    let text = std::fs::read_to_string(dir.join(CACHE_FILE)).ok()?;
    let rest = text.strip_prefix(CACHE_MAGIC)?.strip_prefix('\n')?;
    let rest = rest.strip_prefix(key)?.strip_prefix("source ")?;
    let (source, lines) = rest.split_once('\n')?;
    let path = paths.iter().find(|p| p.to_str() == Some(source))?;
    Some((path.clone(), lines.to_string()))
}

/// Keeps `reduced`, read from `source`, in `dir` for `key` (the directory is
/// made, root's only, when missing).
fn store_cache(dir: &Path, key: &str, source: &Path, reduced: &str) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    if !trusted_dir(dir) {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    let text = format!("{CACHE_MAGIC}\n{key}source {}\n{reduced}", source.display());
    crate::files::NewFile::at(&dir.join(CACHE_FILE))
        .mode(crate::files::SECRET)
        .write(text.as_bytes())
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
