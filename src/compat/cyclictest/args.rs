//! cyclictest 2.x's command line as its `getopt_long` reads it: short options
//! alone or clustered (`-mq`), their values attached or next (`-i400`,
//! `-i 400`), long options whole or by a unique prefix (`--dur=10`), with
//! `=VALUE` or the next word, and the options whose value is optional (`-t`,
//! `-a`, `-A`, `--secaligned`) taking the next word when it is a number, as
//! cyclictest does. Options of older versions that 2.x dropped but scripts
//! still pass are read too (`-n`, `-e`, `-y`, `--output`).

use crate::error::UsageError;
use anyhow::Result;
use std::path::PathBuf;

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    /// A value attached, or the next word when it starts like a number.
    MaybeNumber,
    /// As `MaybeNumber`, and a next word starting with `0` or `!` (a CPU set).
    MaybeCpus,
}

/// One option: its short letter, its long name, what it takes.
struct Spec {
    short: Option<char>,
    long: &'static str,
    takes: Takes,
}

const fn spec(short: Option<char>, long: &'static str, takes: Takes) -> Spec {
    Spec { short, long, takes }
}

use Takes::{MaybeCpus, MaybeNumber, Nothing, Value};

/// Every option cyclictest 2.x knows, and the older ones rtlab still reads.
const SPECS: &[Spec] = &[
    spec(Some('a'), "affinity", MaybeCpus),
    spec(Some('A'), "aligned", MaybeNumber),
    spec(Some('b'), "breaktrace", Value),
    spec(Some('c'), "clock", Value),
    spec(None, "default-system", Nothing),
    spec(Some('d'), "distance", Value),
    spec(Some('D'), "duration", Value),
    spec(None, "deepest-idle-state", Value),
    spec(Some('e'), "latency", Value),
    spec(Some('F'), "fifo", Value),
    spec(Some('h'), "histogram", Value),
    spec(Some('H'), "histofall", Value),
    spec(None, "histfile", Value),
    spec(Some('i'), "interval", Value),
    spec(None, "json", Value),
    spec(None, "output", Value),
    spec(None, "laptop", Nothing),
    spec(Some('l'), "loops", Value),
    spec(None, "mainaffinity", Value),
    spec(Some('m'), "mlockall", Nothing),
    spec(Some('M'), "refresh_on_max", Nothing),
    spec(Some('n'), "nanosleep", Nothing),
    spec(Some('N'), "nsecs", Nothing),
    spec(Some('o'), "oscope", Value),
    spec(Some('p'), "priority", Value),
    spec(None, "policy", Value),
    spec(Some('y'), "policy", Value),
    spec(None, "priospread", Nothing),
    spec(Some('q'), "quiet", Nothing),
    spec(Some('r'), "relative", Nothing),
    spec(Some('R'), "resolution", Nothing),
    spec(None, "secaligned", MaybeNumber),
    spec(Some('s'), "system", Nothing),
    spec(Some('S'), "smp", Nothing),
    spec(None, "smi", Nothing),
    spec(None, "spike", Value),
    spec(None, "spike-nodes", Value),
    spec(Some('t'), "threads", MaybeNumber),
    spec(None, "tracemark", Nothing),
    spec(Some('u'), "unbuffered", Nothing),
    spec(Some('v'), "verbose", Nothing),
    spec(None, "dbg_cyclictest", Nothing),
    spec(Some('x'), "posix_timers", Nothing),
    spec(None, "help", Nothing),
];

/// One option as given: how it was spelled (for messages) and its long name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// As the user wrote it: `-t`, `--dur`.
    pub spelled: String,
    /// Its long name: `threads`, `duration`.
    pub name: &'static str,
    /// Its value, when it has one.
    pub value: Option<String>,
}

/// The options in the order given.
pub fn parse(args: &[String]) -> Result<Vec<Given>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_words = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if only_words || arg == "-" || !arg.starts_with('-') {
            return Err(UsageError(format!(
                "unexpected argument '{arg}': cyclictest takes options only (see --help)"
            ))
            .into());
        }
        if arg == "--" {
            only_words = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let s = find_long(name)?;
            let spelled = format!("--{name}");
            let value = match (s.takes, attached) {
                (Nothing, Some(_)) => {
                    return Err(UsageError(format!("{spelled} takes no value")).into());
                }
                (Nothing, None) => None,
                (_, Some(v)) => Some(v),
                (Value, None) => Some(next_value(args, &mut i, &spelled)?),
                (takes, None) => maybe_next(args, &mut i, takes),
            };
            out.push(Given {
                spelled,
                name: s.long,
                value,
            });
            continue;
        }
        let cluster: Vec<char> = arg[1..].chars().collect();
        let mut k = 0;
        while k < cluster.len() {
            let c = cluster[k];
            k += 1;
            let s = SPECS.iter().find(|s| s.short == Some(c)).ok_or_else(|| {
                UsageError(format!("-{c}: cyclictest has no such option (see --help)"))
            })?;
            let spelled = format!("-{c}");
            let rest: String = cluster[k..].iter().collect();
            let value = match s.takes {
                Nothing => None,
                _ if !rest.is_empty() => {
                    k = cluster.len();
                    Some(rest)
                }
                Value => Some(next_value(args, &mut i, &spelled)?),
                takes => maybe_next(args, &mut i, takes),
            };
            out.push(Given {
                spelled,
                name: s.long,
                value,
            });
        }
    }
    Ok(out)
}

/// The option a long name or a unique prefix of one names.
fn find_long(name: &str) -> Result<&'static Spec> {
    if let Some(s) = SPECS.iter().find(|s| s.long == name) {
        return Ok(s);
    }
    let mut matches: Vec<&'static str> = SPECS
        .iter()
        .filter(|s| !name.is_empty() && s.long.starts_with(name))
        .map(|s| s.long)
        .collect();
    matches.dedup();
    match matches.as_slice() {
        [one] => Ok(SPECS.iter().find(|s| s.long == *one).expect("listed")),
        [] => Err(UsageError(format!(
            "--{name}: cyclictest has no such option (see --help)"
        ))
        .into()),
        many => Err(UsageError(format!("--{name} is ambiguous: --{}", many.join(", --"))).into()),
    }
}

/// The next word, which a required value takes whatever it looks like.
fn next_value(args: &[String], i: &mut usize, spelled: &str) -> Result<String> {
    let v = args
        .get(*i)
        .ok_or_else(|| UsageError(format!("{spelled} needs a value")))?;
    *i += 1;
    Ok(v.clone())
}

/// The next word when cyclictest would read it as the optional value: a
/// number other than 0 (and for a CPU set, anything starting with `0` or `!`).
fn maybe_next(args: &[String], i: &mut usize, takes: Takes) -> Option<String> {
    let next = args.get(*i)?;
    let digits: String = next
        .trim_start()
        .trim_start_matches(['+', '-'])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let number = digits.trim_start_matches('0').chars().next().is_some();
    let cpus = takes == MaybeCpus && (next.starts_with('0') || next.starts_with('!'));
    if number || cpus {
        *i += 1;
        Some(next.clone())
    } else {
        None
    }
}

/// A value as the whole number it must be, or a refusal naming the option.
pub fn number<T: std::str::FromStr>(g: &Given, what: &str) -> Result<T> {
    let v = g.value.as_deref().unwrap_or("");
    v.trim()
        .parse()
        .map_err(|_| UsageError(format!("{}: '{v}' is not {what}", g.spelled)).into())
}

/// A path value.
pub fn path(g: &Given) -> Result<PathBuf> {
    let v = g.value.as_deref().unwrap_or("");
    crate::cli::common::output_file(v).map_err(|e| UsageError(format!("{}: {e}", g.spelled)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Vec<(String, &'static str, Option<String>)> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&args)
            .unwrap()
            .into_iter()
            .map(|g| (g.spelled, g.name, g.value))
            .collect()
    }

    fn names_values(line: &str) -> Vec<(&'static str, Option<String>)> {
        p(line).into_iter().map(|(_, n, v)| (n, v)).collect()
    }

    fn v(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    fn err(line: &str) -> String {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&args).unwrap_err().to_string()
    }

    #[test]
    fn the_field_reports_lines_parse_as_cyclictest_reads_them() {
        assert_eq!(
            names_values("-l100000 -m -n -a0 -t1 -p99 -i400 -h1000 -q"),
            [
                ("loops", v("100000")),
                ("mlockall", None),
                ("nanosleep", None),
                ("affinity", v("0")),
                ("threads", v("1")),
                ("priority", v("99")),
                ("interval", v("400")),
                ("histogram", v("1000")),
                ("quiet", None),
            ]
        );
        assert_eq!(
            names_values("-p 30 -t -n -l 100000 -H 1000 --histfile hist"),
            [
                ("priority", v("30")),
                ("threads", None),
                ("nanosleep", None),
                ("loops", v("100000")),
                ("histofall", v("1000")),
                ("histfile", v("hist")),
            ]
        );
    }

    #[test]
    fn optional_values_attached_next_or_absent() {
        assert_eq!(names_values("-t"), [("threads", None)]);
        assert_eq!(names_values("-t4"), [("threads", v("4"))]);
        assert_eq!(names_values("-t 4"), [("threads", v("4"))]);
        // cyclictest leaves a 0 after -t unread (and then ignores it).
        assert!(err("-t 0").contains("unexpected argument '0'"));
        assert_eq!(names_values("--threads=3"), [("threads", v("3"))]);
        assert_eq!(names_values("--threads 3"), [("threads", v("3"))]);
        assert_eq!(names_values("-t -p 5")[0], ("threads", None));
        assert_eq!(names_values("-a"), [("affinity", None)]);
        assert_eq!(names_values("-a0"), [("affinity", v("0"))]);
        assert_eq!(names_values("-a 0-3"), [("affinity", v("0-3"))]);
        assert_eq!(names_values("-a 2"), [("affinity", v("2"))]);
        assert_eq!(names_values("-a !1"), [("affinity", v("!1"))]);
        assert_eq!(names_values("--affinity=1,3"), [("affinity", v("1,3"))]);
        assert_eq!(names_values("-a -t2")[0], ("affinity", None));
        assert_eq!(names_values("-A"), [("aligned", None)]);
        assert_eq!(names_values("-A 50"), [("aligned", v("50"))]);
        assert_eq!(names_values("-A50"), [("aligned", v("50"))]);
        assert_eq!(names_values("--aligned=50"), [("aligned", v("50"))]);
        assert_eq!(names_values("--secaligned"), [("secaligned", None)]);
        assert_eq!(names_values("--secaligned 200"), [("secaligned", v("200"))]);
    }

    #[test]
    fn required_values_attached_next_or_after_an_equals_sign() {
        for line in [
            "-i400",
            "-i 400",
            "--interval=400",
            "--interval 400",
            "--int=400",
        ] {
            assert_eq!(names_values(line), [("interval", v("400"))], "{line}");
        }
        assert_eq!(names_values("-D 10m"), [("duration", v("10m"))]);
        assert_eq!(names_values("-D10m"), [("duration", v("10m"))]);
        assert_eq!(names_values("--dur=1h"), [("duration", v("1h"))]);
        assert_eq!(names_values("--json=out.json"), [("json", v("out.json"))]);
        assert_eq!(names_values("--json out.json"), [("json", v("out.json"))]);
        assert_eq!(names_values("-h 1000"), [("histogram", v("1000"))]);
        assert_eq!(names_values("--histogram=1000"), [("histogram", v("1000"))]);
        assert_eq!(names_values("-H1000"), [("histofall", v("1000"))]);
        assert_eq!(names_values("--histofall 10"), [("histofall", v("10"))]);
        assert_eq!(names_values("--histfile=h"), [("histfile", v("h"))]);
        assert_eq!(names_values("-p99"), [("priority", v("99"))]);
        assert_eq!(names_values("--prior=80"), [("priority", v("80"))]);
        assert!(err("--prio=80").contains("--prio is ambiguous: --priority, --priospread"));
        assert_eq!(names_values("-l100000"), [("loops", v("100000"))]);
        assert_eq!(names_values("-b 100"), [("breaktrace", v("100"))]);
        assert_eq!(names_values("--breaktrace=100"), [("breaktrace", v("100"))]);
        assert_eq!(names_values("-c 1"), [("clock", v("1"))]);
        assert_eq!(names_values("--clock=0"), [("clock", v("0"))]);
        assert_eq!(names_values("-d0"), [("distance", v("0"))]);
        assert_eq!(names_values("--distance 10"), [("distance", v("10"))]);
        assert_eq!(names_values("-F /tmp/f"), [("fifo", v("/tmp/f"))]);
        assert_eq!(names_values("--fifo=/tmp/f"), [("fifo", v("/tmp/f"))]);
        assert_eq!(names_values("-o 10"), [("oscope", v("10"))]);
        assert_eq!(names_values("--oscope=10"), [("oscope", v("10"))]);
        assert_eq!(names_values("--policy=rr"), [("policy", v("rr"))]);
        assert_eq!(names_values("-y fifo"), [("policy", v("fifo"))]);
        assert_eq!(names_values("--latency=5"), [("latency", v("5"))]);
        assert_eq!(names_values("-e 5"), [("latency", v("5"))]);
        assert_eq!(names_values("--output=o.json"), [("output", v("o.json"))]);
        assert_eq!(names_values("--spike=20"), [("spike", v("20"))]);
        assert_eq!(names_values("--spike-nodes 10"), [("spike-nodes", v("10"))]);
        assert_eq!(names_values("--mainaffinity=1"), [("mainaffinity", v("1"))]);
        assert_eq!(
            names_values("--deepest-idle-state=1"),
            [("deepest-idle-state", v("1"))]
        );
        // A required value takes the next word whatever it looks like.
        assert_eq!(names_values("-d -5"), [("distance", v("-5"))]);
    }

    #[test]
    fn flags_alone_clustered_and_long() {
        let all = "-m -M -n -N -q -r -R -s -S -u -v -x";
        let names: Vec<&str> = names_values(all).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "mlockall",
                "refresh_on_max",
                "nanosleep",
                "nsecs",
                "quiet",
                "relative",
                "resolution",
                "system",
                "smp",
                "unbuffered",
                "verbose",
                "posix_timers"
            ]
        );
        assert_eq!(
            names_values("-mqi200"),
            [("mlockall", None), ("quiet", None), ("interval", v("200"))]
        );
        assert_eq!(names_values("-Sp90")[1], ("priority", v("90")));
        for long in [
            "mlockall",
            "refresh_on_max",
            "nsecs",
            "quiet",
            "relative",
            "resolution",
            "system",
            "smp",
            "unbuffered",
            "verbose",
            "posix_timers",
            "laptop",
            "default-system",
            "priospread",
            "tracemark",
            "smi",
            "dbg_cyclictest",
            "help",
        ] {
            assert_eq!(names_values(&format!("--{long}")), [(long, None)], "{long}");
        }
        assert_eq!(p("--quiet")[0].0, "--quiet");
        assert_eq!(p("--qu")[0].1, "quiet");
    }

    #[test]
    fn what_cyclictest_would_not_read_is_refused_naming_it() {
        assert!(err("-w").starts_with("-w: cyclictest has no such option"));
        assert!(err("--bogus").starts_with("--bogus: cyclictest has no such option"));
        assert!(
            err("--hist=5").contains("--hist is ambiguous: --histogram, --histofall, --histfile")
        );
        assert!(err("-i").contains("-i needs a value"));
        assert!(err("--interval").contains("--interval needs a value"));
        assert!(err("--quiet=1").contains("--quiet takes no value"));
        assert!(err("-q stray").contains("unexpected argument 'stray'"));
        assert!(err("-- -q").contains("unexpected argument '-q'"));
    }
}
