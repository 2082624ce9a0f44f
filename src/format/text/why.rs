//! The text of a run's spike analysis: the worst spikes with what took their
//! time, then the causes ranked over every spike.

use crate::record::why::{Cause, CauseKind, Spike, Why};
use std::fmt::Write;

/// Spikes and causes the summary lists.
const SPIKES_SHOWN: usize = 5;
const CAUSES_SHOWN: usize = 10;

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
    for s in w.spikes.iter().take(SPIKES_SHOWN) {
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
    for c in w.causes.iter().take(CAUSES_SHOWN) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::why::{Irq, Softirq, Thread};

    #[test]
    fn spikes_read_as_their_parts_and_causes_as_shares() {
        let spike = Spike {
            cpu: 1,
            thread: 0,
            cycle: 57,
            latency_ns: 120_000,
            timer_irq_delay_ns: Some(4_000),
            irqs: vec![Irq {
                name: "eth0".into(),
                irq: 24,
                ns: 10_000,
            }],
            softirqs: vec![Softirq {
                vector: "NET_RX".into(),
                ns: 85_000,
            }],
            threads: vec![Thread {
                pid: 4121,
                comm: "hog".into(),
                policy: "fifo".into(),
                priority: 95,
                ns: 20_000,
                outranked: true,
            }],
            idle: None,
            unexplained_ns: 5_000,
        };
        let why = Why {
            threshold_ns: 50_000,
            available: vec!["sched".into()],
            missing: vec!["idle exit: no power:cpu_idle event".into()],
            resolution_ns: 1,
            events: 9_000,
            events_lost: 0,
            spikes_total: 240,
            spikes: vec![spike],
            causes: vec![Cause {
                kind: CauseKind::Softirq,
                name: "NET_RX".into(),
                cpu: Some(1),
                ns: 7_100,
                share: 0.71,
                spikes: 212,
            }],
            timerlat: None,
        };
        assert_eq!(
            render(&why),
            "why: 240 spike(s) at or above 50.0us, 9000 kernel events read, 0 lost
worst spikes:
  CPU 1 thread 0 cycle 57: 120.0us = NET_RX softirq 85.0us + thread hog (pid 4121, fifo 95, outranked the probe) 20.0us + IRQ 24 eth0 10.0us + unexplained 5.0us (timer expired 4.0us late)
causes:
  NET_RX softirq on CPU 1: 71% of spike time in 212 of 240 spikes
  not analysed: idle exit: no power:cpu_idle event
"
        );
    }
}
