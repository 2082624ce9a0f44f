//! The option parser against every spelling sysbench 1.0 and 0.4 take, the
//! defaults, and each refusal.

use super::args::{parse, Command, Test};
use super::params::{plan, sysbench_names, Plan};
use crate::step::bench::fileio;
use crate::step::Params;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The plan of a sysbench command line, and its warnings (stderr's, then
/// stdout's).
fn planned(line: &str) -> (Plan, Vec<String>) {
    let inv = parse(&words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    let t = inv.test.expect("a test");
    (
        plan(t, &inv).unwrap_or_else(|e| panic!("{line}: {e}")),
        [inv.warnings, inv.notices].concat(),
    )
}

/// Why `line` is refused.
fn refused(line: &str) -> String {
    let r = parse(&words(line)).and_then(|inv| plan(inv.test.expect("a test"), &inv));
    match r {
        Ok(p) => panic!("{line} was accepted: {p:?}"),
        Err(e) => e.to_string(),
    }
}

/// A memory plan's sizes and words.
fn memory_of(line: &str) -> (String, String, [String; 3]) {
    let Params::BenchMemory(m) = planned(line).0.step else {
        panic!("{line}")
    };
    let word = |v: serde_json::Value| v.as_str().unwrap().to_string();
    let words = [
        word(serde_json::to_value(m.oper).unwrap()),
        word(serde_json::to_value(m.access).unwrap()),
        word(serde_json::to_value(m.scope).unwrap()),
    ];
    (m.block_size.to_string(), m.total_size.to_string(), words)
}

#[test]
fn memory_hugetlb_takes_the_blocks_from_huge_pages() {
    for (line, huge) in [
        ("memory --memory-hugetlb=on run", true),
        ("memory --memory-hugetlb run", true),
        ("memory --memory-hugetlb=off run", false),
        ("memory run", false),
    ] {
        let Params::BenchMemory(m) = planned(line).0.step else {
            panic!("{line}")
        };
        assert_eq!(m.hugetlb, huge, "{line}");
    }
}

#[test]
fn sysbench_1_0_options_of_cpu_and_the_general_ones() {
    let (p, warnings) = planned(
        "cpu --threads=2 --time=5 --events=7 --cpu-max-prime=2000 --report-interval=1 \
         --percentile=99 --histogram --validate --verbosity=3 --rand-seed=0 run",
    );
    assert!(warnings.is_empty());
    let Params::BenchCpu(c) = &p.step else {
        panic!("{p:?}")
    };
    assert_eq!(c.max_prime, 2000);
    assert_eq!(c.common.threads, 2);
    assert_eq!(c.common.time.as_ref().map(|v| v.text()), Some("5s"));
    assert_eq!(c.common.events, Some(7));
    assert_eq!(
        c.common.report_interval.as_ref().map(|v| v.text()),
        Some("1s")
    );
    assert_eq!(
        (p.percentile, p.histogram, p.validate, p.quiet),
        (99, true, true, false)
    );
    assert_eq!((p.threads, p.report_every, p.seed), (2, 1, 0));
    let (p, _) = planned("cpu --rand-seed=5 --verbosity=0 --percentile=0 --histogram=off run");
    assert_eq!(
        (p.seed, p.quiet, p.percentile, p.histogram),
        (5, true, 0, false)
    );
}

#[test]
fn sysbench_0_4_spellings() {
    let (p, warnings) = planned(
        "--test=cpu --num-threads=4 --max-time=3 --max-requests=100 --cpu-max-prime=20000 run",
    );
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings[0].starts_with("the --test option is deprecated"));
    assert!(warnings.contains(&"--num-threads is deprecated, use --threads instead".into()));
    let Params::BenchCpu(c) = &p.step else {
        panic!()
    };
    assert_eq!((c.max_prime, c.common.threads), (20000, 4));
    assert_eq!(
        (c.common.time.as_ref().map(|v| v.text()), c.common.events),
        (Some("3s"), Some(100))
    );
    // As in sysbench, an old name at its default is ignored; at another value
    // it wins over the new name.
    let (p, warnings) = planned("cpu --max-requests=7 --events=5 --tx-rate=0 --num-threads=1 run");
    assert_eq!(p.step, planned("cpu --events=7 run").0.step);
    assert_eq!(
        warnings,
        ["--max-requests is deprecated, use --events instead"]
    );
    let (p, warnings) = planned("cpu --events=5 --max-requests=0 --max-time=0 run");
    assert_eq!(p.step, planned("cpu --events=5 run").0.step);
    assert!(warnings.is_empty());
    // --test with the test named again, and options after the command.
    assert_eq!(
        planned("--test=threads threads run --thread-yields=5")
            .0
            .test,
        Test::Threads
    );
    let inv = parse(&words("--test=fileio --file-total-size=1G prepare")).unwrap();
    assert_eq!(
        (inv.test, inv.command),
        (Some(Test::Fileio), Some(Command::Prepare))
    );
}

#[test]
fn sysbench_defaults() {
    let cpu = planned("cpu run").0;
    let Params::BenchCpu(c) = &cpu.step else {
        panic!()
    };
    assert_eq!((c.max_prime, c.common.threads), (10_000, 1));
    assert_eq!(
        (c.common.time.as_ref().map(|v| v.text()), c.common.events),
        (Some("10s"), None)
    );
    assert_eq!((cpu.percentile, cpu.histogram, cpu.seed), (95, false, 0));
    let (block, total, words) = memory_of("memory run");
    assert_eq!((block.as_str(), total.as_str()), ("1K", "100G"));
    assert_eq!(words, ["write", "seq", "global"]);
    let (_, _, words) = memory_of("memory --memory-oper=none --memory-access-mode=rnd run");
    assert_eq!(words, ["none", "rnd", "global"]);
    // memory counts its events itself, as sysbench's: --events is not taken,
    // and with --time=0 only the total size ends it.
    for (line, time) in [
        ("memory --events=5 run", Some("10s")),
        ("memory --events=5 --time=0 run", Some("876000h")),
    ] {
        let Params::BenchMemory(m) = planned(line).0.step else {
            panic!("{line}")
        };
        assert_eq!(
            (m.common.events, m.common.time.as_ref().map(|t| t.text())),
            (None, time),
            "{line}"
        );
        assert_eq!(m.mode, crate::step::bench::memory::ModeArg::Sysbench);
    }
    let Params::BenchFileio(f) = planned("fileio --file-test-mode=rndrw run").0.step else {
        panic!()
    };
    assert_eq!(
        (f.files, f.total_size.text(), f.block_size.text()),
        (128, "2G", "16384")
    );
    assert_eq!(
        (f.rw_ratio, f.fsync_freq, f.fsync_end, f.direct),
        (1.5, 100, true, false)
    );
    assert_eq!(f.dir, std::path::PathBuf::from("."));
    let Params::BenchThreads(t) = planned("threads run").0.step else {
        panic!()
    };
    assert_eq!((t.yields, t.locks), (1000, 8));
    let Params::BenchMutex(x) = planned("mutex --time=3 run").0.step else {
        panic!()
    };
    assert_eq!((x.mutexes, x.locks, x.loops), (4096, 50_000, 10_000));
    assert_eq!(
        x.common.time, None,
        "sysbench's mutex runs until its locks are taken"
    );
}

#[test]
fn memory_fileio_threads_and_mutex_options() {
    let (block, total, words) = memory_of(
        "memory --memory-block-size=64M --memory-total-size=1G --memory-scope=local \
         --memory-hugetlb=off --memory-oper=read --memory-access-mode=rnd run",
    );
    assert_eq!((block.as_str(), total.as_str()), ("64M", "1G"));
    assert_eq!(words, ["read", "rnd", "local"]);
    let Params::BenchFileio(f) = planned(
        "fileio --file-num=4 --file-block-size=4096 --file-total-size=16M --file-test-mode=seqrd \
         --file-io-mode=sync --file-async-backlog=64 --file-extra-flags=direct --file-fsync-freq=0 \
         --file-fsync-all=off --file-fsync-end=off --file-fsync-mode=fsync \
         --file-merged-requests=0 --file-rw-ratio=2 run",
    )
    .0
    .step
    else {
        panic!()
    };
    assert_eq!(
        (f.files, f.block_size.text(), f.total_size.text()),
        (4, "4096", "16M")
    );
    assert_eq!(f.mode, fileio::ModeArg::Seqrd);
    assert_eq!(
        (f.direct, f.fsync_freq, f.fsync_end, f.rw_ratio),
        (true, 0, false, 2.0)
    );
    let Params::BenchThreads(t) = planned("threads --thread-yields=10 --thread-locks=2 run")
        .0
        .step
    else {
        panic!()
    };
    assert_eq!((t.yields, t.locks), (10, 2));
    let Params::BenchMutex(x) =
        planned("mutex --mutex-num=64 --mutex-locks=2000 --mutex-loops=5 run")
            .0
            .step
    else {
        panic!()
    };
    assert_eq!((x.mutexes, x.locks, x.loops), (64, 2000, 5));
}

#[test]
fn no_time_limit_when_both_are_zero() {
    let Params::BenchCpu(c) = planned("cpu --time=0 --events=0 run").0.step else {
        panic!()
    };
    assert_eq!(c.common.time.as_ref().map(|v| v.text()), Some("876000h"));
    let Params::BenchCpu(c) = planned("cpu --time=0 --events=9 run").0.step else {
        panic!()
    };
    assert_eq!((c.common.time, c.common.events), (None, Some(9)));
}

#[test]
fn words_and_options_that_are_not_sysbench_s_are_refused_by_name() {
    let cases = [
        ("cpu --bogus=1 run", "unknown option --bogus=1"),
        ("foo run", "cannot find benchmark 'foo'"),
        ("oltp_read_write run", "Lua database tests"),
        ("cpu --mysql-host=x run", "database options"),
        ("--test=cpu --init-rng=on run", "--init-rng"),
        (
            "cpu --memory-block-size=1K run",
            "--memory-block-size is an option of sysbench memory, not of cpu",
        ),
        (
            "cpu --cpu-max-prime 2000 run",
            "--cpu-max-prime needs a value",
        ),
        ("cpu run extra", "unrecognized command line argument: extra"),
        ("cpu start", "unknown command 'start'"),
        ("cpu -t 2 run", "unknown option -t"),
        (
            "cpu --histogram=yes run",
            "invalid value in --histogram=yes",
        ),
        ("cpu --threads=2x run", "invalid value for --threads: '2x'"),
        ("cpu --threads=0 run", "invalid value for --threads: '0'"),
        ("cpu --percentile=101 run", "invalid value for --percentile"),
        (
            "cpu --percentile=99.9 run",
            "invalid value for --percentile",
        ),
        (
            "memory --memory-oper=copy run",
            "invalid value for --memory-oper",
        ),
        (
            "fileio --file-test-mode=rw run",
            "invalid value for --file-test-mode",
        ),
        (
            "fileio --file-extra-flags=odirect run",
            "invalid value for --file-extra-flags",
        ),
        (
            "memory --memory-block-size=lots run",
            "invalid value for --memory-block-size",
        ),
    ];
    for (line, why) in cases {
        let e = refused(line);
        assert!(e.contains(why), "{line}: {e}");
    }
}

#[test]
fn what_rtlab_cannot_honour_is_refused_with_the_reason() {
    let cases = [
        ("cpu --forced-shutdown=5 run", "does not abandon them"),
        ("cpu --thread-stack-size=64K run", "default stack"),
        ("cpu --rate=100 run", "no rate limit"),
        (
            "cpu --report-checkpoints=10,20 run",
            "one report at the end",
        ),
        ("cpu --debug run", "no debugging messages"),
        ("cpu --verbosity=5 run", "no debugging messages"),
        ("cpu --rand-type=special run", "uniform"),
        ("cpu --rand-spec-iter=3 run", "uniform"),
        ("cpu --rand-pareto-h=0.5 run", "uniform"),
        ("memory --rand-seed=7 run", "from the clock"),
        ("mutex --rand-seed=7 run", "from the clock"),
        ("cpu --config-file=opts run", "on the command line"),
        ("fileio --file-io-mode=async run", "synchronous requests"),
        ("fileio --file-io-mode=mmap run", "synchronous requests"),
        ("fileio --file-fsync-all=on run", "every --file-fsync-freq"),
        ("fileio --file-fsync-mode=fdatasync run", "with fsync"),
        ("fileio --file-merged-requests=4 run", "on its own"),
        ("fileio --file-extra-flags=dsync run", "O_SYNC or O_DSYNC"),
        (
            "fileio --file-extra-flags=sync,direct run",
            "O_SYNC or O_DSYNC",
        ),
        ("fileio --validate run", "does not checksum"),
    ];
    for (line, why) in cases {
        let e = refused(line);
        assert!(
            e.contains("not supported") && e.contains(why),
            "{line}: {e}"
        );
    }
    // As sysbench, a block that is not a power of two of at least a word.
    for size in ["3K", "4"] {
        let e = refused(&format!("memory --memory-block-size={size} run"));
        assert_eq!(
            e,
            format!(
                "invalid value for --memory-block-size: '{size}' (a power of two, 8 bytes or more)"
            )
        );
    }
    // What rtlab does anyway is taken.
    planned("cpu --forced-shutdown=off --rate=0 --debug=off --rand-type=uniform run");
    planned("threads --rand-seed=3 run");
}

#[test]
fn a_step_s_refusal_names_sysbench_s_option() {
    let cases = [
        (
            Test::Memory,
            "--block-size: one 16GiB block needs more; give a smaller --block-size (or fewer --threads)",
            "--memory-block-size: one 16GiB block needs more; give a smaller --memory-block-size (or fewer --threads)",
        ),
        (Test::Fileio, "--files: 0 files; --block-size", "--file-num: 0 files; --file-block-size"),
        (Test::Cpu, "--max-prime: 2", "--cpu-max-prime: 2"),
        (Test::Mutex, "--locks: 0 locks", "--mutex-locks: 0 locks"),
        (Test::Threads, "--locks: give at least 1", "--thread-locks: give at least 1"),
    ];
    for (t, ours, theirs) in cases {
        assert_eq!(sysbench_names(t, ours), theirs);
    }
}
