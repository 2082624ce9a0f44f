//! sysbench's command line: `[options]... [testname] [command]`, options
//! anywhere, each as `--name=value` (a boolean also bare, `--histogram`), in
//! sysbench 1.0's names and the 0.4 spellings 1.0 still takes (`--test=cpu`,
//! `--num-threads`, `--max-time`, `--max-requests`). This reads the words; what
//! each option means for a test is `params.rs`'s.

use crate::error::UsageError;
use std::collections::BTreeMap;

/// A built-in test of sysbench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    Cpu,
    Memory,
    Fileio,
    Threads,
    Mutex,
}

impl Test {
    pub const ALL: [Test; 5] = [
        Test::Cpu,
        Test::Memory,
        Test::Fileio,
        Test::Threads,
        Test::Mutex,
    ];

    /// sysbench's name of the test.
    pub fn name(self) -> &'static str {
        match self {
            Test::Cpu => "cpu",
            Test::Memory => "memory",
            Test::Fileio => "fileio",
            Test::Threads => "threads",
            Test::Mutex => "mutex",
        }
    }

    fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// What to do with a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
    Help,
}

/// The type of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number.
    Int,
    /// A size with an optional K, M, G or T suffix.
    Size,
    /// A decimal number.
    Float,
    /// `on`/`off` (also bare: on).
    Bool,
    /// A word.
    Word,
    /// Comma-separated words.
    List,
}

/// An option sysbench 1.0 knows: its name without `--`, the test it belongs
/// to (`None`: every test), its type, its default as sysbench prints it, and
/// what it does.
pub struct Spec {
    pub name: &'static str,
    pub test: Option<Test>,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
}

const fn spec(
    name: &'static str,
    test: Option<Test>,
    kind: Kind,
    default: &'static str,
    help: &'static str,
) -> Spec {
    Spec {
        name,
        test,
        kind,
        default,
        help,
    }
}

use Kind::*;
const CPU: Option<Test> = Some(Test::Cpu);
const MEM: Option<Test> = Some(Test::Memory);
const FIO: Option<Test> = Some(Test::Fileio);
const THR: Option<Test> = Some(Test::Threads);
const MTX: Option<Test> = Some(Test::Mutex);

/// Every option of sysbench 1.0's built-in tests, in its help's order.
#[rustfmt::skip]
pub const SPECS: &[Spec] = &[
    spec("threads", None, Int, "1", "worker threads"),
    spec("events", None, Int, "0", "stop after this many events over all threads (0: no limit)"),
    spec("time", None, Int, "10", "stop after this many seconds (0: no limit)"),
    spec("forced-shutdown", None, Word, "off", "seconds after --time to abandon the event under way, or off"),
    spec("thread-stack-size", None, Size, "64K", "stack size of each worker thread"),
    spec("rate", None, Int, "0", "events per second to aim at (0: as fast as possible)"),
    spec("report-interval", None, Int, "0", "print the rates every this many seconds (0: never)"),
    spec("report-checkpoints", None, List, "", "seconds at which to print the whole report and reset the counters"),
    spec("debug", None, Bool, "off", "print debugging messages"),
    spec("validate", None, Bool, "off", "check the results where the test can"),
    spec("verbosity", None, Int, "3", "messages to print: 0 only errors ... 3 the reports ... 5 debugging"),
    spec("percentile", None, Int, "95", "percentile of the event times to report (1-100; 0: none)"),
    spec("histogram", None, Bool, "off", "print the histogram of the event times"),
    spec("rand-type", None, Word, "special", "distribution of the random numbers {uniform,gaussian,special,pareto}"),
    spec("rand-spec-iter", None, Int, "12", "iterations of the special distribution"),
    spec("rand-spec-pct", None, Int, "1", "per cent of values that are special"),
    spec("rand-spec-res", None, Int, "75", "per cent of the special values used"),
    spec("rand-seed", None, Int, "0", "seed of the random number generator (0: the current time)"),
    spec("rand-pareto-h", None, Float, "0.2", "parameter h of the pareto distribution"),
    spec("config-file", None, Word, "", "file holding more options"),
    spec("cpu-max-prime", CPU, Int, "10000", "search the primes below this number in each event"),
    spec("memory-block-size", MEM, Size, "1K", "bytes moved in each event"),
    spec("memory-total-size", MEM, Size, "100G", "stop after moving this much"),
    spec("memory-scope", MEM, Word, "global", "one block for all threads or one each {global,local}"),
    spec("memory-hugetlb", MEM, Bool, "off", "take the blocks from the HugeTLB pool"),
    spec("memory-oper", MEM, Word, "write", "what to do with each word {read,write,none}"),
    spec("memory-access-mode", MEM, Word, "seq", "order of the words {seq,rnd}"),
    spec("file-num", FIO, Int, "128", "number of files"),
    spec("file-block-size", FIO, Size, "16384", "bytes per request"),
    spec("file-total-size", FIO, Size, "2G", "size of all files together"),
    spec("file-test-mode", FIO, Word, "", "requests {seqwr,seqrewr,seqrd,rndrd,rndwr,rndrw}"),
    spec("file-io-mode", FIO, Word, "sync", "how requests are made {sync,async,mmap}"),
    spec("file-async-backlog", FIO, Int, "128", "requests queued per thread in async mode"),
    spec("file-extra-flags", FIO, List, "", "more flags to open the files with {sync,dsync,direct}"),
    spec("file-fsync-freq", FIO, Int, "100", "fsync after this many requests (0: never)"),
    spec("file-fsync-all", FIO, Bool, "off", "fsync after every write"),
    spec("file-fsync-end", FIO, Bool, "on", "fsync all files at the end"),
    spec("file-fsync-mode", FIO, Word, "fsync", "how to sync {fsync,fdatasync}"),
    spec("file-merged-requests", FIO, Int, "0", "merge up to this many requests (0: none)"),
    spec("file-rw-ratio", FIO, Float, "1.5", "reads per write in rndrw"),
    spec("thread-yields", THR, Int, "1000", "lock, yield, unlock rounds per event"),
    spec("thread-locks", THR, Int, "8", "mutexes the threads share"),
    spec("mutex-num", MTX, Int, "4096", "number of mutexes"),
    spec("mutex-locks", MTX, Int, "50000", "locks each thread takes"),
    spec("mutex-loops", MTX, Int, "10000", "empty loop turns before each lock"),
];

/// Spellings sysbench 1.0 still takes for its options: the old name, the new
/// one, and the old one's default. In this order, an old name given a value
/// other than its default sets the new one (whatever the new one says) and is
/// warned about on stdout; at its default it is ignored.
const DEPRECATED: [(&str, &str, &str); 4] = [
    ("num-threads", "threads", "1"),
    ("max-requests", "events", "0"),
    ("max-time", "time", "0"),
    ("tx-rate", "rate", "0"),
];

/// Where sysbench's database options start: they belong to its Lua tests.
const DATABASE: [&str; 3] = ["db-", "mysql-", "pgsql-"];

/// sysbench's bundled Lua tests, which rtlab does not run.
const LUA_TESTS: [&str; 10] = [
    "oltp_common",
    "oltp_delete",
    "oltp_insert",
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_write_only",
    "select_random_points",
];

/// A command line read: the test and command, the options given (by their
/// 1.0 name: the value, last one wins), and the warnings sysbench prints on
/// stdout (old option names) and on stderr (`--test`).
#[derive(Debug, Default)]
pub struct Invocation {
    pub test: Option<Test>,
    pub command: Option<Command>,
    pub help: bool,
    pub version: bool,
    pub values: BTreeMap<&'static str, String>,
    pub notices: Vec<String>,
    pub warnings: Vec<String>,
}

fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// The spec of option `name` (1.0's name).
pub fn spec_of(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Reads `args` (without the program's name).
pub fn parse(args: &[String]) -> anyhow::Result<Invocation> {
    let mut inv = Invocation::default();
    let mut words = Vec::new();
    let mut test_option: Option<String> = None;
    let mut old: BTreeMap<&str, String> = BTreeMap::new();
    for arg in args {
        let Some(opt) = arg.strip_prefix("--") else {
            if arg.starts_with('-') && arg.len() > 1 {
                return Err(usage(format!(
                    "unknown option {arg}: sysbench's options are long, --name=value"
                )));
            }
            words.push(arg.as_str());
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, None),
        };
        match name {
            "help" => inv.help = bool_value(arg, value.unwrap_or("on"))?,
            "version" => inv.version = bool_value(arg, value.unwrap_or("on"))?,
            "test" => {
                inv.warnings.push("the --test option is deprecated. You can pass a script name or path on the command line without any options.".into());
                test_option = Some(needs_value(arg, value)?.to_string());
            }
            _ => {
                if let Some((name, ..)) = DEPRECATED.iter().find(|d| d.0 == name) {
                    old.insert(name, needs_value(arg, value)?.to_string());
                    continue;
                }
                let Some(s) = spec_of(name) else {
                    return Err(unknown_option(arg, name));
                };
                let v = match (s.kind, value) {
                    (Bool, None) => "on".to_string(),
                    (Bool, Some(v)) => {
                        let on = bool_value(arg, v)?;
                        if on { "on" } else { "off" }.to_string()
                    }
                    (_, v) => needs_value(arg, v)?.to_string(),
                };
                inv.values.insert(s.name, v);
            }
        }
    }
    for (name, new, default) in DEPRECATED {
        match old.remove(name) {
            Some(v) if v != default => {
                inv.notices
                    .push(format!("--{name} is deprecated, use --{new} instead"));
                inv.values.insert(new, v);
            }
            _ => {}
        }
    }
    let mut words = words.into_iter().peekable();
    let test_word = match test_option {
        Some(t) => {
            // `--test=cpu cpu run` names it twice.
            if words.peek() == Some(&t.as_str()) {
                words.next();
            }
            Some(t)
        }
        None => words.next().map(str::to_string),
    };
    if let (Some(t), Some(w)) = (&test_word, words.next()) {
        inv.command = Some(command(t, w)?);
    }
    if let Some(extra) = words.next() {
        return Err(usage(format!(
            "unrecognized command line argument: {extra} (sysbench takes a test and a command: sysbench cpu --time=1 run)"
        )));
    }
    if let Some(name) = test_word {
        inv.test = Some(test(&name)?);
    }
    if let Some(t) = inv.test {
        for name in inv.values.keys() {
            match spec_of(name).and_then(|s| s.test) {
                Some(other) if other != t => {
                    return Err(usage(format!(
                    "--{name} is an option of sysbench {}, not of {}; see 'rtlab sysbench {} help'",
                    other.name(),
                    t.name(),
                    t.name()
                )))
                }
                _ => {}
            }
        }
    }
    Ok(inv)
}

/// The test named `name`, or why it is not one rtlab runs.
fn test(name: &str) -> anyhow::Result<Test> {
    if let Some(t) = Test::from_name(name) {
        return Ok(t);
    }
    let base = name.trim_end_matches(".lua");
    let base = base.rsplit('/').next().unwrap_or(base);
    if LUA_TESTS.contains(&base) || name.ends_with(".lua") {
        return Err(usage(format!(
            "'{name}' is one of sysbench's Lua database tests; rtlab runs the built-in tests cpu, memory, fileio, threads and mutex"
        )));
    }
    Err(usage(format!(
        "cannot find benchmark '{name}': rtlab runs sysbench's built-in tests cpu, memory, fileio, threads and mutex"
    )))
}

/// `word` as the command of the test `test`.
fn command(test: &str, word: &str) -> anyhow::Result<Command> {
    Ok(match word {
        "prepare" => Command::Prepare,
        "run" => Command::Run,
        "cleanup" => Command::Cleanup,
        "help" => Command::Help,
        _ => {
            return Err(usage(format!(
                "unknown command '{word}' for sysbench {test}: give prepare, run, cleanup or help"
            )))
        }
    })
}

fn unknown_option(arg: &str, name: &str) -> anyhow::Error {
    if DATABASE.iter().any(|p| name.starts_with(p)) {
        return usage(format!(
            "{arg}: database options belong to sysbench's Lua database tests (oltp_*), which rtlab does not run"
        ));
    }
    if name == "init-rng" {
        return usage(format!(
            "{arg}: sysbench 0.4's --init-rng is gone in 1.0, whose generators always start from the time (--rand-seed=0); leave it out"
        ));
    }
    usage(format!(
        "unknown option {arg}: not an option of sysbench 1.0's built-in tests (see 'rtlab sysbench --help' and 'rtlab sysbench TEST help')"
    ))
}

fn needs_value<'a>(arg: &str, value: Option<&'a str>) -> anyhow::Result<&'a str> {
    value.ok_or_else(|| {
        usage(format!(
            "{arg} needs a value, as {arg}=VALUE (sysbench takes no value after a space)"
        ))
    })
}

/// `on`/`off` and the words sysbench takes for them.
fn bool_value(arg: &str, v: &str) -> anyhow::Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(usage(format!("invalid value in {arg}: give on or off"))),
    }
}
