//! `--perf` on the periodic and ipc steps: counters per measuring thread,
//! the software ones counted, the hardware ones counted or with the reason
//! they are not (never a made-up 0), and `perf = true` in a scenario step.

use crate::common::{expect, json, rtlab, shown};
use serde_json::Value;

/// Checks one counter list: software counters have values, every other one a
/// value or a reason, never both; returns the list's task clock.
fn checked(counters: &Value) -> u64 {
    let all = counters.as_array().unwrap_or_else(|| panic!("{counters}"));
    let get = |e: &str| {
        all.iter()
            .find(|c| c["event"] == e)
            .unwrap_or_else(|| panic!("no {e} in {counters}"))
    };
    for sw in [
        "task-clock",
        "context-switches",
        "page-faults",
        "cpu-migrations",
    ] {
        assert!(get(sw)["value"].is_u64(), "{sw}: {counters}");
    }
    for c in all {
        let (value, not) = (c.get("value"), c.get("not"));
        assert!(value.is_some() != not.is_some(), "{c}");
        if let Some(why) = not {
            assert!(why.as_str().unwrap().starts_with("not "), "{c}");
        }
    }
    // Present even where the machine lacks it.
    get("cycles");
    get("task-clock")["value"].as_u64().unwrap()
}

/// The JSON of `rtlab ARGS --perf` at SCHED_OTHER, its counters per thread.
fn counted(args: &[&str]) -> Value {
    let doc = json(
        rtlab()
            .args(args)
            .args(["--policy", "other", "--perf", "--json", "--no-save"]),
        &[0],
    );
    assert_eq!(doc["perf"]["scope"], "threads", "{}", doc["perf"]);
    doc
}

#[test]
fn a_periodic_run_counts_its_thread() {
    let doc = counted(&["periodic", "-f", "1kHz", "-D", "200ms"]);
    let perf = &doc["perf"];
    let threads = perf["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["name"], "period");
    assert_eq!(threads[0]["tid"], doc["series"][0]["tid"]);
    assert!(checked(&threads[0]["counters"]) > 0);
    checked(&perf["total"]);
    // It sleeps between toggles.
    let vol = threads[0]["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["event"] == "voluntary-switches")
        .and_then(|c| c["value"].as_u64())
        .unwrap();
    assert!(vol > 0);
}

#[test]
fn an_ipc_run_counts_the_sender_and_the_receiver() {
    let doc = counted(&[
        "ipc",
        "--mechanism",
        "pipe",
        "-t",
        "2",
        "-l",
        "20",
        "-i",
        "200us",
    ]);
    let perf = &doc["perf"];
    let names: Vec<&str> = perf["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "pipe/0/sender",
            "pipe/0/receiver",
            "pipe/1/sender",
            "pipe/1/receiver"
        ]
    );
    let mut sum = 0;
    for t in perf["threads"].as_array().unwrap() {
        sum += checked(&t["counters"]);
    }
    assert_eq!(checked(&perf["total"]), sum);
    // The receiver's counters are the series' thread's.
    assert_eq!(perf["threads"][1]["tid"], doc["series"][0]["tid"]);
    // The text report shows them.
    let out = expect(
        rtlab().args([
            "ipc",
            "--mechanism",
            "eventfd",
            "-l",
            "10",
            "--perf",
            "--no-save",
        ]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Performance counter stats") && text.contains("eventfd/0/receiver:"),
        "{}",
        shown(&out)
    );
}

#[test]
fn the_scenario_key_perf_counts_periodic_and_ipc_steps() {
    let dir = tempfile::tempdir().unwrap();
    let (db, scn) = (dir.path().join("x.db"), dir.path().join("s.toml"));
    std::fs::write(
        &scn,
        r#"
name = "counted"
[[step]]
name = "toggles"
probe = "periodic"
frequency = "2kHz"
duration = "200ms"
policy = "other"
perf = true
[[step]]
name = "pairs"
probe = "ipc"
mechanism = "futex"
loops = 15
policy = "other"
perf = true
[[step]]
name = "uncounted"
probe = "ipc"
mechanism = "futex"
loops = 5
policy = "other"
"#,
    )
    .unwrap();
    let out = expect(
        rtlab().arg("--db").arg(&db).arg("run").arg(&scn).arg("-q"),
        &[0],
    );
    for (id, kind, counted) in [
        ("1", "periodic", true),
        ("2", "ipc", true),
        ("3", "ipc", false),
    ] {
        let run = json(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["results", "show", id, "--json"]),
            &[0],
        );
        assert_eq!(run["kind"], kind, "{}", shown(&out));
        assert_eq!(run["params"]["perf"], counted, "{}", run["params"]);
        if counted {
            assert!(checked(&run["perf"]["total"]) > 0);
        } else {
            assert!(
                run.get("perf").is_none_or(Value::is_null),
                "{}",
                run["perf"]
            );
        }
    }
}

#[test]
fn perf_is_a_flag_not_a_value() {
    for probe in ["periodic", "ipc"] {
        let out = expect(rtlab().args([probe, "--perf=yes", "--no-save"]), &[2]);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--perf"),
            "{}",
            shown(&out)
        );
    }
}

/// Field report 5's campaign, shortened: 4 latency threads idle and loaded,
/// then the sweep by method and load, every step with its counters.
#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn the_lab_preset_counts_every_step_and_tables_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = expect(
        rtlab().current_dir(dir.path()).arg("--db").arg(&db).args([
            "run",
            "--preset",
            "lab",
            "--duration",
            "3s",
            "-q",
        ]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("square-wave sweep (run 3): highest frequency held within 10% of nominal"),
        "{}",
        shown(&out)
    );
    let head = text
        .lines()
        .find(|l| l.starts_with("method"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        head.split_whitespace().collect::<Vec<_>>(),
        ["method", "idle", "cpu"]
    );
    for m in ["sleep", "busy", "timerfd", "hybrid"] {
        assert!(text.lines().any(|l| l.starts_with(m)), "{m}: {text}");
    }
    for (id, kind, threads) in [
        ("1", "latency", 4),
        ("2", "latency", 4),
        ("3", "periodic", 8),
    ] {
        let run = json(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["results", "show", id, "--json"]),
            &[0],
        );
        assert_eq!(run["kind"], kind);
        assert_eq!(run["perf"]["scope"], "threads", "{}", run["perf"]);
        assert_eq!(run["perf"]["threads"].as_array().unwrap().len(), threads);
        assert!(checked(&run["perf"]["total"]) > 0);
    }
}
