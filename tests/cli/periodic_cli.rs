//! End-to-end tests of `rtlab periodic` and of `--policy deadline`: refusals of
//! bad input, and (as root) short real runs whose structure is checked.

use crate::common::{expect, json, rtlab, shown};
use serde_json::Value;

/// `rtlab periodic ARGS --no-save` must exit 2 with an error naming `flag`.
fn refused(args: &[&str], code: i32, flag: &str) {
    let out = expect(rtlab().arg("periodic").args(args).arg("--no-save"), &[code]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(flag), "{flag} not named\n{}", shown(&out));
}

#[test]
fn bad_input_is_refused_naming_the_flag() {
    for (args, flag) in [
        (&["-f", "0"][..], "--frequency"),
        (&["-f", "fast"], "--frequency"),
        (&["--sweep", "10MHz..1kHz"], "--sweep"),
        (&["--sweep", "1kHz"], "--sweep"),
        (&["--tolerance", "0"], "--tolerance"),
        (&["--tolerance", "150%"], "--tolerance"),
        (&["--method", "all"], "--method"),
        (&["--gpio", "/dev/gpiochip-none:3"], "--gpio"),
        (&["--gpio", "gpiochip0"], "--gpio"),
        (&["--output", "/no/such/dir/out"], "--output"),
        (
            &["--point-duration", "5s", "--sweep", "1kHz..2kHz"],
            "--point-duration",
        ),
        (&["--method", "busy", "-D", "10s"], "--duration"),
        (&["--dl-runtime", "100us"], "--dl-runtime"),
        (
            &["--policy", "deadline", "--dl-runtime", "2ms"],
            "--dl-runtime",
        ),
        (
            &[
                "--policy",
                "deadline",
                "--dl-deadline",
                "2ms",
                "--dl-period",
                "1ms",
            ],
            "--dl-deadline",
        ),
        (&["--policy", "deadline", "--cpu", "0"], "--cpu"),
    ] {
        refused(args, 2, flag);
    }
}

#[test]
fn a_missing_gpio_chip_says_how_to_look_for_one() {
    let out = expect(
        rtlab().args(["periodic", "--gpio", "/dev/gpiochip97:17", "--no-save"]),
        &[2],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such GPIO chip") && err.contains("ls /dev/gpiochip"),
        "{err}"
    );
    // --gpio-in without --gpio: clap refuses it.
    expect(
        rtlab().args(["periodic", "--gpio-in", "/dev/gpiochip0:3", "--no-save"]),
        &[2],
    );
}

#[test]
fn latency_deadline_refusals_name_the_flag() {
    for (args, flag) in [
        (
            &["--policy", "deadline", "--dl-runtime", "2ms"][..],
            "--dl-runtime",
        ),
        (&["--policy", "deadline", "-a", "0"], "--cpus"),
        (&["--policy", "deadline", "--main-cpus", "0"], "--main-cpus"),
        (&["--dl-period", "1ms"], "--dl-period"),
    ] {
        let out = expect(
            rtlab()
                .arg("latency")
                .args(args)
                .args(["-D", "1", "--no-save"]),
            &[2],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{flag}\n{}", shown(&out));
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|v| v.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn a_single_run_reports_periods_toggles_and_a_file_output() {
    assert!(is_root());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pin");
    let doc = json(
        rtlab()
            .args([
                "periodic",
                "-f",
                "2kHz",
                "-D",
                "300ms",
                "--json",
                "--no-save",
            ])
            .arg("--output")
            .arg(&file),
        &[0],
    );
    let m = &doc["metrics"];
    let toggles = f(&m["toggles"]);
    assert!(toggles >= 2.0, "{doc}");
    let s = &doc["series"][0];
    assert_eq!(s["name"], "period");
    assert_eq!(f(&s["counters"]["samples"]), toggles - 1.0);
    assert_eq!(s["interval_ns"], 500_000);
    assert!(f(&m["missed_periods"]) >= 0.0 && f(&m["achieved_hz"]) > 0.0);
    assert!(f(&m["period_min_ns"]) <= f(&m["period_mean_ns"]));
    assert!(f(&m["period_mean_ns"]) <= f(&m["period_max_ns"]));
    // The file holds the last level written.
    let last = std::fs::read_to_string(&file).unwrap();
    assert!(last == "0" || last == "1", "{last:?}");
    let expected = if toggles as u64 % 2 == 1 { "1" } else { "0" };
    assert_eq!(last, expected);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn a_short_sweep_has_a_curve_per_method_and_load() {
    assert!(is_root());
    let doc = json(
        rtlab().args([
            "periodic",
            "--sweep",
            "1kHz..4kHz",
            "--method",
            "all",
            "--point-duration",
            "20ms",
            "--steps-per-decade",
            "2",
            "--refine",
            "1",
            "--load",
            "cpu:1",
            "--json",
            "--no-save",
        ]),
        &[0],
    );
    let curves = doc["sweep"]["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 8, "4 methods × (idle, cpu:1)");
    for c in curves {
        let points = c["points"].as_array().unwrap();
        assert!(!points.is_empty(), "{c}");
        assert_eq!(points[0]["requested_hz"], 1000.0);
        // Each frequency is measured until 2 of 3 measurements agree; the
        // best is the highest frequency most of whose measurements held.
        assert_eq!(c["repeats"], 3);
        let mut tally: Vec<(f64, u32, u32)> = Vec::new();
        for p in points {
            let hz = f(&p["requested_hz"]);
            let at = match tally.iter().position(|t| t.0 == hz) {
                Some(i) => i,
                None => {
                    tally.push((hz, 0, 0));
                    tally.len() - 1
                }
            };
            tally[at].1 += u32::from(p["held"] == true);
            tally[at].2 += 1;
        }
        assert!(tally.iter().all(|t| (2..=3).contains(&t.2)), "{c}");
        let held = tally
            .iter()
            .filter(|t| t.1 >= 2)
            .map(|t| t.0)
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
        assert_eq!(c["best_hz"].as_f64(), held, "{c}");
        let key = format!(
            "best_hz.{}.{}",
            c["method"].as_str().unwrap(),
            c["load"].as_str().unwrap()
        );
        assert_eq!(f(&doc["metrics"][&key]), held.unwrap_or(0.0));
    }
    assert_eq!(curves[0]["load"], "idle");
    assert_eq!(curves[4]["load"], "cpu:1");
}

#[test]
#[ignore = "needs root: SCHED_DEADLINE"]
fn latency_runs_one_second_under_sched_deadline() {
    assert!(is_root());
    let doc = json(
        rtlab().args([
            "latency",
            "--policy",
            "deadline",
            "-t",
            "1",
            "-i",
            "1ms",
            "--dl-runtime",
            "200us",
            "-D",
            "1",
            "--json",
            "--no-save",
        ]),
        &[0],
    );
    assert_eq!(doc["params"]["policy"], "deadline");
    assert_eq!(doc["params"]["dl_runtime"], "200us");
    assert!(
        doc["metrics"]["dl_overruns"].as_f64().is_some(),
        "{}",
        doc["metrics"]
    );
    let s = &doc["series"][0];
    assert!(s["cpu"].is_null(), "deadline threads are not pinned");
    assert!(f(&s["counters"]["samples"]) > 0.0);
    // Admission control: one thread more than CPUs, each 95% of a CPU, does
    // not fit under the default 95% limit.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let threads = (cpus + 1).to_string();
    let out = expect(
        rtlab()
            .args(["latency", "--policy", "deadline", "-t", &threads])
            .args(["--dl-runtime", "950us", "-i", "1ms", "-D", "1", "--no-save"]),
        &[3],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("admission control"));
}
