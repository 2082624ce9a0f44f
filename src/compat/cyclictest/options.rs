//! cyclictest's options with their values read, as its option loop leaves
//! them: the last of a repeated option wins, and `-p` and `--policy` act in
//! the order given (`-p` makes a time-sharing policy SCHED_FIFO).

use super::args::{self, Given};
use crate::error::UsageError;
use anyhow::Result;
use std::path::PathBuf;

/// `-t`: one thread per CPU, or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// `-t` alone (or `-S`): one thread per available CPU.
    PerCpu,
    /// `-t N`.
    Exactly(usize),
}

/// The scheduling policies `--policy` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyName {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
}

impl PolicyName {
    /// Its name in cyclictest's status line.
    pub fn name(self) -> &'static str {
        match self {
            PolicyName::Other => "other",
            PolicyName::Batch => "batch",
            PolicyName::Idle => "idle",
            PolicyName::Fifo => "fifo",
            PolicyName::Rr => "rr",
        }
    }

    /// Whether it takes a real-time priority.
    pub fn is_realtime(self) -> bool {
        matches!(self, PolicyName::Fifo | PolicyName::Rr)
    }
}

/// Every option, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `-a`: `Some(None)` alone, `Some(Some(set))` with a CPU set.
    pub affinity: Option<Option<String>>,
    /// `-A [USEC]`.
    pub aligned: Option<u64>,
    /// `-b USEC` (0: off).
    pub breaktrace: u64,
    /// `-c`: 0 monotonic, 1 realtime.
    pub clock: u32,
    pub default_system: bool,
    /// `-d USEC`, when given.
    pub distance: Option<u64>,
    /// `-D`, in rtlab's spelling (`90s`, `10m`, `48h`).
    pub duration: Option<String>,
    /// `--deepest-idle-state N` (-1: no limit).
    pub deepest_idle_state: Option<i64>,
    pub fifo: Option<PathBuf>,
    /// `-h`/`-H` US (0: no histogram).
    pub histogram: u64,
    /// `-H`.
    pub histofall: bool,
    pub histfile: Option<PathBuf>,
    /// `-i USEC`.
    pub interval: u64,
    /// `--json FILE` (or `--output`).
    pub json: Option<PathBuf>,
    pub laptop: bool,
    /// `--latency`/`-e` (negative: 0).
    pub latency: i64,
    /// `-l` (0: no limit).
    pub loops: u64,
    pub mainaffinity: Option<String>,
    pub mlockall: bool,
    pub refresh_on_max: bool,
    pub nsecs: bool,
    /// `-o RED` (1: every sample).
    pub oscope: u64,
    /// `-p`.
    pub priority: Option<i64>,
    /// The policy after `-p` and `--policy`, in their order.
    pub policy: PolicyName,
    pub priospread: bool,
    pub quiet: bool,
    pub relative: bool,
    pub resolution: bool,
    /// `--secaligned [USEC]`.
    pub secaligned: Option<u64>,
    pub system: bool,
    pub smp: bool,
    /// `--spike` (0: off).
    pub spike: u64,
    pub spike_nodes: usize,
    pub threads: Option<Count>,
    pub tracemark: bool,
    pub unbuffered: bool,
    pub verbose: bool,
    pub posix_timers: bool,
    pub help: bool,
    /// Option names in the order given (for what cyclictest prints in that order).
    pub order: Vec<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            affinity: None,
            aligned: None,
            breaktrace: 0,
            clock: 0,
            default_system: false,
            distance: None,
            duration: None,
            deepest_idle_state: None,
            fifo: None,
            histogram: 0,
            histofall: false,
            histfile: None,
            interval: 1000,
            json: None,
            laptop: false,
            latency: 0,
            loops: 0,
            mainaffinity: None,
            mlockall: false,
            refresh_on_max: false,
            nsecs: false,
            oscope: 1,
            priority: None,
            policy: PolicyName::Other,
            priospread: false,
            quiet: false,
            relative: false,
            resolution: false,
            secaligned: None,
            system: false,
            smp: false,
            spike: 0,
            spike_nodes: 1024,
            threads: None,
            tracemark: false,
            unbuffered: false,
            verbose: false,
            posix_timers: false,
            help: false,
            order: Vec::new(),
        }
    }
}

const US: &str = "a whole number of µs";

/// `-D`: a number of seconds, or of minutes, hours or days with `m`, `h`, `d`.
fn duration(g: &Given) -> Result<String> {
    let v = g.value.as_deref().unwrap_or("").trim();
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &v[digits.len()..];
    let n: u64 = digits.parse().map_err(|_| {
        UsageError(format!(
            "{}: '{v}' is not a duration (seconds, or a number with m, h or d)",
            g.spelled
        ))
    })?;
    let (n, unit) = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => (n, "s"),
        "m" => (n, "m"),
        "h" => (n, "h"),
        "d" => (n * 24, "h"),
        _ => {
            return Err(UsageError(format!(
                "{}: '{v}': cyclictest's units are s, m, h and d",
                g.spelled
            ))
            .into())
        }
    };
    Ok(format!("{n}{unit}"))
}

fn policy(g: &Given) -> Result<PolicyName> {
    let v = g.value.as_deref().unwrap_or("");
    Ok(match v.to_ascii_lowercase().as_str() {
        "other" | "normal" => PolicyName::Other,
        "batch" => PolicyName::Batch,
        "idle" => PolicyName::Idle,
        "fifo" => PolicyName::Fifo,
        "rr" => PolicyName::Rr,
        _ => {
            return Err(UsageError(format!(
                "{}: '{v}' is not a policy (other, normal, batch, idle, fifo or rr)",
                g.spelled
            ))
            .into())
        }
    })
}

/// Reads the options given, in order.
pub fn read(given: &[Given]) -> Result<Options> {
    let mut o = Options::default();
    for g in given {
        o.order.push(g.name);
        let has = g.value.is_some();
        match g.name {
            "affinity" => o.affinity = Some(g.value.clone()),
            "aligned" => o.aligned = Some(if has { args::number(g, US)? } else { 0 }),
            "breaktrace" => o.breaktrace = args::number(g, US)?,
            "clock" => o.clock = args::number(g, "0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)")?,
            "default-system" => o.default_system = true,
            "distance" => o.distance = Some(args::number(g, US)?),
            "duration" => o.duration = Some(duration(g)?),
            "deepest-idle-state" => {
                o.deepest_idle_state = Some(args::number(g, "an idle state number (or -1)")?)
            }
            "fifo" => o.fifo = Some(args::path(g)?),
            "histogram" | "histofall" => {
                o.histogram = args::number(g, US)?;
                o.histofall = g.name == "histofall";
            }
            "histfile" => o.histfile = Some(args::path(g)?),
            "interval" => o.interval = args::number(g, US)?,
            "json" | "output" => o.json = Some(args::path(g)?),
            "laptop" => o.laptop = true,
            "latency" => o.latency = args::number(g, US)?,
            "loops" => o.loops = args::number(g, "a whole number of loops")?,
            "mainaffinity" => o.mainaffinity = g.value.clone(),
            "mlockall" => o.mlockall = true,
            "refresh_on_max" => o.refresh_on_max = true,
            "nanosleep" => {}
            "nsecs" => o.nsecs = true,
            "oscope" => o.oscope = args::number(g, "a whole number of samples")?,
            "priority" => {
                o.priority = Some(args::number(g, "a priority")?);
                if !o.policy.is_realtime() {
                    o.policy = PolicyName::Fifo;
                }
            }
            "policy" => o.policy = policy(g)?,
            "priospread" => o.priospread = true,
            "quiet" => o.quiet = true,
            "relative" => o.relative = true,
            "resolution" => o.resolution = true,
            "secaligned" => o.secaligned = Some(if has { args::number(g, US)? } else { 0 }),
            "system" => o.system = true,
            "smp" => o.smp = true,
            "smi" => return Err(UsageError(format!(
                "{}: rtlab does not read the SMI count (a model-specific register of some Intel CPUs); leave the option out",
                g.spelled
            )).into()),
            "spike" => o.spike = args::number(g, US)?,
            "spike-nodes" => o.spike_nodes = args::number(g, "a whole number of spikes")?,
            "threads" => {
                o.threads = Some(match &g.value {
                    Some(_) => Count::Exactly(args::number(g, "a number of threads")?),
                    None => Count::PerCpu,
                })
            }
            "tracemark" => o.tracemark = true,
            "unbuffered" => o.unbuffered = true,
            "verbose" => o.verbose = true,
            "dbg_cyclictest" => return Err(UsageError(format!(
                "{}: prints cyclictest's own debugging of its clock reads; rtlab has none to print (leave it out)",
                g.spelled
            )).into()),
            "posix_timers" => o.posix_timers = true,
            "help" => o.help = true,
            other => unreachable!("option {other} is listed but not read"),
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(line: &str) -> Options {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        read(&args::parse(&args).unwrap()).unwrap()
    }

    fn err(line: &str) -> String {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        args::parse(&args)
            .and_then(|g| read(&g))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_are_cyclictests() {
        let d = o("");
        assert_eq!((d.interval, d.loops, d.priority), (1000, 0, None));
        assert_eq!(
            (d.policy, d.threads, d.histogram),
            (PolicyName::Other, None, 0)
        );
        assert!(!d.mlockall && !d.quiet && d.oscope == 1 && d.spike_nodes == 1024);
    }

    #[test]
    fn every_option_is_read() {
        let x = o(
            "-a 0-1 -A 20 -b 100 -c 1 --default-system -d 50 -D 2d --deepest-idle-state=1 \
                   -F f.fifo -H 100 --histfile=h.txt -i 200 --json j.json --laptop --latency 5 \
                   -l 10 --mainaffinity 1 -m -M -n -N -o 2 -p 80 --priospread -q -r -R \
                   --secaligned 5 -s -S --spike 30 --spike-nodes 4 -t 2 --tracemark -u -v -x",
        );
        assert_eq!(x.affinity, Some(Some("0-1".into())));
        assert_eq!((x.aligned, x.breaktrace, x.clock), (Some(20), 100, 1));
        assert_eq!((x.distance, x.duration.as_deref()), (Some(50), Some("48h")));
        assert_eq!(x.deepest_idle_state, Some(1));
        assert_eq!(x.fifo, Some(PathBuf::from("f.fifo")));
        assert_eq!((x.histogram, x.histofall), (100, true));
        assert_eq!(x.histfile, Some(PathBuf::from("h.txt")));
        assert_eq!((x.interval, x.loops, x.latency), (200, 10, 5));
        assert_eq!(x.json, Some(PathBuf::from("j.json")));
        assert_eq!(x.mainaffinity.as_deref(), Some("1"));
        assert_eq!(
            (x.oscope, x.priority, x.policy),
            (2, Some(80), PolicyName::Fifo)
        );
        assert_eq!((x.secaligned, x.spike, x.spike_nodes), (Some(5), 30, 4));
        assert_eq!(x.threads, Some(Count::Exactly(2)));
        assert!(x.default_system && x.laptop && x.mlockall && x.refresh_on_max && x.nsecs);
        assert!(x.priospread && x.quiet && x.relative && x.resolution && x.system && x.smp);
        assert!(x.tracemark && x.unbuffered && x.verbose && x.posix_timers);
        assert!(o("--help").help);
        assert_eq!(o("-t").threads, Some(Count::PerCpu));
        assert_eq!(o("-a").affinity, Some(None));
        assert_eq!(o("-A").aligned, Some(0));
        assert_eq!(o("--secaligned").secaligned, Some(0));
        assert_eq!(o("-e 3").latency, 3);
        assert_eq!(o("--output=o.json").json, Some(PathBuf::from("o.json")));
    }

    #[test]
    fn duration_units_are_cyclictests() {
        for (given, read) in [
            ("90", "90s"),
            ("30s", "30s"),
            ("10m", "10m"),
            ("2h", "2h"),
            ("1d", "24h"),
            ("5M", "5m"),
        ] {
            assert_eq!(
                o(&format!("-D {given}")).duration.as_deref(),
                Some(read),
                "{given}"
            );
        }
        assert!(err("-D 10ms").contains("cyclictest's units are s, m, h and d"));
        assert!(err("-D soon").starts_with("-D: 'soon' is not a duration"));
    }

    #[test]
    fn priority_and_policy_act_in_their_order() {
        assert_eq!(o("-p 80").policy, PolicyName::Fifo);
        assert_eq!(o("--policy=rr -p 80").policy, PolicyName::Rr);
        assert_eq!(o("-p 80 --policy=rr").policy, PolicyName::Rr);
        assert_eq!(o("-p 80 --policy=batch").policy, PolicyName::Batch);
        assert_eq!(o("--policy=normal").policy, PolicyName::Other);
        assert_eq!(o("-y idle").policy, PolicyName::Idle);
        assert!(err("--policy=deadline").starts_with("--policy: 'deadline' is not a policy"));
    }

    #[test]
    fn bad_values_and_unsupported_options_are_refused_naming_them() {
        assert!(err("-i 200us").starts_with("-i: '200us' is not a whole number of µs"));
        assert!(err("--interval=x").starts_with("--interval: 'x'"));
        assert!(err("-l many").starts_with("-l: "));
        assert!(err("-p high").starts_with("-p: "));
        assert!(err("-t x").contains("unexpected argument 'x'"));
        assert!(err("--threads=x").starts_with("--threads: 'x' is not a number of threads"));
        assert!(err("-h -5").starts_with("-h: '-5'"));
        assert!(err("--smi").starts_with("--smi: rtlab does not read the SMI count"));
        assert!(err("--dbg_cyclictest").starts_with("--dbg_cyclictest: "));
        assert!(err("--json=/no/such/dir/j").starts_with("--json: "));
    }
}
