//! The test files of the fileio bench on disk.
//!
//! [`prepare`] makes a private directory `rtlab-fileio.<pid>` in the chosen
//! directory and `files` files of `total_size / files` bytes each, written in
//! blocks and fsynced (for `seqwr` the files start empty, as sysbench's). The
//! returned [`FileSet`] removes them all when dropped: after success, after an
//! error, and after Ctrl-C (the stop flag ends preparing and running, then the
//! set is dropped normally).
//!
//! sysbench's own way, prepare, run and cleanup as three commands, works on a
//! set in place: [`prepare_file`] makes or reuses each `test_file.<n>` in the
//! directory itself, [`FileSet::in_place`] names them for a run and leaves them
//! there, and removing them is the caller's `cleanup`.

use super::fileio::{FileioConfig, Mode, ALIGN};
use super::{EventError, Op};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Space on a file system, from `statvfs(3)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged user may still write.
    pub available: u64,
    /// Whether it is mounted read-only.
    pub read_only: bool,
}

/// What a file set of `need` bytes leaves free for the file system's own
/// metadata: 1%, at least 16 MiB.
pub fn space_margin(need: u64) -> u64 {
    (need / 100).max(16 << 20)
}

/// The free space and read-only flag of the file system holding `dir`.
pub fn space(dir: &Path) -> Result<Space, i32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: statvfs(3) reads a NUL-terminated path and fills one struct through a
    // valid pointer; a zeroed statvfs is a valid value to overwrite.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(crate::rt::errno());
    }
    Ok(Space {
        available: (st.f_bavail as u64).saturating_mul(st.f_frsize as u64),
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// Why preparing stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepareError {
    /// The stop flag was raised (Ctrl-C); what was made is removed.
    Interrupted,
    /// A file could not be created or written (`ENOSPC`, `EROFS`, `EACCES`).
    Io(EventError),
}

/// The name of file `i` of a set: `test_file.<i>`, as sysbench names them.
pub fn file_name(i: u32) -> String {
    format!("test_file.{i}")
}

/// The test files on disk. A set that [`prepare`] made removes its files and
/// its private directory when dropped; a set [`FileSet::in_place`] leaves them.
#[derive(Debug)]
pub struct FileSet {
    dir: PathBuf,
    files: u32,
    owned: bool,
}

impl FileSet {
    /// The files `test_file.0` ... `test_file.<files - 1>` in `dir`, made by
    /// [`prepare_file`] (or by a `seqwr` run, which creates them); dropping
    /// the set leaves them.
    pub fn in_place(dir: &Path, files: u32) -> FileSet {
        FileSet {
            dir: dir.to_path_buf(),
            files,
            owned: false,
        }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, i: u32) -> PathBuf {
        self.dir.join(file_name(i))
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        for i in 0..self.files {
            let _ = std::fs::remove_file(self.path(i));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

pub(super) fn io_err(op: Op, file: u32, e: &std::io::Error) -> EventError {
    EventError {
        op,
        errno: e.raw_os_error().unwrap_or(match e.kind() {
            // A write that made no progress: the file system is full.
            std::io::ErrorKind::WriteZero => libc::ENOSPC,
            _ => libc::EIO,
        }),
        file,
    }
}

/// A zeroed buffer of `len` bytes starting at an [`ALIGN`]-aligned address:
/// `(storage, offset)`, the buffer being `storage[offset..offset + len]`.
pub(super) fn aligned(len: usize) -> (Vec<u8>, usize) {
    let storage = vec![0u8; len + ALIGN];
    let off = storage.as_ptr().align_offset(ALIGN);
    (storage, off)
}

/// Opens file `i` of `set`; with `fresh`, creates it or empties it.
pub(super) fn open(
    set: &FileSet,
    i: u32,
    cfg: &FileioConfig,
    fresh: bool,
) -> Result<File, EventError> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(fresh).truncate(fresh);
    if cfg.direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(set.path(i)).map_err(|e| io_err(Op::Open, i, &e))
}

/// Creates the private directory in `parent` and the files (full for every mode
/// but `seqwr`). Checks `stop` between blocks.
pub fn prepare(
    cfg: &FileioConfig,
    parent: &Path,
    stop: &AtomicBool,
) -> Result<FileSet, PrepareError> {
    let mut n = 0;
    let dir = loop {
        let name = match n {
            0 => format!("rtlab-fileio.{}", std::process::id()),
            _ => format!("rtlab-fileio.{}.{n}", std::process::id()),
        };
        let d = parent.join(name);
        match std::fs::create_dir(&d) {
            Ok(()) => break d,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(PrepareError::Io(io_err(Op::Open, 0, &e))),
        }
    };
    let mut set = FileSet {
        dir,
        files: 0,
        owned: true,
    };
    for i in 0..cfg.files {
        let f = open(&set, i, cfg, true).map_err(PrepareError::Io)?;
        set.files = i + 1;
        if cfg.mode != Mode::SeqWr {
            fill(cfg, &f, i, 0, stop)?;
        }
    }
    Ok(set)
}

/// Writes file `i` (open as `f`) in blocks from `from` (a multiple of the block
/// size) to its full size and syncs it; the bytes written.
fn fill(
    cfg: &FileioConfig,
    f: &File,
    i: u32,
    from: u64,
    stop: &AtomicBool,
) -> Result<u64, PrepareError> {
    let (storage, off) = aligned(cfg.block_size as usize);
    let buf = &storage[off..off + cfg.block_size as usize];
    let mut pos = from;
    while pos < cfg.file_size {
        if stop.load(Ordering::Relaxed) {
            return Err(PrepareError::Interrupted);
        }
        f.write_all_at(buf, pos)
            .map_err(|e| PrepareError::Io(io_err(Op::Write, i, &e)))?;
        pos += cfg.block_size;
    }
    f.sync_all()
        .map_err(|e| PrepareError::Io(io_err(Op::Fsync, i, &e)))?;
    Ok(pos - from)
}

/// What [`prepare_file`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// The file did not exist; it was made.
    Created,
    /// The file was long enough already; nothing was written.
    Reused,
    /// The file was shorter than the set needs; it was written to its size.
    Extended,
}

/// sysbench's `fileio prepare` of file `i` of the set in `dir` itself
/// (`test_file.<i>`, left in place): made and written in blocks when missing,
/// reused when long enough, written on from its last whole block when
/// shorter; synced. Returns what it did and the bytes it wrote. Checks `stop`
/// between blocks; a file it was making when stopped is removed.
pub fn prepare_file(
    cfg: &FileioConfig,
    dir: &Path,
    i: u32,
    stop: &AtomicBool,
) -> Result<(Prepared, u64), PrepareError> {
    let set = FileSet::in_place(dir, cfg.files);
    let len = std::fs::metadata(set.path(i)).map(|m| m.len()).ok();
    if len.is_some_and(|l| l >= cfg.file_size) {
        return Ok((Prepared::Reused, 0));
    }
    let f = open(&set, i, cfg, len.is_none()).map_err(PrepareError::Io)?;
    let from = len.map_or(0, |l| l / cfg.block_size * cfg.block_size);
    match fill(cfg, &f, i, from, stop) {
        Ok(n) if len.is_some() => Ok((Prepared::Extended, n)),
        Ok(n) => Ok((Prepared::Created, n)),
        Err(e) => {
            if len.is_none() {
                let _ = std::fs::remove_file(set.path(i));
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fileio::tests::cfg;
    use super::super::fileio::Fileio;
    use super::super::test_run;
    use super::*;

    #[test]
    fn a_set_in_place_is_prepared_reused_extended_and_left_there() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, c, never) = (tmp.path(), cfg(Mode::RndRw), AtomicBool::new(false));
        let size = c.file_size;
        for i in 0..c.files {
            assert_eq!(
                prepare_file(&c, dir, i, &never).unwrap(),
                (Prepared::Created, size)
            );
        }
        assert_eq!(
            prepare_file(&c, dir, 0, &never).unwrap(),
            (Prepared::Reused, 0)
        );
        let short = File::options()
            .write(true)
            .open(dir.join(file_name(1)))
            .unwrap();
        short.set_len(size / 2 + 100).unwrap();
        assert_eq!(
            prepare_file(&c, dir, 1, &never).unwrap(),
            (Prepared::Extended, size / 2)
        );
        let set = FileSet::in_place(dir, c.files);
        let w = Fileio::open(c, &set).unwrap();
        let out = test_run(&w, 2, 0, 50);
        assert!(out.error.is_none());
        drop(w);
        drop(set);
        for i in 0..c.files {
            assert_eq!(
                std::fs::metadata(dir.join(file_name(i))).unwrap().len(),
                size
            );
        }
        // seqwr empties the files and writes them from the start, as sysbench's.
        let seqwr = cfg(Mode::SeqWr);
        let set = FileSet::in_place(dir, c.files);
        let w = Fileio::open(seqwr, &set).unwrap();
        assert!(test_run(&w, 1, 0, 2).error.is_none());
        let len = std::fs::metadata(dir.join(file_name(0))).unwrap().len();
        assert_eq!(len, 2 * seqwr.block_size);
        let stop = AtomicBool::new(true);
        let gone = dir.join(file_name(7));
        assert_eq!(
            prepare_file(&c, dir, 7, &stop).unwrap_err(),
            PrepareError::Interrupted
        );
        assert!(!gone.exists(), "a file being made when stopped is removed");
    }

    #[test]
    fn interrupted_prepare_removes_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        assert_eq!(
            prepare(&cfg(Mode::RndRd), tmp.path(), &stop).unwrap_err(),
            PrepareError::Interrupted
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn space_of_a_directory() {
        let s = space(&std::env::temp_dir()).unwrap();
        assert!(s.available > 0);
        assert_eq!(space(Path::new("/nonexistent/rtlab")), Err(libc::ENOENT));
    }
}
