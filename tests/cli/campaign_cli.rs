//! Campaigns are checked whole before anything runs, and never stay "running":
//! scenario bombs, invalid step values, --compare-with, Ctrl-C/SIGTERM at any
//! moment, a killed runner. Live steps run at priority 0 (SCHED_OTHER), so these
//! tests need no root; they assert statuses and exit codes, never latencies.

use crate::common::children_of;
use assert_cmd::cargo::cargo_bin;
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// A temporary directory with a store path and a scenario file holding `text`.
fn setup(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (db, scn) = (dir.path().join("x.db"), dir.path().join("s.toml"));
    std::fs::write(&scn, text).unwrap();
    (dir, db, scn)
}

fn rtlab(db: &Path) -> Command {
    let mut c = Command::new(cargo_bin("rtlab"));
    c.arg("--db").arg(db).stdin(Stdio::null());
    c
}

/// Runs `cmd` and returns its output, and a description of the whole exchange
/// for assertion messages.
fn run(cmd: &mut Command) -> (Output, String) {
    let out = cmd.output().unwrap();
    let what = describe(cmd, &out.status, &out.stdout, &out.stderr);
    (out, what)
}

fn describe(cmd: &Command, status: &ExitStatus, stdout: &[u8], stderr: &[u8]) -> String {
    format!(
        "command: {cmd:?}\nexit: {:?} (signal {:?})\n--- stdout\n{}\n--- stderr\n{}",
        status.code(),
        status.signal(),
        String::from_utf8_lossy(stdout),
        String::from_utf8_lossy(stderr)
    )
}

/// Asserts the exit code is one of `codes`; returns stdout and stderr.
fn expect(cmd: &mut Command, codes: &[i32]) -> (String, String) {
    let (out, what) = run(cmd);
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "expected exit {codes:?}\n{what}"
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The campaigns as stored (id, raw status), without rtlab's own reading.
fn stored_campaigns(db: &Path) -> Vec<(i64, String)> {
    if !db.exists() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let Ok(mut stmt) = conn.prepare("SELECT id, status FROM campaigns ORDER BY id") else {
        return Vec::new();
    };
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// (step index, run status) of each run of a campaign.
fn campaign_runs(db: &Path, id: i64) -> Vec<(i64, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.step_index, r.status FROM campaign_runs m JOIN runs r ON r.id = m.run_id
             WHERE m.campaign_id = ?1 ORDER BY m.run_id",
        )
        .unwrap();
    stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `rtlab results campaigns` as (id, status) rows: the status rtlab shows.
fn listed_campaigns(db: &Path) -> Vec<(i64, String)> {
    let (out, _) = expect(rtlab(db).args(["results", "campaigns"]), &[0]);
    out.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let status = f
                .iter()
                .find(|w| ["running", "complete", "interrupted", "failed"].contains(w))?;
            Some((f.first()?.parse().ok()?, status.to_string()))
        })
        .collect()
}

/// Asserts that nothing was stored: no store, or a store without campaigns.
fn assert_nothing_stored(db: &Path, what: &str) {
    assert!(
        stored_campaigns(db).is_empty(),
        "a campaign was recorded\n{what}"
    );
    if db.exists() {
        assert!(listed_campaigns(db).is_empty(), "{what}");
    }
}

/// Two short SCHED_OTHER steps: they run without root.
const TWO_STEPS: &str = r#"
name = "two steps"
[defaults]
duration = "600ms"
interval = "1ms"
priority = 0
cpus = "0"
[[step]]
name = "first"
probe = "latency"
[[step]]
name = "second"
probe = "latency"
"#;

#[test]
fn a_scenario_bomb_is_refused_quickly_naming_its_axes() {
    let priorities: Vec<String> = (1..=50).map(|p| p.to_string()).collect();
    let intervals: Vec<String> = (100..300).map(|i| format!("\"{i}us\"")).collect();
    let bomb = format!(
        "name = \"bomb\"\n[[step]]\nprobe = \"latency\"\nrepeat = 1000\nmatrix.priority = [{}]\nmatrix.interval = [{}]\n",
        priorities.join(","),
        intervals.join(",")
    );
    let (_dir, db, scn) = setup(&bomb);
    let t0 = Instant::now();
    let (out, what) = run(rtlab(&db).arg("run").arg(&scn));
    let took = t0.elapsed();
    assert_eq!(out.status.code(), Some(2), "{what}");
    let err = String::from_utf8_lossy(&out.stderr);
    for want in [
        "expands to 10 000 000 steps",
        "priority: 50",
        "interval: 200",
        "repeat: 1 000",
        "the limit is 10 000",
        "--max-steps",
    ] {
        assert!(err.contains(want), "{want}\n{what}");
    }
    // Building 10 million steps takes minutes and gigabytes; counting them does
    // not. The bound is generous: it only catches an expansion.
    assert!(took < Duration::from_secs(20), "took {took:?}\n{what}");
    assert_nothing_stored(&db, &what);

    // Axes whose product overflows 64 bits are counted without wrapping.
    let axis = |k: &str, v: &str| format!("matrix.{k} = [{}]\n", vec![v; 100].join(","));
    let huge = format!(
        "name = \"huge\"\n[[step]]\nprobe = \"latency\"\nrepeat = 1000\n{}{}{}{}{}{}{}{}{}",
        axis("priority", "1"),
        axis("interval", "\"1ms\""),
        axis("loops", "5"),
        axis("threads", "1"),
        axis("clock", "\"monotonic\""),
        axis("mlock", "true"),
        axis("distance", "\"0us\""),
        axis("deadline", "\"1ms\""),
        axis("dma_latency", "\"0\""),
    );
    std::fs::write(&scn, huge).unwrap();
    let (out, what) = run(rtlab(&db).arg("run").arg(&scn));
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("more than 18 446 744 073 709 551 615 steps"),
        "{what}"
    );
    assert_nothing_stored(&db, &what);
}

#[test]
fn max_steps_raises_the_limit() {
    let three =
        TWO_STEPS.replace("600ms", "100ms") + "[[step]]\nname = \"third\"\nprobe = \"latency\"\n";
    let (_dir, db, scn) = setup(&three);
    let (out, what) = run(rtlab(&db)
        .arg("run")
        .arg(&scn)
        .args(["-q", "--max-steps", "2"]));
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expands to 3 steps"),
        "{what}"
    );
    assert_nothing_stored(&db, &what);
    expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(["-q", "--max-steps", "3"]),
        &[0, 1],
    );
    assert_eq!(stored_campaigns(&db), [(1, "complete".to_string())]);
    assert_eq!(campaign_runs(&db, 1).len(), 3);
}

#[test]
fn invalid_step_values_are_refused_before_the_campaign_exists() {
    // Each bad value sits in the second step, so a runner that checked late
    // would have run (and stored) the first one.
    let cases: &[(&str, &[&str])] = &[
        (
            "interval = \"0us\"",
            &["s.toml:", "step[2].interval", "'0us' is zero"],
        ),
        (
            "cpus = [8000]",
            &[
                "step[2].cpus",
                "in step 2 of 2 (second)",
                "CPU 8000",
                "usable:",
            ],
        ),
        (
            "matrix.cpus = [0, 8000]",
            &[
                "step[2].matrix.cpus",
                "step 3 of 3 (second cpus=8000)",
                "cpus = \"8000\"",
            ],
        ),
        (
            "priority = 120",
            &["step[2].priority", "120 is outside 1-99 for SCHED_FIFO"],
        ),
        (
            "policy = \"other\"\npriority = 50",
            &["step[2].priority", "takes priority 0, not 50"],
        ),
        (
            "load = \"vm:64:1T\"",
            &["step[2].load", "MemAvailable", "in step 2 of 2"],
        ),
        ("load = \"cpu:x\"", &["step[2].load", "cpu:x"]),
        (
            "histogram_max = \"0us\"",
            &["step[2].histogram_max", "zero"],
        ),
    ];
    for (bad, wants) in cases {
        // Priority 0 (SCHED_OTHER) unless the case is about the priority.
        let prio = if bad.contains("priority") {
            ""
        } else {
            "priority = 0\n"
        };
        let text = format!(
            "name = \"bad\"\n[defaults]\nduration = \"200ms\"\n\
             [[step]]\nname = \"first\"\nprobe = \"latency\"\npriority = 0\n\
             [[step]]\nname = \"second\"\nprobe = \"latency\"\n{prio}{bad}\n"
        );
        let (_dir, db, scn) = setup(&text);
        let t0 = Instant::now();
        let (out, what) = run(rtlab(&db).arg("run").arg(&scn));
        assert_eq!(out.status.code(), Some(2), "{bad}\n{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        for want in *wants {
            assert!(err.contains(want), "{bad}: wanted '{want}'\n{what}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "refused up front, not after running step 1\n{what}"
        );
        assert_nothing_stored(&db, &what);
    }
}

#[test]
fn compare_with_and_flags_are_checked_before_anything_runs() {
    let (dir, db, scn) = setup(TWO_STEPS);
    // The drone preset runs for minutes: refusing its --compare-with must not.
    let t0 = Instant::now();
    let (out, what) =
        run(rtlab(&db).args(["run", "--preset", "drone", "--compare-with", "vanilla"]));
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--compare-with")
            && String::from_utf8_lossy(&out.stderr).contains("'vanilla'"),
        "{what}"
    );
    assert!(t0.elapsed() < Duration::from_secs(20), "{what}");
    assert!(!db.exists(), "no store is created to find nothing in it");
    for extra in [
        &["--compare-with", "nosuchkernel"][..],
        &["--tag", ""],
        &["--label", " "],
        &["--max-steps", "0"],
        &["--duration", "0s"],
    ] {
        let (out, what) = run(rtlab(&db).arg("run").arg(&scn).args(extra));
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert_nothing_stored(&db, &what);
    }
    let html = dir.path().join("no/such/dir/r.html");
    let (out, what) = run(rtlab(&db).arg("run").arg(&scn).arg("--html").arg(&html));
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--html"),
        "{what}"
    );
    assert!(
        !dir.path().join("no").exists(),
        "rtlab created the directory"
    );
    assert_nothing_stored(&db, &what);

    // A label that exists is found, and a tag names a campaign too.
    let short = ["-q", "--duration", "100ms"];
    expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(short)
            .args(["--label", "stock", "--tag", "baseline"]),
        &[0, 1],
    );
    for want in ["stock", "baseline"] {
        let (out, _) = expect(
            rtlab(&db).arg("run").arg(&scn).args(short).args([
                "--label",
                "rt",
                "--compare-with",
                want,
            ]),
            &[0, 1],
        );
        let step_rows = out
            .lines()
            .filter(|l| l.starts_with("first [stock]") || l.starts_with("second [stock]"));
        assert_eq!(
            step_rows.count(),
            2,
            "both steps of the earlier campaign are shown: {out}"
        );
    }
}

/// A running `rtlab run`, its output going to files.
struct Running {
    child: Child,
    cmd: Command,
    out: PathBuf,
    err: PathBuf,
}

fn start(db: &Path, args: &[&str], dir: &Path) -> Running {
    let (out, err) = (dir.join("out.txt"), dir.join("err.txt"));
    let mut cmd = rtlab(db);
    cmd.args(args)
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap());
    let child = cmd.spawn().unwrap();
    Running {
        child,
        cmd,
        out,
        err,
    }
}

impl Running {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child, not yet reaped.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Waits (bounded) for the end; the status and a description for messages.
    fn finish(mut self) -> (ExitStatus, String) {
        let t0 = Instant::now();
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > Duration::from_secs(60) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{:?} did not end within 60 s", self.cmd);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let what = describe(
            &self.cmd,
            &status,
            &std::fs::read(&self.out).unwrap_or_default(),
            &std::fs::read(&self.err).unwrap_or_default(),
        );
        (status, what)
    }
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(true)
}

/// Whether process `pid` has started measuring: its probe threads exist (it
/// installs its signal handler before it starts them).
fn measuring(pid: i32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|d| d.count() > 1)
}

/// Waits (bounded) until `cond` holds.
fn wait_for(what: &str, cond: impl FnMut() -> bool) {
    poll(what, cond, Duration::from_millis(2));
}

/// Waits (bounded) until `cond` holds, polling as fast as it can: for moments
/// that last a few milliseconds.
fn spin_for(what: &str, cond: impl FnMut() -> bool) {
    poll(what, cond, Duration::ZERO);
}

fn poll(what: &str, mut cond: impl FnMut() -> bool, pause: Duration) {
    let t0 = Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{what} did not happen within 30 s"
        );
        if pause.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(pause);
        }
    }
}

/// Resumes the latest interrupted campaign and checks every step completed,
/// without running again the steps that had completed.
fn resume_completes(db: &Path, id: i64) {
    let before: Vec<(i64, String)> = campaign_runs(db, id);
    let (out, _) = expect(rtlab(db).args(["run", "--resume", "-q"]), &[0, 1]);
    assert!(out.contains(&format!("campaign {id}  [complete]")), "{out}");
    assert_eq!(
        stored_campaigns(db).last().unwrap(),
        &(id, "complete".into())
    );
    let after = campaign_runs(db, id);
    for step in 0..2 {
        assert!(
            after.iter().any(|r| *r == (step, "complete".into())),
            "step {step} complete after resume: {after:?}"
        );
        let done_before = before.iter().any(|r| *r == (step, "complete".into()));
        if done_before {
            assert_eq!(
                after.iter().filter(|r| r.0 == step).count(),
                before.iter().filter(|r| r.0 == step).count(),
                "a completed step ran again"
            );
        }
    }
}

/// After SIGINT or SIGTERM: exit 130, the campaign stored as interrupted with
/// what it had gathered, and resumable to completion.
fn assert_interrupted_then_resume(db: &Path, status: ExitStatus, what: &str) {
    assert_eq!(status.code(), Some(130), "{what}");
    assert_eq!(
        stored_campaigns(db),
        [(1, "interrupted".to_string())],
        "{what}"
    );
    assert_eq!(listed_campaigns(db), [(1, "interrupted".to_string())]);
    assert!(what.contains("rtlab run --resume 1"), "{what}");
    resume_completes(db, 1);
}

#[test]
fn sigint_in_the_first_moments_of_a_step_interrupts_the_campaign() {
    // SIGINT the moment each step's process appears: often it has had no time to
    // install its own handler, and dies of the signal without saving a run.
    for step in [0, 0, 0, 1, 1, 1] {
        let (dir, db, scn) = setup(&TWO_STEPS.replace("600ms", "300ms"));
        let r = start(&db, &["run", scn.to_str().unwrap(), "-q"], dir.path());
        let pid = r.pid();
        if step == 1 {
            wait_for("the first step's run", || {
                stored_campaigns(&db).len() == 1 && !campaign_runs(&db, 1).is_empty()
            });
        }
        spin_for("a step process", || !children_of(pid).is_empty());
        r.signal(libc::SIGINT);
        let steps = children_of(pid);
        let (status, what) = r.finish();
        assert!(
            steps.iter().all(|&p| ended(p)),
            "no step left behind\n{what}"
        );
        assert_interrupted_then_resume(&db, status, &what);
    }
}

#[test]
fn sigint_or_sigterm_mid_step_saves_what_was_gathered() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let (dir, db, scn) = setup(TWO_STEPS);
        let r = start(&db, &["run", scn.to_str().unwrap(), "-q"], dir.path());
        let pid = r.pid();
        wait_for("a step process", || !children_of(pid).is_empty());
        let step = children_of(pid)[0];
        wait_for("the step to measure", || measuring(step) || ended(step));
        std::thread::sleep(Duration::from_millis(100));
        r.signal(sig);
        let (status, what) = r.finish();
        let runs = campaign_runs(&db, 1);
        assert!(
            runs.iter().any(|r| r.1 == "interrupted"),
            "the stopped step saved what it gathered: {runs:?}\n{what}"
        );
        assert_interrupted_then_resume(&db, status, &what);
    }
}

#[test]
fn sigint_at_any_moment_never_leaves_a_running_campaign() {
    // From the process's first microseconds to the end of the campaign.
    for delay_ms in [0u64, 1, 3, 10, 30, 100, 300, 900] {
        let (dir, db, scn) = setup(&TWO_STEPS.replace("600ms", "400ms"));
        let r = start(&db, &["run", scn.to_str().unwrap(), "-q"], dir.path());
        std::thread::sleep(Duration::from_millis(delay_ms));
        r.signal(libc::SIGINT);
        let (status, what) = r.finish();
        let what = format!("SIGINT after {delay_ms} ms\n{what}");
        let stored = stored_campaigns(&db);
        assert!(
            stored.iter().all(|c| c.1 != "running"),
            "{stored:?}\n{what}"
        );
        match stored.as_slice() {
            // Stopped before the campaign was recorded: nothing to resume. A
            // signal before rtlab could install its handler ends it as SIGINT does.
            [] => assert!(
                status.code() == Some(130) || status.signal() == Some(libc::SIGINT),
                "{what}"
            ),
            [(1, s)] if s == "interrupted" => {
                assert_eq!(status.code(), Some(130), "{what}");
                resume_completes(&db, 1);
            }
            // The signal came after the last step: the campaign is complete.
            [(1, s)] if s == "complete" => {
                assert!(matches!(status.code(), Some(0 | 1)), "{what}")
            }
            other => panic!("{other:?}\n{what}"),
        }
    }
}

#[test]
fn a_killed_runner_is_shown_interrupted_and_resumes() {
    let (dir, db, scn) = setup(TWO_STEPS);
    let r = start(&db, &["run", scn.to_str().unwrap(), "-q"], dir.path());
    let pid = r.pid();
    wait_for("a step process", || !children_of(pid).is_empty());
    let step = children_of(pid)[0];

    // While it runs, it is running, and a second runner may not take it over.
    assert_eq!(listed_campaigns(&db), [(1, "running".to_string())]);
    let (_, err) = expect(rtlab(&db).args(["run", "--resume", "1", "-q"]), &[2]);
    assert!(err.contains("still running in process"), "{err}");

    r.signal(libc::SIGKILL);
    let (status, what) = r.finish();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{what}");
    // The store still says running; rtlab sees that its process is gone.
    assert_eq!(stored_campaigns(&db), [(1, "running".to_string())]);
    assert_eq!(listed_campaigns(&db), [(1, "interrupted".to_string())]);
    let (out, _) = expect(rtlab(&db).args(["results", "campaigns", "1"]), &[0]);
    assert!(out.contains("[interrupted]"), "{out}");
    // The orphaned step was told to stop when its runner died.
    wait_for("the orphaned step to end", || ended(step));
    resume_completes(&db, 1);
}

#[test]
fn a_killed_runner_leaves_no_step_or_echo_server_behind() {
    // A port nobody uses right now, for the step's own echo server.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (dir, db, scn) = setup(&format!(
        "name = \"net\"\n[[step]]\nprobe = \"net\"\ntarget = \"127.0.0.1:{port}\"\nlocal_server = true\nduration = \"30s\"\nperiod = \"10ms\"\n"
    ));
    let r = start(&db, &["run", scn.to_str().unwrap(), "-q"], dir.path());
    let pid = r.pid();
    // The echo server, then the step that pings it.
    wait_for("the echo server and the step", || {
        children_of(pid).len() == 2
    });
    let children = children_of(pid);
    r.signal(libc::SIGKILL);
    let (_, what) = r.finish();
    // Both were told to stop when the runner died; neither waits out its 30 s.
    let t0 = Instant::now();
    while !children.iter().all(|&p| ended(p)) {
        if t0.elapsed() > Duration::from_secs(10) {
            for &p in &children {
                // SAFETY: kill(2) on the processes this test started (and checked
                // were ours); the test fails anyway.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            panic!("processes {children:?} outlived their runner\n{what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(listed_campaigns(&db), [(1, "interrupted".to_string())]);
}

#[test]
fn report_judges_a_campaign_as_run_did() {
    let scn = TWO_STEPS.replace("600ms", "200ms") + "[requirements]\nloose = \"10s\"\n";
    let (dir, db, scn) = setup(&scn);
    // The scenario's requirement passes; the one given to run replaces it and fails.
    expect(rtlab(&db).arg("run").arg(&scn).arg("-q"), &[0]);
    expect(
        rtlab(&db)
            .arg("run")
            .arg(&scn)
            .args(["-q", "--require", "tight=1ns"]),
        &[1],
    );
    let (out, _) = expect(rtlab(&db).args(["report", "--campaign", "1"]), &[0]);
    let header = out.lines().nth(2).unwrap();
    assert!(
        header.starts_with("step") && header.ends_with("loose 10s"),
        "{out}"
    );
    assert!(out.lines().nth(3).unwrap().ends_with("PASS"), "{out}");

    let html = dir.path().join("c.html");
    let (out, _) = expect(
        rtlab(&db)
            .args(["report", "--campaign", "2", "--html"])
            .arg(&html),
        &[1],
    );
    let header = out.lines().nth(2).unwrap();
    assert!(header.ends_with("tight 1ns"), "{out}");
    assert!(out.lines().nth(3).unwrap().ends_with("FAIL"), "{out}");
    assert!(out.contains("biggest risks:\n  1. tight: max "), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("class=\"FAIL\""),
        "the page shows the verdicts"
    );
    assert!(page.contains("tight: max "), "the page names the risk");

    // --require replaces what the campaign ran with.
    let (out, _) = expect(
        rtlab(&db).args(["report", "--campaign", "2", "--require", "loose=10s"]),
        &[0],
    );
    assert!(out.lines().nth(2).unwrap().ends_with("loose 10s"), "{out}");
}
