//! End-to-end tests of `rtlab run` and `rtlab presets`.

use crate::common::{children_of, expect, shown, wait_until_measuring};
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn rtlab(db: &Path) -> Command {
    let mut c = Command::cargo_bin("rtlab").unwrap();
    c.arg("--db").arg(db);
    c
}

const TWO_STEPS: &str = r#"
name = "two steps"
[defaults]
duration = "1s"
interval = "500us"
[[step]]
name = "fifo"
probe = "latency"
[[step]]
name = "other"
probe = "latency"
priority = 0
[requirements]
loop = "10s"
"#;

/// A temporary directory with a store path and a scenario file holding `text`.
fn setup(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (db, scn) = (dir.path().join("x.db"), dir.path().join("s.toml"));
    std::fs::write(&scn, text).unwrap();
    (dir, db, scn)
}

fn campaign(db: &Path, id: i64) -> (String, Vec<(i64, i64, String)>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let status: String = conn
        .query_row("SELECT status FROM campaigns WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.step_index, m.run_id, r.status FROM campaign_runs m JOIN runs r ON r.id = m.run_id
             WHERE m.campaign_id = ?1 ORDER BY m.run_id",
        )
        .unwrap();
    let rows = stmt
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (status, rows)
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn a_two_step_campaign_end_to_end() {
    let (dir, db, scn) = setup(TWO_STEPS);
    let html = dir.path().join("r.html");
    let out = expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .arg("--html")
            .arg(&html)
            .arg("-q"),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("two steps") && lines[0].contains("[complete]"));
    assert!(lines[2].starts_with("step") && lines[2].contains("loop 10s"));
    assert!(
        lines[3].starts_with("fifo") && lines[3].ends_with("PASS"),
        "{text}"
    );
    assert!(
        lines[4].starts_with("other") && lines[4].ends_with("PASS"),
        "{text}"
    );
    assert!(text.contains(&format!("report: {}", html.display())));
    let (status, rows) = campaign(&db, 1);
    assert_eq!(status, "complete");
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].0, rows[1].0), (0, 1));
    assert!(rows.iter().all(|r| r.2 == "complete"));
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(
        report.contains("fifo · ") && report.contains("other · "),
        "the report names the steps"
    );
    assert!(report.contains("<svg"), "the report has its plots inline");

    // The runs are ordinary stored runs with the step's settings.
    let out = expect(
        rtlab(&db).args(["results", "show", &rows[1].1.to_string(), "--json"]),
        &[0],
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["params"]["policy"], "other");
    assert_eq!(run["campaign"], 1);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn json_output_carries_steps_verdicts_and_risks() {
    let (_dir, db, scn) = setup(TWO_STEPS);
    let out = expect(
        rtlab(&db).arg("run").arg(&scn).args([
            "--json",
            "--require",
            "tight=1ns",
            "--duration",
            "300ms",
        ]),
        &[1],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "rtlab/1");
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    let params = &doc["steps"][0]["run"]["params"];
    assert_eq!(
        (&params["probe"], &params["duration"]),
        (&"latency".into(), &"300ms".into())
    );
    let verdicts = doc["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts
        .iter()
        .all(|v| v["requirement"] == "tight" && v["result"] == "FAIL"));
    assert!(doc["risks"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("tight: max"));
    assert!(Path::new(doc["html"].as_str().unwrap()).exists());
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn sigint_keeps_completed_steps_and_resume_finishes_the_campaign() {
    let (_dir, db, scn) = setup(&TWO_STEPS.replace("\"1s\"", "\"2s\""));
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(&db)
        .arg("run")
        .arg(&scn)
        .arg("-q")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Interrupt the second step while it measures: wait (bounded) until the
    // first step's process has been followed by another, and that one runs its
    // probe threads. A fixed sleep raced with the steps on a busy machine.
    let wait_child = |not: Option<i32>| -> i32 {
        for _ in 0..3000 {
            if let Some(&c) = children_of(pid as i32).iter().find(|&&c| Some(c) != not) {
                return c;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("rtlab run started no step process within 30 s");
    };
    let first = wait_child(None);
    let second = wait_child(Some(first));
    wait_until_measuring(second as u32);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("[interrupted]") && text.contains("rtlab run --resume 1"),
        "{text}"
    );
    assert!(children_of(pid as i32).is_empty());

    let (status, before) = campaign(&db, 1);
    assert_eq!(status, "interrupted");
    assert!(
        !before.is_empty(),
        "the interrupted step saved what it gathered"
    );
    assert_eq!(before.last().unwrap().2, "interrupted");
    let kept: Vec<(i64, i64)> = before
        .iter()
        .filter(|r| r.2 == "complete")
        .map(|r| (r.0, r.1))
        .collect();

    let out = expect(rtlab(&db).args(["run", "--resume", "-q"]), &[0]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[complete]"));
    let (status, after) = campaign(&db, 1);
    assert_eq!(status, "complete");
    for k in &kept {
        assert!(
            after.iter().any(|r| (r.0, r.1) == *k),
            "completed step {k:?} was not run again"
        );
        assert_eq!(after.iter().filter(|r| r.0 == k.0).count(), 1);
    }
    for step in 0..2 {
        assert!(
            after.iter().any(|r| r.0 == step && r.2 == "complete"),
            "step {step} complete after resume"
        );
    }
    // Nothing left to resume.
    expect(rtlab(&db).args(["run", "--resume", "1"]), &[2]);
}

#[test]
fn scenario_errors_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let (db, scn) = (dir.path().join("x.db"), dir.path().join("bad.toml"));
    std::fs::write(
        &scn,
        "name = \"x\"\n[[step]]\nprobe = \"latency\"\nintervall = \"1ms\"\n",
    )
    .unwrap();
    let out = expect(rtlab(&db).arg("run").arg(&scn), &[2]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:4: step[1].intervall: unknown key"),
        "{err}"
    );
    assert!(
        !db.exists() || campaign_count(&db) == 0,
        "nothing written for a bad scenario"
    );

    let out = expect(rtlab(&db).args(["run", "--preset", "nope"]), &[2]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--preset: no preset 'nope'"));
    let out = expect(rtlab(&db).args(["run", "--duration", "soon"]), &[2]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--duration"));
}

fn campaign_count(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT count(*) FROM campaigns", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn presets_list_and_show() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = expect(rtlab(&db).args(["presets", "list"]), &[0]);
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["quick", "drone", "lab"] {
        assert!(
            text.lines().any(|l| l.starts_with(name)),
            "{name} listed: {text}"
        );
    }
    let out = expect(rtlab(&db).args(["presets", "show", "drone"]), &[0]);
    let toml = String::from_utf8_lossy(&out.stdout);
    assert!(toml.contains("name = \"drone\"") && toml.contains("gyro = \"1ms\""));
    expect(rtlab(&db).args(["presets", "show", "warp"]), &[2]);
}

/// What `presets show` prints is a scenario `run` accepts as a file.
#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn the_shown_drone_preset_runs_as_a_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = expect(rtlab(&db).args(["presets", "show", "drone"]), &[0]);
    let scn = dir.path().join("drone.toml");
    std::fs::write(&scn, &out.stdout).unwrap();
    // Whether this machine meets the drone's 1 ms budgets is not the test's
    // business (a VM often does not); the exit code must agree with the
    // verdicts shown.
    let out = expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(["-q", "--duration", "200ms"]),
        &[0, 1],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("gyro 1ms") && text.contains("[complete]"),
        "{}",
        shown(&out)
    );
    let failed = text
        .lines()
        .any(|l| l.split_whitespace().any(|w| w == "FAIL"));
    assert_eq!(
        out.status.code(),
        Some(i32::from(failed)),
        "{}",
        shown(&out)
    );
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn compare_with_adds_the_earlier_kernels_runs() {
    let (_dir, db, scn) = setup(TWO_STEPS);
    // The only requirement is a 10 s budget: exit 0 unless rtlab hangs.
    let run = |label: &str, extra: &[&str], code: i32| {
        expect(
            rtlab(&db)
                .arg("run")
                .arg(&scn)
                .args(["-q", "--duration", "200ms", "--label", label])
                .args(extra),
            &[code],
        )
    };
    run("stock", &[], 0);
    let out = run("rt", &["--compare-with", "stock"], 0);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("fifo") || l.starts_with("other"))
        .collect();
    assert_eq!(rows.len(), 4, "both kernels' steps: {text}");
    assert_eq!(
        rows.iter().filter(|r| r.contains("[stock]")).count(),
        2,
        "{text}"
    );
    let out = run("rt2", &["--compare-with", "nosuchkernel"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--compare-with"));
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn attribute_runs_each_part_of_the_mix_and_ranks_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let out = expect(
        rtlab(&db).args([
            "run",
            "--attribute",
            "dohell",
            "--duration",
            "300ms",
            "--json",
            "--require",
            "loose=60s",
        ]),
        &[0],
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "latency (baseline)");
    assert_eq!(*names.last().unwrap(), "latency (dohell whole)");
    assert!(steps[0]["run"]["loads"].as_array().unwrap().is_empty());
    let r = &doc["attribution"][0];
    assert_eq!(r["mix"], "dohell");
    let parts = r["parts"].as_array().unwrap();
    assert_eq!(parts.len(), steps.len() - 2, "every part ranked");
    // Ranked by the p99.9 ratio, each ratio computed from the stored runs.
    let base = steps[0]["run"]["total"]["summary"]["p999_ns"]
        .as_f64()
        .unwrap()
        .max(1.0);
    for w in parts.windows(2) {
        assert!(w[0]["p999_ratio"].as_f64() >= w[1]["p999_ratio"].as_f64());
    }
    for p in parts {
        let step = steps
            .iter()
            .find(|s| {
                s["name"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("part {})", p["part"].as_str().unwrap()))
            })
            .unwrap();
        assert_eq!(step["run"]["loads"][0]["kind"], p["part"]);
        let p999 = step["run"]["total"]["summary"]["p999_ns"].as_f64().unwrap();
        assert_eq!(p["p999_ns"].as_f64().unwrap(), p999);
        assert!((p["p999_ratio"].as_f64().unwrap() - p999 / base).abs() < 1e-9);
    }
    expect(rtlab(&db).args(["run", "--attribute", "cpu"]), &[2]);
}

#[test]
#[ignore = "needs root: SCHED_FIFO"]
fn compare_and_report_take_a_campaign() {
    let (dir, db, scn) = setup(TWO_STEPS);
    let html = dir.path().join("c.html");
    expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(["-q", "--duration", "200ms"]),
        &[0],
    );
    let out = expect(
        rtlab(&db).args(["compare", "--campaign", "1", "--json"]),
        &[0],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let labels: Vec<&str> = doc["comparisons"][0]["comparison"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["fifo", "other"], "columns named after the steps");
    let out = expect(
        rtlab(&db)
            .args([
                "report",
                "--campaign",
                "1",
                "--require",
                "loop=10s",
                "--html",
            ])
            .arg(&html),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("campaign 1  [complete]"));
    assert!(
        text.lines()
            .any(|l| l.starts_with("fifo") && l.ends_with("PASS")),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("fifo · ") && page.contains("<svg"));
    expect(rtlab(&db).args(["report", "--campaign", "9"]), &[2]);
}

/// Two SCHED_OTHER steps (no root needed) of 200 ms on CPU 0 (at most 200
/// samples each), judged against 10 s.
const OTHER_STEPS: &str = r#"
name = "repeated"
[defaults]
duration = "200ms"
interval = "1ms"
priority = 0
cpus = "0"
[[step]]
name = "a"
probe = "latency"
[[step]]
name = "b"
probe = "latency"
repeat = 2
[requirements]
loop = "10s"
"#;

/// (plan index, step name, base name, repeat) of campaign 1's steps.
fn recorded_steps(db: &Path) -> Vec<(i64, String, String, i64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT step_index, step_name, base_name, repeat_index FROM campaign_runs
             WHERE campaign_id = 1 ORDER BY step_index",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn repeat_interleaves_every_step_and_records_its_base_name_and_round() {
    let (_dir, db, scn) = setup(OTHER_STEPS);
    let out = expect(
        rtlab(&db).arg("run").arg(&scn).args(["--repeat", "3"]),
        &[0],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let steps = recorded_steps(&db);
    let shown: Vec<(i64, &str, &str, i64)> = steps
        .iter()
        .map(|s| (s.0, s.1.as_str(), s.2.as_str(), s.3))
        .collect();
    assert_eq!(
        shown,
        [
            (0, "a #1", "a", 1),
            (1, "b #1", "b", 1),
            (2, "a #2", "a", 2),
            (3, "b #2", "b", 2),
            (4, "a #3", "a", 3),
            (5, "b #3", "b", 3),
        ],
        "--repeat replaces the scenario's repeat = 2"
    );
    for line in [
        "decision:\n  deadlines:",
        "    a ≤10s: PASS in 3 of 3 repeats, worst max ",
        "    b ≤10s: PASS in 3 of 3 repeats, worst max ",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    // Failed in every repeat: decided, exit 1.
    let (_dir, db, scn) = setup(OTHER_STEPS);
    let out = expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(["-q", "--require", "tight=1ns"]),
        &[1],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("decision:").count(), 1, "{text}");
    assert!(
        text.contains("    b ≤1ns: FAIL in 2 of 2 repeats"),
        "{text}"
    );
}

#[test]
fn until_decided_adds_rounds_while_something_is_undecided_up_to_the_most() {
    // Every verdict holds by far; but a and b are compared on p99, which
    // needs 1 000 samples: 3 repeats of 200 are too few, so each round is
    // followed by another until --max-repeats, and what stays open is said.
    let (_dir, db, scn) = setup(OTHER_STEPS);
    let out = expect(
        rtlab(&db).arg("run").arg(&scn).args([
            "--until-decided",
            "--repeat",
            "2",
            "--max-repeats",
            "3",
        ]),
        &[0],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "campaign 1: repeated (4 steps, up to 3 repeats of each with --until-decided)"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "after 2 repeats, undecided: b against a on p99: no interval to judge by; running round 3"
        ),
        "{err}"
    );
    let names: Vec<String> = recorded_steps(&db).into_iter().map(|s| s.1).collect();
    assert_eq!(names, ["a #1", "b #1", "a #2", "b #2", "a #3", "b #3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "  not decided after 3 repeats (--max-repeats): raise it, or look at what varies \
             between the repeats:\n    - b against a on p99: no interval to judge by\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    a ≤10s: PASS in 3 of 3 repeats"),
        "{text}"
    );
}

#[test]
fn until_decided_stops_when_every_verdict_is_decided() {
    // One step: no comparison, and a verdict that holds by far in every repeat.
    let one = OTHER_STEPS
        .split("[[step]]\nname = \"b\"")
        .next()
        .unwrap()
        .to_string()
        + "[requirements]\nloop = \"10s\"\n";
    let (_dir, db, scn) = setup(&one);
    let out = expect(
        rtlab(&db).arg("run").arg(&scn).args([
            "--until-decided",
            "--repeat",
            "2",
            "--max-repeats",
            "4",
        ]),
        &[0],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("running round"), "{err}");
    assert_eq!(recorded_steps(&db).len(), 2, "no round added");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("not decided"), "{text}");
    for (args, flag) in [
        (&["--max-repeats", "3"][..], "--until-decided"),
        (&["--repeat", "0"], "--repeat"),
        (&["--until-decided", "--max-repeats", "1"], "--max-repeats"),
    ] {
        let out = expect(rtlab(&db).arg("run").arg(&scn).args(args), &[2]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}
