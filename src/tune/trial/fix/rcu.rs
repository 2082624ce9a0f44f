//! RCU's kernel threads away from the measured CPUs: the grace-period and
//! callback threads the kernel lets move (`rcu_preempt`, `rcu_exp_*`,
//! `rcu_tasks_*`, and with rcu_nocbs `rcuog/N`, `rcuop/N`) get the other CPUs.
//! Per-CPU threads (`rcuc/N`) stay, and callbacks move off a CPU only with
//! `rcu_nocbs=` at boot.

use super::{kernel_threads, no_housekeeping, overlaps, rules, thread_want, Ctx, Fix, Plan};

/// The candidate.
pub const FIX: Fix = Fix {
    name: "rcu",
    title: "RCU threads off the measured CPUs",
    plan,
};

/// Whether an RCU thread may be moved: not the per-CPU `rcuc/N`.
fn movable(name: &str) -> bool {
    name.starts_with("rcu_")
        || ["rcuog/", "rcuop/", "rcuos/", "rcub/"]
            .iter()
            .any(|p| name.starts_with(p))
}

fn plan(c: &Ctx) -> Result<Plan, String> {
    if c.housekeeping.is_empty() {
        return Err(no_housekeeping("RCU's threads"));
    }
    let threads = kernel_threads(movable);
    let on: Vec<_> = threads
        .iter()
        .filter(|t| overlaps(&t.setting.affinity, &c.measured))
        .collect();
    if threads.is_empty() {
        return Err("no RCU kernel thread that may be moved".into());
    }
    if on.is_empty() {
        return Err(format!(
            "already: none of the {} RCU threads may run on CPUs {}",
            threads.len(),
            c.measured
        ));
    }
    let hk = c.housekeeping.to_string();
    let names: Vec<&str> = on.iter().map(|t| t.name.as_str()).collect();
    let nocbs = c.measured.to_string();
    Ok(Plan {
        wants: on
            .iter()
            .map(|t| thread_want(t, None, Some(c.housekeeping.clone())))
            .collect(),
        change: format!("{} → CPUs {hk}", names.join(", ")),
        by_hand: format!("for p in $(pgrep '^rcu_'); do taskset -pc {hk} $p; done"),
        boot: Some(format!(
            "rcu_nocbs={nocbs} rcu_nocb_poll (callbacks off CPUs {nocbs})"
        )),
        rules: rules(&on, None, Some(&hk)),
        ..Plan::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_rcu_threads_are_left_alone() {
        assert!(
            movable("rcu_preempt") && movable("rcuog/0") && movable("rcu_exp_gp_kthread_worker")
        );
        assert!(!movable("rcuc/1") && !movable("ksoftirqd/1"));
    }
}
