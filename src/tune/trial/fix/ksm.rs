//! Kernel same-page merging stopped (`run = 2`: merged pages unmerged, ksmd
//! stopped): no scanning thread, no copy-on-write faults on merged pages.

use super::{value_want, Ctx, Fix, Plan};
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "ksm",
    title: "KSM stopped and unmerged",
    plan,
};

const PATH: &str = "/sys/kernel/mm/ksm/run";

fn plan(c: &Ctx) -> Result<Plan, String> {
    let now = c
        .root
        .read(PATH)
        .ok_or_else(|| format!("{PATH} is not there: KSM is not built in"))?;
    if now == "0" || now == "2" {
        return Err(format!("already stopped (ksm/run = {now})"));
    }
    Ok(Plan {
        wants: vec![value_want(PATH, "2", Form::Text, false)],
        change: format!("ksm/run {now} → 2"),
        by_hand: format!("echo 2 > {PATH}"),
        ..Plan::default()
    })
}
