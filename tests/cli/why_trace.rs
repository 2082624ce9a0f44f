//! `rtlab latency --trace`: causes injected on the probe's CPU are named
//! (a higher-priority SCHED_FIFO thread, a UDP flood, idle states), every
//! spike's parts add up to its latency, the tracefs instance goes away, and
//! without root the run is measured without the analysis.

use crate::common::{expect, rtlab, shown, wait_until_measuring};
use serde_json::Value;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The probe's CPU: the last online one, so that CPU 0 stays with the system.
pub(crate) fn probe_cpu() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last = text.trim().rsplit([',', '-']).next().unwrap();
    last.parse().unwrap()
}

fn pin_and_schedule(cpu: usize, fifo: Option<i32>) -> i32 {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set, and
    // `cpu` is a CPU number below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(rc, 0, "sched_setaffinity");
        if let Some(prio) = fifo {
            let p = libc::sched_param {
                sched_priority: prio,
            };
            let rc = libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
            assert_eq!(rc, 0, "sched_setscheduler");
        }
        libc::gettid()
    }
}

/// A thread named `name` on `cpu` (SCHED_FIFO `fifo` when given) doing
/// `work` until `stop`, for 10 s at most (well past a run of 1 s started
/// slowly on a busy machine); returns its tid.
pub(crate) fn spawn(
    name: &str,
    cpu: usize,
    fifo: Option<i32>,
    stop: Arc<AtomicBool>,
    work: impl Fn() + Send + 'static,
) -> (i32, std::thread::JoinHandle<()>) {
    spawn_for(name, cpu, fifo, stop, Duration::from_secs(10), work)
}

/// [`spawn`] bounded by `bound`.
fn spawn_for(
    name: &str,
    cpu: usize,
    fifo: Option<i32>,
    stop: Arc<AtomicBool>,
    bound: Duration,
    work: impl Fn() + Send + 'static,
) -> (i32, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            tx.send(pin_and_schedule(cpu, fifo)).unwrap();
            // Until the run beside it has ended (`stop`), and bounded in time
            // whatever the test does.
            let end = Instant::now() + bound;
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                work();
            }
        })
        .unwrap();
    (rx.recv().unwrap(), h)
}

/// `rtlab latency ARGS --trace --json --no-save` on the probe's CPU.
fn traced(args: &[&str]) -> (Value, u32) {
    traced_on(probe_cpu(), args)
}

/// [`traced`] on CPU `cpu`.
fn traced_on(cpu: usize, args: &[&str]) -> (Value, u32) {
    let cpu = cpu.to_string();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["latency", "-a", &cpu, "--trace", "--json", "--no-save"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_no_instance(pid);
    (doc, pid)
}

pub(crate) fn assert_no_instance(pid: u32) {
    let dir = format!("/sys/kernel/tracing/instances/rtlab-{pid}");
    assert!(!std::path::Path::new(&dir).exists(), "{dir} left behind");
}

pub(crate) fn list(v: &Value) -> &[Value] {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .as_slice()
}

/// [`traced`] with ARGS (one string) while `load` runs, then stops the load
/// and checks the sums; returns the analysis.
fn traced_beside(args: &str, load: (Arc<AtomicBool>, std::thread::JoinHandle<()>)) -> Value {
    let args: Vec<&str> = args.split_whitespace().collect();
    let (mut doc, _) = traced(&args);
    load.0.store(true, Ordering::Relaxed);
    load.1.join().unwrap();
    let why = doc["why"].take();
    check_sums(&why);
    why
}

pub(crate) fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn sum(v: &Value, key: &str) -> u64 {
    list(v).iter().map(|x| n(&x[key])).sum()
}

/// Every spike's parts and its unexplained rest make its latency, exactly
/// (the parts never exceed it by more than the resolution).
pub(crate) fn check_sums(why: &Value) {
    let res = n(&why["resolution_ns"]);
    let spikes = list(&why["spikes"]);
    assert!(spikes.len() as u64 <= n(&why["spikes_total"]));
    for s in spikes {
        let idle = s["idle"].get("exit_ns").map_or(0, n);
        let nmi = s.get("nmi_ns").map_or(0, n);
        let parts = sum(&s["irqs"], "ns")
            + sum(&s["softirqs"], "ns")
            + sum(&s["threads"], "ns")
            + idle
            + nmi;
        let latency = n(&s["latency_ns"]);
        assert!(parts <= latency + res, "{s}");
        assert_eq!(parts + n(&s["unexplained_ns"]), latency, "{s}");
    }
    let shares: f64 = list(&why["causes"])
        .iter()
        .map(|c| c["share"].as_f64().unwrap())
        .sum();
    assert!(shares <= 1.0 + 1e-9, "shares add to {shares}");
}

#[test]
#[ignore = "needs root: SCHED_FIFO threads and tracefs"]
fn a_higher_priority_fifo_thread_is_named_with_its_pid_and_burst() {
    let stop = Arc::new(AtomicBool::new(false));
    let burst = Duration::from_millis(1);
    let (tid, hog) = spawn(
        "rtlab-hog",
        probe_cpu(),
        Some(95),
        stop.clone(),
        move || {
            let t = Instant::now();
            while t.elapsed() < burst {}
            std::thread::sleep(Duration::from_millis(4));
        },
    );
    let why = &traced_beside("-p 80 -i 100us -D 1s --trace-threshold 500us", (stop, hog));
    let hits: Vec<&Value> = list(&why["spikes"])
        .iter()
        .filter_map(|s| list(&s["threads"]).iter().find(|t| t["pid"] == tid))
        .collect();
    assert!(hits.len() >= 3, "the hog in {} spikes: {why}", hits.len());
    let t = hits[0];
    assert_eq!(
        (&t["comm"], &t["policy"], &t["priority"], &t["outranked"]),
        (
            &Value::from("rtlab-hog"),
            &Value::from("fifo"),
            &Value::from(95),
            &Value::from(true)
        )
    );
    // A spike the hog caused spans its whole burst but for the part before
    // the probe's period began (less than one 100 µs period); the median
    // leaves out windows that other threads stretched over two bursts.
    let mut each: Vec<u64> = hits.iter().map(|t| n(&t["ns"])).collect();
    each.sort_unstable();
    let ns = each[each.len() / 2] as f64;
    let b = burst.as_nanos() as f64;
    assert!(
        (ns - b).abs() <= 0.2 * b,
        "hog ran {ns} ns of a {b} ns burst"
    );
    let cause = list(&why["causes"])
        .iter()
        .find(|c| c["name"] == format!("rtlab-hog (pid {tid}, fifo 95)"))
        .unwrap_or_else(|| panic!("hog not among the causes: {}", why["causes"]));
    assert_eq!(cause["kind"], "thread");
}

/// Every online CPU.
fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap());
    }
    cpus
}

/// Issue 24: a SCHED_FIFO 95 hog, busy 1 ms of every 10 ms and already
/// running when the probe's timers expire, is named the first cause on every
/// CPU (some kernels record no event of the switch from a CPU's idle task to
/// the hog: the events recorded while it runs must name it).
#[test]
#[ignore = "needs root: SCHED_FIFO threads and tracefs"]
fn a_fifo_hog_already_running_is_the_first_cause_on_every_cpu() {
    for cpu in online_cpus() {
        let stop = Arc::new(AtomicBool::new(false));
        let (tid, hog) = spawn_for(
            "rtlab-hog",
            cpu,
            Some(95),
            stop.clone(),
            Duration::from_secs(10),
            || {
                let t = Instant::now();
                while t.elapsed() < Duration::from_millis(1) {}
                std::thread::sleep(Duration::from_millis(9));
            },
        );
        let (mut doc, _) = traced_on(cpu, &["-p", "90", "-i", "200us", "-D", "1s"]);
        stop.store(true, Ordering::Relaxed);
        hog.join().unwrap();
        let why = doc["why"].take();
        check_sums(&why);
        // Another test's hog may share the CPU: the first cause is a FIFO 95
        // hog on it, and this one is among the causes.
        let causes = list(&why["causes"]);
        let hog_on_cpu = |c: &Value| {
            let name = c["name"].as_str().unwrap_or("");
            c["kind"] == "thread"
                && name.starts_with("rtlab-hog (pid ")
                && name.ends_with(", fifo 95)")
                && c["cpu"] == cpu
        };
        assert!(hog_on_cpu(&causes[0]), "on CPU {cpu}: {}", why["causes"]);
        let ours = format!("rtlab-hog (pid {tid}, fifo 95)");
        assert!(
            causes
                .iter()
                .any(|c| hog_on_cpu(c) && c["name"] == ours.as_str()),
            "on CPU {cpu}: {}",
            why["causes"]
        );
    }
}

#[test]
#[ignore = "needs root: tracefs"]
fn a_udp_flood_on_the_probe_cpu_is_named_as_net_rx() {
    let stop = Arc::new(AtomicBool::new(false));
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = sink.local_addr().unwrap();
    let (_, flood) = spawn("rtlab-flood", probe_cpu(), None, stop.clone(), move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..1000 {
            let _ = s.send_to(&[0u8; 64], to);
        }
    });
    // Every wake-up is a spike (1 ns), so that one delayed by the flood's softirq
    // is named whether or not the machine made it longer than a fixed bound.
    let why = &traced_beside("-p 80 -i 200us -D 1s --trace-threshold 1ns", (stop, flood));
    drop(sink);
    let cpu = probe_cpu();
    let net_rx = list(&why["causes"])
        .iter()
        .find(|c| c["kind"] == "softirq" && c["name"] == "NET_RX")
        .unwrap_or_else(|| panic!("NET_RX not named: {}", why["causes"]));
    assert_eq!(n(&net_rx["cpu"]), cpu as u64);
    assert!(n(&net_rx["spikes"]) > 0 && n(&net_rx["ns"]) > 0);
}

/// The names of CPU `cpu`'s idle states, and how often it entered them so far.
fn idle_states(cpu: usize) -> (Vec<String>, u64) {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut names = Vec::new();
    let mut entries = 0;
    for i in 0.. {
        let Ok(name) = std::fs::read_to_string(format!("{dir}/state{i}/name")) else {
            break;
        };
        names.push(name.trim().to_string());
        let usage = std::fs::read_to_string(format!("{dir}/state{i}/usage")).unwrap();
        entries += usage.trim().parse::<u64>().unwrap();
    }
    (names, entries)
}

#[test]
#[ignore = "needs root: tracefs and cpu_dma_latency"]
fn an_idle_cpu_names_the_idle_state_it_left() {
    // Every wake-up is a spike (100 of them: all kept), and the CPU may sleep
    // 10 ms between two: on the probe's CPU first, then on the others, until
    // one is idle when its timer expires.
    let args = ["-i", "10ms", "-D", "1s", "--dma-latency", "off"];
    let args = [&args[..], &["--trace-threshold", "1ns"]].concat();
    let mut tried = Vec::new();
    for cpu in (0..=probe_cpu()).rev() {
        let (states, before) = idle_states(cpu);
        if states.is_empty() {
            tried.push(format!(
                "CPU {cpu} lists no idle states (no cpuidle driver)"
            ));
            continue;
        }
        let (doc, _) = traced_on(cpu, &args);
        let idled = idle_states(cpu).1 - before;
        let why = &doc["why"];
        check_sums(why);
        let idle: Vec<&Value> = list(&why["spikes"])
            .iter()
            .filter_map(|s| s.get("idle"))
            .collect();
        if idle.is_empty() {
            tried.push(format!(
                "CPU {cpu} entered idle states {idled} times, none traced at a wake-up"
            ));
            continue;
        }
        for i in idle {
            let state = i["state"].as_str().unwrap();
            assert!(
                states.iter().any(|s| s == state),
                "{state} not in {states:?}"
            );
            assert!(n(&i["exit_ns"]) > 0, "{i}");
        }
        let cause = list(&why["causes"]).iter().find(|c| c["kind"] == "idle");
        assert_eq!(cause.unwrap()["cpu"], cpu, "{}", why["causes"]);
        return;
    }
    eprintln!(
        "skipped: no CPU was idle when its timer expired: {}",
        tried.join("; ")
    );
}

#[test]
#[ignore = "needs root: tracefs and SIGTERM of a traced run"]
fn sigterm_ends_a_traced_run_with_its_analysis_and_instances_are_removed() {
    // The instance of an rtlab killed outright, which the next run removes.
    let dead = (4_000_000..).find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists());
    let stale = format!("/sys/kernel/tracing/instances/rtlab-{}", dead.unwrap());
    std::fs::create_dir(&stale).unwrap();
    let cpu = probe_cpu().to_string();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["latency", "-a", &cpu, "-i", "1ms", "-D", "30s", "--trace"])
        .args(["--trace-threshold", "1ns", "--json", "--no-save"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until_measuring(pid);
    let dir = format!("/sys/kernel/tracing/instances/rtlab-{pid}");
    assert!(std::path::Path::new(&dir).exists(), "{dir} while measuring");
    assert!(!std::path::Path::new(&stale).exists(), "{stale} left");
    // SAFETY: kill(2) with a pid we spawned and a valid signal number.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(n(&doc["why"]["spikes_total"]) > 0, "{}", doc["why"]);
    assert_no_instance(pid);
}

#[test]
#[ignore = "needs root: setpriv to an unprivileged user"]
fn without_root_the_run_is_measured_without_the_analysis() {
    let out = crate::latency_cli::as_nobody(&[
        "latency",
        "--policy",
        "other",
        "-i",
        "1ms",
        "-l",
        "100",
        "--trace",
        "--json",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("why").is_none(), "{}", doc["why"]);
    let threads = list(&doc["series"]).len() as u64;
    assert_eq!(n(&doc["total"]["counters"]["samples"]), 100 * threads);
    let trace = list(&doc["warnings"])
        .iter()
        .find(|w| w["code"] == "trace")
        .unwrap_or_else(|| panic!("no trace warning: {}", doc["warnings"]));
    let msg = trace["message"].as_str().unwrap();
    assert!(msg.contains("--trace") && msg.contains("root"), "{msg}");
}

#[test]
fn trace_options_are_checked_before_measuring() {
    for (args, needles) in [
        ("--trace-threshold 50us", &["--trace"][..]),
        ("--trace --clock realtime", &["--trace: ", "monotonic"]),
        ("--trace --trace-threshold 0", &["--trace-threshold"]),
    ] {
        let out = expect(
            rtlab()
                .args(["latency", "-l", "1", "--no-save"])
                .args(args.split_whitespace()),
            &[2],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(needles.iter().all(|x| err.contains(x)), "{args}: {err}");
    }
}
