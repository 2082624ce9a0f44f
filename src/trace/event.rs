//! The events rtlab reads, decoded from their raw records with the field
//! offsets their `format` files give.

use super::page::number;
use anyhow::{Context, Result};
use std::collections::HashMap;

/// One decoded event (the fields the analysis uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `sched:sched_switch`.
    Switch {
        prev_pid: i32,
        prev_prio: i32,
        prev_comm: String,
        next_pid: i32,
        next_prio: i32,
        next_comm: String,
    },
    /// `sched:sched_waking` or `sched:sched_wakeup`.
    Waking { pid: i32 },
    /// `irq:irq_handler_entry`.
    IrqEntry { irq: u32, name: String },
    /// `irq:irq_handler_exit`.
    IrqExit,
    /// `irq:softirq_entry`.
    SoftirqEntry { vec: u32 },
    /// `irq:softirq_exit`.
    SoftirqExit,
    /// `timer:hrtimer_expire_entry` (`irq_vectors:local_timer_entry` has
    /// `hrtimer` 0).
    TimerEntry { hrtimer: u64 },
    /// `timer:hrtimer_expire_exit`, `irq_vectors:local_timer_exit`.
    TimerExit,
    /// `power:cpu_idle`: the state entered, `u32::MAX` on leaving.
    Idle { state: u32 },
    /// `nmi:nmi_handler`, at the end of an NMI handler that ran `delta_ns`.
    Nmi { delta_ns: u64 },
    /// `ftrace:print`: a `trace_marker` line.
    Print { text: String },
}

/// The events rtlab enables: (subsystem, name), and whether the analysis
/// can do without it.
pub const EVENTS: [(&str, &str, bool); 13] = [
    ("sched", "sched_switch", false),
    ("sched", "sched_waking", true),
    ("sched", "sched_wakeup", true),
    ("irq", "irq_handler_entry", true),
    ("irq", "irq_handler_exit", true),
    ("irq", "softirq_entry", true),
    ("irq", "softirq_exit", true),
    ("timer", "hrtimer_expire_entry", true),
    ("timer", "hrtimer_expire_exit", true),
    ("irq_vectors", "local_timer_entry", true),
    ("irq_vectors", "local_timer_exit", true),
    ("power", "cpu_idle", true),
    ("nmi", "nmi_handler", true),
];

/// The marker event, always present where `trace_marker` is.
pub const PRINT: (&str, &str) = ("ftrace", "print");

/// A field's place in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Field {
    offset: usize,
    size: usize,
}

/// One `format` file: the event's id and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub id: u16,
    fields: HashMap<String, Field>,
}

impl Format {
    /// Reads a `format` file.
    pub fn parse(text: &str) -> Result<Format> {
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("ID:"))
            .context("no ID line")?
            .trim()
            .parse()
            .context("bad ID")?;
        let mut fields = HashMap::new();
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("field:"))
        {
            let decl = line.split(';').next().unwrap_or("");
            let name = decl.rsplit([' ', '\t']).next().unwrap_or("");
            let name = name.split('[').next().unwrap_or(name);
            let field = Field {
                offset: number(line, "offset:")?,
                size: number(line, "size:")?,
            };
            fields.insert(name.to_string(), field);
        }
        Ok(Format { id, fields })
    }

    pub(super) fn field(&self, name: &str) -> Result<Field> {
        self.fields
            .get(name)
            .copied()
            .with_context(|| format!("no field '{name}'"))
    }
}

/// How to decode one event id.
#[derive(Debug, Clone)]
enum Decode {
    Switch([Field; 6]),
    Waking(Field),
    IrqEntry(Field, Field),
    IrqExit,
    SoftirqEntry(Field),
    SoftirqExit,
    TimerEntry(Option<Field>),
    TimerExit,
    Idle(Field),
    Nmi(Field),
    Print(Field),
}

/// Decodes records by their `common_type`.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    by_id: HashMap<u16, Decode>,
    /// `common_pid`: the thread that ran on the CPU when the event was
    /// recorded (the interrupted one, for an event in an interrupt).
    pid: Option<Field>,
}

pub(super) fn int(r: &[u8], f: Field) -> i64 {
    let b = r.get(f.offset..f.offset + f.size).unwrap_or(&[]);
    match *b {
        [a] => i64::from(a),
        [a, b] => i64::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => i64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => 0,
    }
}

fn text(r: &[u8], f: Field) -> String {
    let b = r.get(f.offset..).unwrap_or(&[]);
    let b = if f.size > 0 {
        &b[..f.size.min(b.len())]
    } else {
        b
    };
    let b = b.split(|&c| c == 0).next().unwrap_or(&[]);
    String::from_utf8_lossy(b).into_owned()
}

/// A `__data_loc` string: a 32-bit word of offset (low 16 bits) and length.
fn data_loc(r: &[u8], f: Field) -> String {
    let loc = int(r, f) as u32;
    let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
    text(
        r,
        Field {
            offset: at,
            size: len,
        },
    )
}

impl Decoder {
    /// Learns event `sys:name` from its `format` file text.
    pub fn add(&mut self, sys: &str, name: &str, format: &str) -> Result<()> {
        let f = Format::parse(format).with_context(|| format!("{sys}:{name} format"))?;
        self.pid = Some(f.field("common_pid")?);
        let d = match name {
            "sched_switch" => Decode::Switch(
                [
                    "prev_pid",
                    "prev_prio",
                    "prev_comm",
                    "next_pid",
                    "next_prio",
                    "next_comm",
                ]
                .map(|n| f.field(n))
                .into_iter()
                .collect::<Result<Vec<_>>>()?
                .try_into()
                .map_err(|_| anyhow::anyhow!("sched_switch fields"))?,
            ),
            "sched_waking" | "sched_wakeup" => Decode::Waking(f.field("pid")?),
            "irq_handler_entry" => Decode::IrqEntry(f.field("irq")?, f.field("name")?),
            "irq_handler_exit" => Decode::IrqExit,
            "softirq_entry" => Decode::SoftirqEntry(f.field("vec")?),
            "softirq_exit" => Decode::SoftirqExit,
            "hrtimer_expire_entry" => Decode::TimerEntry(Some(f.field("hrtimer")?)),
            "local_timer_entry" => Decode::TimerEntry(None),
            "hrtimer_expire_exit" | "local_timer_exit" => Decode::TimerExit,
            "cpu_idle" => Decode::Idle(f.field("state")?),
            "nmi_handler" => Decode::Nmi(f.field("delta_ns")?),
            "print" => Decode::Print(f.field("buf")?),
            other => anyhow::bail!("rtlab does not decode {sys}:{other}"),
        };
        self.by_id.insert(f.id, d);
        Ok(())
    }

    /// The event of one record, when it is one rtlab decodes, and the
    /// thread that ran on the CPU when it was recorded.
    pub fn decode(&self, r: &[u8]) -> Option<(i32, Event)> {
        let id = u16::from_le_bytes(r.get(..2)?.try_into().ok()?);
        let d = self.by_id.get(&id)?;
        let pid = self.pid.map_or(0, |p| int(r, p) as i32);
        let ev = match d {
            Decode::Switch([pp, ppr, pc, np, npr, nc]) => Event::Switch {
                prev_pid: int(r, *pp) as i32,
                prev_prio: int(r, *ppr) as i32,
                prev_comm: text(r, *pc),
                next_pid: int(r, *np) as i32,
                next_prio: int(r, *npr) as i32,
                next_comm: text(r, *nc),
            },
            Decode::Waking(pid) => Event::Waking {
                pid: int(r, *pid) as i32,
            },
            Decode::IrqEntry(irq, name) => Event::IrqEntry {
                irq: int(r, *irq) as u32,
                name: data_loc(r, *name),
            },
            Decode::IrqExit => Event::IrqExit,
            Decode::SoftirqEntry(vec) => Event::SoftirqEntry {
                vec: int(r, *vec) as u32,
            },
            Decode::SoftirqExit => Event::SoftirqExit,
            Decode::TimerEntry(t) => Event::TimerEntry {
                hrtimer: t.map_or(0, |t| int(r, t) as u64),
            },
            Decode::TimerExit => Event::TimerExit,
            Decode::Idle(state) => Event::Idle {
                state: int(r, *state) as u32,
            },
            Decode::Nmi(delta) => Event::Nmi {
                delta_ns: int(r, *delta).max(0) as u64,
            },
            Decode::Print(buf) => Event::Print {
                text: text(r, *buf),
            },
        };
        Some((pid, ev))
    }
}

/// The name of softirq vector `vec`.
pub fn softirq_name(vec: u32) -> String {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES
        .get(vec as usize)
        .map_or_else(|| format!("vec {vec}"), |n| (*n).to_string())
}
