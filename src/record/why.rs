//! Why a run's latency spikes happened: the decomposition of each spike into
//! what held its CPU between the timer's expiry and the probe's wake-up, read
//! from kernel tracepoints, and the causes ranked over the whole run.

use serde::{Deserialize, Serialize};

/// The root-cause analysis stored with a run (`rtlab latency --trace`,
/// `rtlab why`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Why {
    /// Samples at or above this latency were analysed (ns).
    pub threshold_ns: u64,
    /// What the kernel offered: event groups and tracers that were used
    /// (`sched`, `irq`, `timer`, `power`, `timerlat`, `osnoise`).
    pub available: Vec<String>,
    /// Parts of the analysis that could not be made, each with its reason
    /// ("idle exit: no power:cpu_idle event").
    #[serde(default)]
    pub missing: Vec<String>,
    /// The trace clock's resolution: the decomposition is exact to this (ns).
    pub resolution_ns: u64,
    /// Events read from the buffers.
    pub events: u64,
    /// Events the kernel dropped because a buffer was full (0 means the record
    /// is complete).
    pub events_lost: u64,
    /// Samples at or above the threshold.
    pub spikes_total: u64,
    /// The decomposed spikes, worst first (a bounded number).
    pub spikes: Vec<Spike>,
    /// Causes over all spikes, ranked by the share of spike time they explain.
    pub causes: Vec<Cause>,
    /// IRQ versus thread latency, as the `timerlat` tracer splits it, when the
    /// kernel has that tracer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timerlat: Option<Timerlat>,
    /// What was decomposed: latency spikes, or the gaps of a noise run
    /// (`rtlab noise --trace`; each "spike" is then a gap: its cycle the gap's
    /// number on its thread, its latency the gap's length).
    #[serde(default, skip_serializing_if = "Subject::is_spikes")]
    pub subject: Subject,
}

/// What a [`Why`] decomposed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subject {
    /// Latency spikes, from the programmed wake-up to the measured one.
    #[default]
    Spikes,
    /// Noise gaps, from the last clock read before the gap to the first after.
    Gaps,
}

impl Subject {
    /// Whether it is [`Subject::Spikes`] (the default).
    pub fn is_spikes(&self) -> bool {
        *self == Subject::Spikes
    }

    /// What one is called: `spike`, `gap`.
    pub fn noun(self) -> &'static str {
        match self {
            Subject::Spikes => "spike",
            Subject::Gaps => "gap",
        }
    }

    /// What reaches the threshold or not: `sample`, `gap`.
    pub fn measured(self) -> &'static str {
        match self {
            Subject::Spikes => "sample",
            Subject::Gaps => "gap",
        }
    }

    /// Their time summed: `spike time`, `noise time`.
    pub fn time(self) -> &'static str {
        match self {
            Subject::Spikes => "spike time",
            Subject::Gaps => "noise time",
        }
    }
}

/// One latency spike and what took its time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    /// CPU the probe thread woke on.
    pub cpu: usize,
    /// Probe thread index.
    pub thread: usize,
    /// Wake-up number (0-based).
    pub cycle: u64,
    /// The measured latency (ns).
    pub latency_ns: u64,
    /// How late the timer's expiry ran after its programmed time (ns), when the
    /// expiry was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_irq_delay_ns: Option<u64>,
    /// IRQ handlers that ran on the CPU in the spike's window.
    #[serde(default)]
    pub irqs: Vec<Irq>,
    /// Softirqs that ran on the CPU in the window.
    #[serde(default)]
    pub softirqs: Vec<Softirq>,
    /// Threads that held the CPU before the probe ran.
    #[serde(default)]
    pub threads: Vec<Thread>,
    /// The exit from an idle state, when the CPU was idle at the expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<Idle>,
    /// Time in NMI handlers within the window (ns).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nmi_ns: u64,
    /// What the parts above do not account for (ns).
    pub unexplained_ns: u64,
}

/// An IRQ handler's share of a spike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Irq {
    /// Handler name (`eth0`, `virtio0-input.0`).
    pub name: String,
    /// IRQ number.
    pub irq: u32,
    /// Time in the handler within the window (ns).
    pub ns: u64,
}

/// A softirq's share of a spike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Softirq {
    /// Vector name (`NET_RX`, `TIMER`, `RCU`).
    pub vector: String,
    /// Time in it within the window (ns).
    pub ns: u64,
}

/// A thread that ran on the CPU within the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// Kernel thread id.
    pub pid: i32,
    /// Its name.
    pub comm: String,
    /// Scheduling policy (`fifo`, `rr`, `other`, `deadline`, …), when known.
    pub policy: String,
    /// Real-time priority (0 for non-RT policies).
    pub priority: i32,
    /// Time it ran within the window (ns).
    pub ns: u64,
    /// Whether it outranked the probe (so the scheduler was right to run it).
    pub outranked: bool,
}

/// An idle state the CPU had to leave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Idle {
    /// The state's name or index (`C1`, `haltpoll`, `2`).
    pub state: String,
    /// From the expiry to the CPU leaving idle (ns).
    pub exit_ns: u64,
}

impl Why {
    /// Names the worker processes of rtlab's own loads, which the kernel knows
    /// by the name of the file they were started from (`exe`), after their
    /// load: `rtlab load net`.
    pub fn name_loads(&mut self, loads: &[super::LoadRecord]) {
        let named: Vec<(i32, String)> = loads
            .iter()
            .flat_map(|l| {
                l.per_worker
                    .iter()
                    .map(|w| (w.pid, format!("rtlab load {}", l.kind)))
            })
            .collect();
        let name_of = |pid| {
            named
                .iter()
                .find(|(p, _)| *p == pid)
                .map(|(_, n)| n.clone())
        };
        for t in self.spikes.iter_mut().flat_map(|s| s.threads.iter_mut()) {
            if let Some(name) = name_of(t.pid) {
                t.comm = name;
            }
        }
        for c in self
            .causes
            .iter_mut()
            .filter(|c| c.kind == CauseKind::Thread)
        {
            for (pid, name) in &named {
                let tag = format!(" (pid {pid}, ");
                if let Some(at) = c.name.find(&tag) {
                    c.name = format!("{name}{}", &c.name[at..]);
                }
            }
        }
    }
}

/// What a cause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CauseKind {
    /// The timer interrupt itself ran late.
    Timer,
    /// An IRQ handler.
    Irq,
    /// A softirq vector.
    Softirq,
    /// A thread.
    Thread,
    /// An idle-state exit.
    Idle,
    /// NMI handlers.
    Nmi,
    /// Time no event explains.
    Unexplained,
}

/// One cause over the whole run ("NET_RX softirq on CPU 1: 71% of spike time
/// in 212 of 240 spikes").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// What it is.
    pub kind: CauseKind,
    /// Its name (`NET_RX`, `eth0 (irq 24)`, `stress-ng-cpu (pid 4121, fifo 95)`, `C1`).
    pub name: String,
    /// The CPU, when the cause is tied to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Spike time it explains, summed over the spikes (ns).
    pub ns: u64,
    /// That time over all spike time (0-1).
    pub share: f64,
    /// Spikes it took part in.
    pub spikes: u64,
}

/// IRQ latency versus thread latency, as `timerlat` measures them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timerlat {
    /// Worst timer IRQ latency (ns).
    pub irq_max_ns: u64,
    /// Worst thread latency (ns).
    pub thread_max_ns: u64,
    /// Activations of the tracer's threads (one IRQ and one thread sample each).
    pub samples: u64,
    /// The same per measured CPU, with the averages.
    #[serde(default)]
    pub per_cpu: Vec<TimerlatCpu>,
}

/// One CPU's timerlat latencies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerlatCpu {
    /// The CPU.
    pub cpu: usize,
    /// Activations of its timerlat thread.
    pub samples: u64,
    /// Average timer IRQ latency (ns).
    pub irq_avg_ns: u64,
    /// Worst timer IRQ latency (ns).
    pub irq_max_ns: u64,
    /// Average thread latency (ns).
    pub thread_avg_ns: u64,
    /// Worst thread latency (ns).
    pub thread_max_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{LoadRecord, LoadWorker};

    #[test]
    fn the_workers_of_rtlab_loads_are_named_after_their_load() {
        let thread = |pid, comm: &str| Thread {
            pid,
            comm: comm.into(),
            policy: "other".into(),
            priority: 0,
            ns: 5_000,
            outranked: false,
        };
        let cause = |name: &str| Cause {
            kind: CauseKind::Thread,
            name: name.into(),
            cpu: Some(1),
            ns: 5_000,
            share: 0.5,
            spikes: 1,
        };
        let mut why = Why {
            threshold_ns: 50_000,
            available: vec![],
            missing: vec![],
            resolution_ns: 1,
            events: 10,
            events_lost: 0,
            spikes_total: 1,
            spikes: vec![Spike {
                cpu: 1,
                thread: 0,
                cycle: 3,
                latency_ns: 60_000,
                timer_irq_delay_ns: None,
                irqs: vec![],
                softirqs: vec![],
                threads: vec![thread(2813, "exe"), thread(28, "exe")],
                idle: None,
                nmi_ns: 0,
                unexplained_ns: 50_000,
            }],
            causes: vec![cause("exe (pid 2813, other)"), cause("exe (pid 28, other)")],
            timerlat: None,
            subject: Subject::Spikes,
        };
        let load = LoadRecord {
            kind: "net".into(),
            per_worker: vec![LoadWorker {
                index: 0,
                pid: 2813,
                ops: 1,
                ops_per_s: 1.0,
                cpu_pct: 1.0,
                minor_faults_per_s: 0.0,
                max_rss_kib: 1,
                end: "stopped".into(),
            }],
            ..Default::default()
        };
        why.name_loads(&[load]);
        let comms: Vec<&str> = why.spikes[0]
            .threads
            .iter()
            .map(|t| t.comm.as_str())
            .collect();
        assert_eq!(comms, ["rtlab load net", "exe"]);
        assert_eq!(why.causes[0].name, "rtlab load net (pid 2813, other)");
        assert_eq!(why.causes[1].name, "exe (pid 28, other)");
    }
}
