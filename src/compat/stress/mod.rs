//! The `stress` and `stress-ng` personalities. Their command lines become the
//! typed parameters of rtlab's load step ([`load::Params`]), which are checked
//! (every value, then the loads guard: memory, free disk) before anything is
//! printed or started, run by [`load::measure`], stored, and printed in each
//! tool's own layout.
//!
//! | tool | worker | rtlab load |
//! |------|--------|------------|
//! | stress | `--cpu` | `cpu method=sqrt` |
//! | stress | `--io` | `io sync` in the current directory |
//! | stress | `--vm` | `vm bytes=--vm-bytes [keep]` |
//! | stress | `--hdd` | `io bytes=--hdd-bytes` in the current directory |
//! | stress-ng | see [`ng_args`] | |

mod getopt;
mod ng_args;
#[cfg(test)]
mod ng_args_tests;
mod ng_out;
mod ng_yaml;
mod stress_args;
mod stress_out;
mod values;

use super::Session;
use crate::error::{bad_flag, BadValue, UsageError};
use crate::record::{LoadRecord, Run, Status, Warning};
use crate::step::load::{self, Params};
use crate::step::value::{Cpus, Dur};
use crate::step::{Machine, Step as _};
use anyhow::{Context as _, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// One kind of worker a tool starts: the tool's name for it, how many, and
/// the rtlab load spec (kind and keys) that does its work.
#[derive(Debug, Clone, PartialEq)]
pub struct Hog {
    /// The tool's name (`cpu`, `hdd`, `sock`).
    pub name: &'static str,
    /// Workers (stress shows kinds with none).
    pub workers: u32,
    /// The rtlab load spec without its worker count (`cpu method=sqrt`).
    pub spec: String,
}

/// What a tool's command line asks of rtlab's load step.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The hogs, in the tool's order.
    pub hogs: Vec<Hog>,
    /// How long (s); `None`: until interrupted.
    pub timeout_s: Option<u64>,
    /// The CPUs the workers may run on.
    pub taskset: Option<String>,
    /// What runs in place of what was asked, one line each; they become
    /// warnings of the run.
    pub notes: Vec<String>,
}

impl Job {
    /// The load step's parameters: one spec per hog that has workers.
    pub fn params(&self) -> Params {
        let mut p = Params {
            load: self
                .hogs
                .iter()
                .filter(|h| h.workers > 0)
                .map(|h| format!("{} workers={}", h.spec, h.workers))
                .collect(),
            duration: self.timeout_s.map(|s| Dur::new(format!("{s}s"))),
            ..Params::default()
        };
        p.place.load_cpus = self.taskset.as_deref().map(Cpus::new);
        p
    }

    /// The parameters, checked as `rtlab load` checks them: every value, and
    /// whether this machine can carry the loads. Errors speak of the tool's
    /// options, not of `rtlab load`'s.
    fn checked(&self) -> Result<Params> {
        let p = self.params();
        p.check(&Machine::this())
            .map_err(|e| match e.downcast::<BadValue>() {
                Ok(b) if b.flag == "--load-cpus" => bad_flag("--taskset", b.message),
                Ok(b) => UsageError(format!("the hogs cannot run here: {}", b.message)).into(),
                Err(e) => e,
            })?;
        Ok(p)
    }
}

/// A finished run of a job.
pub struct Outcome<'a> {
    job: &'a Job,
    /// The run, stored unless the session says not to.
    pub run: Run,
    /// From the start of the workers to their end.
    pub wall: Duration,
}

impl Outcome<'_> {
    /// Each hog with what its load recorded (`None`: it had no workers).
    pub fn records(&self) -> impl Iterator<Item = (&Hog, Option<&LoadRecord>)> {
        let mut recs = self.run.loads.iter();
        self.job
            .hogs
            .iter()
            .map(move |h| (h, if h.workers > 0 { recs.next() } else { None }))
    }
}

/// Waits `backoff`, runs the loads, stores the run.
fn run_job<'a>(
    session: &Session,
    job: &'a Job,
    p: &Params,
    backoff: Duration,
) -> Result<Outcome<'a>> {
    std::thread::sleep(backoff);
    let t0 = Instant::now();
    let mut run = load::measure(p, &mut ())?;
    let wall = t0.elapsed();
    for n in &job.notes {
        run.warnings.push(Warning::new("stand_in", n.clone()));
    }
    session.save(&mut run)?;
    Ok(Outcome { job, run, wall })
}

/// rtlab's warnings about the run, for the tools that have no place for them.
fn warnings(run: &Run) -> String {
    run.warnings
        .iter()
        .map(|w| format!("rtlab: warning [{}]: {}\n", w.code, w.message))
        .collect()
}

/// How much a tool says: `-q`, nothing asked, `-v`; the last one given counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`.
    Quiet,
    /// The default.
    Normal,
    /// `-v`.
    Verbose,
}

/// Runs rtlab as `stress` with stress's arguments.
pub fn stress_main(session: &Session, args: &[String]) -> Result<i32> {
    use stress_args::Parsed;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let st = match stress_args::parse(args, &cwd)? {
        Parsed::Help => {
            print!("{}", stress_args::USAGE);
            return Ok(0);
        }
        Parsed::Version => {
            println!("stress (rtlab {})", env!("CARGO_PKG_VERSION"));
            return Ok(0);
        }
        Parsed::Run(s) => s,
    };
    let params = st.job.checked()?;
    let pid = std::process::id();
    let says = |v| st.verbosity >= v;
    if says(Verbosity::Normal) {
        print!("{}", stress_out::dispatch(pid, &st.job.hogs));
    }
    if says(Verbosity::Verbose) {
        print!(
            "{}",
            stress_out::setup(pid, st.backoff, st.backoff_us(), st.job.timeout_s)
        );
    }
    if st.dry_run {
        if says(Verbosity::Normal) {
            print!("{}", stress_out::completed(pid, 0, true));
        }
        return Ok(0);
    }
    let backoff = Duration::from_micros(st.backoff_us());
    let out = run_job(session, &st.job, &params, backoff)?;
    let secs = out.wall.as_secs_f64().round() as u64;
    if says(Verbosity::Verbose) {
        print!("{}", stress_out::workers(pid, &out));
    }
    match out.run.status {
        Status::Complete if says(Verbosity::Normal) => {
            eprint!("{}", warnings(&out.run));
            print!("{}", stress_out::completed(pid, secs, true));
        }
        Status::Failed => {
            eprint!(
                "{}{}",
                warnings(&out.run),
                stress_out::completed(pid, secs, false)
            );
        }
        // Killed, stress says nothing more.
        _ => {}
    }
    Ok(out.run.exit_code)
}

/// Runs rtlab as `stress-ng` with stress-ng's arguments.
pub fn ng_main(session: &Session, args: &[String]) -> Result<i32> {
    use ng_args::Parsed;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let machine = Machine::this();
    let ng = match ng_args::parse(args, &cwd, machine.cpus.len().max(1) as u32)? {
        Parsed::Help => {
            print!("{}", ng_args::USAGE);
            return Ok(0);
        }
        Parsed::Version => {
            println!("stress-ng (rtlab {})", env!("CARGO_PKG_VERSION"));
            return Ok(0);
        }
        Parsed::Run(n) => n,
    };
    if let Some(y) = &ng.yaml {
        crate::cli::common::output_file(y).map_err(|e| bad_flag("--yaml", e))?;
    }
    let params = ng.job.checked()?;
    let pid = std::process::id();
    let says = |v| ng.verbosity >= v;
    if says(Verbosity::Normal) {
        let secs = ng.timeout_given.unwrap_or(ng_args::DEFAULT_TIMEOUT_S);
        eprint!(
            "{}{}",
            ng_out::run_length(pid, secs, ng.timeout_given.is_some()),
            ng_out::dispatch(pid, &ng.job.hogs)
        );
    }
    if ng.dry_run {
        if says(Verbosity::Normal) {
            eprint!("{}", ng_out::completed(pid, 0.0, true));
        }
        return Ok(0);
    }
    let out = run_job(session, &ng.job, &params, Duration::ZERO)?;
    let rows = ng_out::rows(&out);
    if let Some(y) = &ng.yaml {
        let doc = ng_yaml::document(&out.run, ng.metrics.map(|_| rows.as_slice()));
        crate::cli::common::write_output("--yaml", Some(Path::new(y)), &doc)?;
    }
    let mut log = String::new();
    if says(Verbosity::Verbose) {
        log.push_str(&ng_out::instances(pid, &out));
    }
    if says(Verbosity::Normal) || out.run.status == Status::Failed {
        for w in &out.run.warnings {
            log.push_str(&ng_out::line("warn", pid, &w.message));
        }
    }
    if let Some(full) = ng.metrics {
        log.push_str(&ng_out::metrics(pid, &rows, full));
    }
    if says(Verbosity::Normal) {
        let ok = out.run.status != Status::Failed;
        log.push_str(&ng_out::completed(pid, out.wall.as_secs_f64(), ok));
    }
    eprint!("{log}");
    Ok(out.run.exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_the_load_step_s_params() {
        let job = Job {
            hogs: vec![
                Hog {
                    name: "cpu",
                    workers: 2,
                    spec: "cpu method=sqrt".into(),
                },
                Hog {
                    name: "io",
                    workers: 0,
                    spec: "io sync dir=/tmp".into(),
                },
                Hog {
                    name: "vm",
                    workers: 1,
                    spec: "vm bytes=4096".into(),
                },
            ],
            timeout_s: Some(3),
            taskset: Some("0".into()),
            notes: Vec::new(),
        };
        let p = job.params();
        assert_eq!(
            p.load,
            ["cpu method=sqrt workers=2", "vm bytes=4096 workers=1"]
        );
        assert_eq!(p.duration.as_ref().map(|v| v.text()), Some("3s"));
        assert_eq!(p.place.load_cpus.as_ref().map(|v| v.text()), Some("0"));
        job.checked().unwrap();
        let big = Job {
            hogs: vec![Hog {
                name: "vm",
                workers: 4,
                spec: "vm bytes=1T".into(),
            }],
            timeout_s: None,
            taskset: None,
            notes: Vec::new(),
        };
        let e = big.checked().unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
        assert!(e.to_string().contains("MemAvailable"), "{e}");
        let bad_cpus = Job {
            taskset: Some("9999".into()),
            ..job
        };
        let e = bad_cpus.checked().unwrap_err().to_string();
        assert!(e.starts_with("--taskset: "), "{e}");
    }
}
