//! What in a kernel configuration helps or hurts latency.

use super::{Config, Value};
use crate::tune::text_table;
use serde::Serialize;

/// Debug options that put work on hot kernel paths (locking, allocation,
/// preemption), with why.
pub const LATENCY_DEBUG: &[(&str, &str)] = &[
    (
        "LOCKDEP",
        "validates every lock acquisition; adds work inside every lock",
    ),
    (
        "PROVE_LOCKING",
        "lock-dependency proving on every lock operation",
    ),
    (
        "DEBUG_LOCK_ALLOC",
        "tracks every lock allocation and release",
    ),
    ("LOCK_STAT", "collects statistics on every lock operation"),
    (
        "DEBUG_PREEMPT",
        "checks preemption counts on every preempt_disable/enable",
    ),
    ("DEBUG_SPINLOCK", "checks on every spinlock operation"),
    ("DEBUG_MUTEXES", "checks on every mutex operation"),
    (
        "DEBUG_RT_MUTEXES",
        "checks on every rt_mutex operation (all locks on PREEMPT_RT)",
    ),
    (
        "DEBUG_ATOMIC_SLEEP",
        "checks for sleeping in atomic context on every might_sleep",
    ),
    ("PROVE_RCU", "lockdep checks on every RCU read section"),
    (
        "KASAN",
        "instruments every memory access (2-3x slower kernel)",
    ),
    (
        "KCSAN",
        "samples memory accesses for data races, with delays",
    ),
    ("KMSAN", "instruments every memory access"),
    ("SLUB_DEBUG_ON", "poisons and checks every slab allocation"),
    (
        "DEBUG_PAGEALLOC",
        "unmaps freed pages: TLB flushes on allocation paths",
    ),
    (
        "DEBUG_OBJECTS",
        "tracks object lifetimes on timer/work operations",
    ),
    (
        "DEBUG_KMEMLEAK",
        "tracks every allocation and scans memory periodically",
    ),
    ("DEBUG_VM", "adds checks to memory-management paths"),
    (
        "IRQSOFF_TRACER",
        "timestamps every interrupt disable/enable",
    ),
    (
        "PREEMPT_TRACER",
        "timestamps every preemption disable/enable",
    ),
    ("UBSAN", "checks arithmetic and bounds in the whole kernel"),
];

/// Whether an option helps or hurts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Good for latency.
    Helps,
    /// Bad for latency.
    Hurts,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Helps or hurts.
    pub effect: Effect,
    /// The symbol (without `CONFIG_`), or a short name for combined findings.
    pub symbol: String,
    /// Its value in the configuration.
    pub value: String,
    /// Why it matters.
    pub why: String,
    /// What to change (for what hurts).
    pub fix: String,
}

fn finding(effect: Effect, symbol: &str, value: impl ToString, why: &str, fix: &str) -> Finding {
    Finding {
        effect,
        symbol: symbol.into(),
        value: value.to_string(),
        why: why.into(),
        fix: fix.into(),
    }
}

/// All findings about a configuration, what hurts first.
pub fn check(c: &Config) -> Vec<Finding> {
    use Effect::*;
    let mut f = Vec::new();
    let model = c.preempt_model();
    match c.preempt_choice() {
        Some("PREEMPT_RT") => f.push(finding(
            Helps,
            "PREEMPT_RT",
            "y",
            "fully preemptible kernel: threaded interrupts, sleeping spinlocks, bounded latency",
            "",
        )),
        Some("PREEMPT" | "PREEMPT_LAZY") => f.push(finding(
            Hurts,
            "PREEMPT_RT",
            c.get("PREEMPT_RT"),
            &format!("{model}: preemptible, but interrupt handlers and spinlock sections still block RT tasks"),
            "enable CONFIG_PREEMPT_RT (in mainline since 6.12; older kernels need the RT patch)",
        )),
        _ => f.push(finding(
            Hurts,
            "PREEMPT_RT",
            c.get("PREEMPT_RT"),
            &format!("{model}: the kernel is preempted only at explicit points; maxima of milliseconds are expected"),
            if c.enabled("PREEMPT_DYNAMIC") {
                "boot with preempt=full now; for bounded latency enable CONFIG_PREEMPT_RT (in mainline since 6.12)"
            } else {
                "choose \"Fully Preemptible Kernel (Real-Time)\" (CONFIG_PREEMPT_RT=y), or at least CONFIG_PREEMPT=y"
            },
        )),
    }
    if c.enabled("HIGH_RES_TIMERS") {
        f.push(finding(
            Helps,
            "HIGH_RES_TIMERS",
            "y",
            "timers fire with µs resolution instead of on the next tick",
            "",
        ));
    } else {
        f.push(finding(
            Hurts,
            "HIGH_RES_TIMERS",
            c.get("HIGH_RES_TIMERS"),
            "without high-resolution timers every sleep is rounded up to a tick",
            "set CONFIG_HIGH_RES_TIMERS=y",
        ));
    }
    match c.tick_mode() {
        Some("NO_HZ_FULL") => f.push(finding(
            Helps,
            "NO_HZ_FULL",
            "y",
            "isolated CPUs can run without the periodic tick (boot with nohz_full=)",
            "",
        )),
        other => f.push(finding(
            Hurts,
            "NO_HZ_FULL",
            other.unwrap_or("unset"),
            "every CPU takes the periodic tick, also the ones running RT work",
            "set CONFIG_NO_HZ_FULL=y and boot with nohz_full=<RT CPUs>",
        )),
    }
    if let Some(hz) = c.hz().and_then(|h| h.parse::<u32>().ok()) {
        if hz < 250 {
            f.push(finding(
                Hurts,
                "HZ",
                hz,
                "a coarse tick delays tick-driven work (scheduler balancing, timer wheel)",
                "use CONFIG_HZ_250 .. CONFIG_HZ_1000 and measure which is better on this board",
            ));
        }
    }
    for (sym, why, fix) in [
        (
            "CPU_ISOLATION",
            "lets isolcpus=/nohz_full= keep housekeeping off RT CPUs",
            "set CONFIG_CPU_ISOLATION=y",
        ),
        (
            "RCU_NOCB_CPU",
            "moves RCU callbacks off RT CPUs (rcu_nocbs=)",
            "set CONFIG_RCU_NOCB_CPU=y",
        ),
        (
            "IRQ_FORCED_THREADING",
            "interrupt handlers can run as threads with priorities (threadirqs)",
            "set CONFIG_IRQ_FORCED_THREADING=y",
        ),
    ] {
        if c.enabled(sym) {
            f.push(finding(Helps, sym, c.get(sym), why, ""));
        } else {
            f.push(finding(
                Hurts,
                sym,
                c.get(sym),
                &format!(
                    "missing: nothing {}",
                    why.split_once(' ').map_or(why, |(_, r)| r)
                ),
                fix,
            ));
        }
    }
    for (sym, why) in LATENCY_DEBUG {
        if c.enabled(sym) {
            f.push(finding(
                Hurts,
                sym,
                c.get(sym),
                why,
                &format!("set CONFIG_{sym}=n (Kernel hacking menu) on a kernel used for RT work"),
            ));
        }
    }
    if c.get("RT_GROUP_SCHED") == &Value::Yes {
        f.push(finding(Hurts, "RT_GROUP_SCHED", "y", "RT tasks in cgroups get no RT runtime unless each cgroup is given some: setting SCHED_FIFO fails with EPERM under systemd", "set CONFIG_RT_GROUP_SCHED=n (or give cgroups cpu.rt_runtime_us)"));
    }
    if c.enabled("TRANSPARENT_HUGEPAGE_ALWAYS") {
        f.push(finding(
            Hurts,
            "TRANSPARENT_HUGEPAGE_ALWAYS",
            "y",
            "page faults may compact memory and khugepaged collapses pages behind RT tasks",
            "choose CONFIG_TRANSPARENT_HUGEPAGE_MADVISE=y (or transparent_hugepage=never at boot)",
        ));
    }
    if c.enabled("NUMA_BALANCING_DEFAULT_ENABLED") {
        f.push(finding(
            Hurts,
            "NUMA_BALANCING_DEFAULT_ENABLED",
            "y",
            "automatic NUMA balancing unmaps pages to sample accesses: extra page faults",
            "unset it or sysctl kernel.numa_balancing=0",
        ));
    }
    match c.default_governor().as_deref() {
        Some("performance") => f.push(finding(
            Helps,
            "CPU_FREQ_DEFAULT_GOV_PERFORMANCE",
            "y",
            "CPUs start at full frequency",
            "",
        )),
        Some(g) => f.push(finding(
            Hurts,
            &format!("CPU_FREQ_DEFAULT_GOV_{}", g.to_ascii_uppercase()),
            "y",
            &format!("default governor {g}: frequency ramps add latency after idle"),
            "set CONFIG_CPU_FREQ_DEFAULT_GOV_PERFORMANCE=y or switch governors at boot",
        )),
        None => {}
    }
    f.sort_by_key(|x| x.effect != Hurts);
    f
}

/// How many findings hurt latency.
pub fn hurting(findings: &[Finding]) -> usize {
    findings
        .iter()
        .filter(|f| f.effect == Effect::Hurts)
        .count()
}

/// The findings about `config` (read from `source`) as text: a heading with the
/// version and preemption model, a table, the fixes, and the counts.
pub fn render(source: &str, config: &Config, findings: &[Finding]) -> String {
    let mut out = format!(
        "{source}{}: {}\n\n",
        config
            .version
            .as_deref()
            .map(|v| format!(" (Linux {v})"))
            .unwrap_or_default(),
        config.preempt_model()
    );
    let mut t = text_table(&["effect", "option", "value", "why"]);
    for f in findings {
        t.row(vec![
            format!("{:?}", f.effect).to_lowercase(),
            f.symbol.clone(),
            f.value.clone(),
            f.why.clone(),
        ]);
    }
    out.push_str(&t.render());
    let fixes: Vec<String> = findings
        .iter()
        .filter(|f| !f.fix.is_empty())
        .map(|f| format!("  {}: {}\n", f.symbol, f.fix))
        .collect();
    if !fixes.is_empty() {
        out.push_str("\nfixes:\n");
        out.extend(fixes);
    }
    let hurts = hurting(findings);
    out.push_str(&format!(
        "\n{hurts} hurt, {} help\n",
        findings.len() - hurts
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_non_rt_hurt_rt_helps() {
        let bad = Config::parse(
            "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_LOCKDEP=y\nCONFIG_KASAN=y\nCONFIG_RT_GROUP_SCHED=y\n\
             CONFIG_CPU_FREQ_DEFAULT_GOV_SCHEDUTIL=y\nCONFIG_HZ=100\n",
        )
        .unwrap();
        let f = check(&bad);
        let hurts: Vec<&str> = f
            .iter()
            .filter(|x| x.effect == Effect::Hurts)
            .map(|x| x.symbol.as_str())
            .collect();
        for s in [
            "PREEMPT_RT",
            "LOCKDEP",
            "KASAN",
            "RT_GROUP_SCHED",
            "HIGH_RES_TIMERS",
            "HZ",
            "CPU_FREQ_DEFAULT_GOV_SCHEDUTIL",
        ] {
            assert!(hurts.contains(&s), "{s} missing from {hurts:?}");
        }
        assert_eq!(f[0].effect, Effect::Hurts, "what hurts comes first");
        let text = render("bad.config", &bad, &f);
        assert!(text.starts_with("bad.config: "), "{text}");
        assert!(text.contains("\nfixes:\n  PREEMPT_RT: "), "{text}");
        let summary = format!("\n{} hurt, {} help\n", hurts.len(), f.len() - hurts.len());
        assert!(text.ends_with(&summary), "{text}");

        let good = Config::parse(
            "CONFIG_PREEMPT_RT=y\nCONFIG_HIGH_RES_TIMERS=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_CPU_ISOLATION=y\n\
             CONFIG_RCU_NOCB_CPU=y\nCONFIG_IRQ_FORCED_THREADING=y\nCONFIG_HZ=1000\n",
        )
        .unwrap();
        assert!(check(&good).iter().all(|x| x.effect == Effect::Helps));
    }
}
