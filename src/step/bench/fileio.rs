//! File reads, writes and fsyncs in a directory: prepare, run, clean up
//! (`rtlab bench fileio`, scenario probe `bench.fileio`; sysbench fileio).

use super::{bytes, size_flag, Common, Interrupted, Lim, DEFAULT_TIME_NS, MIB};
use crate::error::{bad_flag, SystemError};
use crate::limits;
use crate::record::Run;
use crate::step::value::Size;
use crate::step::{de, Machine, Observer};
use anyhow::Result;
use clap::{Args, ValueEnum};
use rtlab_engine::bench::fileio::{self, FileSet, Fileio, FileioConfig, Mode, PrepareError};
use rtlab_engine::bench::EventError;
use rtlab_engine::bench::Tally;
use rtlab_engine::rt::{self, signals};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The parameters of `rtlab bench fileio` and of a `bench.fileio` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Directory for the test files (e.g. a USB stick's mount point); they go in
    /// a private subdirectory that is always removed.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub dir: PathBuf,
    /// Size of the whole file set (e.g. 512M, 3G).
    #[arg(
        long,
        default_value = "2G",
        value_name = "SIZE",
        alias = "file-total-size"
    )]
    pub total_size: Size,
    /// Number of files.
    #[arg(long, default_value_t = 128, value_name = "N", alias = "file-num")]
    pub files: u32,
    /// Bytes per request (e.g. 4K, 1M).
    #[arg(
        long,
        default_value = "16K",
        value_name = "SIZE",
        alias = "file-block-size"
    )]
    pub block_size: Size,
    /// Test mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Rndrw, alias = "file-test-mode")]
    pub mode: ModeArg,
    /// Reads per write in rndrw.
    #[arg(
        long,
        default_value_t = 1.5,
        value_name = "RATIO",
        alias = "file-rw-ratio"
    )]
    #[serde(deserialize_with = "de::number")]
    pub rw_ratio: f64,
    /// fsync every N requests once something was written (0: never).
    #[arg(
        long,
        default_value_t = 100,
        value_name = "N",
        alias = "file-fsync-freq"
    )]
    pub fsync_freq: u64,
    /// fsync all files at the end (in the timed window); --fsync-end=false to skip.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL",
          value_parser = clap::builder::BoolishValueParser::new(), alias = "file-fsync-end")]
    pub fsync_end: bool,
    /// Open the files with O_DIRECT (bypass the page cache).
    #[arg(long)]
    pub direct: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
}

bench_step!(
    "bench.fileio",
    BenchFileio,
    "bench fileio",
    DEFAULT_TIME_NS,
    rates
);

/// What a fileio run was asked, in words.
fn what(a: &super::Asked) -> String {
    format!(
        "{} in {}: {} files × {}, block {}{}",
        a.word("mode"),
        a.word("dir"),
        a.count("files"),
        a.size("file_size"),
        a.size("block_size"),
        if a.on("direct") { ", O_DIRECT" } else { "" }
    )
}

/// The rates of a fileio interval: requests and MiB per second.
pub(super) fn rates(now: &Tally, prev: &Tally, dt: f64) -> String {
    let rate = |n: u64, p: u64| super::per_s(n, p, dt);
    format!(
        "  reads/s {:.2}  writes/s {:.2}  fsyncs/s {:.2}  read MiB/s {:.2}  written MiB/s {:.2}",
        rate(now.reads, prev.reads),
        rate(now.writes, prev.writes),
        rate(now.fsyncs, prev.fsyncs),
        rate(now.bytes_read, prev.bytes_read) / MIB,
        rate(now.bytes_written, prev.bytes_written) / MIB,
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    Seqwr,
    Seqrewr,
    Seqrd,
    Rndrd,
    Rndwr,
    Rndrw,
}

/// The workload and its limits, checked.
pub struct Plan {
    pub(super) lim: Lim,
    pub(super) cfg: FileioConfig,
}

impl Params {
    /// The workload and its limits, every value checked on machine `m`, and
    /// the directory checked for room: read-only is exit 3, too small exit 2.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let plan = self.plan_without_room(m)?;
        check_space(&self.dir, plan.cfg.total_size())?;
        Ok(plan)
    }

    /// [`Params::plan`] without the check of the directory's room: for files
    /// that are there already.
    pub(super) fn plan_without_room(&self, m: &Machine) -> Result<Plan> {
        let lim = self.lim()?;
        let cfg = self.config()?;
        let threads = lim.limits.threads;
        let what = format!("{threads} thread(s) × one {} buffer", bytes(cfg.block_size));
        let need = limits::Need {
            bytes: cfg.block_size.saturating_mul(threads as u64),
            what: &what,
            fix: "give a smaller --block-size or fewer --threads",
        };
        let budget = (m.mem_available > 0).then(|| limits::budget_of(m.mem_available));
        limits::check_memory("--block-size", &need, budget)?;
        Ok(Plan { lim, cfg })
    }

    /// The engine's configuration: the directory, sizes and ratio checked.
    fn config(&self) -> Result<FileioConfig> {
        let (dir, files) = (&self.dir, self.files);
        if !dir.is_dir() {
            return Err(bad_flag(
                "--dir",
                format!(
                    "{} is not a directory; create it or mount the device there first",
                    dir.display()
                ),
            ));
        }
        let total = size_flag("--total-size", &self.total_size)?;
        let block = size_flag("--block-size", &self.block_size)?;
        if files == 0 {
            return Err(bad_flag(
                "--files",
                "0 files leaves nothing to test; give 1 or more",
            ));
        }
        if self.direct && block % 512 != 0 {
            return Err(bad_flag(
                "--block-size",
                format!(
                    "{} is not a multiple of 512 bytes, which --direct needs",
                    self.block_size
                ),
            ));
        }
        let file_size = total / u64::from(files) / block * block;
        if file_size == 0 {
            return Err(bad_flag(
                "--total-size",
                format!(
                    "{} is less than --files {files} × --block-size {}; raise --total-size or lower --files",
                    self.total_size, self.block_size
                ),
            ));
        }
        let rw_ratio = self.rw_ratio;
        if !(rw_ratio.is_finite() && rw_ratio > 0.0) {
            return Err(bad_flag(
                "--rw-ratio",
                format!("{rw_ratio} must be a number above 0 (reads per write, e.g. 1.5)"),
            ));
        }
        Ok(FileioConfig {
            files,
            file_size,
            block_size: block,
            mode: match self.mode {
                ModeArg::Seqwr => Mode::SeqWr,
                ModeArg::Seqrewr => Mode::SeqRewr,
                ModeArg::Seqrd => Mode::SeqRd,
                ModeArg::Rndrd => Mode::RndRd,
                ModeArg::Rndwr => Mode::RndWr,
                ModeArg::Rndrw => Mode::RndRw,
            },
            rw_ratio,
            fsync_freq: self.fsync_freq,
            fsync_end: self.fsync_end,
            direct: self.direct,
        })
    }

    /// What it was asked, for [`super::asked`].
    pub(super) fn asked(&self) -> Value {
        let (total, block) = (self.total_size.get(), self.block_size.get());
        let file_size = match (total, block) {
            (Some(t), Some(b)) if b > 0 && self.files > 0 => {
                Some(t / u64::from(self.files) / b * b)
            }
            _ => None,
        };
        super::with_threads(
            &self.common,
            json!({
                "dir": self.dir.display().to_string(),
                "total_size": total,
                "files": self.files,
                "file_size": file_size,
                "block_size": block,
                "mode": self.mode,
                "rw_ratio": self.rw_ratio,
                "fsync_freq": self.fsync_freq,
                "fsync_end": self.fsync_end,
                "direct": self.direct,
            }),
        )
    }
}

/// Refuses a directory that is read-only or too small for `need` bytes of
/// files, naming the numbers.
pub(super) fn check_space(dir: &Path, need: u64) -> Result<()> {
    let sp = fileio::space(dir).map_err(|e| {
        SystemError(format!(
            "--dir: cannot inspect {}: {}",
            dir.display(),
            rt::errno_text(e)
        ))
    })?;
    if sp.read_only {
        return Err(SystemError(format!(
            "--dir: {} is on a read-only file system; remount it read-write or choose another --dir",
            dir.display()
        ))
        .into());
    }
    let margin = fileio::space_margin(need);
    if need.saturating_add(margin) > sp.available {
        return Err(bad_flag(
            "--total-size",
            format!(
                "{} does not fit in {}: {} available, {} needed with a {} margin; lower --total-size or choose another --dir",
                bytes(need),
                dir.display(),
                bytes(sp.available),
                bytes(need + margin),
                bytes(margin),
            ),
        ));
    }
    Ok(())
}

/// An I/O error of the files in `dir`, as exit 3, saying what to do; `after`
/// says what became of the files.
pub(super) fn io_failure(dir: &Path, e: EventError, after: &str) -> anyhow::Error {
    let what = rt::errno_text(e.errno);
    let hint = match e.errno {
        rt::ENOSPC => "the file system filled up; lower --total-size or free space",
        rt::EROFS => "the file system is read-only; remount it read-write or choose another --dir",
        rt::EACCES | rt::EPERM => "no permission to write there; choose another --dir or run as a user who may",
        rt::EINVAL => "the file system refused the request (with --direct: it does not support O_DIRECT; drop --direct)",
        _ => "check the device (dmesg) and the directory",
    };
    SystemError(format!(
        "fileio: {} of test_file.{} in {} failed: {what}; {hint}. {after}",
        e.op.name(),
        e.file,
        dir.display()
    ))
    .into()
}

/// What becomes of the private files after an error.
const REMOVED: &str = "The test files were removed.";

/// Prepares the files (a signal then is [`Interrupted`]), runs the requests
/// until a limit or a signal, removes the files; the run has the request
/// counts, the rates and the preparing time. An I/O error is exit 3.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let plan = p.plan(&Machine::this())?;
    let (dir, c) = (&p.dir, &plan.cfg);
    let prep_clock = std::time::Instant::now();
    obs.note(&format!(
        "preparing {} files of {} ({}) in {} ...",
        c.files,
        bytes(c.file_size),
        bytes(c.total_size()),
        dir.display()
    ));
    let set = match fileio::prepare(c, dir, signals::install()) {
        Ok(s) => s,
        Err(PrepareError::Io(e)) => return Err(io_failure(dir, e, REMOVED)),
        Err(PrepareError::Interrupted) => return Err(Interrupted.into()),
    };
    let prepare_s = prep_clock.elapsed().as_secs_f64();
    let mut run = run_on(p, plan, &set, REMOVED, obs)?;
    run.metrics.insert("prepare_time_s".into(), prepare_s);
    Ok(run)
}

/// Runs the requests of `plan` on the files of `set` until a limit or a
/// signal; the run has the request counts and the rates. An I/O error is exit
/// 3, its message ending with `after`.
pub(super) fn run_on(
    p: &Params,
    plan: Plan,
    set: &FileSet,
    after: &str,
    obs: &mut dyn Observer,
) -> Result<Run> {
    let dir = &p.dir;
    let w = Fileio::open(plan.cfg, set).map_err(|e| io_failure(dir, e, after))?;
    let mut m = super::measure(&w, plan.lim, p.recorded(), Vec::new(), obs);
    drop(w);
    if let Some(e) = m.outcome.error {
        return Err(io_failure(dir, e, after));
    }
    let t = m.total.tally;
    m.run.metrics.insert("total_reads".into(), t.reads as f64);
    m.run.metrics.insert("total_writes".into(), t.writes as f64);
    m.run.metrics.insert("total_fsyncs".into(), t.fsyncs as f64);
    let rate = super::rate;
    rate(&mut m.run, "reads_per_s", t.reads as f64);
    rate(&mut m.run, "writes_per_s", t.writes as f64);
    rate(&mut m.run, "fsyncs_per_s", t.fsyncs as f64);
    rate(&mut m.run, "read_mib_per_s", t.bytes_read as f64 / MIB);
    rate(
        &mut m.run,
        "written_mib_per_s",
        t.bytes_written as f64 / MIB,
    );
    Ok(m.run)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{machine, refusal, round_trip};
    use super::*;

    #[test]
    fn the_ratio_may_be_a_word_or_a_number() {
        // A scenario gives the ratio as a word ("1.5") or a number.
        let p: Params = serde_json::from_value(json!({
            "dir": "/tmp", "total_size": "8M", "files": 4, "block_size": 4096,
            "mode": "seqwr", "rw_ratio": "2", "fsync_freq": 0, "fsync_end": false,
            "direct": true, "threads": 16,
        }))
        .unwrap();
        assert_eq!(
            (p.rw_ratio, p.mode, p.common.threads),
            (2.0, ModeArg::Seqwr, 16)
        );
        round_trip(&p);
        let a = p.asked();
        assert_eq!(
            (a["file_size"].as_u64(), a["mode"].as_str()),
            (Some(2 << 20), Some("seqwr"))
        );
    }

    #[test]
    fn refusals_name_the_flag() {
        let dir = std::env::temp_dir();
        let small = Params {
            dir: dir.clone(),
            total_size: "1M".into(),
            files: 4,
            ..Default::default()
        };
        let with = |f: &dyn Fn(&mut Params)| {
            let mut p = small.clone();
            f(&mut p);
            refusal(p.plan(&machine(8 << 30)))
        };
        assert!(with(&|p| p.dir = "/nonexistent/usb".into())
            .starts_with("--dir: /nonexistent/usb is not a directory"));
        assert!(with(&|p| p.files = 0).starts_with("--files: 0 files"));
        assert!(with(&|p| p.rw_ratio = 0.0).starts_with("--rw-ratio: 0 must be a number above 0"));
        assert!(with(&|p| p.block_size = "1M".into())
            .starts_with("--total-size: 1M is less than --files 4"));
        assert!(with(&|p| {
            p.direct = true;
            p.block_size = "1000".into();
        })
        .contains("not a multiple of 512"));
        assert!(with(&|p| p.total_size = "900T".into())
            .starts_with("--total-size: 900TiB does not fit in"));
        let e = with(&|p| {
            p.block_size = "8G".into();
            p.total_size = "64G".into();
        });
        assert!(
            e.starts_with("--block-size: 1 thread(s) × one 8GiB buffer needs"),
            "{e}"
        );
        assert!(small.plan(&machine(8 << 30)).is_ok());
    }
}
