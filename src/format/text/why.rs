//! The text of a run's spike analysis: the worst spikes with what took their
//! time, then the causes ranked over every spike.

use crate::record::why::{Cause, CauseKind, Spike, Why};
use std::fmt::Write;

/// Spikes and causes the summary lists.
const SHOWN: usize = 10;

fn us(ns: u64) -> String {
    format!("{:.1}us", ns as f64 / 1000.0)
}

/// One spike's parts, the largest first.
fn parts(s: &Spike) -> Vec<(u64, String)> {
    let mut p: Vec<(u64, String)> = Vec::new();
    for t in &s.threads {
        let prio = match t.priority {
            0 => t.policy.clone(),
            n => format!("{} {n}", t.policy),
        };
        let over = if t.outranked {
            ", outranked the probe"
        } else {
            ""
        };
        p.push((
            t.ns,
            format!("thread {} (pid {}, {prio}{over})", t.comm, t.pid),
        ));
    }
    for i in &s.irqs {
        let name = if i.name == crate::trace::TIMER_IRQ && i.irq == 0 {
            "timer interrupt".to_string()
        } else {
            format!("IRQ {} {}", i.irq, i.name)
        };
        p.push((i.ns, name));
    }
    for x in &s.softirqs {
        p.push((x.ns, format!("{} softirq", x.vector)));
    }
    if let Some(i) = &s.idle {
        p.push((i.exit_ns, format!("idle exit ({})", i.state)));
    }
    p.sort_by_key(|x| std::cmp::Reverse(x.0));
    p.push((s.unexplained_ns, "unexplained".into()));
    p
}

fn cause_name(c: &Cause) -> String {
    let what = match c.kind {
        CauseKind::Timer => c.name.clone(),
        CauseKind::Irq => format!("IRQ {}", c.name),
        CauseKind::Softirq => format!("{} softirq", c.name),
        CauseKind::Thread => format!("thread {}", c.name),
        CauseKind::Idle => format!("idle exit ({})", c.name),
        CauseKind::Unexplained => "unexplained".into(),
    };
    match c.cpu {
        Some(cpu) => format!("{what} on CPU {cpu}"),
        None => what,
    }
}

/// The analysis as text: a headline, the worst spikes, the ranked causes,
/// and what could not be analysed.
pub fn render(w: &Why) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "why: {} spike(s) at or above {}, {} kernel events read, {} lost",
        w.spikes_total,
        us(w.threshold_ns),
        w.events,
        w.events_lost
    );
    if w.events_lost > 0 {
        let _ = writeln!(
            o,
            "  ! the kernel dropped events: spikes near the losses may be misexplained"
        );
    }
    if !w.spikes.is_empty() {
        let _ = writeln!(o, "worst spikes:");
    }
    for s in w.spikes.iter().take(SHOWN) {
        let list: Vec<String> = parts(s)
            .into_iter()
            .filter(|(ns, _)| *ns > 0)
            .map(|(ns, name)| format!("{name} {}", us(ns)))
            .collect();
        let _ = write!(
            o,
            "  CPU {} thread {} cycle {}: {} = {}",
            s.cpu,
            s.thread,
            s.cycle,
            us(s.latency_ns),
            list.join(" + ")
        );
        if let Some(d) = s.timer_irq_delay_ns {
            let _ = write!(o, " (timer expired {} late)", us(d));
        }
        o.push('\n');
    }
    if !w.causes.is_empty() {
        let _ = writeln!(o, "causes:");
    }
    for c in w.causes.iter().take(SHOWN) {
        let _ = writeln!(
            o,
            "  {}: {:.0}% of spike time in {} of {} spikes",
            cause_name(c),
            c.share * 100.0,
            c.spikes,
            w.spikes_total
        );
    }
    for m in &w.missing {
        let _ = writeln!(o, "  not analysed: {m}");
    }
    o
}
