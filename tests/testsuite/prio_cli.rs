//! `rtlab prio` against a real multi-threaded child process.
//!
//! The child is rtlab itself (`rtlab latency` with three SCHED_OTHER measuring
//! threads that sleep 1 ms per period), started through a symlink with a unique
//! name so that patterns cannot touch any other process. It is killed when the
//! guard drops.

use assert_cmd::Command;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn is_root() -> bool {
    // SAFETY: geteuid(2) takes no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

macro_rules! need_root {
    () => {
        if !is_root() {
            println!("skipped: needs root (changing SCHED_FIFO priorities of another process)");
            return;
        }
    };
}

/// A running child with several threads, and a private state directory.
struct Child3 {
    child: Child,
    name: String,
    dir: tempfile::TempDir,
}

impl Child3 {
    fn start(tag: &str) -> Child3 {
        let dir = tempfile::tempdir().unwrap();
        // comm holds 15 characters: keep the name short and unique.
        let name = format!("pc{tag}{}", std::process::id() % 100_000);
        let link = dir.path().join(&name);
        std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("rtlab"), &link).unwrap();
        let child = std::process::Command::new(&link)
            .args([
                "latency", "--policy", "other", "-p", "0", "-t", "3", "-D", "60s",
            ])
            .args(["--no-save", "-q", "--dma-latency", "off"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let c = Child3 { child, name, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.threads().len() < 4 {
            assert!(Instant::now() < deadline, "child did not start its threads");
            std::thread::sleep(Duration::from_millis(20));
        }
        c
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn pattern(&self) -> String {
        format!("^{}$", self.name)
    }

    fn state_home(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// (tid, policy, rt_priority, Cpus_allowed_list) of every thread, read from
    /// /proc/PID/task/*/stat and status.
    fn threads(&self) -> Vec<(i32, i32, i32, String)> {
        let base = PathBuf::from(format!("/proc/{}/task", self.pid()));
        let mut out = Vec::new();
        for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let tid: i32 = e.file_name().to_str().unwrap().parse().unwrap();
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
                .split_whitespace()
                .collect();
            // proc(5): field 40 rt_priority, 41 policy; `rest` starts at field 3.
            let prio = rest[40 - 3].parse().unwrap();
            let policy = rest[41 - 3].parse().unwrap();
            let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap_or("")
                .trim()
                .to_string();
            out.push((tid, policy, prio, cpus));
        }
        out.sort();
        out
    }

    fn rtlab(&self) -> Command {
        let mut c = Command::cargo_bin("rtlab").unwrap();
        c.env("XDG_STATE_HOME", self.state_home());
        c
    }
}

impl Drop for Child3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn set_changes_every_thread_and_restore_undoes_it() {
    need_root!();
    let c = Child3::start("s");
    let before = c.threads();
    assert!(before.len() >= 4);
    assert!(before.iter().all(|t| t.1 == libc::SCHED_OTHER && t.2 == 0));
    c.rtlab()
        .args(["prio", "list", &c.pattern(), "--rt-only"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("\n0 threads"));

    let out = c
        .rtlab()
        .args([
            "prio",
            "set",
            &c.pattern(),
            "--policy",
            "fifo",
            "--priority",
            "20",
            "--affinity",
            "0",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "{} changed, 0 already as wanted, 0 failed",
            before.len()
        )),
        "{text}"
    );
    assert!(
        text.contains("other cpus") && text.contains("fifo/20 cpus 0"),
        "before and after: {text}"
    );
    for (tid, policy, prio, cpus) in c.threads() {
        assert_eq!(
            (policy, prio, cpus.as_str()),
            (libc::SCHED_FIFO, 20, "0"),
            "thread {tid}"
        );
    }
    let state = c.state_home().join("rtlab/prio-restore.json");
    assert!(state.exists());
    // list --rt-only --json now shows every thread of the child, at fifo/20.
    let out = c
        .rtlab()
        .args(["prio", "list", &c.pattern(), "--rt-only", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = doc["threads"].as_array().unwrap();
    assert_eq!(listed.len(), before.len());
    assert!(listed
        .iter()
        .all(|t| t["policy"] == "fifo" && t["priority"] == 20 && t["affinity"] == "0"));

    // Setting again is idempotent and keeps the original for restore.
    c.rtlab()
        .args(["prio", "set", &c.pattern(), "--policy", "rr", "-p", "30"])
        .assert()
        .code(0);
    assert!(c
        .threads()
        .iter()
        .all(|t| t.1 == libc::SCHED_RR && t.2 == 30));

    let out = c.rtlab().args(["prio", "restore"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        c.threads(),
        before,
        "every thread back to its policy, priority and CPUs"
    );
    assert!(!state.exists(), "the state is consumed by restore");
    c.rtlab()
        .args(["prio", "restore"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("nothing to restore"));
}

#[test]
fn dry_run_and_thread_selection() {
    need_root!();
    let c = Child3::start("d");
    let before = c.threads();
    c.rtlab()
        .args([
            "prio",
            "set",
            &c.pattern(),
            "--policy",
            "fifo",
            "-p",
            "99",
            "--dry-run",
        ])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("would change"))
        .stderr(predicates::str::contains("priority 99"));
    assert_eq!(c.threads(), before, "--dry-run changes nothing");

    // Only the measuring threads, not the main thread.
    c.rtlab()
        .args([
            "prio",
            "set",
            &c.pattern(),
            "--threads",
            "^rtlab-lat",
            "--policy",
            "fifo",
            "-p",
            "11",
        ])
        .assert()
        .code(0);
    let pid = c.pid() as i32;
    for (tid, policy, prio, _) in c.threads() {
        if tid == pid {
            assert_eq!((policy, prio), (libc::SCHED_OTHER, 0));
        } else {
            assert_eq!((policy, prio), (libc::SCHED_FIFO, 11));
        }
    }
    c.rtlab().args(["prio", "restore"]).assert().code(0);
    assert_eq!(c.threads(), before);

    // The listing shows the child's threads with their policy.
    c.rtlab()
        .args(["prio", "list", &c.pattern()])
        .assert()
        .code(0)
        .stdout(
            predicates::str::contains("rtlab-lat2").and(predicates::str::contains("4 threads")),
        );
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn apply_check_detects_drift_and_save_captures() {
    need_root!();
    let c = Child3::start("a");
    let before = c.threads();
    let profile = c.dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "[[rule]]\npattern = \"{}\"\npolicy = \"fifo\"\npriority = 15\n",
            c.pattern()
        ),
    )
    .unwrap();
    let p = profile.to_str().unwrap();
    c.rtlab()
        .args(["prio", "apply", p, "--check"])
        .assert()
        .code(1)
        .stdout(predicates::str::contains("want fifo/15"));
    assert_eq!(c.threads(), before, "--check changes nothing");
    c.rtlab().args(["prio", "apply", p]).assert().code(0);
    assert!(c
        .threads()
        .iter()
        .all(|t| t.1 == libc::SCHED_FIFO && t.2 == 15));
    c.rtlab()
        .args(["prio", "apply", p, "--check"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("0 of 4 matching threads differ"));
    c.rtlab()
        .args(["prio", "apply", p])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("0 changed, 4 already as wanted"));

    // Someone else changes one thread: drift, naming that thread.
    let victim = c.threads()[2].0;
    let param = libc::sched_param { sched_priority: 3 };
    // SAFETY: sched_setscheduler(2) reads one sched_param through a valid pointer.
    assert_eq!(
        unsafe { libc::sched_setscheduler(victim, libc::SCHED_RR, &param) },
        0
    );
    c.rtlab()
        .args(["prio", "apply", p, "--check"])
        .assert()
        .code(1)
        .stdout(
            predicates::str::contains(format!("{victim}"))
                .and(predicates::str::contains("rr/3 (want fifo/15)")),
        );

    // save captures the current settings; the saved profile has no drift.
    let saved = c.dir.path().join("saved.toml");
    c.rtlab()
        .args(["prio", "save", saved.to_str().unwrap(), &c.pattern()])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(&saved).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    assert!(doc["rule"].as_array().unwrap().len() >= 2, "{text}");
    c.rtlab()
        .args(["prio", "apply", saved.to_str().unwrap(), "--check"])
        .assert()
        .code(0);
    c.rtlab()
        .args(["prio", "save", saved.to_str().unwrap(), &c.pattern()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--force"));

    c.rtlab().args(["prio", "restore"]).assert().code(0);
    assert_eq!(c.threads(), before);
}

#[test]
fn kernel_threads_only_with_the_flag() {
    need_root!();
    let dir = tempfile::tempdir().unwrap();
    let rtlab = || {
        let mut c = Command::cargo_bin("rtlab").unwrap();
        c.env("XDG_STATE_HOME", dir.path());
        c
    };
    let set = [
        "prio",
        "set",
        "^kthreadd$",
        "--policy",
        "fifo",
        "-p",
        "1",
        "--dry-run",
    ];
    rtlab()
        .args(set)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--kernel-threads"));
    rtlab()
        .args(set)
        .arg("--kernel-threads")
        .assert()
        .code(0)
        .stdout(predicates::str::contains("would change"));
}

#[test]
fn bad_input_names_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["set", "x", "--policy", "fast", "-p", "1"], "--policy"),
        (&["set", "x", "--policy", "fifo", "-p", "0"], "--priority"),
        (
            &["set", "x", "--policy", "fifo", "-p", "100"],
            "outside 1-99",
        ),
        (&["set", "x", "--policy", "fifo"], "needs a priority"),
        (&["set", "x", "--policy", "other", "-p", "5"], "priority 0"),
        (&["set", "x", "-p", "5"], "needs --policy"),
        (
            &["set", "(", "--policy", "fifo", "-p", "5"],
            "not a valid regular expression",
        ),
        (&["set", "x", "--affinity", "3-1"], "--affinity"),
        (&["set", "x"], "nothing to set"),
        (&["apply", "/nonexistent/p.toml"], "cannot read profile"),
    ];
    for (args, needle) in cases {
        Command::cargo_bin("rtlab")
            .unwrap()
            .arg("prio")
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(*needle));
    }
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        (
            "[[rule]]\npattern = \"a\"\npolicy = \"fifo\"\nprio = 3\n",
            "prio",
        ),
        (
            "[[rule]]\npattern = \"a\"\npolicy = \"fifo\"\npriority = 0\n",
            "rule 1 priority",
        ),
        (
            "[[rule]]\npattern = \"a[\"\npolicy = \"other\"\n",
            "rule 1 pattern",
        ),
        ("", "no [[rule]]"),
        ("not toml at all", "not a valid priority profile"),
    ] {
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, text).unwrap();
        Command::cargo_bin("rtlab")
            .unwrap()
            .args(["prio", "apply"])
            .arg(&p)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(needle));
    }
}

/// Parses a systemd unit file strictly enough to catch malformed output:
/// sections, `Key=Value` lines and comments only, with known keys and values.
fn parse_unit(text: &str) -> Vec<(String, String, String)> {
    let mut section = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(s.to_string());
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not Key=Value: {line}"));
        let section = section.clone().expect("setting before any section");
        assert_eq!(section, "Service");
        match k {
            "CPUSchedulingPolicy" => {
                assert!(["other", "batch", "idle", "fifo", "rr"].contains(&v), "{v}")
            }
            "CPUSchedulingPriority" | "LimitRTPRIO" => {
                assert!((1..=99).contains(&v.parse::<i32>().unwrap()), "{v}")
            }
            "LimitMEMLOCK" => assert!(v == "infinity" || v.parse::<u64>().is_ok(), "{v}"),
            "CPUAffinity" => assert!(
                v.split(' ')
                    .all(|p| p.split('-').all(|n| n.parse::<u32>().is_ok())),
                "{v}"
            ),
            other => panic!("unknown key {other}"),
        }
        out.push((section, k.to_string(), v.to_string()));
    }
    out
}

#[test]
fn unit_output_is_a_valid_unit_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.toml");
    std::fs::write(
        &p,
        "[[rule]]\npattern = \"^plc$\"\npolicy = \"fifo\"\npriority = 70\naffinity = \"1,3\"\nunit = \"plc.service\"\n\
         [[rule]]\npattern = \"^logger$\"\npolicy = \"idle\"\n",
    )
    .unwrap();
    let out = Command::cargo_bin("rtlab")
        .unwrap()
        .args(["prio", "unit"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("# /etc/systemd/system/plc.service.d/50-rtlab-prio.conf"),
        "{text}"
    );
    let settings = parse_unit(&text);
    for want in [
        ("CPUSchedulingPolicy", "fifo"),
        ("CPUSchedulingPriority", "70"),
        ("LimitRTPRIO", "70"),
        ("LimitMEMLOCK", "infinity"),
        ("CPUAffinity", "1 3"),
        ("CPUSchedulingPolicy", "idle"),
    ] {
        assert!(
            settings
                .iter()
                .any(|(_, k, v)| (k.as_str(), v.as_str()) == want),
            "{want:?} in {text}"
        );
    }
    // --dir writes one drop-in per unit.
    let target = dir.path().join("etc");
    Command::cargo_bin("rtlab")
        .unwrap()
        .args(["prio", "unit"])
        .arg(&p)
        .arg("--dir")
        .arg(&target)
        .assert()
        .code(0);
    for unit in ["plc.service", "logger.service"] {
        let f = target.join(format!("{unit}.d/50-rtlab-prio.conf"));
        assert!(!parse_unit(&std::fs::read_to_string(&f).unwrap()).is_empty());
    }
}

#[test]
fn run_starts_the_command_with_the_setting() {
    need_root!();
    let out = Command::cargo_bin("rtlab")
        .unwrap()
        .args([
            "prio",
            "run",
            "--policy",
            "fifo",
            "-p",
            "12",
            "--affinity",
            "0",
            "--mlock",
            "--",
        ])
        .args([
            "sh",
            "-c",
            "cat /proc/self/stat; grep Cpus_allowed_list /proc/self/status; ulimit -l; ulimit -Hl",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let stat = lines.next().unwrap();
    let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    assert_eq!((rest[40 - 3], rest[41 - 3]), ("12", "1"), "{stat}");
    assert!(lines.next().unwrap().ends_with("\t0"), "{text}");
    // --mlock: the soft limit is as high as the hard one allows.
    let (soft, hard) = (lines.next().unwrap(), lines.next().unwrap());
    assert_eq!(soft, hard, "{text}");
    Command::cargo_bin("rtlab")
        .unwrap()
        .args([
            "prio",
            "run",
            "--policy",
            "fifo",
            "-p",
            "5",
            "--",
            "/nonexistent/cmd",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot run '/nonexistent/cmd'"));
}

fn setpriv() -> Option<PathBuf> {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

#[test]
fn non_root_gets_clear_errors_and_nothing_changes() {
    need_root!();
    let Some(setpriv) = setpriv() else {
        println!("skipped: setpriv (util-linux) is not installed");
        return;
    };
    let c = Child3::start("n");
    let before = c.threads();
    let state = c.dir.path().join("nobody-state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    // The tempdir is private to root; nobody needs to reach the binary through it.
    std::fs::set_permissions(
        c.dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let as_nobody = |args: &[&str]| {
        std::process::Command::new(&setpriv)
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("rtlab"))
            .args(args)
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap()
    };
    let out = as_nobody(&["prio", "set", &c.pattern(), "--policy", "fifo", "-p", "10"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("permission denied") && text.contains("CAP_SYS_NICE"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "0 changed, 0 already as wanted, {} failed",
            before.len()
        )),
        "{text}"
    );
    assert_eq!(c.threads(), before);
    assert!(
        !state.join("rtlab/prio-restore.json").exists(),
        "nothing recorded"
    );

    let out = as_nobody(&["prio", "run", "--policy", "fifo", "-p", "10", "--", "true"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
}
