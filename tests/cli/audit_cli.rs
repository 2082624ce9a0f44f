//! `rtlab audit` against this machine and against fake system trees.

use crate::common::{expect, rtlab};
use serde_json::Value;
use std::path::Path;

/// Every check id the audit must report, in order.
const IDS: &[&str] = &[
    "preempt",
    "hrtimers",
    "hz",
    "nohz_full",
    "cmdline_isolation",
    "isolated_cpus",
    "rt_throttling",
    "timer_migration",
    "watchdogs",
    "thp",
    "ksm",
    "numa_balancing",
    "swap",
    "swappiness",
    "dirty_ratios",
    "governor",
    "c_states",
    "cpu_dma_latency",
    "clocksource",
    "irq_affinity",
    "irqbalance",
    "workqueue_mask",
    "smt",
    "rlimit_rtprio",
    "rlimit_memlock",
    "rt_group_sched",
    "debug_options",
    "vm",
    "container",
];

fn audit_json(args: &[&str]) -> Value {
    let out = expect(rtlab().arg("audit").arg("--json").args(args), &[0]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn checks(doc: &Value) -> Vec<(String, String, String)> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["current"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn status<'a>(rows: &'a [(String, String, String)], id: &str) -> (&'a str, &'a str) {
    let r = rows
        .iter()
        .find(|r| r.0 == id)
        .unwrap_or_else(|| panic!("no row {id}"));
    (r.1.as_str(), r.2.as_str())
}

fn write(root: &Path, abs: &str, text: &str) {
    let p = root.join(abs.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A symbolic link at `abs` below `root` to `target` (which need not exist).
fn symlink(root: &Path, abs: &str, target: &str) {
    let p = root.join(abs.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, p).unwrap();
}

#[test]
fn this_machine_gets_a_row_for_every_check() {
    let doc = audit_json(&[]);
    assert_eq!(doc["format"], "rtlab/1");
    assert_eq!(doc["kind"], "audit");
    let rows = checks(&doc);
    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, IDS);
    for (id, st, cur) in &rows {
        assert!(
            ["ok", "warn", "fail", "n.a."].contains(&st.as_str()),
            "{id}: {st}"
        );
        assert!(!cur.is_empty(), "{id} has no current value");
    }
    let s = &doc["summary"];
    let total: u64 = ["ok", "warn", "fail", "na"]
        .iter()
        .map(|k| s[k].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, IDS.len());
    let failed = s["failed"].as_array().unwrap().len() as u64;
    assert_eq!(failed, s["fail"].as_u64().unwrap());
    // Every row that is not ok says why and how to fix it.
    for c in doc["checks"].as_array().unwrap() {
        assert!(!c["why"].as_str().unwrap().is_empty());
        if matches!(c["status"].as_str(), Some("warn" | "fail")) {
            assert!(!c["fix"].as_str().unwrap().is_empty(), "{c}");
        }
    }
    // The table names every check too.
    let out = rtlab().arg("audit").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("preemption model") && text.contains("RLIMIT_MEMLOCK"),
        "{text}"
    );
    assert!(text.contains(" ok, ") && text.contains(" n.a."));
}

#[test]
fn an_empty_root_is_not_applicable_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let doc = audit_json(&["--root", dir.path().to_str().unwrap()]);
    let rows = checks(&doc);
    assert_eq!(rows.len(), IDS.len());
    for id in [
        "preempt",
        "hz",
        "thp",
        "ksm",
        "swap",
        "governor",
        "smt",
        "rlimit_rtprio",
        "irq_affinity",
        "debug_options",
    ] {
        let (st, cur) = status(&rows, id);
        assert_eq!(st, "n.a.", "{id}: {cur}");
        assert!(!cur.is_empty(), "{id} gives no reason");
    }
    assert_eq!(status(&rows, "cpu_dma_latency").0, "warn");
    assert_eq!(status(&rows, "vm").0, "ok");
    // --strict: nothing failed here.
    rtlab()
        .args(["audit", "--strict", "--root"])
        .arg(dir.path())
        .assert()
        .code(0);
}

/// A tuned 4-CPU PREEMPT_RT board, then the same board with problems.
#[test]
fn a_fake_rt_board_is_judged_from_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/proc/sys/kernel/osrelease", "6.12.1-rt5\n");
    write(
        r,
        "/proc/sys/kernel/version",
        "#1 SMP PREEMPT_RT Mon Jan 1 2025\n",
    );
    write(r, "/sys/kernel/realtime", "1\n");
    write(
        r,
        "/boot/config-6.12.1-rt5",
        "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=1000\nCONFIG_NO_HZ_FULL=y\nCONFIG_HIGH_RES_TIMERS=y\n# CONFIG_RT_GROUP_SCHED is not set\n",
    );
    write(r, "/sys/devices/system/cpu/online", "0-3\n");
    write(r, "/sys/devices/system/cpu/isolated", "2-3\n");
    write(r, "/sys/devices/system/cpu/nohz_full", "2-3\n");
    write(
        r,
        "/proc/cmdline",
        "quiet isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n",
    );
    for c in 0..4 {
        write(
            r,
            &format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"),
            "performance\n",
        );
    }
    write(r, "/proc/sys/kernel/sched_rt_runtime_us", "950000\n");
    write(r, "/proc/sys/kernel/sched_rt_period_us", "1000000\n");
    write(r, "/proc/sys/kernel/timer_migration", "0\n");
    write(r, "/proc/sys/kernel/watchdog", "1\n");
    write(r, "/proc/sys/kernel/watchdog_cpumask", "0-1\n");
    write(
        r,
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "always madvise [never]\n",
    );
    write(r, "/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
    write(r, "/proc/irq/16/smp_affinity_list", "0-1\n");
    write(r, "/proc/irq/17/smp_affinity_list", "0\n");
    write(r, "/sys/devices/virtual/workqueue/cpumask", "3\n");
    write(r, "/sys/devices/system/cpu/smt/control", "off\n");
    write(
        r,
        "/proc/self/status",
        "Name:\trtlab\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n",
    );
    write(
        r,
        "/proc/self/limits",
        "Limit                     Soft Limit           Hard Limit           Units\n\
         Max locked memory         unlimited            unlimited            bytes\n\
         Max realtime priority     99                   99\n",
    );
    write(
        r,
        "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        "arch_sys_counter\n",
    );
    write(r, "/dev/cpu_dma_latency", "");
    let root = r.to_str().unwrap();
    let rows = checks(&audit_json(&["--root", root]));
    for id in [
        "preempt",
        "hrtimers",
        "hz",
        "nohz_full",
        "cmdline_isolation",
        "isolated_cpus",
        "rt_throttling",
        "timer_migration",
        "watchdogs",
        "thp",
        "swap",
        "governor",
        "irq_affinity",
        "workqueue_mask",
        "smt",
        "rlimit_rtprio",
        "rlimit_memlock",
        "rt_group_sched",
        "clocksource",
        "cpu_dma_latency",
    ] {
        assert_eq!(status(&rows, id).0, "ok", "{id}: {}", status(&rows, id).1);
    }

    // Now break it: a stock kernel with lock debugging, IRQs on isolated CPUs,
    // inconsistent isolation, THP always, swap, no RT priority for the user.
    write(r, "/sys/kernel/realtime", "0\n");
    write(
        r,
        "/proc/sys/kernel/version",
        "#1 SMP PREEMPT_DYNAMIC Mon Jan 1 2025\n",
    );
    write(
        r,
        "/boot/config-6.12.1-rt5",
        "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ=100\nCONFIG_LOCKDEP=y\nCONFIG_KASAN=y\nCONFIG_RT_GROUP_SCHED=y\n",
    );
    write(
        r,
        "/proc/cmdline",
        "isolcpus=2-3 nohz_full=3 rcu_nocbs=2 irqaffinity=0-2\n",
    );
    write(r, "/proc/irq/17/smp_affinity_list", "0-3\n");
    write(
        r,
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "[always] madvise never\n",
    );
    write(
        r,
        "/proc/swaps",
        "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 1048576 0 -2\n",
    );
    write(r, "/proc/sys/vm/swappiness", "60\n");
    write(r, "/sys/devices/virtual/workqueue/cpumask", "f\n");
    write(
        r,
        "/proc/self/limits",
        "Max locked memory         65536                65536                bytes\n\
         Max realtime priority     0                    0\n",
    );
    let doc = audit_json(&["--root", root]);
    let rows = checks(&doc);
    let (st, cur) = status(&rows, "preempt");
    assert_eq!(st, "fail", "{cur}");
    let (st, cur) = status(&rows, "debug_options");
    assert_eq!(st, "fail");
    assert!(cur.contains("LOCKDEP") && cur.contains("KASAN"), "{cur}");
    let (st, cur) = status(&rows, "cmdline_isolation");
    assert_eq!(st, "warn");
    assert!(
        cur.contains("isolcpus (2-3) and nohz_full (3) differ"),
        "{cur}"
    );
    assert!(
        cur.contains("rcu_nocbs (2) does not cover nohz_full (3)"),
        "{cur}"
    );
    assert!(
        cur.contains("irqaffinity sends IRQs to isolcpus CPUs 2"),
        "{cur}"
    );
    let (st, cur) = status(&rows, "irq_affinity");
    assert_eq!(st, "warn");
    assert!(
        cur.contains("1 of 2 IRQs") && cur.contains("IRQ 17"),
        "{cur}"
    );
    for id in [
        "hz",
        "thp",
        "swap",
        "swappiness",
        "rlimit_memlock",
        "rt_group_sched",
        "workqueue_mask",
    ] {
        assert_eq!(status(&rows, id).0, "warn", "{id}: {}", status(&rows, id).1);
    }
    assert_eq!(status(&rows, "rlimit_rtprio").0, "fail");
    let failed: Vec<&str> = doc["summary"]["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["preempt", "hrtimers", "rlimit_rtprio", "debug_options"]
    );
    let fix = doc["checks"][0]["fix"].as_str().unwrap();
    assert!(
        fix.contains("preempt=full") && fix.contains("mainline since 6.12"),
        "{fix}"
    );

    // --strict turns the failures into exit 1.
    rtlab()
        .args(["audit", "--strict", "--root", root])
        .assert()
        .code(1);
}

#[test]
fn a_missing_root_is_a_usage_error() {
    rtlab()
        .args(["audit", "--root", "/nonexistent/rtlab-root"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--root"));
}

#[test]
fn latency_runs_carry_the_audit_summary() {
    let out = expect(
        rtlab().args([
            "latency",
            "-l",
            "50",
            "-i",
            "1ms",
            "--no-save",
            "--json",
            "--policy",
            "other",
            "-p",
            "0",
        ]),
        &[0],
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &run["audit"];
    let total: u64 = ["ok", "warn", "fail", "na"]
        .iter()
        .map(|k| a[k].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, IDS.len());
}

/// A process whose program is named irqbalance (a copy of `sleep`), killed
/// when dropped.
struct FakeIrqbalance(std::process::Child);

impl Drop for FakeIrqbalance {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user, who must not read root's program links"]
fn irqbalance_is_seen_by_root_through_its_program_and_by_others_through_its_name() {
    let running = |rows: &[(String, String, String)]| {
        let (_, cur) = status(rows, "irqbalance");
        cur.starts_with("running")
    };
    let as_nobody = || {
        let out = crate::latency_cli::as_nobody(&["audit", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        checks(&serde_json::from_slice(&out.stdout).unwrap())
    };
    let before = running(&checks(&audit_json(&[])));
    assert_eq!(running(&as_nobody()), before, "root and nobody disagree");
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("irqbalance");
    std::fs::copy("/bin/sleep", &program).unwrap();
    let _fake = FakeIrqbalance(
        std::process::Command::new(&program)
            .arg("30")
            .spawn()
            .unwrap(),
    );
    // Root reads the program links (a kernel thread has none); nobody may not
    // read root's, and reads every process's name instead.
    assert!(running(&checks(&audit_json(&[]))), "root missed it");
    assert!(running(&as_nobody()), "nobody missed it");
}

#[test]
fn idle_states_irqbalance_and_pm_qos() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/sys/devices/system/cpu/online", "0-3\n");
    write(r, "/sys/devices/system/cpu/isolated", "3\n");
    for (n, name, lat) in [(0, "POLL", 0), (1, "C1", 2), (2, "C6", 133)] {
        let base = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{n}");
        write(r, &format!("{base}/name"), &format!("{name}\n"));
        write(r, &format!("{base}/latency"), &format!("{lat}\n"));
        write(r, &format!("{base}/disable"), "0\n");
    }
    // A kernel thread (no program) and a shell: irqbalance is not running.
    write(r, "/proc/2/comm", "kthreadd\n");
    symlink(r, "/proc/77/exe", "/usr/bin/bash");
    let root = r.to_str().unwrap();
    assert_eq!(
        status(&checks(&audit_json(&["--root", root])), "irqbalance"),
        ("ok", "not running")
    );
    // A copy of a tree may hold a process's name without its program's link.
    write(r, "/proc/99/comm", "irqbalance\n");
    assert_eq!(
        status(&checks(&audit_json(&["--root", root])), "irqbalance"),
        ("warn", "running, no CPU banned")
    );
    std::fs::remove_dir_all(r.join("proc/99")).unwrap();
    // irqbalance runs, known by its program, whose file an upgrade replaced.
    symlink(r, "/proc/4242/exe", "/usr/sbin/irqbalance (deleted)");
    write(r, "/dev/cpu_dma_latency", "");
    std::fs::write(r.join("dev/cpu_dma_latency"), 0i32.to_le_bytes()).unwrap();
    let rows = checks(&audit_json(&["--root", root]));
    let (st, cur) = status(&rows, "c_states");
    assert_eq!(st, "warn");
    assert!(cur.contains("C6") && cur.contains("133 µs"), "{cur}");
    let (st, cur) = status(&rows, "irqbalance");
    assert_eq!(st, "warn", "{cur}");
    assert_eq!(
        status(&rows, "cpu_dma_latency"),
        ("ok", "present, held at 0 µs")
    );

    // The deep state disabled, irqbalance banned from the isolated CPU.
    write(
        r,
        "/sys/devices/system/cpu/cpu0/cpuidle/state2/disable",
        "1\n",
    );
    write(
        r,
        "/etc/default/irqbalance",
        "IRQBALANCE_BANNED_CPULIST=3\n",
    );
    let rows = checks(&audit_json(&["--root", root]));
    let (st, cur) = status(&rows, "c_states");
    assert_eq!(st, "ok");
    assert!(cur.contains("C1"), "{cur}");
    assert_eq!(
        status(&rows, "irqbalance"),
        ("ok", "running, banned CPUs 3")
    );
}
