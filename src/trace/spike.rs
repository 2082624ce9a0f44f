//! A spike's parts turned into its record, and the causes tallied over all
//! spikes (the worst spikes kept, every spike counted).

use super::analyse::Marker;
use super::event::softirq_name;
use crate::record::why::{Cause, CauseKind, Idle, Irq, Softirq, Spike, Thread};
use std::collections::HashMap;

/// Spikes kept with their decomposition, the worst first.
pub const SPIKES_KEPT: usize = 100;

/// The name `irqs` gives the time in timer interrupts and hrtimer callbacks.
pub const TIMER_IRQ: &str = "timer";

/// What took part of a spike's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Part {
    /// A thread, at its kernel priority when known.
    Thread {
        pid: i32,
        prio: Option<i32>,
    },
    Idle(u32),
    Irq(u32),
    Softirq(u32),
    Timer,
    Nmi,
}

/// The disjoint parts of one window.
#[derive(Debug, Default)]
pub(super) struct Parts {
    pub ns: HashMap<Part, u64>,
    /// The probe thread's kernel priority, when it ran in the window.
    pub probe_prio: Option<i32>,
    pub timer_delay_ns: Option<u64>,
}

/// The names behind the numbers of a trace.
pub(super) trait Names {
    fn comm(&self, pid: i32) -> String;
    fn irq(&self, irq: u32) -> String;
    fn idle_state(&mut self, cpu: usize, state: u32) -> String;
    fn policy(&mut self, pid: i32, prio: i32) -> String;
}

/// A kernel priority (0-98 real-time 99-1, 100-139 nice -20..19, -1
/// deadline) as a real-time priority (0 outside real time).
pub fn rt_priority(prio: i32) -> i32 {
    if (0..100).contains(&prio) {
        99 - prio
    } else {
        0
    }
}

impl Parts {
    /// The spike of marker `m` on `cpu`, its parts named.
    pub fn into_spike(self, cpu: usize, m: &Marker, names: &mut dyn Names) -> Spike {
        let mut parts: Vec<(Part, u64)> = self.ns.into_iter().collect();
        parts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut spike = Spike {
            cpu,
            thread: m.thread,
            cycle: m.cycle,
            latency_ns: m.latency_ns,
            timer_irq_delay_ns: self.timer_delay_ns,
            irqs: Vec::new(),
            softirqs: Vec::new(),
            threads: Vec::new(),
            idle: None,
            nmi_ns: 0,
            unexplained_ns: m.latency_ns,
        };
        for (part, ns) in parts {
            spike.unexplained_ns = spike.unexplained_ns.saturating_sub(ns);
            match part {
                Part::Thread { pid, prio } => spike.threads.push(Thread {
                    pid,
                    comm: names.comm(pid),
                    policy: prio.map_or_else(|| "?".into(), |p| names.policy(pid, p)),
                    priority: prio.map_or(0, rt_priority),
                    ns,
                    outranked: prio.zip(self.probe_prio).is_some_and(|(t, p)| t < p),
                }),
                Part::Idle(state) => {
                    let exit_ns = spike.idle.as_ref().map_or(0, |i| i.exit_ns) + ns;
                    spike.idle = Some(Idle {
                        state: names.idle_state(cpu, state),
                        exit_ns,
                    });
                }
                Part::Irq(irq) => spike.irqs.push(Irq {
                    name: names.irq(irq),
                    irq,
                    ns,
                }),
                Part::Timer => spike.irqs.push(Irq {
                    name: TIMER_IRQ.into(),
                    irq: 0,
                    ns,
                }),
                Part::Nmi => spike.nmi_ns += ns,
                Part::Softirq(vec) => spike.softirqs.push(Softirq {
                    vector: softirq_name(vec),
                    ns,
                }),
            }
        }
        spike
    }
}

/// Causes and spikes over a run.
#[derive(Debug, Default)]
pub struct Tally {
    /// The worst spikes (at most twice [`SPIKES_KEPT`] between trims).
    spikes: Vec<Spike>,
    /// Spikes seen.
    pub total: u64,
    /// Their latencies summed (ns).
    pub spike_ns: u64,
    causes: Vec<Cause>,
}

impl Tally {
    /// Counts one spike.
    pub fn add(&mut self, s: Spike) {
        self.total += 1;
        self.spike_ns += s.latency_ns;
        let cpu = Some(s.cpu);
        let mut add = |kind, name: String, ns| {
            let at = self
                .causes
                .iter()
                .position(|c| c.kind == kind && c.cpu == cpu && c.name == name);
            let c = match at {
                Some(i) => &mut self.causes[i],
                None => {
                    self.causes.push(Cause {
                        kind,
                        name,
                        cpu,
                        ns: 0,
                        share: 0.0,
                        spikes: 0,
                    });
                    self.causes.last_mut().expect("just pushed")
                }
            };
            c.ns += ns;
            c.spikes += 1;
        };
        for i in &s.irqs {
            if i.name == TIMER_IRQ && i.irq == 0 {
                add(CauseKind::Timer, "timer interrupt".into(), i.ns);
            } else {
                add(CauseKind::Irq, format!("{} (irq {})", i.name, i.irq), i.ns);
            }
        }
        for x in &s.softirqs {
            add(CauseKind::Softirq, x.vector.clone(), x.ns);
        }
        for t in &s.threads {
            let prio = match t.priority {
                0 => t.policy.clone(),
                p => format!("{} {p}", t.policy),
            };
            add(
                CauseKind::Thread,
                format!("{} (pid {}, {prio})", t.comm, t.pid),
                t.ns,
            );
        }
        if s.nmi_ns > 0 {
            add(CauseKind::Nmi, "NMI".into(), s.nmi_ns);
        }
        if let Some(i) = &s.idle {
            add(CauseKind::Idle, i.state.clone(), i.exit_ns);
        }
        if s.unexplained_ns > 0 {
            add(
                CauseKind::Unexplained,
                "unexplained".into(),
                s.unexplained_ns,
            );
        }
        self.spikes.push(s);
        if self.spikes.len() >= 2 * SPIKES_KEPT {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.spikes
            .sort_by(|a, b| b.latency_ns.cmp(&a.latency_ns).then(a.cycle.cmp(&b.cycle)));
        self.spikes.truncate(SPIKES_KEPT);
    }

    /// The worst spikes, worst first, and the causes, the largest share first.
    pub fn finish(mut self) -> (Vec<Spike>, Vec<Cause>) {
        self.trim();
        let total = self.spike_ns.max(1) as f64;
        let mut causes = self.causes;
        for c in &mut causes {
            c.share = c.ns as f64 / total;
        }
        causes.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.name.cmp(&b.name)));
        (self.spikes, causes)
    }
}
