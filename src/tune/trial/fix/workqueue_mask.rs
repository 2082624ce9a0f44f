//! Unbound kernel work away from the measured CPUs: the unbound workqueue
//! CPU mask (`/sys/devices/virtual/workqueue/cpumask`) set to the others.

use super::{no_housekeeping, value_want, Ctx, Fix, Plan};
use crate::tune::audit::{format_mask, parse_mask};
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "workqueue_mask",
    title: "unbound workqueues off the measured CPUs",
    plan,
};

const PATH: &str = "/sys/devices/virtual/workqueue/cpumask";

fn plan(c: &Ctx) -> Result<Plan, String> {
    if c.housekeeping.is_empty() {
        return Err(no_housekeeping("unbound kernel work"));
    }
    let now = c
        .root
        .read(PATH)
        .ok_or_else(|| format!("{PATH} is not there (a kernel before 4.2)"))?;
    let cpus = parse_mask(&now).ok_or_else(|| format!("{PATH} reads '{now}', not a CPU mask"))?;
    if !cpus.cpus().iter().any(|&cpu| c.measured.contains(cpu)) {
        return Err(format!("already: unbound work runs on CPUs {cpus} only"));
    }
    let mask = format_mask(&c.housekeeping);
    Ok(Plan {
        wants: vec![value_want(PATH, &mask, Form::Mask, false)],
        change: format!("workqueue cpumask CPUs {cpus} → {}", c.housekeeping),
        by_hand: format!("echo {mask} > {PATH}"),
        boot: Some(format!("workqueue.unbound_cpus={}", c.housekeeping)),
        ..Plan::default()
    })
}
