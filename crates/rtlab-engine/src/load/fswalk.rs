//! `fswalk`: a recursive directory walk that `lstat`s every entry, like
//! `ls -lR /` (whose `lstat` calls caused periodic latency spikes in the field).
//! It stays on the root's file system and does not follow symbolic links unless
//! asked, ignores entries it may not read (counted as errors), and starts over when
//! the walk is done.

use super::{Ctx, LoadError};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

/// Walks `root` over and over until stopped.
pub fn run(
    root: &str,
    xdev: bool,
    follow: bool,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) -> Result<(), LoadError> {
    let meta = std::fs::metadata(root)
        .map_err(|e| LoadError::Input(format!("fswalk root {root}: {e}")))?;
    if !meta.is_dir() {
        return Err(LoadError::Input(format!(
            "fswalk root {root} is not a directory"
        )));
    }
    let root_dev = meta.dev();
    ready();
    let mut stack: Vec<PathBuf> = Vec::new();
    // Directories seen in this pass, only needed when links are followed (loops).
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    while !ctx.stopped() {
        stack.clear();
        seen.clear();
        stack.push(PathBuf::from(root));
        while let Some(dir) = stack.pop() {
            if ctx.stopped() {
                return Ok(());
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                ctx.counters.errors.fetch_add(1, Relaxed);
                continue;
            };
            for entry in entries {
                if ctx.stopped() {
                    return Ok(());
                }
                let Ok(entry) = entry else {
                    ctx.counters.errors.fetch_add(1, Relaxed);
                    continue;
                };
                // DirEntry::metadata is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW):
                // the lstat of `ls -l`.
                let Ok(m) = entry.metadata() else {
                    ctx.counters.errors.fetch_add(1, Relaxed);
                    continue;
                };
                ctx.counters.add(1, 0);
                let target = if m.file_type().is_symlink() && follow {
                    std::fs::metadata(entry.path()).ok()
                } else {
                    Some(m)
                };
                let Some(t) = target.filter(|t| t.is_dir()) else {
                    continue;
                };
                if !xdev && t.dev() != root_dev {
                    continue;
                }
                if follow && !seen.insert((t.dev(), t.ino())) {
                    continue;
                }
                stack.push(entry.path());
            }
        }
        ctx.counters.rounds.fetch_add(1, Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_until, Load};

    #[test]
    fn walks_a_tree_repeatedly_without_following_a_link_loop() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(dir, dir.join("a/loop")).unwrap();
        for follow in [false, true] {
            let c = run_until(
                &Load::Fswalk {
                    root: dir.to_string_lossy().into(),
                    xdev: false,
                    follow,
                },
                50,
                |c| c.rounds > 0,
            );
            // 4 entries per pass (a, a/b, a/b/f, a/loop); following the link would
            // recurse forever without the seen-set and never finish a pass.
            assert!(c.rounds > 0, "follow={follow}: {c:?}");
            assert!(c.ops >= 4 * c.rounds);
        }
    }
}
