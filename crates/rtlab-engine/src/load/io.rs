//! `io`: create a file, write it, `fsync`, unlink, repeat; or a storm of `sync()`
//! calls after small writes. Files are named `rtlab-io-<pid>-<n>` and unlinked
//! after each op, so at most one per worker exists at a time; a supervisor removes
//! the leftovers of a killed worker by that prefix ([`file_prefix`]). ENOSPC and
//! other write errors are counted and survived.

use super::{sys, Ctx, LoadError};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// Bytes per `write(2)` call.
const BLOCK: usize = 64 << 10;

/// The name prefix of the files worker process `pid` creates.
pub fn file_prefix(pid: u32) -> String {
    format!("rtlab-io-{pid}-")
}

/// The default directory: `/var/tmp` (on disk on most systems, unlike a tmpfs
/// `/tmp`), else the system temp directory.
pub fn default_dir() -> String {
    if Path::new("/var/tmp").is_dir() {
        "/var/tmp".into()
    } else {
        std::env::temp_dir().to_string_lossy().into_owned()
    }
}

/// Writes files of `bytes` bytes in `dir` (or sync-storms) until stopped.
pub fn run(
    dir: &str,
    bytes: u64,
    sync: bool,
    ctx: &Ctx,
    ready: &mut dyn FnMut(),
) -> Result<(), LoadError> {
    let dir = Path::new(dir);
    if !dir.is_dir() {
        return Err(LoadError::Input(format!(
            "io dir {} is not a directory",
            dir.display()
        )));
    }
    let prefix = file_prefix(std::process::id());
    let block = vec![0xa5u8; BLOCK];
    let mut n = 0u64;
    // Probe once before `ready`, so that an unwritable directory is a start error.
    let probe = dir.join(format!("{prefix}probe"));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .map_err(|e| {
            LoadError::Input(format!(
                "io dir {}: cannot create a file: {e}",
                dir.display()
            ))
        })?;
    let _ = std::fs::remove_file(&probe);
    ready();
    while !ctx.stopped() {
        let path = dir.join(format!("{prefix}{n}"));
        n += 1;
        let ok = write_one(&path, &block, if sync { BLOCK as u64 } else { bytes }, ctx);
        if sync && ok.is_ok() {
            sys::sync_all();
        }
        let _ = std::fs::remove_file(&path);
        match ok {
            Ok(()) => ctx.counters.add(1, 0),
            Err(_) => {
                // ENOSPC, EIO, a vanished directory: count it, back off, go on.
                ctx.counters.errors.fetch_add(1, Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    Ok(())
}

/// Creates `path`, writes `bytes` bytes of `block` (counting them as they go) and
/// fsyncs, unless stopped first.
fn write_one(path: &Path, block: &[u8], bytes: u64, ctx: &Ctx) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let mut written = 0u64;
    while written < bytes && !ctx.stopped() {
        let n = (bytes - written).min(block.len() as u64) as usize;
        match f.write(&block[..n]) {
            Ok(w) => {
                written += w as u64;
                ctx.counters.bytes.fetch_add(w as u64, Relaxed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    f.sync_all()
}

/// Free bytes for an unprivileged user on the file system holding `dir`
/// (`statvfs(3)`).
pub fn free_bytes(dir: &str) -> Option<u64> {
    let c = std::ffi::CString::new(dir).ok()?;
    // SAFETY: statvfs(3) reads a NUL-terminated path and writes one struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Whether `dir` is on a tmpfs (RAM), where fsync writes nothing to a disk
/// (`statfs(2)`); false when it cannot be told.
pub fn on_tmpfs(dir: &str) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let Ok(c) = std::ffi::CString::new(dir) else {
        return false;
    };
    // SAFETY: a zeroed statfs is a valid value to be overwritten.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs(2) reads a NUL-terminated path and writes one struct.
    (unsafe { libc::statfs(c.as_ptr(), &mut st) }) == 0 && st.f_type as i64 == TMPFS_MAGIC
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_for, Load};
    use super::*;

    #[test]
    fn only_a_tmpfs_is_a_tmpfs() {
        assert!(!on_tmpfs("/proc"));
        assert!(!on_tmpfs("/no/such/dir"));
        assert!(!on_tmpfs("nul\0byte"));
    }

    #[test]
    fn writes_files_and_leaves_none() {
        for sync in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            let c = run_for(
                &Load::Io {
                    dir: dir.to_string_lossy().into(),
                    bytes: 256 << 10,
                    sync,
                },
                100,
            );
            assert!(c.ops > 0, "{c:?}");
            assert!(c.bytes > 0);
            assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
        }
    }

    #[test]
    fn a_missing_dir_is_a_start_error() {
        let counters = super::super::Counters::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let ctx = Ctx {
            counters: &counters,
            stop: &stop,
        };
        let e = run("/nonexistent/rtlab", 1, false, &ctx, &mut || {}).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/rtlab"));
    }

    #[test]
    fn free_space_is_known_for_the_default_dir() {
        assert!(free_bytes(&default_dir()).is_some());
        assert!(free_bytes("/nonexistent/rtlab").is_none());
    }
}
