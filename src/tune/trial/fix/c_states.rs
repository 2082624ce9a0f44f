//! Deep idle states off on the measured CPUs (cpuidle `disable`): every state
//! with an exit latency is disabled, so a wake-up never waits for one.

use super::{value_want, Ctx, Fix, Plan};
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "c_states",
    title: "deep idle states off",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    let driver = c
        .root
        .read("/sys/devices/system/cpu/cpuidle/current_driver")
        .unwrap_or_else(|| "none".into());
    let mut wants = Vec::new();
    let mut names = Vec::new();
    for &cpu in c.measured.cpus() {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
        if !c.root.exists(&dir) {
            return Err(format!(
                "CPU {cpu} has no cpuidle states ({dir} is not there; driver: {driver})"
            ));
        }
        for s in 0..16 {
            let base = format!("{dir}/state{s}");
            let Some(name) = c.root.read(&format!("{base}/name")) else {
                break;
            };
            let latency = c.root.read_i64(&format!("{base}/latency")).unwrap_or(0);
            let disabled = c.root.read(&format!("{base}/disable")).as_deref() == Some("1");
            if latency > 0 && !disabled {
                wants.push(value_want(
                    &format!("{base}/disable"),
                    "1",
                    Form::Text,
                    false,
                ));
                let named = format!("{name} ({latency} µs)");
                if !names.contains(&named) {
                    names.push(named);
                }
            }
        }
    }
    if wants.is_empty() {
        return Err(format!(
            "no idle state with an exit latency is enabled on the measured CPUs (driver: {driver})"
        ));
    }
    Ok(Plan {
        wants,
        change: format!("idle states {} off", names.join(", ")),
        by_hand: "cpupower idle-set -D 0 (or echo 1 > .../cpuidle/stateN/disable)".into(),
        ..Plan::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, tree};
    use super::*;

    #[test]
    fn states_with_an_exit_latency_are_disabled_on_the_measured_cpus_only() {
        let (_d, root) = tree(&[
            ("/sys/devices/system/cpu/cpu1/cpuidle/state0/name", "POLL"),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state0/latency", "0"),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable", "0"),
            (
                "/sys/devices/system/cpu/cpu1/cpuidle/state1/name",
                "haltpoll",
            ),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state1/latency", "1"),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", "0"),
            ("/sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "1"),
        ]);
        let input = crate::tune::audit::Input::read(root.clone());
        let p = plan(&ctx(&root, &input)).unwrap();
        assert_eq!(p.wants.len(), 1);
        assert_eq!(p.change, "idle states haltpoll (1 µs) off");
        let (_d, bare) = tree(&[]);
        let input = crate::tune::audit::Input::read(bare.clone());
        let e = plan(&ctx(&bare, &input)).unwrap_err();
        assert!(e.starts_with("CPU 1 has no cpuidle states"), "{e}");
    }
}
