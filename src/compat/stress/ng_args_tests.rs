//! stress-ng's command line: every spelling the personality takes, the load
//! each stressor becomes, and each refusal.

use super::ng_args::{parse, Ng, Parsed, DEFAULT_TIMEOUT_S};
use super::Verbosity;
use crate::error::BadValue;
use std::path::Path;

const CPUS: u32 = 3;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|x| x.to_string()).collect()
}

fn run(a: &[&str]) -> Ng {
    match parse(&args(a), Path::new("/tmp"), CPUS).unwrap() {
        Parsed::Run(n) => n,
        other => panic!("{a:?}: {other:?}"),
    }
}

fn refused(a: &[&str]) -> String {
    match parse(&args(a), Path::new("/tmp"), CPUS) {
        Ok(p) => panic!("{a:?} was accepted: {p:?}"),
        Err(e) => match e.downcast_ref::<BadValue>() {
            Some(b) => b.to_string(),
            None => e.to_string(),
        },
    }
}

/// (name, workers, spec) of each stressor.
fn hogs(n: &Ng) -> Vec<(&'static str, u32, String)> {
    n.job
        .hogs
        .iter()
        .map(|h| (h.name, h.workers, h.spec.clone()))
        .collect()
}

fn one(a: &[&str]) -> String {
    let n = run(a);
    assert_eq!(n.job.hogs.len(), 1, "{a:?}");
    n.job.hogs[0].spec.clone()
}

#[test]
fn every_stressor_and_its_spellings() {
    let page = rtlab_engine::load::sys::page_size();
    for (long, short, spec) in [
        ("--cpu", Some("-c"), "cpu method=all".to_string()),
        ("--vm", Some("-m"), "vm bytes=256M".to_string()),
        ("--memcpy", None, "memcopy".into()),
        ("--hdd", Some("-d"), "io dir=/tmp bytes=1G".to_string()),
        ("--io", Some("-i"), "io sync dir=/tmp".into()),
        ("--fork", Some("-f"), "fork".into()),
        ("--timer", Some("-T"), "timer timers=1 period=1000ns".into()),
        ("--sock", Some("-S"), "net".into()),
        ("--udp", None, "net".into()),
        (
            "--pipe",
            Some("-p"),
            format!("msg pipe fds=1 size={}", page / 1024) + "K",
        ),
        ("--sockpair", None, "msg fds=1".into()),
    ] {
        let name = &long[2..];
        let want = vec![(run(&[long, "2"]).job.hogs[0].name, 2, spec.clone())];
        assert_eq!(want[0].0, name);
        assert_eq!(hogs(&run(&[long, "2"])), want, "{long}");
        assert_eq!(hogs(&run(&[&format!("{long}=2")])), want, "{long}=");
        if let Some(s) = short {
            assert_eq!(hogs(&run(&[s, "2"])), want, "{s}");
            assert_eq!(hogs(&run(&[&format!("{s}2")])), want, "{s}2");
        }
    }
}

#[test]
fn other_cpu_methods_run_as_the_closest_with_a_note() {
    for (asked, runs) in [
        ("decimal64", "double"),
        ("float64", "double"),
        ("sieve", "prime"),
        ("queens", "ackermann"),
        ("ipv4checksum", "crc16"),
        ("idct", "fft"),
        ("int8", "int32"),
    ] {
        let n = run(&["-c", "2", "--cpu-method", asked]);
        assert_eq!(n.job.hogs[0].spec, format!("cpu method={runs}"));
        assert_eq!(
            n.job.notes,
            [format!(
                "cpu: method '{asked}' runs as '{runs}', the closest method rtlab implements"
            )]
        );
    }
    // Every name stress-ng knows runs.
    for (name, _) in rtlab_engine::load::cpu::STRESS_NG_CLOSEST {
        assert!(
            run(&["-c", "1", "--cpu-method", name]).job.notes.len() == 1,
            "{name}"
        );
    }
}

#[test]
fn counts_in_the_order_given_and_per_cpu() {
    let n = run(&["--udp", "1", "--vm", "1", "--cpu", "2"]);
    let names: Vec<&str> = n.job.hogs.iter().map(|h| h.name).collect();
    assert_eq!(names, ["udp", "vm", "cpu"]);
    assert_eq!(run(&["--cpu", "0"]).job.hogs[0].workers, CPUS);
    assert_eq!(run(&["-c", "-1"]).job.hogs[0].workers, CPUS);
}

#[test]
fn stressor_options() {
    for m in [
        "all",
        "ackermann",
        "crc16",
        "double",
        "fft",
        "fibonacci",
        "float",
        "int32",
        "int64",
        "matrixprod",
        "prime",
        "sqrt",
    ] {
        let n = run(&["-c", "1", "--cpu-method", m]);
        assert_eq!(n.job.hogs[0].spec, format!("cpu method={m}"));
        assert!(n.job.notes.is_empty(), "{m}");
    }
    assert_eq!(
        one(&["-c", "1", "--cpu-load", "60"]),
        "cpu method=all load=60%"
    );
    assert_eq!(one(&["-c", "1", "-l", "60"]), "cpu method=all load=60%");
    assert_eq!(
        one(&["-c", "1", "-l60", "--cpu-method=prime"]),
        "cpu method=prime load=60%"
    );
    assert_eq!(one(&["-c", "1", "-l", "100"]), "cpu method=all");
    assert_eq!(one(&["-c", "1", "-l", "0"]), "cpu method=all load=0%");
    for (slice, want) in [
        ("-64", "64ops"),
        ("-1", "1ops"),
        ("0", "random"),
        ("20", "20ms"),
        ("5000", "5000ms"),
    ] {
        assert_eq!(
            one(&["-c", "1", "-l", "50", "--cpu-load-slice", slice]),
            format!("cpu method=all load=50% slice={want}")
        );
    }
    assert_eq!(
        one(&["--vm-bytes", "64M", "--vm", "2", "--vm-keep"]),
        "vm bytes=64M keep"
    );
    let avail = crate::limits::available_memory().unwrap();
    let spec = one(&["--vm", "2", "--vm-bytes", "10%"]);
    let bytes = crate::units::parse_size(&spec["vm bytes=".len()..]).unwrap();
    assert_eq!(
        bytes,
        (avail as f64 * 0.1 / 2.0) as u64,
        "10% shared by two"
    );
    assert_eq!(
        one(&["-d", "1", "--hdd-bytes", "4m"]),
        "io dir=/tmp bytes=4M"
    );
    let spec = one(&["-d", "2", "--hdd-bytes", "1%"]);
    assert!(spec.starts_with("io dir=/tmp bytes="), "{spec}");
    assert_eq!(
        one(&["-d", "1", "--temp-path", "/var/tmp"]),
        "io dir=/var/tmp bytes=1G"
    );
    assert_eq!(
        one(&["-i", "1", "--temp-path=/var/tmp"]),
        "io sync dir=/var/tmp"
    );
    assert_eq!(
        one(&["-T", "1", "--timer-freq", "1000"]),
        "timer timers=1 period=1000000ns"
    );
    assert_eq!(
        one(&["-T", "1", "--timer-freq", "3"]),
        "timer timers=1 period=333333333ns"
    );
    assert_eq!(
        one(&["-p", "1", "--pipe-data-size", "512"]),
        "msg pipe fds=1 size=512"
    );
}

#[test]
fn general_options() {
    let n = run(&["-c", "1"]);
    assert_eq!(
        (n.timeout_given, n.job.timeout_s),
        (None, Some(DEFAULT_TIMEOUT_S))
    );
    assert_eq!(
        (n.metrics, n.yaml.clone(), n.verbosity, n.dry_run),
        (None, None, Verbosity::Normal, false)
    );
    for (t, secs) in [
        ("10", 10),
        ("10s", 10),
        ("1m", 60),
        ("1M", 60),
        ("2h", 7200),
        ("1d", 86_400),
        ("1y", 31_556_926),
        ("1.5", 1),
    ] {
        assert_eq!(
            run(&["-c", "1", "-t", t]).job.timeout_s,
            Some(secs),
            "-t {t}"
        );
        assert_eq!(
            run(&["-c", "1", "--timeout", t]).timeout_given,
            Some(secs),
            "--timeout {t}"
        );
    }
    let n = run(&["-c", "1", "-t", "0"]);
    assert_eq!(
        (n.timeout_given, n.job.timeout_s),
        (Some(0), None),
        "0 runs until stopped"
    );
    assert_eq!(run(&["-c", "1", "--metrics-brief"]).metrics, Some(false));
    assert_eq!(run(&["-c", "1", "--metrics"]).metrics, Some(true));
    assert_eq!(run(&["-c", "1", "-M"]).metrics, Some(true));
    assert_eq!(
        run(&["-c", "1", "-M", "--metrics-brief"]).metrics,
        Some(false)
    );
    assert_eq!(
        run(&["-c", "1", "--metrics-brief", "-M"]).metrics,
        Some(false),
        "brief wins"
    );
    assert_eq!(
        run(&["-c", "1", "--yaml", "o.yaml"]).yaml.as_deref(),
        Some("o.yaml")
    );
    assert_eq!(
        run(&["-c", "1", "-Y", "o.yaml"]).yaml.as_deref(),
        Some("o.yaml")
    );
    assert_eq!(run(&["-c", "1", "-q"]).verbosity, Verbosity::Quiet);
    assert_eq!(run(&["-c", "1", "--quiet"]).verbosity, Verbosity::Quiet);
    assert_eq!(run(&["-c", "1", "-v"]).verbosity, Verbosity::Verbose);
    assert_eq!(
        run(&["-c", "1", "--verbose", "-q"]).verbosity,
        Verbosity::Quiet
    );
    assert!(run(&["-c", "1", "-n"]).dry_run);
    assert!(run(&["-c", "1", "--dry-run"]).dry_run);
    assert_eq!(
        run(&["-c", "1", "--taskset", "0"]).job.taskset.as_deref(),
        Some("0")
    );
    for h in [&["-h"][..], &["--help"], &["-c", "1", "--help"]] {
        assert!(matches!(
            parse(&args(h), Path::new("/tmp"), CPUS).unwrap(),
            Parsed::Help
        ));
    }
    for v in ["-V", "--version"] {
        assert!(matches!(
            parse(&args(&[v]), Path::new("/tmp"), CPUS).unwrap(),
            Parsed::Version
        ));
    }
}

#[test]
fn refusals_name_the_option() {
    for (a, want) in [
        (&["--matrix", "2"][..], "--matrix: not a stressor or option rtlab's stress-ng runs"),
        (&["-c", "1", "--perf"], "--perf: not a stressor"),
        (&["-x", "cpu"], "-x: not a stressor"),
        (&["-c", "1", "--cpu-ops", "100"], "--cpu-ops: rtlab's loads run for a time"),
        (&["--sockpair-ops", "1"], "--sockpair-ops: rtlab's loads run for a time"),
        (&["-b", "10", "-c", "1"], "-b: rtlab starts every worker at once"),
        (&["--backoff", "10"], "--backoff: rtlab starts every worker at once"),
        (&["-m", "1", "--vm-method", "flip"], "--vm-method: rtlab's stress-ng does not honour this; of the vm stressor's options it takes --vm-bytes, --vm-keep"),
        (&["--sock-domain", "unix"], "of the sock stressor's options it takes no options"),
        (&["--sockpair-x", "1"], "of the sockpair stressor's"),
        (&["-c", "1", "--cpu-method", "fast"], "--cpu-method: 'fast' is not one of stress-ng's: all ackermann"),
        (&["-c", "1", "--cpu-method", "mix"], "--cpu-method: 'mix' is not one of stress-ng's"),
        (&["-c", "1", "-l", "101"], "--cpu-load: '101' is not a load from 0 to 100"),
        (&["-c", "1", "-l", "-1"], "--cpu-load: '-1'"),
        (&["-c", "1", "--cpu-load-slice", "5001"], "--cpu-load-slice: '5001' is not in -5000 to 5000"),
        (&["-c", "1", "--cpu-load-slice", "x"], "--cpu-load-slice: 'x'"),
        (&["-c", "1", "-c", "2"], "--cpu: is given twice"),
        (&["-c", "x"], "--cpu: 'x'"),
        (&["-c", "5000"], "--cpu: '5000'"),
        (&["-c"], "-c needs a value"),
        (&["-c", "1", "-t", "1ms"], "--timeout: '1ms'"),
        (&["-m", "1", "--vm-bytes", "0"], "--vm-bytes: '0' is zero"),
        (&["-m", "1", "--vm-bytes", "100"], "below one page"),
        (&["-m", "1", "--vm-bytes", "0%"], "--vm-bytes: '0%'"),
        (&["-m", "1", "--vm-bytes", "101%"], "--vm-bytes: '101%'"),
        (&["-d", "1", "--hdd-bytes", "x"], "--hdd-bytes: "),
        (&["-T", "1", "--timer-freq", "2000000"], "--timer-freq: '2000000'"),
        (&["-T", "1", "--timer-freq", "0"], "--timer-freq: '0'"),
        (&["-p", "1", "--pipe-data-size", "2"], "--pipe-data-size: 2 is outside"),
        (&["-p", "1", "--pipe-data-size", "1M"], "--pipe-data-size: 1048576 is outside"),
        (&["-d", "1", "--temp-path", "/a b"], "'/a b'"),
        (&["--quiet=1"], "--quiet takes no value"),
        (&["cpu"], "'cpu' is not an option"),
        (&[], "no stressors to run"),
        (&["-t", "10", "--metrics-brief"], "no stressors to run"),
    ] {
        let e = refused(a);
        assert!(e.contains(want), "{a:?}: {e}");
    }
}
