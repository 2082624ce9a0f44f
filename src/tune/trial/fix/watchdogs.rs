//! The lockup watchdogs off (`kernel.watchdog = 0`, `kernel.nmi_watchdog =
//! 0`): no watchdog timer or NMI on the measured CPUs.

use super::{sysctl, sysctl_path, Ctx, Fix, Plan};

/// The candidate.
pub const FIX: Fix = Fix {
    name: "watchdogs",
    title: "lockup watchdogs off",
    plan,
};

const KEYS: [&str; 2] = ["kernel.watchdog", "kernel.nmi_watchdog"];

fn plan(c: &Ctx) -> Result<Plan, String> {
    if KEYS.iter().all(|k| !c.root.exists(&sysctl_path(k))) {
        return Err("no /proc/sys/kernel/watchdog: the lockup detectors are not built in".into());
    }
    let on: Vec<Plan> = KEYS.iter().filter_map(|k| sysctl(c, k, "0").ok()).collect();
    if on.is_empty() {
        return Err("already off (kernel.watchdog and kernel.nmi_watchdog are 0)".into());
    }
    Ok(Plan {
        wants: on.iter().flat_map(|p| p.wants.clone()).collect(),
        change: on
            .iter()
            .map(|p| p.change.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        by_hand: on
            .iter()
            .map(|p| p.by_hand.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        boot: Some("nowatchdog nmi_watchdog=0".into()),
        ..Plan::default()
    })
}
