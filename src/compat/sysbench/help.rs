//! `sysbench --help` and `sysbench TEST help`, in sysbench's layout: the
//! options rtlab reads, each with its default.

use super::args::{Kind, Test, SPECS};
use super::report::banner;

/// `--name=TYPE` as sysbench's help spells an option.
fn spelled(name: &str, kind: Kind) -> String {
    match kind {
        Kind::Int | Kind::Float => format!("--{name}=N"),
        Kind::Size => format!("--{name}=SIZE"),
        Kind::Bool => format!("--{name}[=on|off]"),
        Kind::Word => format!("--{name}=STRING"),
        Kind::List => format!("--{name}=[LIST,...]"),
    }
}

/// The option lines of `test` (`None`: the general options).
fn options(test: Option<Test>) -> String {
    let specs: Vec<_> = SPECS.iter().filter(|s| s.test == test).collect();
    let width = specs
        .iter()
        .map(|s| spelled(s.name, s.kind).len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for s in specs {
        let default = match s.default {
            "" if s.kind != Kind::List => String::new(),
            d => format!(" [{d}]"),
        };
        out.push_str(&format!(
            "  {:<width$} {}{default}\n",
            spelled(s.name, s.kind),
            s.help
        ));
    }
    out
}

/// `sysbench --help`.
pub fn general() -> String {
    let mut s = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n\
         General options:\n",
    );
    s.push_str(&options(None));
    s.push_str("  --help[=on|off]    print help and exit\n");
    s.push_str("  --version[=on|off] print version and exit\n");
    s.push_str("  --num-threads, --max-time, --max-requests, --tx-rate, --test: sysbench 0.4's names of --threads, --time, --events, --rate and the test\n\n");
    s.push_str("Compiled-in tests:\n");
    for (t, what) in [
        (Test::Fileio, "File I/O test"),
        (Test::Cpu, "CPU performance test"),
        (Test::Memory, "Memory functions speed test"),
        (Test::Threads, "Threads subsystem performance test"),
        (Test::Mutex, "Mutex performance test"),
    ] {
        s.push_str(&format!("  {} - {what}\n", t.name()));
    }
    s.push_str(
        "\nSee 'sysbench <testname> help' for a list of options for each test.\n\
         rtlab runs these tests with its own benches (rtlab bench) and stores every run;\n\
         an option it cannot honour is refused with the reason.\n",
    );
    s
}

/// `sysbench TEST help`.
pub fn test(t: Test) -> String {
    format!(
        "{}\n{} options:\n{}\n",
        banner(),
        t.name(),
        options(Some(t))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_lists_its_options_with_their_defaults() {
        let cpu = test(Test::Cpu);
        assert!(cpu.contains("cpu options:\n  --cpu-max-prime=N "), "{cpu}");
        assert!(cpu.contains("[10000]"));
        let fileio = test(Test::Fileio);
        assert!(fileio.contains("--file-extra-flags=[LIST,...]"));
        assert!(fileio.contains("--file-fsync-end[=on|off]"));
        assert!(!fileio.contains("--cpu-max-prime"));
        let all = general();
        assert!(all.starts_with("Usage:\n  sysbench [options]... [testname] [command]\n"));
        assert!(all.contains("  --threads=N "));
        assert!(all.contains("  mutex - Mutex performance test\n"));
    }
}
