//! The fileio bench: sysbench's `fileio` test, on a set of files that
//! [`prepare`] makes (and removes) or that [`prepare_file`] leaves in place
//! (see [`FileSet`]).
//!
//! Request sequence, as sysbench's: sequential modes walk file 0 to the last in
//! blocks and wrap around; random modes pick a block-aligned offset uniformly
//! over the whole set; `rndrw` reads when `(reads + 1) / (writes + 1) < rw_ratio`
//! (counted per thread) and writes otherwise. Once a write made the set dirty,
//! a request number divisible by `fsync_freq` turns the next requests into
//! `fsync`s of each file in turn until all are clean; each fsync is an event.
//! With `fsync_end` every thread syncs all files after its last event (not in
//! read-only modes), inside the timed window.

use super::fileset::{aligned, io_err, open};
pub use super::fileset::{
    file_name, prepare, prepare_file, space, space_margin, FileSet, PrepareError, Prepared, Space,
};
use super::{EventCtl, EventError, Op, Rng, Tally, Workload};
use std::fs::File;
use std::os::unix::fs::FileExt;
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
pub(super) mod tests {
    use super::super::{test_run, ThreadStats};
    use super::*;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::AtomicBool;

    /// A small set: 4 files of 64 KiB, 16 KiB requests, fsync every 10.
    pub(in crate::bench) fn cfg(mode: Mode) -> FileioConfig {
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
}
