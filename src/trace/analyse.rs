//! The analysis: every CPU's events replayed in order into disjoint segments
//! of time, each owned by the innermost context that ran (an IRQ handler
//! inside a softirq inside a thread counts once, as the IRQ handler), and
//! every spike marker decomposed over the segments of its window on its CPU,
//! from the programmed wake-up to the measured one (for a noise gap marker,
//! from the gap's start to its end).
//!
//! Each CPU's state (the thread that runs, the IRQs and softirqs nested over
//! it, idle) is carried from event to event, so a window that opens while
//! another thread already runs is put on that thread. The running thread is
//! read from every event, not from switches alone: each record names the
//! thread that held its CPU (`common_pid`), and a switch into it may never
//! reach the trace (a kernel may record no task-context event of a CPU's idle
//! task, so the switch from idle to a thread is missing; the trace may begin
//! after the switch). A thread seen running without its switch held the CPU
//! since the CPU's previous event.

use super::event::Event;
use super::spike::{Names, Part, Parts, Tally};
use crate::record::why::Spike;
use rtlab_engine::probe::latency::MARKER_PREFIX;
use rtlab_engine::probe::noise::GAP_PREFIX;
use rtlab_engine::rt::sched::{self, Policy};
use std::collections::{HashMap, VecDeque};

/// How far back segments are kept (ns): a spike longer than this is
/// decomposed over its last part only.
const HORIZON_NS: u64 = 2_000_000_000;

/// Who held a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Ctx {
    /// Before the first event that says.
    Unknown,
    /// A thread (pid 0: the idle task outside an idle state), at its kernel
    /// priority when a switch told it.
    Task { pid: i32, prio: Option<i32> },
    /// The idle task in an idle state.
    Idle(u32),
    /// An IRQ handler.
    Irq(u32),
    /// A softirq vector.
    Softirq(u32),
    /// A timer interrupt or hrtimer callback in hard IRQ context.
    Timer,
    /// An NMI handler.
    Nmi,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    start: u64,
    end: u64,
    ctx: Ctx,
}

/// An instant the timer delay is read from.
#[derive(Debug, Clone, Copy)]
enum Mark {
    Expiry(u64),
    Waking(u64, i32),
}

/// One CPU's replay.
#[derive(Debug, Default)]
struct Cpu {
    task: Option<(i32, Option<i32>)>,
    idle: Option<u32>,
    stack: Vec<Ctx>,
    last: Option<u64>,
    segments: VecDeque<Segment>,
    marks: VecDeque<Mark>,
}

impl Cpu {
    fn current(&self) -> Ctx {
        if let Some(top) = self.stack.last() {
            return *top;
        }
        match (self.task, self.idle) {
            (Some((0, _)) | None, Some(state)) => Ctx::Idle(state),
            (Some((pid, prio)), _) => Ctx::Task { pid, prio },
            (None, None) => Ctx::Unknown,
        }
    }

    /// Closes the running segment at `ts`.
    fn advance(&mut self, ts: u64) {
        let ctx = self.current();
        if let Some(last) = self.last.filter(|&l| ts > l) {
            match self.segments.back_mut() {
                Some(s) if s.ctx == ctx && s.end == last => s.end = ts,
                _ => self.segments.push_back(Segment {
                    start: last,
                    end: ts,
                    ctx,
                }),
            }
        }
        self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
        while self
            .segments
            .front()
            .is_some_and(|s| s.end + HORIZON_NS < ts)
        {
            self.segments.pop_front();
        }
        while self.marks.front().is_some_and(|m| {
            let (Mark::Expiry(t) | Mark::Waking(t, _)) = *m;
            t + HORIZON_NS < ts
        }) {
            self.marks.pop_front();
        }
    }

    /// Gives `[start, end)` (closed by the last event) to `ctx`, out of the
    /// segments that held it: an NMI is told of at its end, with its length.
    fn carve(&mut self, start: u64, end: u64, ctx: Ctx) {
        let mut head = None;
        while let Some(s) = self.segments.back().copied().filter(|s| s.end > start) {
            self.segments.pop_back();
            if s.start < start {
                head = Some(Segment { end: start, ..s });
            }
        }
        self.segments.extend(head);
        self.segments.push_back(Segment { start, end, ctx });
    }

    /// Makes `pid` the running thread when the replay held another: its
    /// switch was not traced, so it ran since the CPU's previous event, and
    /// what was nested over the thread before (IRQs, softirqs, idle) ended
    /// before the switch.
    fn ran(&mut self, pid: i32, prio: Option<i32>) {
        if self.task.map(|t| t.0) != Some(pid) {
            self.task = Some((pid, prio));
            self.stack.clear();
            self.idle = None;
        }
    }

    /// Leaves the innermost context of a kind, and whatever a lost exit
    /// left above it.
    fn pop(&mut self, what: fn(&Ctx) -> bool) {
        if let Some(at) = self.stack.iter().rposition(what) {
            self.stack.truncate(at);
        }
    }
}

/// A spike marker's numbers (or a noise gap's: its number as the cycle, its
/// length as the latency, its start as the expected time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Marker {
    pub thread: usize,
    pub cycle: u64,
    pub latency_ns: u64,
    pub expected_ns: u64,
    /// The CPU a gap marker names (a spike's is the CPU it was written on).
    pub cpu: Option<usize>,
}

impl Marker {
    /// Reads `rtlab-spike thread=T cycle=C latency=L expected=E` or
    /// `rtlab-gap cpu=C thread=T gap=N start=S end=E`.
    pub fn parse(text: &str) -> Option<Marker> {
        let text = text.trim_end();
        let (rest, gap) = match text.strip_prefix(MARKER_PREFIX) {
            Some(rest) => (rest, false),
            None => (text.strip_prefix(GAP_PREFIX)?, true),
        };
        let mut values = HashMap::new();
        for kv in rest.split(' ') {
            let (k, v) = kv.split_once('=')?;
            values.insert(k, v.parse::<u64>().ok()?);
        }
        let thread = usize::try_from(*values.get("thread")?).ok()?;
        if gap {
            let (start, end) = (*values.get("start")?, *values.get("end")?);
            return Some(Marker {
                thread,
                cycle: *values.get("gap")?,
                latency_ns: end.checked_sub(start)?,
                expected_ns: start,
                cpu: Some(usize::try_from(*values.get("cpu")?).ok()?),
            });
        }
        Some(Marker {
            thread,
            cycle: *values.get("cycle")?,
            latency_ns: *values.get("latency")?,
            expected_ns: *values.get("expected")?,
            cpu: None,
        })
    }
}

/// The whole replay: every CPU's state, names seen, and the spikes so far.
#[derive(Debug, Default)]
pub struct Analyser {
    cpus: HashMap<usize, Cpu>,
    comms: HashMap<i32, String>,
    /// Each thread's kernel priority at its last switch.
    prios: HashMap<i32, i32>,
    irq_names: HashMap<u32, String>,
    idle_names: HashMap<(usize, u32), String>,
    policies: HashMap<(i32, i32), String>,
    /// Events fed.
    pub events: u64,
    /// Spikes and causes so far.
    pub tally: Tally,
}

impl Analyser {
    /// Feeds one event of `cpu` at `ts`, recorded while thread `pid` ran
    /// there; every CPU's events come in order.
    pub fn feed(&mut self, cpu: usize, ts: u64, pid: i32, ev: Event) {
        self.events += 1;
        if let Event::Switch {
            prev_pid,
            prev_prio,
            next_pid,
            next_prio,
            ..
        } = ev
        {
            self.prios.insert(prev_pid, prev_prio);
            self.prios.insert(next_pid, next_prio);
        }
        let c = self.cpus.entry(cpu).or_default();
        c.ran(pid, self.prios.get(&pid).copied());
        c.advance(ts);
        match ev {
            Event::Switch {
                prev_pid,
                prev_comm,
                next_pid,
                next_prio,
                next_comm,
                ..
            } => {
                self.comms.insert(prev_pid, prev_comm);
                self.comms.insert(next_pid, next_comm);
                c.task = Some((next_pid, Some(next_prio)));
                // Switches happen in task context: nothing is nested any more.
                c.stack.clear();
            }
            Event::Waking { pid } => c.marks.push_back(Mark::Waking(ts, pid)),
            Event::IrqEntry { irq, name } => {
                self.irq_names.entry(irq).or_insert(name);
                c.stack.push(Ctx::Irq(irq));
            }
            Event::IrqExit => c.pop(|x| matches!(x, Ctx::Irq(_))),
            Event::SoftirqEntry { vec } => c.stack.push(Ctx::Softirq(vec)),
            Event::SoftirqExit => c.pop(|x| matches!(x, Ctx::Softirq(_))),
            Event::TimerEntry { hrtimer } => {
                if hrtimer != 0 {
                    c.marks.push_back(Mark::Expiry(ts));
                }
                // An hrtimer callback in a softirq is the softirq's time.
                if !matches!(c.stack.last(), Some(Ctx::Softirq(_))) {
                    c.stack.push(Ctx::Timer);
                }
            }
            Event::TimerExit => c.pop(|x| *x == Ctx::Timer),
            Event::Idle { state } => c.idle = (state != u32::MAX).then_some(state),
            Event::Nmi { delta_ns } => c.carve(ts.saturating_sub(delta_ns), ts, Ctx::Nmi),
            Event::Print { text } => {
                if let Some(m) = Marker::parse(&text) {
                    let cpu = m.cpu.unwrap_or(cpu);
                    if self.cpus.contains_key(&cpu) {
                        let spike = self.decompose(cpu, pid, &m);
                        self.tally.add(spike);
                    }
                }
            }
        }
    }

    /// The spike of marker `m`, written by thread `tid` on `cpu`.
    fn decompose(&mut self, cpu: usize, tid: i32, m: &Marker) -> Spike {
        let c = &self.cpus[&cpu];
        let (start, end) = (m.expected_ns, m.expected_ns.saturating_add(m.latency_ns));
        let mut parts = Parts::default();
        for s in c.segments.iter().rev() {
            if s.end <= start {
                break;
            }
            let ns = s.end.min(end).saturating_sub(s.start.max(start));
            let part = match s.ctx {
                Ctx::Task { pid, prio } if pid == tid => {
                    let known = prio.or_else(|| self.prios.get(&pid).copied());
                    parts.probe_prio = known.or(parts.probe_prio);
                    None
                }
                Ctx::Unknown | Ctx::Task { pid: 0, .. } => None,
                Ctx::Task { pid, prio } => Some(Part::Thread {
                    pid,
                    prio: prio
                        .or_else(|| self.prios.get(&pid).copied())
                        .or_else(|| kernel_prio(pid)),
                }),
                Ctx::Idle(state) => Some(Part::Idle(state)),
                Ctx::Irq(irq) => Some(Part::Irq(irq)),
                Ctx::Softirq(vec) => Some(Part::Softirq(vec)),
                Ctx::Timer => Some(Part::Timer),
                Ctx::Nmi => Some(Part::Nmi),
            };
            if let Some(p) = part.filter(|_| ns > 0) {
                *parts.ns.entry(p).or_default() += ns;
            }
        }
        // A gap has no timer to be late.
        let waking = c.marks.iter().find_map(|mk| match *mk {
            _ if m.cpu.is_some() => None,
            Mark::Waking(t, pid) if pid == tid && t >= start && t <= end => Some(t),
            _ => None,
        });
        let expiry = waking.and_then(|w| {
            c.marks.iter().rev().find_map(|mk| match *mk {
                Mark::Expiry(t) if t >= start && t <= w => Some(t),
                _ => None,
            })
        });
        parts.timer_delay_ns = expiry.map(|t| t - start);
        parts.into_spike(cpu, m, self)
    }
}

impl Names for Analyser {
    fn comm(&self, pid: i32) -> String {
        self.comms.get(&pid).cloned().unwrap_or_else(|| "?".into())
    }

    fn irq(&self, irq: u32) -> String {
        self.irq_names
            .get(&irq)
            .cloned()
            .unwrap_or_else(|| format!("irq{irq}"))
    }

    fn idle_state(&mut self, cpu: usize, state: u32) -> String {
        self.idle_names
            .entry((cpu, state))
            .or_insert_with(|| {
                std::fs::read_to_string(format!(
                    "/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/name"
                ))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| format!("state {state}"))
            })
            .clone()
    }

    fn policy(&mut self, pid: i32, prio: i32) -> String {
        self.policies
            .entry((pid, prio))
            .or_insert_with(|| policy_of(pid, prio))
            .clone()
    }
}

/// A thread's kernel priority as the kernel says now (for a thread the trace
/// saw run but never switch): a real-time priority p is 99 - p, a deadline
/// thread -1, any other 120.
fn kernel_prio(pid: i32) -> Option<i32> {
    let (policy, prio) = sched::thread_policy(pid).ok()?;
    Some(match policy? {
        Policy::Deadline => -1,
        p if p.is_realtime() => 99 - prio,
        _ => 120,
    })
}

/// A thread's policy: as the kernel says now when that agrees with the
/// priority it ran at (a thread may have changed policy since), else as that
/// priority tells.
pub(super) fn policy_of(pid: i32, prio: i32) -> String {
    let class = match prio {
        ..0 => "deadline",
        0..100 => "rt",
        _ => "other",
    };
    let now = sched::thread_policy(pid).ok().and_then(|(p, _)| p);
    match now {
        Some(p) if p.is_realtime() && class == "rt" => p.name().into(),
        Some(p) if !p.is_realtime() && class == "other" && p.name() != "deadline" => {
            p.name().into()
        }
        _ => class.into(),
    }
}
