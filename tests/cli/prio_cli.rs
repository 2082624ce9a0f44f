//! `rtlab prio` against a real multi-threaded child process.
//!
//! The child is rtlab itself (`rtlab latency` with three SCHED_OTHER measuring
//! threads that sleep 1 ms per period), started through a symlink with a unique
//! name so that patterns cannot touch any other process. It is killed when the
//! guard drops.

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs a command to its end and returns its output, failing (with the
/// command) when it cannot be started.
fn output(cmd: &mut std::process::Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Runs a command and checks its exit code; on a mismatch the panic shows the
/// command, its exit code, stdout and stderr. Returns (stdout, stderr).
fn expect_code(cmd: &mut std::process::Command, code: i32) -> (String, String) {
    let out = output(cmd);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "command: {cmd:?}\nexit: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

/// Waits for a child until `deadline`, killing it if it is still running then;
/// returns (exit code, stdout, stderr) read from the files it wrote to.
fn finish(
    mut child: Child,
    what: &str,
    out: &Path,
    err: &Path,
    deadline: Instant,
) -> (Option<i32>, String, String) {
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end in time");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (
        status.code(),
        std::fs::read_to_string(out).unwrap_or_default(),
        std::fs::read_to_string(err).unwrap_or_default(),
    )
}

/// The scheduling state of one thread: what `prio restore` must put back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ThreadState {
    tid: i32,
    name: String,
    /// Policy number without the reset flag (`/proc/PID/task/TID/stat` field 41).
    policy: i32,
    /// RT priority (field 40).
    prio: i32,
    /// Nice value (field 19).
    nice: i32,
    /// SCHED_RESET_ON_FORK, from sched_getscheduler(2).
    reset_on_fork: bool,
    /// Cpus_allowed_list from `status`.
    cpus: String,
}

const SCHED_RESET_ON_FORK: i32 = 0x4000_0000;

/// The state of every thread of process `pid`, sorted by tid.
fn threads_of(pid: u32) -> Vec<ThreadState> {
    let base = PathBuf::from(format!("/proc/{pid}/task"));
    let mut out = Vec::new();
    for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        let tid: i32 = e.file_name().to_str().unwrap().parse().unwrap();
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let close = stat.rfind(')').unwrap();
        let name = stat[stat.find('(').unwrap() + 1..close].to_string();
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // proc(5): `rest` starts at field 3.
        let field = |n: usize| rest[n - 3].parse::<i32>().unwrap();
        // SAFETY: sched_getscheduler(2) takes a tid only.
        let raw = unsafe { libc::sched_getscheduler(tid) };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        out.push(ThreadState {
            tid,
            name,
            policy: field(41),
            prio: field(40),
            nice: field(19),
            reset_on_fork: raw >= 0 && raw & SCHED_RESET_ON_FORK != 0,
            cpus,
        });
    }
    out.sort();
    out
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
        // SCHED_OTHER threads that sleep 1 ms per period, for at most 60 s.
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
        // The measuring threads set their own policy and CPUs before they loop:
        // wait until they loop (1 ms sleeps, each a voluntary context switch;
        // setup costs fewer than 10), or that would undo what a test sets.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !c.looping() {
            assert!(
                Instant::now() < deadline,
                "child did not start its threads: {:?}",
                c.threads()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        c
    }

    /// Whether the three measuring threads are in their measuring loop.
    fn looping(&self) -> bool {
        let base = PathBuf::from(format!("/proc/{}/task", self.pid()));
        let switches: Vec<u64> = std::fs::read_dir(&base)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                std::fs::read_to_string(e.path().join("comm"))
                    .is_ok_and(|n| n.starts_with("rtlab-lat"))
            })
            .filter_map(|e| {
                let status = std::fs::read_to_string(e.path().join("status")).ok()?;
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
                    .trim()
                    .parse()
                    .ok()
            })
            .collect();
        switches.len() == 3 && switches.iter().all(|&n| n >= 50)
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

    fn journal(&self) -> PathBuf {
        self.state_home().join("rtlab/prio-restore.json")
    }

    fn threads(&self) -> Vec<ThreadState> {
        threads_of(self.pid())
    }

    fn rtlab(&self) -> Command {
        let mut c = Command::cargo_bin("rtlab").unwrap();
        c.env("XDG_STATE_HOME", self.state_home());
        c
    }

    /// `rtlab prio ARGS` with this child's state directory, as a std command.
    fn prio(&self, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
        c.arg("prio")
            .args(args)
            .env("XDG_STATE_HOME", self.state_home());
        c
    }
}

impl Drop for Child3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The online CPUs.
fn online() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    rtlab_engine::rt::cpuset::CpuList::parse(&text)
        .unwrap()
        .cpus()
        .to_vec()
}

/// Gives thread `tid` a policy (priority 0), reset-on-fork flag, nice value and
/// CPUs, as another tool would.
fn give(tid: i32, policy: i32, reset_on_fork: bool, nice: i32, cpus: &[usize]) {
    let param = libc::sched_param { sched_priority: 0 };
    let raw = if reset_on_fork {
        policy | SCHED_RESET_ON_FORK
    } else {
        policy
    };
    let os = std::io::Error::last_os_error;
    // SAFETY: sched_setscheduler(2) reads one sched_param through a valid pointer.
    let rc = unsafe { libc::sched_setscheduler(tid, raw, &param) };
    assert_eq!(rc, 0, "sched_setscheduler {tid}: {}", os());
    // SAFETY: setpriority(2) takes integers only (a tid is one thread on Linux).
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    assert_eq!(rc, 0, "setpriority {tid}: {}", os());
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        assert!(cpu < libc::CPU_SETSIZE as usize);
        // SAFETY: `cpu` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: sched_setaffinity(2) reads size_of::<cpu_set_t>() bytes from `set`.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity {tid}: {}", os());
}

/// Several `prio set` at once, from separate processes, on the same and on
/// different threads, then one `prio restore`: every thread is back to exactly
/// what it had (policy, priority, nice, reset-on-fork, CPUs). Regression test for
/// restore records lost to concurrent writers.
#[test]
#[ignore = "needs root: changes the SCHED_FIFO priorities of another process"]
fn concurrent_sets_then_restore_put_back_every_thread_exactly() {
    let c = Child3::start("c");
    let cpus = online();
    let (lo, hi) = (cpus[0], cpus[cpus.len() - 1]);
    let tid = |name: &str| {
        c.threads()
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no thread {name}"))
            .tid
    };
    // Originals that a sloppy restore would get wrong.
    give(c.pid() as i32, libc::SCHED_OTHER, false, 3, &cpus);
    give(tid("rtlab-lat0"), libc::SCHED_BATCH, true, -4, &[hi]);
    give(tid("rtlab-lat1"), libc::SCHED_IDLE, false, 0, &cpus);
    give(tid("rtlab-lat2"), libc::SCHED_OTHER, true, 7, &[lo]);
    let original = c.threads();
    assert_eq!(original.len(), 4, "{original:?}");

    let pat = c.pattern();
    let (lo, hi, all) = (lo.to_string(), hi.to_string(), format!("{lo}-{hi}"));
    let sets: Vec<Vec<&str>> = vec![
        vec![&pat, "--policy", "fifo", "-p", "10", "--affinity", &lo],
        vec![&pat, "--policy", "rr", "-p", "20"],
        vec![
            &pat,
            "--threads",
            "^rtlab-lat0$",
            "--policy",
            "fifo",
            "-p",
            "30",
            "--affinity",
            &lo,
        ],
        vec![&pat, "--threads", "^rtlab-lat1$", "--policy", "other"],
        vec![&pat, "--threads", "^rtlab-lat2$", "--affinity", &hi],
        vec![&pat, "--threads", "^rtlab-lat", "--policy", "batch"],
        vec![&pat, "--policy", "fifo", "-p", "5", "--affinity", &all],
        vec![
            &pat,
            "--threads",
            "^rtlab-lat[12]$",
            "--policy",
            "rr",
            "-p",
            "40",
        ],
    ];
    for round in 0..3 {
        let dir = c.dir.path().join(format!("round{round}"));
        std::fs::create_dir(&dir).unwrap();
        let started: Vec<_> = sets
            .iter()
            .enumerate()
            .map(|(i, args)| {
                let (out, err) = (dir.join(format!("{i}.out")), dir.join(format!("{i}.err")));
                let mut cmd = c.prio(&[&["set"], &args[..]].concat());
                cmd.stdout(std::fs::File::create(&out).unwrap())
                    .stderr(std::fs::File::create(&err).unwrap());
                let what = format!("{cmd:?}");
                (cmd.spawn().unwrap(), what, out, err)
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        for (child, what, out, err) in started {
            let (code, stdout, stderr) = finish(child, &what, &out, &err, deadline);
            assert_eq!(
                code,
                Some(0),
                "round {round}\ncommand: {what}\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
        }
        // `set` changes policy, priority and CPUs only.
        for (now, was) in c.threads().iter().zip(&original) {
            assert_eq!(
                (now.nice, now.reset_on_fork),
                (was.nice, was.reset_on_fork),
                "{now:?}"
            );
        }
        // Every thread is recorded once, with its state from before the round.
        let journal: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(c.journal()).unwrap()).unwrap();
        let entries = journal["entries"].as_array().unwrap();
        assert_eq!(entries.len(), original.len(), "{journal:#}");
        for was in &original {
            let e = entries
                .iter()
                .find(|e| e["tid"] == was.tid)
                .unwrap_or_else(|| panic!("thread {} lost: {journal:#}", was.tid));
            let s = &e["sched"];
            assert_eq!(
                (
                    s["policy"].as_i64(),
                    s["priority"].as_i64(),
                    s["nice"].as_i64(),
                    s["reset_on_fork"].as_bool(),
                    e["before"]["affinity"].as_str(),
                ),
                (
                    Some(was.policy.into()),
                    Some(was.prio.into()),
                    Some(was.nice.into()),
                    Some(was.reset_on_fork),
                    Some(was.cpus.as_str()),
                ),
                "{was:?}: {e:#}"
            );
        }
        let (text, _) = expect_code(&mut c.prio(&["restore"]), 0);
        assert!(text.contains("4 restored"), "{text}");
        assert_eq!(c.threads(), original, "round {round}: {text}");
        assert!(
            !c.journal().exists(),
            "round {round}: the journal is consumed"
        );
    }
}

/// PID 1 is never changed without --force. The target is what PID 1's main
/// thread has already, on threads that have exactly that: even if the check
/// regressed, this test could not change PID 1.
#[test]
fn pid_1_is_refused_without_force_and_not_changed() {
    let before = threads_of(1);
    let main = before
        .iter()
        .find(|t| t.tid == 1)
        .expect("/proc/1/task/1")
        .clone();
    let policy = match main.policy {
        libc::SCHED_OTHER => "other",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        other => panic!("PID 1 has policy {other}, which prio set cannot name"),
    };
    let same =
        |t: &ThreadState| (t.policy, t.prio, &t.cpus) == (main.policy, main.prio, &main.cpus);
    let names: std::collections::BTreeSet<String> = before
        .iter()
        .filter(|t| before.iter().filter(|u| u.name == t.name).all(same))
        .map(|t| regex::escape(&t.name))
        .collect();
    let threads = format!("^({})$", names.into_iter().collect::<Vec<_>>().join("|"));
    let prio = main.prio.to_string();
    let mut args = vec![
        "set",
        "1",
        "--policy",
        policy,
        "--affinity",
        &main.cpus,
        "--threads",
        &threads,
    ];
    if main.prio > 0 {
        args.extend(["-p", &prio]);
    }
    let dir = tempfile::tempdir().unwrap();
    let rtlab = |extra: &[&str]| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
        c.arg("prio")
            .args(&args)
            .args(extra)
            .env("XDG_STATE_HOME", dir.path());
        c
    };
    for extra in [&[][..], &["--dry-run"][..]] {
        let (_, err) = expect_code(&mut rtlab(extra), 2);
        // Warnings wrap at 100 columns wherever PID 1's thread names put the
        // breaks: read the words, not the lines.
        let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("(pid 1, tid 1)")
                && words.contains("PID 1 is init")
                && words.contains("--force changes them anyway")
                && words.contains("nothing changed"),
            "{err}"
        );
    }
    let after = threads_of(1);
    for t in &after {
        if let Some(b) = before.iter().find(|b| b.tid == t.tid) {
            assert_eq!(t, b, "PID 1 changed");
        }
    }
    assert!(after.iter().any(|t| t.tid == 1));
    assert!(!dir.path().join("rtlab").exists(), "nothing recorded");
    // --force lifts the refusal (shown with a dry run only).
    let (out, err) = expect_code(&mut rtlab(&["--force", "--dry-run"]), 0);
    assert!(
        out.contains("already as wanted") && !err.contains("PID 1 is init"),
        "{out}{err}"
    );
}

/// A CPU that does not exist, or any other invalid input, is refused with exit 2
/// before anything changes or is recorded.
#[test]
fn a_cpu_that_does_not_exist_is_refused_before_anything_changes() {
    let c = Child3::start("b");
    let before = c.threads();
    let missing = (online().last().unwrap() + 1).max(99).to_string();
    let pat = c.pattern();
    let two = format!("0,{missing}");
    let needle = format!("--affinity: CPU {missing} does not exist or is offline (online CPUs: ");
    for args in [
        vec!["set", &pat, "--affinity", &missing],
        vec![
            "set",
            &pat,
            "--policy",
            "fifo",
            "-p",
            "10",
            "--affinity",
            &two,
        ],
        vec![
            "set",
            &pat,
            "--policy",
            "fifo",
            "-p",
            "10",
            "--affinity",
            &two,
            "--dry-run",
        ],
        vec!["run", "--affinity", &missing, "--", "true"],
    ] {
        let (_, err) = expect_code(&mut c.prio(&args), 2);
        assert!(err.contains(&needle), "{args:?}: {err}");
    }
    let (_, err) = expect_code(&mut c.prio(&["set", "", "--policy", "fifo", "-p", "10"]), 2);
    assert!(err.contains("PATTERN is empty"), "{err}");
    let profile = c.dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!("[[rule]]\npattern = \"{pat}\"\npolicy = \"fifo\"\npriority = 10\naffinity = \"{missing}\"\n"),
    )
    .unwrap();
    for extra in [&[][..], &["--check"][..]] {
        let mut args = vec!["apply", profile.to_str().unwrap()];
        args.extend(extra);
        let (_, err) = expect_code(&mut c.prio(&args), 2);
        assert!(
            err.contains(&format!("rule 1 affinity: CPU {missing} does not exist")),
            "{err}"
        );
    }
    assert_eq!(c.threads(), before, "nothing changed");
    assert!(!c.state_home().exists(), "nothing recorded");
}

#[test]
#[ignore = "needs root: changes the SCHED_FIFO priorities of another process"]
fn set_changes_every_thread_and_restore_undoes_it() {
    let c = Child3::start("s");
    let before = c.threads();
    assert!(before.len() >= 4);
    assert!(before
        .iter()
        .all(|t| t.policy == libc::SCHED_OTHER && t.prio == 0));
    c.rtlab()
        .args(["prio", "list", &c.pattern(), "--rt-only"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("\n0 threads"));

    let (text, _) = expect_code(
        &mut c.prio(&[
            "set",
            &c.pattern(),
            "--policy",
            "fifo",
            "--priority",
            "20",
            "--affinity",
            "0",
        ]),
        0,
    );
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
    for t in c.threads() {
        assert_eq!(
            (t.policy, t.prio, t.cpus.as_str()),
            (libc::SCHED_FIFO, 20, "0"),
            "{t:?}"
        );
    }
    let state = c.journal();
    assert!(state.exists());
    // list --rt-only --json now shows every thread of the child, at fifo/20.
    let (json, _) = expect_code(
        &mut c.prio(&["list", &c.pattern(), "--rt-only", "--json"]),
        0,
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
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
        .all(|t| t.policy == libc::SCHED_RR && t.prio == 30));

    expect_code(&mut c.prio(&["restore"]), 0);
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
#[ignore = "needs root: changes the SCHED_FIFO priorities of another process"]
fn dry_run_and_thread_selection() {
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
    for t in c.threads() {
        if t.tid == pid {
            assert_eq!((t.policy, t.prio), (libc::SCHED_OTHER, 0), "{t:?}");
        } else {
            assert_eq!((t.policy, t.prio), (libc::SCHED_FIFO, 11), "{t:?}");
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

#[test]
#[ignore = "needs root: changes the SCHED_FIFO priorities of another process"]
fn apply_check_detects_drift_and_save_captures() {
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
        .all(|t| t.policy == libc::SCHED_FIFO && t.prio == 15));
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
    let victim = c.threads()[2].tid;
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
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert!(
        doc["rule"].as_array_of_tables().unwrap().len() >= 2,
        "{text}"
    );
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

/// Dry runs only: nothing here can change a kernel thread, even if a check
/// regressed (and none needs root).
#[test]
fn kernel_threads_only_with_the_flag_and_per_cpu_ones_only_with_force() {
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

    // The kernel's per-CPU threads are refused with the reason, even with
    // --kernel-threads, and nothing is recorded.
    let per_cpu = [
        "prio",
        "set",
        "^(migration|ksoftirqd)/0$",
        "--kernel-threads",
        "--policy",
        "fifo",
        "-p",
        "1",
        "--dry-run",
    ];
    rtlab().args(per_cpu).assert().code(2).stderr(
        predicates::str::contains("migration/0 (pid")
            .and(predicates::str::contains("stopper thread"))
            .and(predicates::str::contains("ksoftirqd/0 (pid"))
            .and(predicates::str::contains("softirqs"))
            .and(predicates::str::contains("--force changes them anyway"))
            .and(predicates::str::contains("nothing changed")),
    );
    rtlab()
        .args(per_cpu)
        .arg("--force")
        .assert()
        .code(0)
        .stdout(
            predicates::str::contains("migration/0").and(predicates::str::contains("ksoftirqd/0")),
        );
    assert!(
        !dir.path().join("rtlab").exists(),
        "a dry run records nothing"
    );
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
#[ignore = "needs root: runs a command at SCHED_FIFO and raises RLIMIT_MEMLOCK"]
fn run_starts_the_command_with_the_setting() {
    let (text, _) = expect_code(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
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
            ]),
        0,
    );
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

#[test]
#[ignore = "needs root: drops to user nobody to be refused"]
fn non_root_gets_clear_errors_and_nothing_changes() {
    use std::os::unix::process::CommandExt;
    let c = Child3::start("n");
    let before = c.threads();
    let state = c.dir.path().join("nobody-state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    // nobody (std drops the supplementary groups along with the uid).
    let as_nobody = |args: &[&str]| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
        cmd.args(args)
            .env("XDG_STATE_HOME", &state)
            .uid(65534)
            .gid(65534);
        cmd
    };
    // Every thread refused: the system refused, exit 3.
    let (text, _) = expect_code(
        &mut as_nobody(&["prio", "set", &c.pattern(), "--policy", "fifo", "-p", "10"]),
        3,
    );
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

    let (_, err) = expect_code(
        &mut as_nobody(&["prio", "run", "--policy", "fifo", "-p", "10", "--", "true"]),
        3,
    );
    assert!(err.contains("permission denied"), "{err}");
}
