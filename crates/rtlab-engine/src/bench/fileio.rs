//! The fileio bench: sysbench's `fileio` test, prepared, run and cleaned up in
//! one go.
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
//!
//! Request sequence, as sysbench's: sequential modes walk file 0 to the last in
//! blocks and wrap around; random modes pick a block-aligned offset uniformly
//! over the whole set; `rndrw` reads when `(reads + 1) / (writes + 1) < rw_ratio`
//! (counted per thread) and writes otherwise. Once a write made the set dirty,
//! a request number divisible by `fsync_freq` turns the next requests into
//! `fsync`s of each file in turn until all are clean; each fsync is an event.
//! With `fsync_end` every thread syncs all files after its last event (not in
//! read-only modes), inside the timed window.

use super::{EventCtl, EventError, Op, Rng, Tally, Workload};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Buffers are aligned to this for O_DIRECT.
pub const ALIGN: usize = 4096;

/// The test mode (sysbench's `--file-test-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Sequential write into files that start empty.
    SeqWr,
    /// Sequential rewrite of prepared files.
    SeqRewr,
    /// Sequential read.
    SeqRd,
    /// Random read.
    RndRd,
    /// Random write.
    RndWr,
    /// Random reads and writes in `rw_ratio`.
    RndRw,
}

impl Mode {
    /// sysbench's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::SeqWr => "seqwr",
            Mode::SeqRewr => "seqrewr",
            Mode::SeqRd => "seqrd",
            Mode::RndRd => "rndrd",
            Mode::RndWr => "rndwr",
            Mode::RndRw => "rndrw",
        }
    }

    fn sequential(self) -> bool {
        matches!(self, Mode::SeqWr | Mode::SeqRewr | Mode::SeqRd)
    }

    /// Whether the mode writes.
    pub fn writes(self) -> bool {
        !matches!(self, Mode::SeqRd | Mode::RndRd)
    }
}

/// The parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileioConfig {
    /// Number of files.
    pub files: u32,
    /// Bytes per file (a multiple of `block_size`).
    pub file_size: u64,
    /// Bytes per request.
    pub block_size: u64,
    /// Test mode.
    pub mode: Mode,
    /// Reads per write in `rndrw`.
    pub rw_ratio: f64,
    /// fsync every this many requests (0: never).
    pub fsync_freq: u64,
    /// fsync all files at the end of each thread.
    pub fsync_end: bool,
    /// Open with O_DIRECT (bypass the page cache).
    pub direct: bool,
}

impl FileioConfig {
    /// Bytes in the whole set.
    pub fn total_size(&self) -> u64 {
        self.file_size * u64::from(self.files)
    }
}

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

fn io_err(op: Op, file: u32, e: &std::io::Error) -> EventError {
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
fn aligned(len: usize) -> (Vec<u8>, usize) {
    let storage = vec![0u8; len + ALIGN];
    let off = storage.as_ptr().align_offset(ALIGN);
    (storage, off)
}

/// Opens file `i` of `set`; with `fresh`, creates it or empties it.
fn open(set: &FileSet, i: u32, cfg: &FileioConfig, fresh: bool) -> Result<File, EventError> {
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

/// Request scheduling shared by all threads (sysbench keeps it under one lock).
#[derive(Debug, Default)]
struct Schedule {
    requests: u64,
    dirty: bool,
    fsync_next: u32,
    file: u32,
    pos: u64,
}

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    Read { file: u32, pos: u64 },
    Write { file: u32, pos: u64 },
    Fsync { file: u32 },
}

/// The fileio workload over an open [`FileSet`].
pub struct Fileio {
    cfg: FileioConfig,
    files: Vec<File>,
    schedule: Mutex<Schedule>,
}

/// A thread's buffer and random generator.
pub struct FileioThread {
    storage: Vec<u8>,
    off: usize,
    rng: Rng,
}

impl Fileio {
    /// Opens every file of the set; `seqwr`, as in sysbench, creates them or
    /// empties them.
    pub fn open(cfg: FileioConfig, set: &FileSet) -> Result<Self, EventError> {
        let fresh = cfg.mode == Mode::SeqWr;
        let files = (0..cfg.files)
            .map(|i| open(set, i, &cfg, fresh))
            .collect::<Result<_, _>>()?;
        Ok(Fileio {
            cfg,
            files,
            schedule: Mutex::new(Schedule::default()),
        })
    }

    fn next(&self, rng: &mut Rng, tally: &Tally) -> Request {
        let c = &self.cfg;
        let write = match c.mode {
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr => true,
            Mode::SeqRd | Mode::RndRd => false,
            Mode::RndRw => (tally.reads as f64 + 1.0) / (tally.writes as f64 + 1.0) >= c.rw_ratio,
        };
        let mut s = self.schedule.lock().unwrap_or_else(|e| e.into_inner());
        if c.fsync_freq > 0 && s.dirty && s.requests.is_multiple_of(c.fsync_freq) {
            let file = s.fsync_next;
            s.fsync_next += 1;
            if s.fsync_next == c.files {
                s.fsync_next = 0;
                s.dirty = false;
            }
            return Request::Fsync { file };
        }
        s.requests += 1;
        s.dirty |= write;
        let (file, pos) = if c.mode.sequential() {
            if s.file == c.files {
                s.file = 0;
                s.pos = 0;
            }
            let at = (s.file, s.pos);
            s.pos += c.block_size;
            if s.pos >= c.file_size {
                s.file += 1;
                s.pos = 0;
            }
            at
        } else {
            drop(s);
            let total = c.total_size();
            let at = ((rng.unit() * total as f64) as u64).min(total - 1);
            let at = at - at % c.block_size;
            ((at / c.file_size) as u32, at % c.file_size)
        };
        if write {
            Request::Write { file, pos }
        } else {
            Request::Read { file, pos }
        }
    }
}

impl Workload for Fileio {
    type Thread = FileioThread;

    fn thread(&self, index: usize) -> FileioThread {
        let (storage, off) = aligned(self.cfg.block_size as usize);
        FileioThread {
            storage,
            off,
            rng: Rng::from_clock(index as u64),
        }
    }

    fn event(
        &self,
        t: &mut FileioThread,
        tally: &mut Tally,
        _: &EventCtl,
    ) -> Result<bool, EventError> {
        let bs = self.cfg.block_size;
        let buf = &mut t.storage[t.off..t.off + bs as usize];
        match self.next(&mut t.rng, tally) {
            Request::Read { file, pos } => {
                self.files[file as usize]
                    .read_exact_at(buf, pos)
                    .map_err(|e| io_err(Op::Read, file, &e))?;
                tally.reads += 1;
                tally.bytes_read += bs;
            }
            Request::Write { file, pos } => {
                self.files[file as usize]
                    .write_all_at(buf, pos)
                    .map_err(|e| io_err(Op::Write, file, &e))?;
                tally.writes += 1;
                tally.bytes_written += bs;
            }
            Request::Fsync { file } => {
                self.files[file as usize]
                    .sync_all()
                    .map_err(|e| io_err(Op::Fsync, file, &e))?;
                tally.fsyncs += 1;
            }
        }
        Ok(true)
    }

    fn thread_done(&self, _: &mut FileioThread, tally: &mut Tally) -> Result<(), EventError> {
        if self.cfg.fsync_end && self.cfg.mode.writes() {
            for (i, f) in self.files.iter().enumerate() {
                f.sync_all().map_err(|e| io_err(Op::Fsync, i as u32, &e))?;
                tally.fsyncs += 1;
            }
        }
        Ok(())
    }
}

super::compiled_here!(Fileio);

#[cfg(test)]
mod tests {
    use super::super::{test_run, ThreadStats};
    use super::*;

    fn cfg(mode: Mode) -> FileioConfig {
        FileioConfig {
            files: 4,
            file_size: 64 << 10,
            block_size: 16 << 10,
            mode,
            rw_ratio: 1.5,
            fsync_freq: 10,
            fsync_end: true,
            direct: false,
        }
    }

    /// Runs `mode` with its files in a private directory in `parent` (each test
    /// its own `parent`), and returns the totals and that private directory.
    fn run_mode(parent: &Path, mode: Mode, events: u64) -> (ThreadStats, PathBuf) {
        let never = AtomicBool::new(false);
        let set = prepare(&cfg(mode), parent, &never).unwrap();
        let dir = set.dir().to_path_buf();
        let w = Fileio::open(cfg(mode), &set).unwrap();
        let out = test_run(&w, 2, 0, events);
        assert!(out.error.is_none(), "{:?}", out.error);
        drop(w);
        drop(set);
        (ThreadStats::total(&out.threads), dir)
    }

    #[test]
    fn rndrw_keeps_the_ratio_and_fsyncs_and_cleans_up() {
        let tmp = tempfile::tempdir().unwrap();
        let (all, dir) = run_mode(tmp.path(), Mode::RndRw, 500);
        assert_eq!(all.events(), 500);
        let t = all.tally;
        // Each thread keeps (reads+1)/(writes+1) near 1.5.
        let ratio = t.reads as f64 / t.writes as f64;
        assert!(
            (1.3..1.7).contains(&ratio),
            "reads {} writes {}",
            t.reads,
            t.writes
        );
        // Events are reads, writes and periodic fsyncs; the end fsyncs come on top.
        assert_eq!(t.reads + t.writes + t.fsyncs, 500 + 2 * 4);
        assert!(t.fsyncs > 2 * 4);
        assert_eq!(t.bytes_read, t.reads * (16 << 10));
        assert!(!dir.exists(), "{} left behind", dir.display());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn seqrd_walks_the_files_without_fsync() {
        let tmp = tempfile::tempdir().unwrap();
        let (all, dir) = run_mode(tmp.path(), Mode::SeqRd, 40);
        assert_eq!(all.tally.reads, 40);
        assert_eq!(all.tally.fsyncs, 0);
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn seqwr_fills_empty_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (all, dir) = run_mode(tmp.path(), Mode::SeqWr, 16);
        assert!(!dir.exists());
        // 16 blocks = the whole set once; the fsync turns come in between.
        assert_eq!(all.tally.writes + all.tally.fsyncs, 16 + 2 * 4);
    }

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

    proptest::proptest! {
        #[test]
        fn requests_stay_inside_the_set_and_fsync_every_file_in_turn(
            files in 1u32..40,
            blocks in 1u64..50,
            block_kib in 1u64..17,
            seed: u64,
            freq in 1u64..30,
            seq: bool,
        ) {
            let c = FileioConfig {
                files,
                file_size: blocks * block_kib * 1024,
                block_size: block_kib * 1024,
                mode: if seq { Mode::SeqRewr } else { Mode::RndRw },
                rw_ratio: 1.5,
                fsync_freq: freq,
                fsync_end: false,
                direct: false,
            };
            let w = Fileio { cfg: c, files: Vec::new(), schedule: Mutex::new(Schedule::default()) };
            let mut rng = Rng::new(seed);
            let mut tally = Tally::default();
            let mut fsynced = Vec::new();
            for _ in 0..500 {
                let req = w.next(&mut rng, &tally);
                match req {
                    Request::Read { .. } => tally.reads += 1,
                    Request::Write { .. } => tally.writes += 1,
                    Request::Fsync { .. } => tally.fsyncs += 1,
                }
                match req {
                    Request::Read { file, pos } | Request::Write { file, pos } => {
                        proptest::prop_assert!(file < files);
                        proptest::prop_assert_eq!(pos % c.block_size, 0);
                        proptest::prop_assert!(pos + c.block_size <= c.file_size);
                        // Whatever came before, a fsync round is complete.
                        proptest::prop_assert!(fsynced.is_empty() || fsynced.len() == files as usize);
                        fsynced.clear();
                    }
                    Request::Fsync { file } => {
                        proptest::prop_assert_eq!(file as usize, fsynced.len());
                        fsynced.push(file);
                    }
                }
            }
            // The set is dirty from the second request on, so once the request
            // count passes a multiple of the frequency, fsyncs have come.
            proptest::prop_assert!(tally.writes > 0);
            if tally.reads + tally.writes > freq.max(2) {
                proptest::prop_assert!(tally.fsyncs > 0);
            }
        }
    }

    #[test]
    fn space_of_a_directory() {
        let s = space(&std::env::temp_dir()).unwrap();
        assert!(s.available > 0);
        assert_eq!(space(Path::new("/nonexistent/rtlab")), Err(libc::ENOENT));
    }
}
