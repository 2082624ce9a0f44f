//! Transparent huge pages never: no compaction in page faults, no
//! khugepaged rewriting page tables behind the measured threads.

use super::{value_want, Ctx, Fix, Plan};
use crate::tune::audit::selected;
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "thp",
    title: "transparent huge pages never",
    plan,
};

const PATH: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

fn plan(c: &Ctx) -> Result<Plan, String> {
    let text = c
        .root
        .read(PATH)
        .ok_or_else(|| format!("{PATH} is not there: transparent huge pages are not built in"))?;
    let now = selected(&text).unwrap_or(&text).to_string();
    if now == "never" {
        return Err("already never".into());
    }
    Ok(Plan {
        wants: vec![value_want(PATH, "never", Form::Selector, false)],
        change: format!("transparent_hugepage {now} → never"),
        by_hand: format!("echo never > {PATH}"),
        boot: Some("transparent_hugepage=never".into()),
        ..Plan::default()
    })
}
