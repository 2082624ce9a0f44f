//! The fileio bench as sysbench runs it, in three commands: `prepare` makes
//! the files `test_file.0` ... in the directory itself and leaves them, `run`
//! measures on them (refusing files that are missing or too short, as
//! sysbench does, except `seqwr`, which makes them), `cleanup` removes them.

use super::fileio::{check_space, io_failure, run_on, Params, Plan};
use super::Interrupted;
use crate::error::UsageError;
use crate::record::Run;
use crate::step::{Machine, Observer};
use anyhow::Result;
use rtlab_engine::bench::fileio::{self, FileSet, PrepareError, Prepared};
use rtlab_engine::rt::signals;
use std::time::Instant;

/// What becomes of the files after an error: they stay.
const KEPT: &str = "The test files are left in place; 'cleanup' removes them.";

/// What preparing did: bytes written and seconds taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Written {
    pub bytes: u64,
    pub secs: f64,
}

/// Makes, reuses or extends each file of the set in `p.dir` and leaves them
/// there; `on_file` hears of each file as it is done. Checks the room for the
/// bytes still to write first. A signal is [`Interrupted`] (the file being
/// made is removed); an I/O error is exit 3.
pub fn prepare(p: &Params, on_file: &mut dyn FnMut(u32, Prepared)) -> Result<Written> {
    let plan = p.plan_without_room(&Machine::this())?;
    let c = plan.cfg;
    let missing: u64 = (0..c.files)
        .map(|i| c.file_size.saturating_sub(len(p, i).unwrap_or(0)))
        .sum();
    check_space(&p.dir, missing)?;
    let stop = signals::install();
    let clock = Instant::now();
    let mut bytes = 0;
    for i in 0..c.files {
        match fileio::prepare_file(&c, &p.dir, i, stop) {
            Ok((what, n)) => {
                bytes += n;
                on_file(i, what);
            }
            Err(PrepareError::Interrupted) => return Err(Interrupted.into()),
            Err(PrepareError::Io(e)) => return Err(io_failure(&p.dir, e, KEPT)),
        }
    }
    Ok(Written {
        bytes,
        secs: clock.elapsed().as_secs_f64(),
    })
}

/// The length of file `i` of the set, if it is there.
fn len(p: &Params, i: u32) -> Option<u64> {
    std::fs::metadata(p.dir.join(fileio::file_name(i)))
        .ok()
        .map(|m| m.len())
}

/// Every check of a run on the files `prepare` left in `p.dir`: the
/// parameters, and every file there and long enough, except for `seqwr`,
/// which makes them afresh.
pub fn check(p: &Params) -> Result<()> {
    checked(p).map(drop)
}

fn checked(p: &Params) -> Result<Plan> {
    let plan = p.plan_without_room(&Machine::this())?;
    let c = plan.cfg;
    if c.mode != fileio::Mode::SeqWr {
        for i in 0..c.files {
            let name = fileio::file_name(i);
            match len(p, i) {
                None => {
                    return Err(UsageError(format!(
                        "cannot open file '{name}' in {}: it does not exist. Did you forget to run the prepare step?",
                        p.dir.display()
                    ))
                    .into())
                }
                Some(l) if l < c.file_size => {
                    return Err(UsageError(format!(
                        "size of file '{name}' is {} bytes, but at least {} bytes are expected. Did you run 'prepare' with different --file-total-size or --file-num values?",
                        l, c.file_size
                    ))
                    .into())
                }
                Some(_) => {}
            }
        }
    }
    Ok(plan)
}

/// Runs the requests on the files `prepare` left in `p.dir`, which stay,
/// after [`check`]'s checks.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let plan = checked(p)?;
    let set = FileSet::in_place(&p.dir, plan.cfg.files);
    run_on(p, plan, &set, KEPT, obs)
}

/// Removes the files of the set from `p.dir`; how many were there.
pub fn cleanup(p: &Params) -> Result<u32> {
    let mut removed = 0;
    for i in 0..p.files {
        let path = p.dir.join(fileio::file_name(i));
        match std::fs::remove_file(&path) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(crate::error::SystemError(format!(
                    "cannot remove {}: {e}",
                    path.display()
                ))
                .into())
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::bench::Common;

    fn params(dir: &std::path::Path) -> Params {
        Params {
            dir: dir.to_path_buf(),
            total_size: "256K".into(),
            files: 4,
            block_size: "16K".into(),
            common: Common {
                events: Some(20),
                ..Common::default()
            },
            ..Params::default()
        }
    }

    #[test]
    fn prepare_run_cleanup_leave_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let p = params(tmp.path());
        let e = measure(&p, &mut ()).unwrap_err().to_string();
        assert!(e.contains("Did you forget to run the prepare step?"), "{e}");
        let mut seen = Vec::new();
        let w = prepare(&p, &mut |i, what| seen.push((i, what))).unwrap();
        assert_eq!(w.bytes, 256 << 10);
        assert_eq!(seen.len(), 4);
        assert!(seen.iter().all(|s| s.1 == Prepared::Created));
        let run = measure(&p, &mut ()).unwrap();
        assert_eq!(run.metrics["total_events"], 20.0);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 4);
        let again = prepare(&p, &mut |_, what| assert_eq!(what, Prepared::Reused)).unwrap();
        assert_eq!(again.bytes, 0);
        assert_eq!(cleanup(&p).unwrap(), 4);
        assert_eq!(cleanup(&p).unwrap(), 0);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn short_files_are_refused_but_seqwr_makes_them() {
        let tmp = tempfile::tempdir().unwrap();
        let mut p = params(tmp.path());
        for i in 0..4 {
            std::fs::write(tmp.path().join(fileio::file_name(i)), b"x").unwrap();
        }
        let e = measure(&p, &mut ()).unwrap_err().to_string();
        assert!(e.contains("size of file 'test_file.0' is 1 bytes"), "{e}");
        p.mode = super::super::fileio::ModeArg::Seqwr;
        measure(&p, &mut ()).unwrap();
        assert_eq!(cleanup(&p).unwrap(), 4);
    }
}
