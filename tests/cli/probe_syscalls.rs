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
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=openat,lseek,sched_getscheduler,sched_getparam,readlink",
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
    // The audit looks for irqbalance by each process's program, one readlink
    // of /proc/PID/exe (PID 1's at least). Root reads a process's name
    // (open, read, close) only where its link was refused (a sandbox's PID 1
    // hides its own); another user reads every name instead.
    let exe = calls("readlink");
    assert!(exe.iter().any(|l| l.contains("\"/proc/1/exe\"")), "{text}");
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        let refused: Vec<String> = exe
            .iter()
            .filter(|l| l.contains("EACCES"))
            .filter_map(|l| Some(l.split('"').nth(1)?.replace("/exe", "/comm")))
            .collect();
        let names: Vec<&str> = read
            .iter()
            .copied()
            .filter(|l| l.contains("/comm\"") && !refused.iter().any(|r| l.contains(r.as_str())))
            .collect();
        assert_eq!(names, Vec::<&str>::new(), "{} programs asked", exe.len());
    }
}
