//! What each probe accepts in a scenario file, and how a key becomes a flag of the
//! rtlab subcommand that runs the step.

use crate::units::DefaultUnit;

/// The type of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A duration string with a unit (`"200us"`), above zero.
    Duration(DefaultUnit),
    /// A duration string with a unit that may be zero (an offset such as
    /// `distance`).
    DurationOrZero(DefaultUnit),
    /// A whole number in a range.
    Int(i64, i64),
    /// A size string (`"256M"`) or a whole number of bytes, above zero.
    Size,
    /// A size that may be zero (a message payload).
    SizeOrZero,
    /// One of some words, or any string when the list is empty.
    Word(&'static [&'static str]),
    /// true/false.
    Bool,
    /// A CPU list: a string (`"0,2-3"`), one CPU number, or an array of CPU
    /// numbers (`[0, 2]`).
    Cpus,
    /// Load specs: a string or an array of strings; `"none"` for no load.
    Loads,
}

/// How a parameter is passed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--flag VALUE`.
    Value(&'static str),
    /// `--flag` when true, nothing when false.
    Switch(&'static str),
    /// `--flag=true|false`.
    BoolValue(&'static str),
    /// `--flag SPEC` once per spec; nothing for `"none"`.
    Repeat(&'static str),
    /// Priority: 0 means `--policy other`, otherwise `-p N`.
    Priority,
    /// Priority of a probe that runs SCHED_OTHER unless given one: 0 means
    /// nothing, otherwise `--priority N`.
    RtPriority,
    /// The value alone, as a positional argument.
    Positional,
    /// Not passed to the probe: read by the campaign runner itself.
    Runner,
}

/// One parameter of a probe.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Key in the scenario file.
    pub key: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its flag.
    pub flag: Flag,
}

/// A probe a step can run. Probes are compared by name.
#[derive(Debug, Clone, Copy)]
pub struct ProbeDef {
    /// Name in the scenario file (`latency`, `bench.cpu`).
    pub name: &'static str,
    /// The subcommand words that run it.
    pub command: &'static [&'static str],
    /// The key that sets how long a step runs.
    pub duration_key: &'static str,
    /// Keys every step of this probe must give.
    pub required: &'static [&'static str],
    /// Accepted parameters.
    pub params: &'static [Param],
}

const fn p(key: &'static str, kind: Kind, flag: Flag) -> Param {
    Param { key, kind, flag }
}

const US: Kind = Kind::Duration(DefaultUnit::Micros);
const SECS: Kind = Kind::Duration(DefaultUnit::Seconds);

const MS: Kind = Kind::Duration(DefaultUnit::Millis);

/// Every probe a scenario can use.
pub const PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "latency",
        command: &["latency"],
        duration_key: "duration",
        required: &[],
        params: &[
            p("duration", SECS, Flag::Value("--duration")),
            p("interval", US, Flag::Value("--interval")),
            p("loops", Kind::Int(1, i64::MAX), Flag::Value("--loops")),
            p("cpus", Kind::Cpus, Flag::Value("--cpus")),
            p("threads", Kind::Int(1, 1024), Flag::Value("--threads")),
            p("priority", Kind::Int(0, 99), Flag::Priority),
            p(
                "policy",
                Kind::Word(&["fifo", "rr", "other"]),
                Flag::Value("--policy"),
            ),
            p(
                "distance",
                Kind::DurationOrZero(DefaultUnit::Micros),
                Flag::Value("--distance"),
            ),
            p(
                "clock",
                Kind::Word(&["monotonic", "realtime"]),
                Flag::Value("--clock"),
            ),
            p("mlock", Kind::Bool, Flag::BoolValue("--mlock")),
            p("dma_latency", Kind::Word(&[]), Flag::Value("--dma-latency")),
            p("histogram_max", US, Flag::Value("--histogram-max")),
            p("deadline", US, Flag::Value("--deadline")),
            p("max_latency", US, Flag::Value("--max-latency")),
            p("breaktrace", US, Flag::Value("--breaktrace")),
            p("load", Kind::Loads, Flag::Repeat("--load")),
        ],
    },
    ProbeDef {
        name: "net",
        command: &["net", "ping"],
        duration_key: "duration",
        required: &["target"],
        params: &[
            p("target", Kind::Word(&[]), Flag::Positional),
            p("local_server", Kind::Bool, Flag::Runner),
            p("server_priority", Kind::Int(0, 99), Flag::Runner),
            p("duration", SECS, Flag::Value("--duration")),
            p("count", Kind::Int(1, 10_000_000), Flag::Value("--count")),
            p("period", MS, Flag::Value("--period")),
            p(
                "round_trips",
                Kind::Int(1, 32),
                Flag::Value("--round-trips"),
            ),
            p("payload", Kind::SizeOrZero, Flag::Value("--payload")),
            p("timeout", MS, Flag::Value("--timeout")),
            p("deadline", MS, Flag::Value("--deadline")),
            p("max_latency", MS, Flag::Value("--max-latency")),
            p("priority", Kind::Int(0, 99), Flag::RtPriority),
            p("cpus", Kind::Cpus, Flag::Value("--cpus")),
            p("tcp", Kind::Bool, Flag::Switch("--tcp")),
            p("busy_wait", Kind::Bool, Flag::Switch("--busy-wait")),
            p("mlock", Kind::Bool, Flag::BoolValue("--mlock")),
            p("load", Kind::Loads, Flag::Repeat("--load")),
        ],
    },
    bench(
        "bench.cpu",
        &["bench", "cpu"],
        &[
            p("time", SECS, Flag::Value("--time")),
            p("events", Kind::Int(1, i64::MAX), Flag::Value("--events")),
            p("threads", Kind::Int(1, 4096), Flag::Value("--threads")),
            p(
                "max_prime",
                Kind::Int(3, i64::MAX),
                Flag::Value("--max-prime"),
            ),
        ],
    ),
    bench(
        "bench.memory",
        &["bench", "memory"],
        &[
            p("time", SECS, Flag::Value("--time")),
            p("events", Kind::Int(1, i64::MAX), Flag::Value("--events")),
            p("threads", Kind::Int(1, 4096), Flag::Value("--threads")),
            p("block_size", Kind::Size, Flag::Value("--block-size")),
            p("total_size", Kind::Size, Flag::Value("--total-size")),
            p(
                "oper",
                Kind::Word(&["read", "write"]),
                Flag::Value("--oper"),
            ),
            p(
                "access",
                Kind::Word(&["seq", "rnd"]),
                Flag::Value("--access"),
            ),
            p(
                "scope",
                Kind::Word(&["global", "local"]),
                Flag::Value("--scope"),
            ),
        ],
    ),
    bench(
        "bench.fileio",
        &["bench", "fileio"],
        &[
            p("time", SECS, Flag::Value("--time")),
            p("events", Kind::Int(1, i64::MAX), Flag::Value("--events")),
            p("threads", Kind::Int(1, 4096), Flag::Value("--threads")),
            p("dir", Kind::Word(&[]), Flag::Value("--dir")),
            p("total_size", Kind::Size, Flag::Value("--total-size")),
            p("files", Kind::Int(1, 1_000_000), Flag::Value("--files")),
            p("block_size", Kind::Size, Flag::Value("--block-size")),
            p(
                "mode",
                Kind::Word(&["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"]),
                Flag::Value("--mode"),
            ),
            p("rw_ratio", Kind::Word(&[]), Flag::Value("--rw-ratio")),
            p(
                "fsync_freq",
                Kind::Int(0, i64::MAX),
                Flag::Value("--fsync-freq"),
            ),
            p("fsync_end", Kind::Bool, Flag::BoolValue("--fsync-end")),
            p("direct", Kind::Bool, Flag::Switch("--direct")),
        ],
    ),
    bench(
        "bench.threads",
        &["bench", "threads"],
        &[
            p("time", SECS, Flag::Value("--time")),
            p("events", Kind::Int(1, i64::MAX), Flag::Value("--events")),
            p("threads", Kind::Int(1, 4096), Flag::Value("--threads")),
            p("yields", Kind::Int(1, i64::MAX), Flag::Value("--yields")),
            p("locks", Kind::Int(1, 1_000_000), Flag::Value("--locks")),
        ],
    ),
    bench(
        "bench.mutex",
        &["bench", "mutex"],
        &[
            p("time", SECS, Flag::Value("--time")),
            p("events", Kind::Int(1, i64::MAX), Flag::Value("--events")),
            p("threads", Kind::Int(1, 4096), Flag::Value("--threads")),
            p(
                "mutexes",
                Kind::Int(1, 100_000_000),
                Flag::Value("--mutexes"),
            ),
            p("locks", Kind::Int(1, i64::MAX), Flag::Value("--locks")),
            p("loops", Kind::Int(0, i64::MAX), Flag::Value("--loops")),
        ],
    ),
];

/// A throughput bench: its duration key is `time`, as in sysbench.
const fn bench(
    name: &'static str,
    command: &'static [&'static str],
    params: &'static [Param],
) -> ProbeDef {
    ProbeDef {
        name,
        command,
        duration_key: "time",
        required: &[],
        params,
    }
}

impl PartialEq for ProbeDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// The probe called `name`.
pub fn probe(name: &str) -> Option<&'static ProbeDef> {
    PROBES.iter().find(|p| p.name == name)
}

impl ProbeDef {
    /// The parameter called `key`.
    pub fn param(&self, key: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.key == key)
    }

    /// The accepted keys, for error messages.
    pub fn keys(&self) -> String {
        self.params
            .iter()
            .map(|p| p.key)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The names of all probes, for error messages.
pub fn names() -> String {
    PROBES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}
