//! The preemption mode `full`, where a PREEMPT_DYNAMIC kernel lets it be
//! chosen at run time (`/sys/kernel/debug/sched/preempt`; debugfs is mounted
//! for it when it is not, and unmounted after).

use super::{value_want, Ctx, Fix, Plan};
use crate::tune::trial::change::{Form, Want};
use rtlab_engine::sysinfo::PreemptModel;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "preempt",
    title: "full preemption (PREEMPT_DYNAMIC)",
    plan,
};

const DEBUGFS: &str = "/sys/kernel/debug";
const PATH: &str = "/sys/kernel/debug/sched/preempt";

fn plan(c: &Ctx) -> Result<Plan, String> {
    let fp = &c.input.fp;
    let dynamic = fp.kernel_version.contains("PREEMPT_DYNAMIC")
        || c.input
            .config
            .as_ref()
            .is_some_and(|(_, cfg)| cfg.enabled("PREEMPT_DYNAMIC"));
    match fp.preempt {
        PreemptModel::Rt => {
            return Err("PREEMPT_RT: the strongest model, fixed when the kernel was built".into())
        }
        _ if !dynamic => {
            return Err(format!(
                "not a PREEMPT_DYNAMIC kernel: the model ({}) is fixed when the kernel is built",
                fp.preempt.name()
            ))
        }
        PreemptModel::Full => return Err("already full".into()),
        _ => {}
    }
    let now = fp
        .preempt_dynamic_mode
        .clone()
        .unwrap_or_else(|| fp.preempt.name().to_lowercase());
    Ok(Plan {
        wants: vec![
            Want::Mount {
                target: DEBUGFS.into(),
                fstype: "debugfs".into(),
            },
            value_want(PATH, "full", Form::Selector, false),
        ],
        change: format!("preempt {now} → full"),
        by_hand: format!("echo full > {PATH}"),
        boot: Some("preempt=full".into()),
        refusal_note: Some(
            "the kernel refuses debugfs to this process: lockdown (see /sys/kernel/security/lockdown) or a security module",
        ),
        ..Plan::default()
    })
}
