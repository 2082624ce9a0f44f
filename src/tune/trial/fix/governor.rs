//! The `performance` frequency governor on the measured CPUs: no frequency
//! ramp after idle.

use super::{value_want, Ctx, Fix, Plan};
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "governor",
    title: "performance frequency governor",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    let mut wants = Vec::new();
    let mut was = Vec::new();
    for &cpu in c.measured.cpus() {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
        let Some(now) = c.root.read(&format!("{dir}/scaling_governor")) else {
            return Err(format!(
                "CPU {cpu} has no frequency scaling ({dir} is not there: a fixed frequency, or a VM)"
            ));
        };
        let avail = c
            .root
            .read(&format!("{dir}/scaling_available_governors"))
            .unwrap_or_default();
        if !avail.split_whitespace().any(|g| g == "performance") {
            return Err(format!(
                "CPU {cpu}'s driver offers no performance governor (available: {avail})"
            ));
        }
        if now != "performance" {
            was.push(now);
            wants.push(value_want(
                &format!("{dir}/scaling_governor"),
                "performance",
                Form::Text,
                false,
            ));
        }
    }
    if wants.is_empty() {
        return Err("already performance on every measured CPU".into());
    }
    was.dedup();
    Ok(Plan {
        wants,
        change: format!("governor {} → performance", was.join(",")),
        by_hand: format!(
            "for c in {}; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done",
            c.measured.cpus().iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
        ),
        ..Plan::default()
    })
}
