//! The audit checks, one function each, in the order they are shown.

use super::{Check, Input, Status};
use crate::tune::kconfig::check::LATENCY_DEBUG;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::sysinfo::PreemptModel;

/// Every check, in display order.
pub const ALL: &[fn(&Input) -> Check] = &[
    preempt,
    high_res_timers,
    hz,
    nohz_full,
    cmdline_isolation,
    isolated_cpus,
    rt_throttling,
    timer_migration,
    watchdogs,
    thp,
    ksm,
    numa_balancing,
    swap,
    swappiness,
    dirty_ratios,
    governors,
    c_states,
    cpu_dma_latency,
    clocksource,
    irq_affinity,
    irqbalance,
    workqueue_mask,
    smt,
    rlimit_rtprio,
    rlimit_memlock,
    rt_group_sched,
    debug_options,
    virtualization,
    container,
];

/// A row under construction: id, title, why and the default fix are fixed per
/// check; the status, current value and recommendation are decided by it.
struct Row {
    id: &'static str,
    title: &'static str,
    why: &'static str,
}

impl Row {
    fn done(
        &self,
        status: Status,
        current: impl Into<String>,
        recommended: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            id: self.id,
            title: self.title,
            status,
            current: current.into(),
            recommended: recommended.into(),
            why: self.why.to_string(),
            fix: if status == Status::Ok || status == Status::Na {
                String::new()
            } else {
                fix.into()
            },
        }
    }

    /// Not applicable or unreadable, with the reason as the current value.
    fn na(&self, reason: impl Into<String>, recommended: impl Into<String>) -> Check {
        self.done(Status::Na, reason, recommended, "")
    }
}

/// `(major, minor)` of a kernel release such as `6.12.1-rt5`.
fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn online(i: &Input) -> CpuList {
    CpuList::parse(&i.fp.cpus_online).unwrap_or_default()
}

fn isolated(i: &Input) -> CpuList {
    CpuList::parse(&i.fp.cpus_isolated).unwrap_or_default()
}

/// Online CPUs that are not isolated (where housekeeping should run).
fn housekeeping(i: &Input) -> CpuList {
    let iso = isolated(i);
    CpuList::from_cpus(
        online(i)
            .cpus()
            .iter()
            .copied()
            .filter(|&c| !iso.contains(c))
            .collect(),
    )
}

/// A suggestion of CPUs to isolate: the upper half, never CPU 0.
pub(crate) fn suggested_isolation(i: &Input) -> String {
    let cpus = online(i);
    let n = cpus.cpus().len();
    if n < 2 {
        return "<CPUs>".into();
    }
    CpuList::from_cpus(cpus.cpus()[n / 2..].to_vec()).to_string()
}

/// The value of `name=` on the kernel command line.
pub(crate) fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
}

/// A CPU mask as the kernel prints it (`ff`, `00000000,0000000f`).
pub(crate) fn parse_mask(text: &str) -> Option<CpuList> {
    let hex: String = text.trim().chars().filter(|&c| c != ',').collect();
    if hex.is_empty() {
        return None;
    }
    let mut cpus = Vec::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16)?;
        for bit in 0..4 {
            if nibble & (1 << bit) != 0 {
                cpus.push(i * 4 + bit);
            }
        }
    }
    Some(CpuList::from_cpus(cpus))
}

/// A CPU list as a hex mask, for files that take one.
pub(crate) fn format_mask(cpus: &CpuList) -> String {
    let Some(&max) = cpus.cpus().last() else {
        return "0".into();
    };
    let mut nibbles = vec![0u32; max / 4 + 1];
    for &c in cpus.cpus() {
        nibbles[c / 4] |= 1 << (c % 4);
    }
    nibbles
        .iter()
        .rev()
        .map(|n| char::from_digit(*n, 16).unwrap_or('0'))
        .collect()
}

fn intersection(a: &CpuList, b: &CpuList) -> CpuList {
    CpuList::from_cpus(
        a.cpus()
            .iter()
            .copied()
            .filter(|&c| b.contains(c))
            .collect(),
    )
}

fn preempt(i: &Input) -> Check {
    let row = Row {
        id: "preempt",
        title: "preemption model",
        why: "decides how long the kernel can keep an RT task from running: PREEMPT_RT bounds it to tens of µs, non-preemptible kernels to milliseconds",
    };
    let fp = &i.fp;
    let dynamic = fp.kernel_version.contains("PREEMPT_DYNAMIC")
        || i.config
            .as_ref()
            .is_some_and(|(_, c)| c.enabled("PREEMPT_DYNAMIC"));
    let current = match &fp.preempt_dynamic_mode {
        Some(mode) => format!("{} (PREEMPT_DYNAMIC, mode {mode})", fp.preempt.name()),
        None if dynamic => format!("{} (PREEMPT_DYNAMIC)", fp.preempt.name()),
        None => fp.preempt.name().to_string(),
    };
    let mainline = kernel_version(&fp.kernel_release).is_some_and(|v| v >= (6, 12));
    let mut fix = if mainline {
        format!(
            "PREEMPT_RT is in mainline since 6.12: build {} with CONFIG_PREEMPT_RT=y (General setup → Preemption Model → Fully Preemptible Kernel (Real-Time)), or install the distribution's -rt kernel",
            fp.kernel_release
        )
    } else {
        format!(
            "apply the PREEMPT_RT patch matching {} (kernel.org/pub/linux/kernel/projects/rt), choose Fully Preemptible Kernel (Real-Time), or move to 6.12+ where it is in mainline",
            fp.kernel_release
        )
    };
    if dynamic && fp.preempt != PreemptModel::Full {
        fix = format!("now: boot with preempt=full; then {fix}");
    }
    let status =
        match fp.preempt {
            PreemptModel::Rt => Status::Ok,
            PreemptModel::Full | PreemptModel::Lazy => Status::Warn,
            PreemptModel::Voluntary | PreemptModel::None => Status::Fail,
            PreemptModel::Unknown => return row.na(
                "unknown (no /sys/kernel/realtime, no model in uname -v, no kernel configuration)",
                "PREEMPT_RT",
            ),
        };
    row.done(status, current, "PREEMPT_RT", fix)
}

fn high_res_timers(i: &Input) -> Check {
    let row = Row {
        id: "hrtimers",
        title: "high-resolution timers",
        why: "without them every sleep is rounded up to the next tick (4 ms at HZ=250)",
    };
    let fix = "set CONFIG_HIGH_RES_TIMERS=y; do not boot with highres=off";
    if let Some(list) = i.root.read("/proc/timer_list") {
        let active = list
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".hres_active"))
            .map(|v| v.trim_start_matches([' ', ':']).trim() == "1")
            .collect::<Vec<_>>();
        if !active.is_empty() {
            return if active.iter().all(|&a| a) {
                row.done(Status::Ok, "active on every CPU", "active", fix)
            } else {
                row.done(Status::Fail, "inactive on some CPUs", "active", fix)
            };
        }
    }
    match &i.config {
        Some((_, c)) if c.enabled("HIGH_RES_TIMERS") => {
            row.done(Status::Ok, "CONFIG_HIGH_RES_TIMERS=y", "y", fix)
        }
        Some(_) => row.done(Status::Fail, "CONFIG_HIGH_RES_TIMERS not set", "y", fix),
        None => row.na("no /proc/timer_list and no kernel configuration", "active"),
    }
}

fn no_config(row: &Row, recommended: &str) -> Check {
    row.na(
        "kernel configuration not found (/proc/config.gz, /boot/config-<release>)",
        recommended,
    )
}

fn hz(i: &Input) -> Check {
    let row = Row {
        id: "hz",
        title: "timer frequency (CONFIG_HZ)",
        why: "tick-driven work (scheduler balancing, timer wheel, jiffies timeouts) runs at this granularity; 1000 is not always better (one field report measured 300 best)",
    };
    let rec = "250..1000 (measure)";
    match i.fp.hz {
        Some(hz) if hz < 250 => row.done(
            Status::Warn,
            hz.to_string(),
            rec,
            "choose CONFIG_HZ_250, CONFIG_HZ_300 or CONFIG_HZ_1000 (Processor type and features → Timer frequency) and compare with rtlab latency",
        ),
        Some(hz) => row.done(Status::Ok, hz.to_string(), rec, ""),
        None => no_config(&row, rec),
    }
}

fn nohz_full(i: &Input) -> Check {
    let row = Row {
        id: "nohz_full",
        title: "tickless RT CPUs (NO_HZ_FULL)",
        why: "with nohz_full a CPU running one RT task gets no periodic tick interrupt",
    };
    if i.fp.cpu_count == 1 {
        return row.na("one CPU: nothing can run tickless", "nohz_full=<RT CPUs>");
    }
    let sugg = suggested_isolation(i);
    let built = i.config.as_ref().map(|(_, c)| c.enabled("NO_HZ_FULL"));
    let used = !i.fp.cpus_nohz_full.is_empty();
    let rec = format!("nohz_full={sugg}");
    match (built, used) {
        (_, true) => row.done(
            Status::Ok,
            format!("nohz_full={}", i.fp.cpus_nohz_full),
            rec,
            "",
        ),
        (Some(true), false) => row.done(
            Status::Warn,
            "built in (CONFIG_NO_HZ_FULL=y), not in use",
            rec,
            format!("boot with nohz_full={sugg} (with isolcpus and rcu_nocbs on the same CPUs)"),
        ),
        (Some(false), false) => row.done(
            Status::Warn,
            "CONFIG_NO_HZ_FULL not set",
            rec,
            format!("set CONFIG_NO_HZ_FULL=y, then boot with nohz_full={sugg}"),
        ),
        (None, false) => row.done(
            Status::Warn,
            "no nohz_full CPUs (kernel configuration not found)",
            rec,
            format!("boot with nohz_full={sugg} on a kernel with CONFIG_NO_HZ_FULL=y"),
        ),
    }
}

/// The CPU list of an `isolcpus=` value, whose leading flags (`domain`,
/// `managed_irq`, `nohz`) are dropped.
fn isolcpus_list(value: &str) -> Result<CpuList, String> {
    let cpus: Vec<&str> = value
        .split(',')
        .filter(|p| !p.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .collect();
    CpuList::parse(&cpus.join(",")).map_err(|e| e.to_string())
}

fn cmdline_isolation(i: &Input) -> Check {
    let row = Row {
        id: "cmdline_isolation",
        title: "isolcpus/nohz_full/rcu_nocbs/irqaffinity agree",
        why: "the isolation parameters only work together: a CPU that is isolated but still takes IRQs, RCU callbacks or the tick is not quiet",
    };
    let cmd = &i.fp.cmdline;
    let names = ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"];
    let given: Vec<(&str, &str)> = names
        .iter()
        .filter_map(|n| cmdline_param(cmd, n).map(|v| (*n, v)))
        .collect();
    if given.is_empty() {
        return row.na(
            "none of isolcpus, nohz_full, rcu_nocbs, irqaffinity on the command line",
            "the same RT CPUs in isolcpus, nohz_full, rcu_nocbs; the others in irqaffinity",
        );
    }
    let current = given
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut lists = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    for (name, value) in &given {
        let parsed = if *name == "isolcpus" {
            isolcpus_list(value)
        } else {
            CpuList::parse(value).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(l) => {
                lists.insert(*name, l);
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    let online = online(i);
    for (name, l) in &lists {
        let beyond: Vec<usize> = l
            .cpus()
            .iter()
            .copied()
            .filter(|&c| !online.contains(c))
            .collect();
        if !online.is_empty() && !beyond.is_empty() {
            problems.push(format!(
                "{name} names CPUs that are not online: {}",
                CpuList::from_cpus(beyond)
            ));
        }
    }
    let get = |n: &str| lists.get(n).filter(|l| !l.is_empty());
    if let (Some(iso), Some(nohz)) = (get("isolcpus"), get("nohz_full")) {
        if iso != nohz {
            problems.push(format!("isolcpus ({iso}) and nohz_full ({nohz}) differ"));
        }
    }
    if let (Some(nohz), Some(rcu)) = (get("nohz_full"), get("rcu_nocbs")) {
        if nohz.cpus().iter().any(|&c| !rcu.contains(c)) {
            problems.push(format!(
                "rcu_nocbs ({rcu}) does not cover nohz_full ({nohz})"
            ));
        }
    }
    if let Some(irq) = get("irqaffinity") {
        for n in ["isolcpus", "nohz_full"] {
            if let Some(l) = get(n) {
                let both = intersection(irq, l);
                if !both.is_empty() {
                    problems.push(format!("irqaffinity sends IRQs to {n} CPUs {both}"));
                }
            }
        }
    }
    for n in ["isolcpus", "nohz_full"] {
        if let Some(l) = get(n) {
            if !online.is_empty() && online.cpus().iter().all(|&c| l.contains(c)) {
                problems.push(format!("{n} covers every CPU: no housekeeping CPU is left"));
            }
        }
    }
    let sugg = suggested_isolation(i);
    let rec = format!(
        "isolcpus=domain,managed_irq,{sugg} nohz_full={sugg} rcu_nocbs={sugg} irqaffinity=<the other CPUs>"
    );
    if problems.is_empty() {
        row.done(Status::Ok, current, rec, "")
    } else {
        row.done(
            Status::Warn,
            format!("{current}: {}", problems.join("; ")),
            rec.clone(),
            format!("boot with {rec}"),
        )
    }
}

fn isolated_cpus(i: &Input) -> Check {
    let row = Row {
        id: "isolated_cpus",
        title: "isolated CPUs",
        why: "an RT thread on a CPU shared with everything else waits behind kernel threads, IRQs and other tasks",
    };
    if i.fp.cpu_count < 2 {
        return row.na("fewer than two CPUs: nothing to isolate", "isolate RT CPUs");
    }
    let sugg = suggested_isolation(i);
    if i.fp.cpus_isolated.is_empty() {
        row.done(
            Status::Warn,
            "none",
            format!("e.g. {sugg}"),
            format!("boot with isolcpus=domain,managed_irq,{sugg} nohz_full={sugg} rcu_nocbs={sugg}, then pin RT threads there (rtlab latency --cpus {sugg}, rtlab prio set --affinity {sugg})"),
        )
    } else {
        row.done(
            Status::Ok,
            i.fp.cpus_isolated.clone(),
            "RT CPUs isolated",
            "",
        )
    }
}

fn rt_throttling(i: &Input) -> Check {
    let row = Row {
        id: "rt_throttling",
        title: "RT throttling (sched_rt_runtime_us)",
        why: "throttling keeps a runaway SCHED_FIFO task from freezing the machine; disabling it gains little and risks a hang",
    };
    let rec = "950000 of 1000000 (the default)";
    match (i.fp.sched_rt_runtime_us, i.fp.sched_rt_period_us) {
        (None, _) => row.na("/proc/sys/kernel/sched_rt_runtime_us not readable", rec),
        (Some(-1), _) => row.done(
            Status::Warn,
            "-1 (throttling off)",
            rec,
            "sysctl -w kernel.sched_rt_runtime_us=950000",
        ),
        (Some(rt), Some(period)) if period > 0 && rt * 2 < period => row.done(
            Status::Warn,
            format!("{rt} of {period} µs: RT tasks get under half of each period"),
            rec,
            "sysctl -w kernel.sched_rt_runtime_us=950000",
        ),
        (Some(rt), period) => row.done(
            Status::Ok,
            match period {
                Some(p) => format!("{rt} of {p} µs"),
                None => format!("{rt} µs"),
            },
            rec,
            "",
        ),
    }
}

/// A 0/1 sysctl that should be 0.
fn sysctl_off(i: &Input, row: Row, path: &str, sysctl: &str) -> Check {
    match i.root.read(path) {
        None => row.na(format!("{path} not present"), "0"),
        Some(v) if v == "0" => row.done(Status::Ok, v, "0", ""),
        Some(v) => row.done(
            Status::Warn,
            v,
            "0",
            format!("sysctl -w {sysctl}=0 (persist it in /etc/sysctl.d/90-rt.conf)"),
        ),
    }
}

fn timer_migration(i: &Input) -> Check {
    sysctl_off(
        i,
        Row {
            id: "timer_migration",
            title: "timer migration",
            why: "with migration on, timers armed on a busy CPU may be moved onto the RT CPU",
        },
        "/proc/sys/kernel/timer_migration",
        "kernel.timer_migration",
    )
}

fn numa_balancing(i: &Input) -> Check {
    sysctl_off(
        i,
        Row {
            id: "numa_balancing",
            title: "automatic NUMA balancing",
            why: "it unmaps pages to sample accesses, adding page faults to RT tasks",
        },
        "/proc/sys/kernel/numa_balancing",
        "kernel.numa_balancing",
    )
}

fn watchdogs(i: &Input) -> Check {
    let row = Row {
        id: "watchdogs",
        title: "lockup watchdogs",
        why: "the soft/hard lockup watchdogs run timers and NMIs on every CPU they watch, also RT CPUs",
    };
    let soft = i.root.read("/proc/sys/kernel/watchdog");
    let nmi = i.root.read("/proc/sys/kernel/nmi_watchdog");
    if soft.is_none() && nmi.is_none() {
        return row.na(
            "no /proc/sys/kernel/watchdog (not built in)",
            "off on RT CPUs",
        );
    }
    let current = format!(
        "watchdog={} nmi_watchdog={}",
        soft.as_deref().unwrap_or("-"),
        nmi.as_deref().unwrap_or("-")
    );
    let on = soft.as_deref() == Some("1") || nmi.as_deref() == Some("1");
    if !on {
        return row.done(Status::Ok, current, "off on RT CPUs", "");
    }
    let iso = isolated(i);
    let mask = i
        .root
        .read("/proc/sys/kernel/watchdog_cpumask")
        .and_then(|m| CpuList::parse(&m).ok());
    if let Some(mask) = &mask {
        if !iso.is_empty() && intersection(mask, &iso).is_empty() {
            return row.done(
                Status::Ok,
                format!("{current}, watchdog_cpumask={mask} (not on isolated CPUs)"),
                "off on RT CPUs",
                "",
            );
        }
    }
    let hk = housekeeping(i);
    row.done(
        Status::Warn,
        current,
        "off on RT CPUs",
        if iso.is_empty() {
            "sysctl -w kernel.watchdog=0 (or boot with nowatchdog nmi_watchdog=0)".to_string()
        } else {
            format!("sysctl -w kernel.watchdog_cpumask={hk} (or boot with nowatchdog)")
        },
    )
}

/// The bracketed choice of a sysfs selector file (`always [madvise] never`).
pub(crate) fn selected(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
}

fn thp(i: &Input) -> Check {
    let row = Row {
        id: "thp",
        title: "transparent huge pages",
        why: "with THP always, page faults may compact memory and khugepaged rewrites page tables behind RT tasks",
    };
    let path = "/sys/kernel/mm/transparent_hugepage/enabled";
    let Some(text) = i.root.read(path) else {
        return row.na(
            "not built in (no transparent_hugepage in sysfs)",
            "madvise or never",
        );
    };
    let mode = selected(&text).unwrap_or(text.as_str()).to_string();
    if mode == "always" {
        row.done(
            Status::Warn,
            mode,
            "madvise or never",
            format!("echo never > {path} (or boot with transparent_hugepage=never)"),
        )
    } else {
        row.done(Status::Ok, mode, "madvise or never", "")
    }
}

fn ksm(i: &Input) -> Check {
    let row = Row {
        id: "ksm",
        title: "kernel same-page merging (KSM)",
        why: "ksmd scans and merges pages in the background; a write to a merged page takes a copy-on-write fault",
    };
    match i.root.read("/sys/kernel/mm/ksm/run") {
        None => row.na("not built in (no /sys/kernel/mm/ksm)", "0"),
        Some(v) if v == "0" => row.done(Status::Ok, "0 (stopped)", "0", ""),
        Some(v) => row.done(
            Status::Warn,
            v,
            "0",
            "echo 2 > /sys/kernel/mm/ksm/run (unmerge and stop)",
        ),
    }
}

/// Active swap areas: (count, total KiB).
fn swaps(i: &Input) -> Option<(usize, u64)> {
    let text = i.root.read("/proc/swaps")?;
    let areas: Vec<u64> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect();
    Some((areas.len(), areas.iter().sum()))
}

fn swap(i: &Input) -> Check {
    let row = Row {
        id: "swap",
        title: "swap",
        why: "a page of an RT task swapped out costs a disk read when touched; mlockall prevents it only for processes that call it",
    };
    match swaps(i) {
        None => row.na("/proc/swaps not readable", "off, or mlockall in RT processes"),
        Some((0, _)) => row.done(Status::Ok, "off", "off", ""),
        Some((n, kib)) => row.done(
            Status::Warn,
            format!("{n} area(s), {} MiB", kib / 1024),
            "off, or mlockall in RT processes",
            "swapoff -a (and remove swap from /etc/fstab), or make sure RT processes mlockall (rtlab prio run --mlock)",
        ),
    }
}

fn swappiness(i: &Input) -> Check {
    let row = Row {
        id: "swappiness",
        title: "vm.swappiness",
        why: "a high swappiness swaps out idle pages of RT processes that do not mlockall",
    };
    let Some(v) = i.root.read_i64("/proc/sys/vm/swappiness") else {
        return row.na("/proc/sys/vm/swappiness not readable", "≤ 10");
    };
    match swaps(i) {
        Some((n, _)) if n > 0 && v > 10 => row.done(
            Status::Warn,
            format!("{v} (swap active)"),
            "≤ 10",
            "sysctl -w vm.swappiness=10",
        ),
        Some((0, _)) => row.done(Status::Ok, format!("{v} (no swap)"), "≤ 10", ""),
        _ => row.done(Status::Ok, v.to_string(), "≤ 10", ""),
    }
}

fn dirty_ratios(i: &Input) -> Check {
    let row = Row {
        id: "dirty_ratios",
        title: "dirty page ratios",
        why: "large dirty limits let writeback come in big bursts that stall allocating tasks",
    };
    let r = |f: &str| i.root.read_i64(&format!("/proc/sys/vm/{f}"));
    let (Some(ratio), Some(bg)) = (r("dirty_ratio"), r("dirty_background_ratio")) else {
        return row.na("/proc/sys/vm/dirty_ratio not readable", "≤ 20 / ≤ 10");
    };
    let bytes = r("dirty_bytes").unwrap_or(0);
    if bytes > 0 {
        return row.done(
            Status::Ok,
            format!("dirty_bytes={bytes}"),
            "≤ 20 / ≤ 10",
            "",
        );
    }
    let current = format!("dirty_ratio={ratio} dirty_background_ratio={bg}");
    if ratio > 20 || bg > 10 {
        row.done(
            Status::Warn,
            current,
            "≤ 20 / ≤ 10",
            "sysctl -w vm.dirty_ratio=10 vm.dirty_background_ratio=5",
        )
    } else {
        row.done(Status::Ok, current, "≤ 20 / ≤ 10", "")
    }
}

fn governors(i: &Input) -> Check {
    let row = Row {
        id: "governor",
        title: "CPU frequency governor",
        why: "frequency changes after idle add wake-up latency; 'performance' keeps CPUs at full speed",
    };
    let g = &i.fp.governors;
    if g.is_empty() {
        return row.na("no cpufreq (fixed frequency, or a VM)", "performance");
    }
    if g.iter().all(|g| g == "performance") {
        row.done(Status::Ok, g.join(","), "performance", "")
    } else {
        row.done(
            Status::Warn,
            g.join(","),
            "performance",
            "for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do echo performance > $f; done (or cpupower frequency-set -g performance)",
        )
    }
}

fn c_states(i: &Input) -> Check {
    let row = Row {
        id: "c_states",
        title: "CPU idle states (C-states)",
        why: "waking a CPU from a deep idle state takes up to hundreds of µs",
    };
    let cmd = &i.fp.cmdline;
    let limits: Vec<String> = [
        "intel_idle.max_cstate",
        "processor.max_cstate",
        "idle",
        "cpuidle.off",
    ]
    .iter()
    .filter_map(|p| cmdline_param(cmd, p).map(|v| format!("{p}={v}")))
    .collect();
    let rec = "exit latency ≤ 10 µs while RT work runs";
    let mut deepest: Option<(String, i64)> = None;
    for s in 0..16 {
        let base = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{s}");
        let Some(name) = i.root.read(&format!("{base}/name")) else {
            break;
        };
        let disabled = i.root.read(&format!("{base}/disable")).as_deref() == Some("1");
        let lat = i.root.read_i64(&format!("{base}/latency")).unwrap_or(0);
        if !disabled && deepest.as_ref().is_none_or(|(_, l)| lat > *l) {
            deepest = Some((name, lat));
        }
    }
    let driver = i
        .root
        .read("/sys/devices/system/cpu/cpuidle/current_driver");
    let Some((name, lat)) = deepest else {
        return row.na(
            format!(
                "no cpuidle states (driver: {})",
                driver.as_deref().unwrap_or("none")
            ),
            rec,
        );
    };
    let current = format!(
        "deepest enabled {name}, exit latency {lat} µs{}",
        if limits.is_empty() {
            String::new()
        } else {
            format!(" ({})", limits.join(" "))
        }
    );
    if lat <= 10 || !limits.is_empty() {
        row.done(Status::Ok, current, rec, "")
    } else {
        row.done(
            Status::Warn,
            current,
            rec,
            "keep /dev/cpu_dma_latency open with 0 while RT work runs (rtlab latency does so while measuring), or cpupower idle-set -D 10, or boot with processor.max_cstate=1 intel_idle.max_cstate=1",
        )
    }
}

fn cpu_dma_latency(i: &Input) -> Check {
    let row = Row {
        id: "cpu_dma_latency",
        title: "/dev/cpu_dma_latency (PM QoS)",
        why: "an RT application (and rtlab latency) holds it open to keep CPUs out of deep idle states",
    };
    let path = i.root.path("/dev/cpu_dma_latency");
    if !path.exists() {
        return row.done(
            Status::Warn,
            "missing",
            "present",
            "build with CONFIG_CPU_IDLE/PM QoS (it is there on every standard kernel), or limit C-states on the kernel command line",
        );
    }
    let current = match std::fs::read(&path) {
        Ok(b) if b.len() >= 4 => {
            let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if v >= 2_000_000_000 {
                "present, no limit held".to_string()
            } else {
                format!("present, held at {v} µs")
            }
        }
        Ok(_) => "present".to_string(),
        Err(e) => format!("present (value not readable: {e})"),
    };
    row.done(Status::Ok, current, "present", "")
}

fn clocksource(i: &Input) -> Check {
    let row = Row {
        id: "clocksource",
        title: "clock source",
        why: "every timestamp and timer reads it; hpet or acpi_pm take µs per read where tsc takes ns",
    };
    let cs = &i.fp.clocksource;
    if cs.is_empty() {
        return row.na("not readable", "tsc (x86) / arch_sys_counter (arm64)");
    }
    let avail = i
        .root
        .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        .unwrap_or_default();
    let rec = "tsc (x86) / arch_sys_counter (arm64)";
    match cs.as_str() {
        "hpet" | "acpi_pm" | "jiffies" | "refined-jiffies" | "pit" => row.done(
            Status::Warn,
            format!("{cs} (available: {avail})"),
            rec,
            if avail.split_whitespace().any(|c| c == "tsc") {
                "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (boot with clocksource=tsc if the TSC is stable)"
            } else {
                "check dmesg for why the fast clock source was marked unstable"
            },
        ),
        _ => row.done(Status::Ok, cs.clone(), rec, ""),
    }
}

fn irq_affinity(i: &Input) -> Check {
    let row = Row {
        id: "irq_affinity",
        title: "IRQ affinities",
        why: "an interrupt handled on the RT CPU delays the RT thread by its handler time",
    };
    let Ok(dir) = std::fs::read_dir(i.root.path("/proc/irq")) else {
        return row.na("/proc/irq not readable", "IRQs off isolated CPUs");
    };
    let iso = isolated(i);
    let mut irqs: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    irqs.sort_unstable();
    if iso.is_empty() {
        return row.na(
            format!("{} IRQs; no isolated CPUs to keep them off", irqs.len()),
            "IRQs off isolated CPUs",
        );
    }
    let on_iso: Vec<u32> = irqs
        .iter()
        .copied()
        .filter(|n| {
            i.root
                .read(&format!("/proc/irq/{n}/smp_affinity_list"))
                .and_then(|s| CpuList::parse(&s).ok())
                .is_some_and(|l| !intersection(&l, &iso).is_empty())
        })
        .collect();
    let hk = housekeeping(i);
    if on_iso.is_empty() {
        row.done(
            Status::Ok,
            format!("{} IRQs, none may run on isolated CPUs {iso}", irqs.len()),
            "IRQs off isolated CPUs",
            "",
        )
    } else {
        let shown: Vec<String> = on_iso.iter().take(8).map(u32::to_string).collect();
        row.done(
            Status::Warn,
            format!(
                "{} of {} IRQs may run on isolated CPUs {iso} (IRQ {}{})",
                on_iso.len(),
                irqs.len(),
                shown.join(","),
                if on_iso.len() > 8 { ",..." } else { "" }
            ),
            "IRQs off isolated CPUs",
            format!("for f in /proc/irq/*/smp_affinity_list; do echo {hk} > $f; done (or boot with irqaffinity={hk})"),
        )
    }
}

/// Whether a process whose program is named `name` runs. Each process is
/// asked for its program by one `readlink` of `/proc/PID/exe`, where reading
/// its `comm` takes three calls (open, read, close); a kernel thread has no
/// program and answers at once. Root may read every link but those of a
/// process that hid its own (a sandbox's PID 1), whose name is read instead;
/// another user may read only the links of its own processes, and reads every
/// process's name from the start. Below another root than `/` (a copy of
/// another system's tree) a process without its link may have been copied
/// without it: its name is read.
fn process_running(i: &Input, name: &str) -> Option<bool> {
    let dir = std::fs::read_dir(i.root.path("/proc")).ok()?;
    let live = i.root.root() == std::path::Path::new("/");
    let links = !live || rtlab_engine::rt::process::effective_uid() == 0;
    Some(dir.filter_map(|e| e.ok()).any(|e| {
        if !e
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            return false;
        }
        if links {
            match std::fs::read_link(e.path().join("exe")) {
                Ok(program) => return program_is(&program, name),
                Err(err) if live && err.kind() == std::io::ErrorKind::NotFound => return false,
                Err(_) => {}
            }
        }
        comm_is(&e.path().join("comm"), name)
    }))
}

/// Whether the target of a `/proc/PID/exe` link is a program named `name`,
/// also once its file was replaced (an upgrade: the link then ends in
/// " (deleted)").
fn program_is(program: &std::path::Path, name: &str) -> bool {
    let Some(file) = program.file_name().and_then(|f| f.to_str()) else {
        return false;
    };
    file.strip_suffix(" (deleted)").unwrap_or(file) == name
}

/// Whether a `/proc/PID/comm` file names `name`: one read into a buffer of
/// the file's most (a name of 15 bytes and its newline), where reading it
/// into a string would also ask for its size, and read again for the end.
fn comm_is(path: &std::path::Path, name: &str) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .is_ok_and(|n| buf[..n].trim_ascii_end() == name.as_bytes())
}

fn irqbalance(i: &Input) -> Check {
    let row = Row {
        id: "irqbalance",
        title: "irqbalance",
        why: "irqbalance moves interrupts at run time, possibly onto RT CPUs",
    };
    let Some(running) = process_running(i, "irqbalance") else {
        return row.na("/proc not readable", "stopped, or RT CPUs banned");
    };
    if !running {
        return row.done(Status::Ok, "not running", "stopped, or RT CPUs banned", "");
    }
    let banned = ["/etc/default/irqbalance", "/etc/sysconfig/irqbalance"]
        .iter()
        .filter_map(|p| i.root.read(p))
        .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("IRQBALANCE_BANNED_CPULIST=")
                .or_else(|| l.strip_prefix("IRQBALANCE_BANNED_CPUS="))
                .map(|v| v.trim_matches('"').to_string())
        });
    match banned {
        Some(b) if !b.is_empty() => row.done(
            Status::Ok,
            format!("running, banned CPUs {b}"),
            "stopped, or RT CPUs banned",
            "",
        ),
        _ => row.done(
            Status::Warn,
            "running, no CPU banned",
            "stopped, or RT CPUs banned",
            format!(
                "systemctl disable --now irqbalance, or set IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance",
                if isolated(i).is_empty() { suggested_isolation(i) } else { isolated(i).to_string() }
            ),
        ),
    }
}

fn workqueue_mask(i: &Input) -> Check {
    let row = Row {
        id: "workqueue_mask",
        title: "unbound workqueue CPU mask",
        why: "unbound kernel work (writeback, crypto, ...) runs on any CPU in this mask",
    };
    let path = "/sys/devices/virtual/workqueue/cpumask";
    let Some(mask) = i.root.read(path).and_then(|m| parse_mask(&m)) else {
        return row.na(format!("{path} not readable"), "housekeeping CPUs only");
    };
    let iso = isolated(i);
    if iso.is_empty() {
        return row.na(
            format!("CPUs {mask}; no isolated CPUs to keep work off"),
            "housekeeping CPUs only",
        );
    }
    let both = intersection(&mask, &iso);
    if both.is_empty() {
        row.done(
            Status::Ok,
            format!("CPUs {mask}"),
            "housekeeping CPUs only",
            "",
        )
    } else {
        row.done(
            Status::Warn,
            format!("CPUs {mask}, includes isolated {both}"),
            "housekeeping CPUs only",
            format!("echo {} > {path}", format_mask(&housekeeping(i))),
        )
    }
}

fn smt(i: &Input) -> Check {
    let row = Row {
        id: "smt",
        title: "simultaneous multithreading",
        why: "two hardware threads share one core's pipeline and caches: work on the sibling slows the RT thread",
    };
    match i.fp.smt.as_deref() {
        None => row.na("no /sys/devices/system/cpu/smt/control", "off"),
        Some("on") => row.done(
            Status::Warn,
            "on",
            "off (or keep the RT CPU's sibling idle)",
            "echo off > /sys/devices/system/cpu/smt/control (or boot with nosmt)",
        ),
        Some(v) => row.done(Status::Ok, v, "off", ""),
    }
}

/// The caller's effective capabilities, uid and soft limit of a resource, read
/// from `/proc/self` below the root.
struct Limits {
    uid: Option<u32>,
    cap_eff: Option<u64>,
    limits: String,
}

fn limits(i: &Input) -> Limits {
    let status = i.root.read("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .map(str::to_string)
    };
    Limits {
        uid: field("Uid:").and_then(|v| v.split_whitespace().nth(1)?.parse().ok()),
        cap_eff: field("CapEff:").and_then(|v| u64::from_str_radix(&v, 16).ok()),
        limits: i.root.read("/proc/self/limits").unwrap_or_default(),
    }
}

impl Limits {
    fn soft(&self, name: &str) -> Option<String> {
        self.limits
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
    }

    fn has_cap(&self, cap: u32) -> bool {
        self.cap_eff.is_some_and(|c| c & (1 << cap) != 0)
    }

    fn who(&self) -> String {
        match self.uid {
            Some(0) => "root".into(),
            Some(u) => format!("uid {u}"),
            None => "this user".into(),
        }
    }
}

/// `CAP_SYS_NICE` and `CAP_IPC_LOCK` (capability.h).
const CAP_SYS_NICE: u32 = 23;
const CAP_IPC_LOCK: u32 = 14;

fn rlimit_rtprio(i: &Input) -> Check {
    let row = Row {
        id: "rlimit_rtprio",
        title: "RLIMIT_RTPRIO of the user",
        why: "without CAP_SYS_NICE a process may only use RT priorities up to this limit; 0 means no SCHED_FIFO at all",
    };
    let l = limits(i);
    let Some(soft) = l.soft("Max realtime priority") else {
        return row.na("/proc/self/limits not readable", "≥ the priorities used");
    };
    let rec = "≥ the priorities used (99 for full range)";
    if l.has_cap(CAP_SYS_NICE) {
        return row.done(
            Status::Ok,
            format!("{soft} ({} has CAP_SYS_NICE: any priority)", l.who()),
            rec,
            "",
        );
    }
    let fix = "add '@realtime - rtprio 99' to /etc/security/limits.d/90-rt.conf and the user to group realtime, or LimitRTPRIO=99 in the service unit (rtlab prio unit)";
    match soft.parse::<u32>() {
        Ok(0) => row.done(Status::Fail, format!("0 for {}", l.who()), rec, fix),
        Ok(n) if n < 99 => row.done(Status::Warn, format!("{n} for {}", l.who()), rec, fix),
        _ => row.done(Status::Ok, format!("{soft} for {}", l.who()), rec, ""),
    }
}

fn rlimit_memlock(i: &Input) -> Check {
    let row = Row {
        id: "rlimit_memlock",
        title: "RLIMIT_MEMLOCK of the user",
        why: "mlockall (no page faults in the RT loop) fails once the process's memory exceeds this limit",
    };
    let l = limits(i);
    let Some(soft) = l.soft("Max locked memory") else {
        return row.na("/proc/self/limits not readable", "unlimited");
    };
    let shown = soft
        .parse::<u64>()
        .map(|b| format!("{} KiB", b / 1024))
        .unwrap_or_else(|_| soft.clone());
    if l.has_cap(CAP_IPC_LOCK) {
        return row.done(
            Status::Ok,
            format!("{shown} ({} has CAP_IPC_LOCK: no limit)", l.who()),
            "unlimited",
            "",
        );
    }
    if soft == "unlimited" {
        return row.done(Status::Ok, soft, "unlimited", "");
    }
    row.done(
        Status::Warn,
        format!("{shown} for {}", l.who()),
        "unlimited",
        "add '@realtime - memlock unlimited' to /etc/security/limits.d/90-rt.conf, or LimitMEMLOCK=infinity in the service unit",
    )
}

fn rt_group_sched(i: &Input) -> Check {
    let row = Row {
        id: "rt_group_sched",
        title: "RT group scheduling",
        why: "with CONFIG_RT_GROUP_SCHED a task in a cgroup without RT runtime cannot become SCHED_FIFO (EPERM), which is the default under systemd",
    };
    let v1 = [
        "/sys/fs/cgroup/cpu/cpu.rt_runtime_us",
        "/sys/fs/cgroup/cpu,cpuacct/cpu.rt_runtime_us",
    ]
    .iter()
    .any(|p| i.root.exists(p));
    let fix = "build with CONFIG_RT_GROUP_SCHED=n, or give the service's cgroup RT runtime (cpu.rt_runtime_us)";
    match &i.config {
        Some((_, c)) if c.enabled("RT_GROUP_SCHED") => {
            row.done(Status::Warn, "CONFIG_RT_GROUP_SCHED=y", "n", fix)
        }
        Some(_) => row.done(Status::Ok, "not set", "n", ""),
        None if v1 => row.done(
            Status::Warn,
            "cpu.rt_runtime_us present in the cpu cgroup",
            "n",
            fix,
        ),
        None => no_config(&row, "n"),
    }
}

/// The kernel configuration symbols the checks read: only these are looked up.
pub(super) fn config_symbols() -> impl Iterator<Item = &'static str> {
    [
        "PREEMPT_DYNAMIC",
        "HIGH_RES_TIMERS",
        "NO_HZ_FULL",
        "RT_GROUP_SCHED",
    ]
    .into_iter()
    .chain(LATENCY_DEBUG.iter().map(|(sym, _)| *sym))
}

fn debug_options(i: &Input) -> Check {
    let row = Row {
        id: "debug_options",
        title: "latency-costly kernel debug options",
        why: "lock debugging, KASAN and friends add work inside every lock, allocation or preemption toggle",
    };
    let Some((_, c)) = &i.config else {
        return no_config(&row, "none");
    };
    let on: Vec<&str> = LATENCY_DEBUG
        .iter()
        .filter(|(s, _)| c.enabled(s))
        .map(|(s, _)| *s)
        .collect();
    if on.is_empty() {
        row.done(Status::Ok, "none", "none", "")
    } else {
        let syms: Vec<String> = on.iter().map(|s| format!("CONFIG_{s}=n")).collect();
        row.done(
            Status::Fail,
            on.join(" "),
            "none",
            format!("rebuild with {} (Kernel hacking menu)", syms.join(" ")),
        )
    }
}

fn virtualization(i: &Input) -> Check {
    let row = Row {
        id: "vm",
        title: "virtual machine",
        why: "under a hypervisor the maxima include the host scheduling the virtual CPU: they say little about the kernel",
    };
    match &i.fp.hypervisor {
        Some(h) => row.done(
            Status::Warn,
            h.clone(),
            "bare metal",
            "measure on the target hardware; in a VM pin and isolate the vCPUs on the host",
        ),
        None => row.done(Status::Ok, "bare metal", "bare metal", ""),
    }
}

fn container(i: &Input) -> Check {
    let row = Row {
        id: "container",
        title: "container",
        why: "container runtimes often drop CAP_SYS_NICE and hide /dev/cpu_dma_latency",
    };
    match &i.fp.container {
        Some(c) => row.done(
            Status::Warn,
            c.clone(),
            "host",
            "run with --cap-add=SYS_NICE --cap-add=IPC_LOCK --ulimit rtprio=99 and --device /dev/cpu_dma_latency, or on the host",
        ),
        None => row.done(Status::Ok, "none", "host", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn kernel_versions() {
        assert_eq!(kernel_version("6.12.1-rt5"), Some((6, 12)));
        assert_eq!(kernel_version("4.19.127-rt55-v7+"), Some((4, 19)));
        assert_eq!(kernel_version("garbage"), None);
    }

    #[test]
    fn cmdline_parameters_stop_at_the_init_separator() {
        let c = "quiet isolcpus=domain,managed_irq,2-3 nohz_full=2-3 -- nohz_full=9";
        assert_eq!(cmdline_param(c, "nohz_full"), Some("2-3"));
        assert_eq!(cmdline_param(c, "rcu_nocbs"), None);
        assert_eq!(
            isolcpus_list(cmdline_param(c, "isolcpus").unwrap())
                .unwrap()
                .cpus(),
            &[2, 3]
        );
    }

    #[test]
    fn masks() {
        assert_eq!(parse_mask("f").unwrap().cpus(), &[0, 1, 2, 3]);
        assert_eq!(parse_mask("00000000,00000101").unwrap().cpus(), &[0, 8]);
        assert!(parse_mask("xyz").is_none());
        assert_eq!(format_mask(&CpuList::parse("0-1").unwrap()), "3");
        assert_eq!(format_mask(&CpuList::parse("0,9").unwrap()), "201");
    }

    proptest! {
        #[test]
        fn mask_round_trip(cpus in proptest::collection::vec(0usize..256, 1..20)) {
            let l = CpuList::from_cpus(cpus);
            prop_assert_eq!(parse_mask(&format_mask(&l)).unwrap(), l);
        }
    }
}
