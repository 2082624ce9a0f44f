//! The system calls a latency run makes for its record, counted with strace
//! (not timed). What rtlab keeps beside cyclictest's figures (the system's
//! settings from some fifty `/proc` and `/sys` files, the audit, other
//! processes' real-time threads before and after measuring) is most of what a
//! short run costs beyond cyclictest's, and on a virtual machine each system
//! call repeated per file or per process is microseconds of task-clock
//! (bench/RESULTS.md). Counts, unlike times, hold still: these guard the three
//! that were needless.

use crate::common::shown;
use std::process::Command;

#[test]
fn a_latency_run_reads_files_and_threads_without_needless_system_calls() {
    counted(Command::new("strace"), is_root());
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user, who must not read root's program links"]
fn another_user_reads_names_where_root_reads_program_links() {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=-all",
        "strace",
    ])
    .env("HOME", "/nonexistent");
    counted(c, false);
}

/// Whether this process runs as root.
fn is_root() -> bool {
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs a 10-wake-up latency run under `strace` (the command given, which
/// may first change user; `root`: whether the run is root's) and checks the
/// system calls it made for its record.
fn counted(mut strace: Command, root: bool) {
    let dir = tempfile::tempdir().unwrap();
    // Another user writes the trace and the store here too.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let log = dir.path().join("strace.log");
    let out = strace
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .args([
            "-e",
            // `?`: machines without readlink(2) (arm64) have readlinkat only.
            "trace=openat,lseek,sched_getscheduler,sched_getparam,?readlink,readlinkat",
        ])
        .arg(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(dir.path().join("runs.db"))
        // The same run as root or not: time-sharing, one thread, 10 wake-ups.
        .args([
            "latency", "--policy", "other", "-t", "1", "-i", "1ms", "-l", "10", "-q",
        ])
        .env_remove("RTLAB_DB")
        .output()
        .expect("strace runs (apt-get install strace)");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = std::fs::read_to_string(&log).unwrap();
    // `PID name(args) = result`; a call another thread interrupted is
    // `PID name(args <unfinished ...>`, counted once all the same.
    let calls = |name: &str| -> Vec<&str> {
        let head = format!("{name}(");
        text.lines()
            .filter(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|c| c.starts_with(&head))
            })
            .collect()
    };
    let read: Vec<&str> = calls("openat")
        .into_iter()
        .filter(|l| (l.contains("\"/proc/") || l.contains("\"/sys/")) && !l.contains("= -1"))
        .collect();
    assert!(
        read.len() >= 20,
        "the record reads the system's settings, yet only {} /proc or /sys files were opened:\n{text}",
        read.len()
    );
    // Rust's `File::read_to_end` first asks a file's size (statx) and position
    // (lseek); these files have neither, and read_text does not ask. SQLite
    // reads and writes at offsets (pread, pwrite): no lseek either.
    assert_eq!(
        calls("lseek"),
        Vec::<&str>::new(),
        "{} files read",
        read.len()
    );
    // Other processes' threads are judged by their policy alone
    // (sched_getscheduler); the priority comes from the stat line of the few
    // real-time ones. PID 1 at least is another process, in each of the two
    // scans.
    assert!(calls("sched_getscheduler").len() >= 2, "{text}");
    assert_eq!(calls("sched_getparam"), Vec::<&str>::new());
    // The audit looks for irqbalance by each process's program: one readlink
    // of /proc/PID/exe. Root reads a process's name (open, read, close) only
    // where its link was refused (a sandbox's PID 1 hides its own); another
    // user may not read root's links and reads every name instead.
    let exe: Vec<&str> = [calls("readlink"), calls("readlinkat")]
        .concat()
        .into_iter()
        .filter(|l| l.split('"').nth(1).is_some_and(is_pid_file("exe")))
        .collect();
    let names: Vec<&str> = read
        .iter()
        .copied()
        .filter(|l| l.split('"').nth(1).is_some_and(is_pid_file("comm")))
        .collect();
    if root {
        assert!(exe.iter().any(|l| l.contains("\"/proc/1/exe\"")), "{text}");
        let refused: Vec<String> = exe
            .iter()
            .filter(|l| l.contains("EACCES"))
            .filter_map(|l| Some(l.split('"').nth(1)?.replace("/exe", "/comm\"")))
            .collect();
        let needless: Vec<&str> = names
            .into_iter()
            .filter(|l| !refused.iter().any(|r| l.contains(r.as_str())))
            .collect();
        assert_eq!(needless, Vec::<&str>::new(), "{} programs asked", exe.len());
    } else {
        assert_eq!(exe, Vec::<&str>::new(), "links another user may not read");
        assert!(
            names.iter().any(|l| l.contains("\"/proc/1/comm\"")),
            "{text}"
        );
    }
}

/// Whether a path is `/proc/PID/<file>` for a numeric PID.
fn is_pid_file(file: &str) -> impl Fn(&str) -> bool + '_ {
    move |path| {
        path.strip_prefix("/proc/")
            .and_then(|rest| rest.strip_suffix(file)?.strip_suffix('/'))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    }
}
