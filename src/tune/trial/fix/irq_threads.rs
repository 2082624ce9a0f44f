//! On a PREEMPT_RT kernel (or one booted with `threadirqs`), interrupts and
//! softirqs run in threads with a priority of their own: the IRQ threads
//! (`irq/N-name`) and `ksoftirqd/N` of the measured CPUs that run at or above
//! the measuring threads' priority are put just below it.

use super::{kernel_threads, overlaps, rules, thread_want, Ctx, Fix, Plan};
use crate::tune::audit::cmdline_param;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::sysinfo::PreemptModel;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "irq_threads",
    title: "IRQ threads below the measuring threads",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    let fp = &c.input.fp;
    let threaded = fp.cmdline.split_whitespace().any(|w| w == "threadirqs")
        || cmdline_param(&fp.cmdline, "threadirqs").is_some();
    if fp.preempt != PreemptModel::Rt && !threaded {
        return Err(format!(
            "not a PREEMPT_RT kernel ({}) nor booted with threadirqs: interrupts run in interrupt context, not in threads with a priority",
            fp.preempt.name()
        ));
    }
    let (policy, prio) = c.probe;
    if !policy.is_realtime() {
        return Err(format!(
            "the measuring threads run {policy}: every IRQ thread runs above them; measure with --priority"
        ));
    }
    let per_cpu = |name: &str| {
        name.strip_prefix("ksoftirqd/")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| c.measured.contains(n))
    };
    let threads = kernel_threads(|n| n.starts_with("irq/") || per_cpu(n));
    let above: Vec<_> = threads
        .iter()
        .filter(|t| overlaps(&t.setting.affinity, &c.measured))
        .filter(|t| t.setting.policy.is_some_and(|p| p.is_realtime()) && t.setting.priority >= prio)
        .collect();
    if above.is_empty() {
        return Err(format!(
            "already: none of the {} IRQ threads and ksoftirqd of the measured CPUs runs at or above {policy}/{prio}",
            threads.len()
        ));
    }
    let below = (Policy::Fifo, (prio - 1).max(1));
    let names: Vec<&str> = above.iter().map(|t| t.name.as_str()).collect();
    Ok(Plan {
        wants: above
            .iter()
            .map(|t| thread_want(t, Some(below), None))
            .collect(),
        change: format!("{} → fifo/{}", names.join(", "), below.1),
        by_hand: format!(
            "for p in $(pgrep '^irq/'); do chrt -f -p {} $p; done",
            below.1
        ),
        rules: rules(&above, Some(below), None),
        ..Plan::default()
    })
}
