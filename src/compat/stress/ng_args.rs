//! stress-ng's command line, into a [`Job`]: the stressors that map onto an
//! rtlab load, their options, the general options rtlab honours, and a
//! refusal naming anything else.
//!
//! | stressor | rtlab load | its options |
//! |----------|------------|-------------|
//! | `-c`, `--cpu N` | `cpu` | `--cpu-method M` (stress-ng's methods: those rtlab implements run as such, any other as the closest one, with a note in the run), `-l`, `--cpu-load P`, `--cpu-load-slice S` |
//! | `-m`, `--vm N` | `vm` | `--vm-bytes N\|P%`, `--vm-keep` |
//! | `--memcpy N` | `memcopy` | |
//! | `-d`, `--hdd N` | `io` in `--temp-path` (default: the current directory) | `--hdd-bytes N\|P%` |
//! | `-i`, `--io N` | `io sync`, in the same directory | |
//! | `-f`, `--fork N` | `fork` | |
//! | `-T`, `--timer N` | `timer`, one timer per worker | `--timer-freq F` (1 Hz to 1 MHz) |
//! | `-S`, `--sock N`; `--udp N` | `net` (UDP over loopback) | |
//! | `-p`, `--pipe N` | `msg pipe`, one writer and one reader | `--pipe-data-size N` |
//! | `--sockpair N` | `msg` over socket pairs, one writer and one reader | |
//!
//! N = 0 or below is one worker per CPU rtlab may use, as stress-ng counts CPUs.

use super::getopt::{flag, scan, val, Opt, ScanError};
use super::values::{count, io_dir, scan_error, seconds, size, size_text, vm_size};
use super::{Hog, Job, Verbosity};
use crate::error::{bad_flag, UsageError};
use anyhow::Result;
use rtlab_engine::load::cpu::{self, Method};
use std::path::Path;

/// The stressors rtlab runs, with their short letters and the options of
/// each that it honours.
const STRESSORS: &[(&str, Option<char>, &[&str])] = &[
    (
        "cpu",
        Some('c'),
        &["--cpu-method", "--cpu-load", "--cpu-load-slice"],
    ),
    ("vm", Some('m'), &["--vm-bytes", "--vm-keep"]),
    ("memcpy", None, &[]),
    ("hdd", Some('d'), &["--hdd-bytes"]),
    ("io", Some('i'), &[]),
    ("fork", Some('f'), &[]),
    ("timer", Some('T'), &["--timer-freq"]),
    ("sock", Some('S'), &[]),
    ("udp", None, &[]),
    ("pipe", Some('p'), &["--pipe-data-size"]),
    ("sockpair", None, &[]),
];

const OPTS: &[Opt] = &[
    flag("help", Some('h')),
    flag("version", Some('V')),
    val("timeout", Some('t')),
    flag("metrics", Some('M')),
    flag("metrics-brief", None),
    val("yaml", Some('Y')),
    flag("quiet", Some('q')),
    flag("verbose", Some('v')),
    flag("dry-run", Some('n')),
    val("taskset", None),
    val("temp-path", None),
    val("cpu-method", None),
    val("cpu-load", Some('l')),
    val("cpu-load-slice", None),
    val("vm-bytes", None),
    flag("vm-keep", None),
    val("hdd-bytes", None),
    val("timer-freq", None),
    val("pipe-data-size", None),
];

/// The run length when `-t` is not given: stress-ng's day.
pub const DEFAULT_TIMEOUT_S: u64 = 86_400;

/// A year, for stress-ng's `y` suffix.
const YEAR_S: u64 = 31_556_926;

/// A stress-ng run.
#[derive(Debug)]
pub struct Ng {
    /// The stressors, in the order given, and the run length.
    pub job: Job,
    /// `-t` as given (0: no limit).
    pub timeout_given: Option<u64>,
    /// `--metrics-brief` (false) or `--metrics` (true).
    pub metrics: Option<bool>,
    /// `--yaml FILE`.
    pub yaml: Option<String>,
    /// `-q`, `-v`.
    pub verbosity: Verbosity,
    /// `-n`.
    pub dry_run: bool,
}

/// What the command line asks.
#[derive(Debug)]
pub enum Parsed {
    /// Run (or with `-n`, say what would run).
    Run(Ng),
    /// `-h`, `--help`.
    Help,
    /// `-V`, `--version`.
    Version,
}

/// The values of the stressors' options.
#[derive(Debug, Default)]
struct Keys {
    method: Option<String>,
    load: Option<String>,
    slice: Option<String>,
    vm_bytes: Option<String>,
    vm_keep: bool,
    hdd_bytes: Option<String>,
    timer_freq: Option<String>,
    pipe_size: Option<String>,
    temp_path: Option<String>,
}

/// Parses stress-ng's arguments; `cwd` is where its hdd and io workers write
/// by default, `cpus` the workers of a count of 0 or below.
pub fn parse(args: &[String], cwd: &Path, cpus: u32) -> Result<Parsed> {
    let mut table = OPTS.to_vec();
    table.extend(STRESSORS.iter().map(|(name, short, _)| val(name, *short)));
    let opts = scan(&table, args).map_err(|e| match e {
        ScanError::Unknown(o) => unknown(&o),
        e => scan_error(e, "stress-ng"),
    })?;
    let mut counts: Vec<(&'static str, u32)> = Vec::new();
    let mut k = Keys::default();
    let (mut timeout, mut metrics, mut yaml, mut taskset) = (None, None, None, None);
    let (mut verbosity, mut dry_run) = (Verbosity::Normal, false);
    for (name, v) in opts {
        let flag = format!("--{name}");
        match (name, v) {
            ("help", _) => return Ok(Parsed::Help),
            ("version", _) => return Ok(Parsed::Version),
            ("metrics", _) => metrics = Some(metrics.unwrap_or(true)),
            ("metrics-brief", _) => metrics = Some(false),
            ("quiet", _) => verbosity = Verbosity::Quiet,
            ("verbose", _) => verbosity = Verbosity::Verbose,
            ("dry-run", _) => dry_run = true,
            ("vm-keep", _) => k.vm_keep = true,
            (_, None) => unreachable!("every other option takes a value"),
            ("timeout", Some(v)) => timeout = Some(seconds(&flag, &v, YEAR_S)?),
            ("yaml", Some(v)) => yaml = Some(v),
            ("taskset", Some(v)) => taskset = Some(v),
            ("temp-path", Some(v)) => k.temp_path = Some(v),
            ("cpu-method", Some(v)) => k.method = Some(v),
            ("cpu-load", Some(v)) => k.load = Some(v),
            ("cpu-load-slice", Some(v)) => k.slice = Some(v),
            ("vm-bytes", Some(v)) => k.vm_bytes = Some(v),
            ("hdd-bytes", Some(v)) => k.hdd_bytes = Some(v),
            ("timer-freq", Some(v)) => k.timer_freq = Some(v),
            ("pipe-data-size", Some(v)) => k.pipe_size = Some(v),
            (stressor, Some(v)) => {
                if counts.iter().any(|(n, _)| *n == stressor) {
                    return Err(bad_flag(&flag, "is given twice; give each stressor once"));
                }
                counts.push((stressor, workers(&flag, &v, cpus)?));
            }
        }
    }
    if counts.is_empty() {
        return Err(UsageError(
            "no stressors to run: give at least one (e.g. stress-ng --cpu 2 --timeout 10s; see stress-ng --help)".into(),
        )
        .into());
    }
    let dir = k.temp_path.as_deref().map_or(cwd, Path::new);
    let mut notes = Vec::new();
    let hogs = counts
        .into_iter()
        .map(|(name, workers)| {
            Ok(Hog {
                name,
                workers,
                spec: spec(name, workers, &k, dir, &mut notes)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Parsed::Run(Ng {
        job: Job {
            hogs,
            timeout_s: match timeout {
                None => Some(DEFAULT_TIMEOUT_S),
                Some(0) => None,
                t => t,
            },
            taskset,
            notes,
        },
        timeout_given: timeout,
        metrics,
        yaml,
        verbosity,
        dry_run,
    }))
}

/// A stressor's instance count: below 1 is one per CPU.
fn workers(flag: &str, v: &str, cpus: u32) -> Result<u32> {
    match v.trim().parse::<i64>() {
        Ok(n) if n <= 0 => Ok(cpus),
        _ => count(flag, v),
    }
}

/// The rtlab load spec of stressor `name`; a note for each thing run in place
/// of what was asked goes to `notes`.
fn spec(name: &str, workers: u32, k: &Keys, dir: &Path, notes: &mut Vec<String>) -> Result<String> {
    Ok(match name {
        "cpu" => {
            let asked = k.method.as_deref().unwrap_or("all");
            let method = match (Method::named(asked), cpu::closest_to_stress_ng(asked)) {
                (Some(m), _) if !matches!(m, Method::Int | Method::Mix) => m,
                (_, Some(m)) => {
                    notes.push(format!(
                        "cpu: method '{asked}' runs as '{}', the closest method rtlab implements",
                        m.name()
                    ));
                    m
                }
                _ => {
                    let names: Vec<&str> = std::iter::once("all")
                        .chain(
                            Method::ALL
                                .iter()
                                .map(|(n, _)| *n)
                                .filter(|n| !matches!(*n, "int" | "mix" | "all")),
                        )
                        .chain(cpu::STRESS_NG_CLOSEST.iter().map(|(n, _)| *n))
                        .collect();
                    return Err(bad_flag(
                        "--cpu-method",
                        format!("'{asked}' is not one of stress-ng's: {}", names.join(" ")),
                    ));
                }
            };
            let load = match k.load.as_deref().map(|v| (v, v.trim().parse::<u32>())) {
                None | Some((_, Ok(100))) => String::new(),
                Some((_, Ok(p @ 0..=99))) => format!(" load={p}%"),
                Some((v, _)) => {
                    return Err(bad_flag(
                        "--cpu-load",
                        format!("'{v}' is not a load from 0 to 100 (%)"),
                    ))
                }
            };
            let slice = match k.slice.as_deref().map(|v| (v, v.trim().parse::<i32>())) {
                None => String::new(),
                Some((_, Ok(0))) => " slice=random".into(),
                Some((_, Ok(n @ -5000..=-1))) => format!(" slice={}ops", -n),
                Some((_, Ok(n @ 1..=5000))) => format!(" slice={n}ms"),
                Some((v, _)) => {
                    return Err(bad_flag(
                        "--cpu-load-slice",
                        format!(
                            "'{v}' is not in -5000 to 5000 (below 0: ops per busy slice; 0: random; above: ms)"
                        ),
                    ))
                }
            };
            format!("cpu method={}{load}{slice}", method.name())
        }
        "vm" => {
            let bytes = match k.vm_bytes.as_deref() {
                None => 256 << 20,
                Some(v) => share("--vm-bytes", v, workers, crate::limits::available_memory())?,
            };
            let keep = if k.vm_keep { " keep" } else { "" };
            format!(
                "vm bytes={}{keep}",
                size_text(vm_size("--vm-bytes", bytes)?)
            )
        }
        "memcpy" => "memcopy".into(),
        "hdd" | "io" => {
            let d = io_dir(dir, "stress-ng --hdd/--io")?;
            if name == "io" {
                format!("io sync dir={d}")
            } else {
                let bytes = match k.hdd_bytes.as_deref() {
                    None => 1 << 30,
                    Some(v) => share(
                        "--hdd-bytes",
                        v,
                        workers,
                        rtlab_engine::load::io::free_bytes(&d),
                    )?,
                };
                format!("io dir={d} bytes={}", size_text(bytes))
            }
        }
        "fork" => "fork".into(),
        "timer" => {
            let v = k.timer_freq.as_deref().unwrap_or("1000000");
            let hz = v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|f| (1..=1_000_000).contains(f));
            let hz = hz.ok_or_else(|| bad_flag("--timer-freq", format!(
                "'{v}' is not a rate rtlab's timer load can run: 1 to 1000000 Hz (its shortest period is 1us)"
            )))?;
            format!("timer timers=1 period={}ns", 1_000_000_000 / hz)
        }
        "sock" | "udp" => "net".into(),
        "pipe" => {
            let page = rtlab_engine::load::sys::page_size() as u64;
            let v = k.pipe_size.as_deref();
            let bytes = v
                .map(|v| size("--pipe-data-size", v))
                .transpose()?
                .unwrap_or(page);
            if !(4..=page).contains(&bytes) {
                return Err(bad_flag(
                    "--pipe-data-size",
                    format!("{bytes} is outside 4 to {page} bytes"),
                ));
            }
            format!("msg pipe fds=1 size={}", size_text(bytes))
        }
        _ => "msg fds=1".into(),
    })
}

/// A size per worker: bytes, or `P%` of `whole` shared by the workers.
fn share(flag: &str, v: &str, workers: u32, whole: Option<u64>) -> Result<u64> {
    let Some(pct) = v.trim().strip_suffix('%') else {
        return size(flag, v);
    };
    let p = pct
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 100.0);
    let p = p.ok_or_else(|| {
        bad_flag(
            flag,
            format!("'{v}' is not a percentage above 0 and at most 100%"),
        )
    })?;
    let whole = whole.ok_or_else(|| {
        bad_flag(
            flag,
            format!("'{v}': the size it is a share of is not known here; give bytes"),
        )
    })?;
    Ok((whole as f64 * p / 100.0 / workers.max(1) as f64) as u64)
}

/// The refusal of an option rtlab's stress-ng does not know.
fn unknown(opt: &str) -> anyhow::Error {
    let name = opt.trim_start_matches('-');
    let names: Vec<&str> = STRESSORS.iter().map(|s| s.0).collect();
    let msg = if name
        .strip_suffix("-ops")
        .is_some_and(|s| names.contains(&s))
    {
        format!("{opt}: rtlab's loads run for a time (-t, --timeout), not for a number of bogo ops")
    } else if opt == "-b" || name == "backoff" {
        format!("{opt}: rtlab starts every worker at once; it cannot stagger their starts")
    } else if let Some((s, _, honoured)) = STRESSORS
        .iter()
        .rfind(|s| name.starts_with(&format!("{}-", s.0)))
    {
        let takes = if honoured.is_empty() {
            "no options".to_string()
        } else {
            honoured.join(", ")
        };
        format!("{opt}: rtlab's stress-ng does not honour this; of the {s} stressor's options it takes {takes}")
    } else {
        format!("{opt}: not a stressor or option rtlab's stress-ng runs; its stressors are {} (see stress-ng --help)", names.join(", "))
    };
    UsageError(msg).into()
}

/// `stress-ng --help`: what rtlab's stress-ng takes.
pub const USAGE: &str = "\
stress-ng, as rtlab runs it: the stressors that map onto an rtlab load.

Usage: stress-ng [OPTION [ARG]]...

Stressors: N workers each (0 or below: one per CPU), and the load they run
  -c, --cpu N             arithmetic (load cpu)
      --cpu-method M      all, ackermann, crc16, double, fft, fibonacci, float,
                          int32, int64, matrixprod, prime, sqrt; stress-ng's
                          other methods run as the closest of these (a note
                          says which)
  -l, --cpu-load P        busy P% of the time, 0 to 100
      --cpu-load-slice S  busy slices below 100%: S<0: -S ops; 0: random up
                          to 0.5 s; S>0: S ms (-64)
  -m, --vm N              map, touch, unmap memory (load vm)
      --vm-bytes N        bytes per worker (256M), or P% of available memory
      --vm-keep           keep the mapping and write to it again
      --memcpy N          copy memory (load memcopy)
  -d, --hdd N             write, fsync, remove files (load io)
      --hdd-bytes N       bytes per worker (1G), or P% of the free space
  -i, --io N              sync() in a loop (load io sync)
  -f, --fork N            fork and reap children (load fork)
  -T, --timer N           one timer per worker (load timer)
      --timer-freq F      its rate, 1 to 1000000 Hz (1000000)
  -S, --sock N            UDP datagrams over loopback (load net)
      --udp N             the same
  -p, --pipe N            one writer and one reader on a pipe (load msg)
      --pipe-data-size N  bytes per write, 4 to the page size (the page size)
      --sockpair N        one writer and one reader on socket pairs (load msg)

General options
  -t, --timeout T         stop after T (s, m, h, d, y; 0: until stopped; one day)
  -M, --metrics           print the table of what each stressor did
      --metrics-brief     the same without CPU use and RSS
  -Y, --yaml FILE         write the results to FILE in YAML
      --taskset LIST      the CPUs the workers run on (0,2-3)
      --temp-path DIR     where hdd and io write (the current directory)
  -n, --dry-run           print what would run, run nothing
  -q, --quiet             print only the table and failures
  -v, --verbose           print each worker too
  -h, --help              this text
  -V, --version           the version

The bogo-ops columns count rtlab load ops (rtlab load --list: one per call of
a cpu method), not stress-ng's bogo ops; neither is a benchmark. The run is
stored in rtlab's results, unless rtlab stress-ng --no-store or
RTLAB_NO_STORE=1.
";
