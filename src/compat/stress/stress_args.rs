//! stress 1.0's command line, into a [`Job`]: its options, its defaults
//! (`--vm-bytes 256M`, `--hdd-bytes 1G`, a back-off of 3000 µs per worker, no
//! timeout: run until killed), and refusals for what rtlab cannot do.

use super::getopt::{flag, scan, val, Opt};
use super::values::{count, io_dir, scan_error, seconds, size, size_text, vm_size};
use super::{Hog, Job, Verbosity};
use crate::error::bad_flag;
use anyhow::Result;
use std::path::Path;

const OPTS: &[Opt] = &[
    flag("help", Some('?')),
    flag("version", None),
    flag("verbose", Some('v')),
    flag("quiet", Some('q')),
    flag("dry-run", Some('n')),
    val("timeout", Some('t')),
    val("backoff", None),
    val("cpu", Some('c')),
    val("io", Some('i')),
    val("vm", Some('m')),
    val("vm-bytes", None),
    val("vm-stride", None),
    val("vm-hang", None),
    flag("vm-keep", None),
    val("hdd", Some('d')),
    val("hdd-bytes", None),
];

/// A year, for stress's `y` suffix: 365 days.
const YEAR_S: u64 = 365 * 86_400;

/// stress's back-off per worker when `--backoff` does not say (µs).
const BACKOFF_US: u64 = 3_000;

/// A stress run.
#[derive(Debug)]
pub struct Stress {
    /// The hogs: cpu, io, vm, hdd (zero workers included), and the timeout.
    pub job: Job,
    /// `--backoff`, when given (µs).
    pub backoff: Option<u64>,
    /// `-q`, `-v`.
    pub verbosity: Verbosity,
    /// `-n`.
    pub dry_run: bool,
}

impl Stress {
    /// The sleep before the workers start: the coefficient times the workers.
    pub fn backoff_us(&self) -> u64 {
        let workers: u64 = self.job.hogs.iter().map(|h| h.workers as u64).sum();
        self.backoff.unwrap_or(BACKOFF_US).saturating_mul(workers)
    }
}

/// What the command line asks.
#[derive(Debug)]
pub enum Parsed {
    /// Run (or with `-n`, say what would run).
    Run(Stress),
    /// `-?`, `--help`.
    Help,
    /// `--version`.
    Version,
}

/// Parses stress's arguments; `cwd` is where its hdd and io workers write.
pub fn parse(args: &[String], cwd: &Path) -> Result<Parsed> {
    let opts = scan(OPTS, args).map_err(|e| scan_error(e, "stress"))?;
    let mut n = [0u32; 4];
    let (mut vm_bytes, mut hdd_bytes) = (256u64 << 20, 1u64 << 30);
    let (mut keep, mut timeout, mut backoff) = (false, None, None);
    let (mut verbosity, mut dry_run) = (Verbosity::Normal, false);
    for (name, v) in opts {
        let v = v.unwrap_or_default();
        let flag = format!("--{name}");
        match name {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "verbose" => verbosity = Verbosity::Verbose,
            "quiet" => verbosity = Verbosity::Quiet,
            "dry-run" => dry_run = true,
            "timeout" => match seconds(&flag, &v, YEAR_S)? {
                0 => return Err(bad_flag(&flag, format!("'{v}' is zero; give a time above 0s"))),
                s => timeout = Some(s),
            },
            "backoff" => {
                backoff = Some(
                    v.trim()
                        .parse::<u64>()
                        .map_err(|_| bad_flag(&flag, format!("'{v}' is not a whole number of microseconds")))?,
                )
            }
            "cpu" => n[0] = count(&flag, &v)?,
            "io" => n[1] = count(&flag, &v)?,
            "vm" => n[2] = count(&flag, &v)?,
            "hdd" => n[3] = count(&flag, &v)?,
            "vm-bytes" => vm_bytes = size(&flag, &v)?,
            "hdd-bytes" => hdd_bytes = size(&flag, &v)?,
            "vm-keep" => keep = true,
            "vm-stride" => {
                let page = rtlab_engine::load::sys::page_size() as u64;
                if size(&flag, &v)? != page {
                    return Err(bad_flag(
                        &flag,
                        format!("rtlab's vm load touches one byte per page, a stride of {page}; it cannot touch every {v}"),
                    ));
                }
            }
            _ => {
                return Err(bad_flag(
                    &flag,
                    "rtlab's vm load never holds its memory idle; leave --vm-hang out (--vm-keep keeps the memory and re-dirties it)",
                ))
            }
        }
    }
    if n.iter().all(|&w| w == 0) {
        return Err(crate::error::UsageError(
            "no hogs to run: give at least one of --cpu, --io, --vm, --hdd (e.g. stress --cpu 2 --timeout 10s)".into(),
        )
        .into());
    }
    if n[2] > 0 {
        vm_size("--vm-bytes", vm_bytes)?;
    }
    let dir = if n[1] > 0 || n[3] > 0 {
        io_dir(cwd, "stress")?
    } else {
        String::new()
    };
    let keep = if keep { " keep" } else { "" };
    let specs = [
        ("cpu", "cpu method=sqrt".to_string()),
        ("io", format!("io sync dir={dir}")),
        ("vm", format!("vm bytes={}{keep}", size_text(vm_bytes))),
        (
            "hdd",
            format!("io dir={dir} bytes={}", size_text(hdd_bytes)),
        ),
    ];
    let hogs = specs
        .into_iter()
        .zip(n)
        .map(|((name, spec), workers)| Hog {
            name,
            workers,
            spec,
        })
        .collect();
    Ok(Parsed::Run(Stress {
        job: Job {
            hogs,
            timeout_s: timeout,
            taskset: None,
            notes: Vec::new(),
        },
        backoff,
        verbosity,
        dry_run,
    }))
}

/// `stress --help`: what rtlab's stress takes.
pub const USAGE: &str = "\
stress, as rtlab runs it: each kind of worker runs as an rtlab load.

Usage: stress [OPTION [ARG]]...
  -c, --cpu N        N workers computing square roots (load cpu method=sqrt)
  -i, --io N         N workers calling sync() in a loop (load io sync)
  -m, --vm N         N workers mapping, touching and unmapping memory (load vm)
      --vm-bytes B   bytes each vm worker maps (256M)
      --vm-keep      keep the mapping and write to it again
      --vm-stride B  only the page size: every page is touched
  -d, --hdd N        N workers writing and removing a file (load io)
      --hdd-bytes B  bytes each hdd worker writes per file (1G)
  -t, --timeout T    stop after T (s, m, h, d, y); without it, run until stopped
      --backoff N    sleep N microseconds per worker before starting (3000)
  -n, --dry-run      print what would run, run nothing
  -q, --quiet        print only failures
  -v, --verbose      print the back-off, the timeout and each worker too
  -?, --help         this text
      --version      the version

Sizes take B, K, M or G. The io and hdd workers write in the current directory.
The run is stored in rtlab's results, unless rtlab stress --no-store or
RTLAB_NO_STORE=1.

Example: stress --cpu 4 --vm 2 --vm-bytes 128M --timeout 60s
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BadValue;

    fn run(args: &[&str]) -> Stress {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        match parse(&args, Path::new("/tmp")).unwrap() {
            Parsed::Run(s) => s,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn refused(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        match parse(&args, Path::new("/tmp")) {
            Ok(p) => panic!("{args:?} was accepted: {p:?}"),
            Err(e) => match e.downcast_ref::<BadValue>() {
                Some(b) => b.to_string(),
                None => e.to_string(),
            },
        }
    }

    fn workers(s: &Stress) -> Vec<u32> {
        s.job.hogs.iter().map(|h| h.workers).collect()
    }

    #[test]
    fn every_spelling_of_the_hogs() {
        let long = run(&["--cpu", "4", "--io", "1", "--vm", "2", "--hdd", "3"]);
        let short = run(&["-c", "4", "-i", "1", "-m", "2", "-d", "3"]);
        let glued = run(&["-c4", "-i1", "-m2", "-d3"]);
        let eq = run(&["--cpu=4", "--io=1", "--vm=2", "--hdd=3"]);
        for s in [&long, &short, &glued, &eq] {
            assert_eq!(workers(s), [4, 1, 2, 3]);
        }
        let names: Vec<&str> = long.job.hogs.iter().map(|h| h.name).collect();
        assert_eq!(names, ["cpu", "io", "vm", "hdd"]);
        assert_eq!(long.job.hogs[0].spec, "cpu method=sqrt");
        assert_eq!(long.job.hogs[1].spec, "io sync dir=/tmp");
        assert_eq!(long.job.hogs[2].spec, "vm bytes=256M");
        assert_eq!(long.job.hogs[3].spec, "io dir=/tmp bytes=1G");
        assert_eq!(
            long.job.timeout_s, None,
            "without --timeout stress runs until killed"
        );
        assert_eq!(long.backoff_us(), 10 * 3000);
    }

    #[test]
    fn every_spelling_of_the_rest() {
        let s = run(&[
            "-m",
            "1",
            "--vm-bytes",
            "64M",
            "--vm-keep",
            "--vm-stride",
            "4096",
            "-d",
            "1",
            "--hdd-bytes",
            "8k",
        ]);
        assert_eq!(s.job.hogs[2].spec, "vm bytes=64M keep");
        assert_eq!(s.job.hogs[3].spec, "io dir=/tmp bytes=8K");
        for (t, secs) in [
            ("10", 10),
            ("10s", 10),
            ("2m", 120),
            ("1h", 3600),
            ("1d", 86_400),
            ("1y", YEAR_S),
            ("1.9", 1),
            ("1S", 1),
        ] {
            assert_eq!(
                run(&["-c", "1", "--timeout", t]).job.timeout_s,
                Some(secs),
                "{t}"
            );
            assert_eq!(run(&["-c", "1", "-t", t]).job.timeout_s, Some(secs), "{t}");
        }
        let s = run(&["-c", "1", "-q", "-v", "-n", "--backoff", "5"]);
        assert!(
            s.verbosity == Verbosity::Verbose && s.dry_run,
            "the last of -q and -v counts"
        );
        assert_eq!((s.backoff, s.backoff_us()), (Some(5), 5));
        let s = run(&["-c", "1", "--verbose", "--quiet", "--dry-run"]);
        assert!(s.verbosity == Verbosity::Quiet && s.dry_run);
        assert_eq!(run(&["-c", "1"]).verbosity, Verbosity::Normal);
        assert!(run(&["-qvnc", "1"]).dry_run);
        let p = |a: &[&str]| {
            parse(
                &a.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
                Path::new("/tmp"),
            )
            .unwrap()
        };
        assert!(matches!(p(&["--help"]), Parsed::Help));
        assert!(matches!(p(&["-?"]), Parsed::Help));
        assert!(matches!(p(&["--version"]), Parsed::Version));
    }

    #[test]
    fn refusals_name_the_option() {
        for (args, want) in [
            (&["--cpu"][..], "--cpu needs a value"),
            (&["--cpu", "-1"], "--cpu: '-1'"),
            (&["--cpu", "x"], "--cpu: 'x'"),
            (&["--cpu", "5000"], "--cpu: '5000'"),
            (&["-c", "1", "-t", "0"], "--timeout: '0' is zero"),
            (&["-c", "1", "-t", "1ms"], "--timeout: '1ms'"),
            (&["-c", "1", "-t", "x"], "--timeout: 'x'"),
            (&["-m", "1", "--vm-bytes", "0"], "--vm-bytes: '0'"),
            (&["-m", "1", "--vm-bytes", "1x"], "--vm-bytes: "),
            (&["-m", "1", "--vm-bytes", "100"], "below one page"),
            (
                &["-m", "1", "--vm-stride", "64"],
                "--vm-stride: rtlab's vm load touches one byte per page",
            ),
            (
                &["-m", "1", "--vm-hang", "0"],
                "--vm-hang: rtlab's vm load never holds",
            ),
            (&["-c", "1", "--backoff", "x"], "--backoff: 'x'"),
            (&["--foo"], "stress has no option --foo"),
            (&["-c", "1", "2"], "'2' is not an option"),
            (&["--quiet=1"], "--quiet takes no value"),
            (&[], "no hogs to run"),
            (&["-c", "0", "-t", "1"], "no hogs to run"),
        ] {
            let e = refused(args);
            assert!(e.contains(want), "{args:?}: {e}");
        }
        let args: Vec<String> = ["-d", "1"].iter().map(|a| a.to_string()).collect();
        let e = parse(&args, Path::new("/my dir")).unwrap_err().to_string();
        assert!(e.contains("'/my dir'") && e.contains("space"), "{e}");
    }
}
