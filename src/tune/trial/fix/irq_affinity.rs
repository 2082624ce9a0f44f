//! Interrupts away from the measured CPUs: every IRQ that may run there gets
//! the other CPUs (`/proc/irq/N/smp_affinity_list`), and so do new ones
//! (`/proc/irq/default_smp_affinity`). An IRQ the kernel keeps where it is
//! (a per-CPU or managed one) is skipped and said.

use super::{no_housekeeping, overlaps, value_want, Ctx, Fix, Plan};
use crate::tune::audit::{format_mask, parse_mask};
use crate::tune::trial::change::Form;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "irq_affinity",
    title: "IRQs off the measured CPUs",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    if c.housekeeping.is_empty() {
        return Err(no_housekeeping("the IRQs"));
    }
    let dir = c.root.path("/proc/irq");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut irqs: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    irqs.sort_unstable();
    let hk = c.housekeeping.to_string();
    let mut wants = Vec::new();
    let mut moved = Vec::new();
    for n in &irqs {
        let path = format!("/proc/irq/{n}/smp_affinity_list");
        if c.root
            .read(&path)
            .is_some_and(|l| overlaps(&l, &c.measured))
        {
            wants.push(value_want(&path, &hk, Form::List, true));
            moved.push(n.to_string());
        }
    }
    let default = "/proc/irq/default_smp_affinity";
    if let Some(mask) = c.root.read(default).and_then(|m| parse_mask(&m)) {
        if mask.cpus().iter().any(|&cpu| c.measured.contains(cpu)) {
            wants.push(value_want(
                default,
                &format_mask(&c.housekeeping),
                Form::Mask,
                true,
            ));
        }
    }
    if wants.is_empty() {
        return Err(format!(
            "already: none of the {} IRQs may run on CPUs {}",
            irqs.len(),
            c.measured
        ));
    }
    let shown = if moved.len() > 6 {
        format!("{},... ({} IRQs)", moved[..6].join(","), moved.len())
    } else if moved.is_empty() {
        "new IRQs".into()
    } else {
        format!("IRQ {}", moved.join(","))
    };
    Ok(Plan {
        wants,
        change: format!("{shown} → CPUs {hk}"),
        by_hand: format!("for f in /proc/irq/*/smp_affinity_list; do echo {hk} > $f; done"),
        boot: Some(format!("irqaffinity={hk}")),
        ..Plan::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, tree};
    use super::*;

    #[test]
    fn only_irqs_that_may_run_on_the_measured_cpus_move() {
        let (_d, root) = tree(&[
            ("/proc/irq/24/smp_affinity_list", "0-1"),
            ("/proc/irq/25/smp_affinity_list", "0"),
            ("/proc/irq/default_smp_affinity", "3"),
        ]);
        let input = crate::tune::audit::Input::read(root.clone());
        let mut c = ctx(&root, &input);
        let p = plan(&c).unwrap();
        assert_eq!(p.wants.len(), 2);
        assert_eq!(p.change, "IRQ 24 → CPUs 0");
        assert_eq!(p.boot.as_deref(), Some("irqaffinity=0"));
        c.housekeeping = Default::default();
        assert!(plan(&c)
            .unwrap_err()
            .starts_with("every online CPU is measured"));
    }
}
