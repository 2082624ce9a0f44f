//! Why a run's latency spikes happened, in words: each decomposed spike, worst
//! first, with what held its CPU; the causes ranked over the whole run; what
//! the kernel let the analysis see, and whether events were lost.

use super::table::paragraph;
use super::timerlat;
use crate::record::why::{Cause, CauseKind, Spike, Subject, Why};
use crate::units::Human;

/// Spikes decomposed at the end of a run that is not stored.
pub const SPIKES_SHOWN: usize = 5;

/// Causes listed by [`render`]; the rest are summed up in one line.
pub const CAUSES_SHOWN: usize = 10;

/// The analysis as text, at most [`super::table::WIDTH`] columns wide.
pub fn render(why: &Why) -> String {
    let mut out = header(why);
    if why.spikes_total > 0 {
        let width = amount_width(&why.spikes);
        for (i, s) in why.spikes.iter().enumerate() {
            out.push('\n');
            out.push_str(&spike(i + 1, s, width, why.subject));
        }
        out.push('\n');
        out.push_str(&causes(why));
    }
    out.push_str(&timerlat::lines(why));
    out
}

/// The analysis at the end of a measurement: in short with the command that
/// shows each spike when the run is stored (`run`), else the worst
/// [`SPIKES_SHOWN`] spikes themselves.
pub fn end_of_run(why: &Why, run: Option<i64>) -> String {
    if run.is_some() {
        return summary(why, run);
    }
    let mut worst = why.clone();
    worst.spikes.truncate(SPIKES_SHOWN);
    render(&worst)
}

/// The analysis in short, for reports: how many spikes, the command that shows
/// each (for a stored run), the ranked causes and a lost-events warning.
pub fn summary(why: &Why, run: Option<i64>) -> String {
    let threshold = Human(why.threshold_ns);
    let noun = why.subject.noun();
    if why.spikes_total == 0 {
        return format!(
            "why: no {} reached {threshold}: no {noun} to explain\n",
            why.subject.measured()
        ) + &timerlat::lines(why);
    }
    let mut out = format!(
        "why: {} {noun}(s) at or above {threshold}",
        why.spikes_total
    );
    match run {
        Some(id) => out.push_str(&format!("; 'rtlab why {id}' shows each one\n")),
        None => out.push('\n'),
    }
    out.push_str(&causes(why));
    if why.events_lost > 0 {
        out.push_str(&lost_warning(why));
    }
    out + &timerlat::lines(why)
}

/// The traced steps of a campaign, one line each: how many spikes, the top
/// cause and the command that shows them ("" when no step was traced).
pub fn steps(steps: &[crate::scenario::runner::StepRun]) -> String {
    let mut out = String::new();
    for s in steps {
        let (Some(why), Some(id)) = (&s.run.why, s.run.id) else {
            continue;
        };
        let top = match why.causes.first() {
            Some(c) => format!("top cause: {} ({})", cause_name(c), percent(c.share)),
            None => "no cause found".into(),
        };
        let line = format!(
            "{}, run {id}: {} spike(s) at or above {}; {top}",
            s.name,
            why.spikes_total,
            Human(why.threshold_ns)
        );
        out.push_str(&paragraph("  ", &line));
    }
    if out.is_empty() {
        return out;
    }
    format!("\nwhy, in the traced steps ('rtlab why RUN' shows each spike):\n{out}")
}

/// The warning about events the kernel dropped.
fn lost_warning(why: &Why) -> String {
    paragraph(
        "  ! ",
        &format!(
            "events_lost: the kernel dropped {} events (a trace buffer was full): some \
             {}s may be explained only in part; trace fewer CPUs or raise the threshold",
            why.events_lost,
            why.subject.noun()
        ),
    )
}

/// What was analysed, what the kernel offered and what is missing.
fn header(why: &Why) -> String {
    let threshold = Human(why.threshold_ns);
    let noun = why.subject.noun();
    let mut out = match (why.spikes_total, why.spikes.len()) {
        (0, _) => format!(
            "why: no {} reached {threshold}: no {noun} to explain\n",
            why.subject.measured()
        ),
        (n, 0) => format!("why: {n} {noun}(s) at or above {threshold}\n"),
        (n, shown) if shown as u64 >= n => format!(
            "why: {n} {noun}(s) at or above {threshold}, each decomposed below, worst first\n"
        ),
        (n, shown) => format!(
            "why: {n} {noun}(s) at or above {threshold}; the {shown} worst decomposed below\n"
        ),
    };
    let lost = match why.events_lost {
        0 => "none lost".to_string(),
        n => format!("{n} lost"),
    };
    let available = if why.available.is_empty() {
        "nothing".to_string()
    } else {
        why.available.join(", ")
    };
    out.push_str(&paragraph(
        "",
        &format!(
            "traced: {available}; {} events, {lost}; resolution {}",
            why.events,
            Human(why.resolution_ns)
        ),
    ));
    for m in &why.missing {
        out.push_str(&paragraph("not analysed: ", m));
    }
    if why.events_lost > 0 {
        out.push_str(&lost_warning(why));
    }
    out
}

/// The parts of a spike: amount (ns), what, and a note.
pub fn parts(s: &Spike) -> Vec<(u64, String, String)> {
    let mut out = Vec::new();
    if let Some(i) = &s.idle {
        out.push((
            i.exit_ns,
            format!("idle exit from {}", i.state),
            String::new(),
        ));
    }
    for q in &s.irqs {
        let what = if q.name == crate::trace::TIMER_IRQ && q.irq == 0 {
            "timer interrupt".to_string()
        } else {
            format!("IRQ {} (irq {})", q.name, q.irq)
        };
        out.push((q.ns, what, String::new()));
    }
    for q in &s.softirqs {
        out.push((q.ns, format!("softirq {}", q.vector), String::new()));
    }
    if s.nmi_ns > 0 {
        out.push((s.nmi_ns, "NMI".into(), String::new()));
    }
    for t in &s.threads {
        let note = if t.outranked {
            "outranked the probe"
        } else {
            "did not outrank the probe"
        };
        let what = match t.priority {
            0 => format!("thread {} (pid {}, {})", t.comm, t.pid, t.policy),
            p => format!("thread {} (pid {}, {} {p})", t.comm, t.pid, t.policy),
        };
        out.push((t.ns, what, note.into()));
    }
    out.push((s.unexplained_ns, "unexplained".into(), String::new()));
    out
}

/// The width of the amounts column over all spikes.
fn amount_width(spikes: &[Spike]) -> usize {
    spikes
        .iter()
        .flat_map(parts)
        .map(|(ns, _, _)| us(ns).len())
        .max()
        .unwrap_or(0)
}

/// A time in µs with one decimal and its unit.
fn us(ns: u64) -> String {
    format!("{:.1}us", ns as f64 / 1000.0)
}

/// One spike: its line, then one line per part, amounts aligned.
fn spike(n: usize, s: &Spike, width: usize, subject: Subject) -> String {
    let late = s
        .timer_irq_delay_ns
        .map(|t| format!(" (timer expired {} late)", us(t)))
        .unwrap_or_default();
    let mut out = match subject {
        Subject::Spikes => format!(
            "spike {n}: {} on CPU {}, thread {}, cycle {}{late}\n",
            Human(s.latency_ns),
            s.cpu,
            s.thread,
            s.cycle
        ),
        Subject::Gaps => format!(
            "gap {n}: {} on CPU {} (its gap number {})\n",
            Human(s.latency_ns),
            s.cpu,
            s.cycle + 1
        ),
    };
    for (ns, what, note) in parts(s) {
        let text = if note.is_empty() {
            what
        } else {
            format!("{what}: {note}")
        };
        out.push_str(&paragraph(&format!("  {:>width$}  ", us(ns)), &text));
    }
    out
}

/// A cause as a name: `NET_RX softirq on CPU 1`, `thread irq/24-eth0 (pid
/// 301, fifo 50)`.
pub fn cause_name(c: &Cause) -> String {
    let what = match c.kind {
        CauseKind::Timer => c.name.clone(),
        CauseKind::Irq => format!("IRQ {}", c.name),
        CauseKind::Softirq => format!("{} softirq", c.name),
        CauseKind::Thread => format!("thread {}", c.name),
        CauseKind::Idle => format!("idle exit from {}", c.name),
        CauseKind::Nmi => "NMI".into(),
        CauseKind::Unexplained => "unexplained".into(),
    };
    match c.cpu {
        Some(cpu) => format!("{what} on CPU {cpu}"),
        None => what,
    }
}

/// A share (0-1) as a whole percentage, `<1%` for a small non-zero one.
pub fn percent(share: f64) -> String {
    if share > 0.0 && share < 0.005 {
        "<1%".into()
    } else {
        format!("{:.0}%", share * 100.0)
    }
}

/// One cause in a sentence: `NET_RX softirq on CPU 1: 71% of spike time in
/// 212 of 240 spikes` (`of noise time in 30 of 75 gaps` for noise).
pub fn cause_line(c: &Cause, why: &Why) -> String {
    format!(
        "{}: {} of {} in {} of {} {}s",
        cause_name(c),
        percent(c.share),
        why.subject.time(),
        c.spikes,
        why.spikes_total,
        why.subject.noun()
    )
}

/// The causes, ranked; beyond [`CAUSES_SHOWN`], one line for the rest.
fn causes(why: &Why) -> String {
    if why.causes.is_empty() {
        return "causes: none found\n".into();
    }
    let total: u64 = why.causes.iter().map(|c| c.ns).sum();
    let mut out = format!(
        "causes, by share of {} ({} in {} {}s):\n",
        why.subject.time(),
        Human(total),
        why.spikes_total,
        why.subject.noun()
    );
    let digits = why.causes.len().min(CAUSES_SHOWN).to_string().len();
    for (i, c) in why.causes.iter().take(CAUSES_SHOWN).enumerate() {
        let lead = format!("  {:>digits$}. ", i + 1);
        out.push_str(&paragraph(&lead, &cause_line(c, why)));
    }
    let rest = &why.causes[why.causes.len().min(CAUSES_SHOWN)..];
    if !rest.is_empty() {
        let share: f64 = rest.iter().map(|c| c.share).sum();
        out.push_str(&format!(
            "  and {} smaller cause(s): {} of {} in all\n",
            rest.len(),
            percent(share),
            why.subject.time()
        ));
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::format::text::table::WIDTH;
    use crate::record::why::{Idle, Irq, Softirq, Thread};

    fn spike() -> Spike {
        Spike {
            cpu: 1,
            thread: 0,
            cycle: 2417,
            latency_ns: 194_533,
            timer_irq_delay_ns: Some(1_800),
            irqs: vec![
                Irq {
                    name: "timer".into(),
                    irq: 0,
                    ns: 1_800,
                },
                Irq {
                    name: "virtio0-input.0".into(),
                    irq: 26,
                    ns: 4_190,
                },
            ],
            softirqs: vec![Softirq {
                vector: "NET_RX".into(),
                ns: 119_491,
            }],
            threads: vec![Thread {
                pid: 19,
                comm: "migration/1".into(),
                policy: "fifo".into(),
                priority: 99,
                ns: 3_100,
                outranked: true,
            }],
            idle: Some(Idle {
                state: "haltpoll".into(),
                exit_ns: 11_000,
            }),
            nmi_ns: 0,
            unexplained_ns: 54_952,
        }
    }

    fn cause(kind: CauseKind, name: &str, share: f64, spikes: u64) -> Cause {
        Cause {
            kind,
            name: name.into(),
            cpu: Some(1),
            ns: (share * 1e6) as u64,
            share,
            spikes,
        }
    }

    pub(in crate::format) fn why() -> Why {
        Why {
            threshold_ns: 50_000,
            available: vec!["sched".into(), "irq".into()],
            missing: vec!["idle exit: no power:cpu_idle event".into()],
            resolution_ns: 1_000,
            events: 1_843_907,
            events_lost: 0,
            spikes_total: 240,
            spikes: vec![spike()],
            causes: vec![
                cause(CauseKind::Softirq, "NET_RX", 0.71, 212),
                cause(CauseKind::Thread, "rtlab-load (pid 4121, other)", 0.2, 90),
                cause(CauseKind::Unexplained, "", 0.004, 3),
            ],
            timerlat: None,
            subject: Default::default(),
        }
    }

    #[test]
    fn a_spike_lists_every_part_amounts_aligned() {
        let text = render(&why());
        let want = "spike 1: 194.533us on CPU 1, thread 0, cycle 2417 (timer expired 1.8us late)\n\
                    \x20  11.0us  idle exit from haltpoll\n\
                    \x20   1.8us  timer interrupt\n\
                    \x20   4.2us  IRQ virtio0-input.0 (irq 26)\n\
                    \x20 119.5us  softirq NET_RX\n\
                    \x20   3.1us  thread migration/1 (pid 19, fifo 99): outranked the probe\n\
                    \x20  55.0us  unexplained\n";
        assert!(text.contains(want), "{text}");
        let s = spike();
        let sum: u64 = parts(&s).iter().map(|p| p.0).sum();
        assert_eq!(sum, s.latency_ns, "the fixture adds up");
    }

    #[test]
    fn causes_are_ranked_sentences() {
        let text = render(&why());
        assert!(text.starts_with(
            "why: 240 spike(s) at or above 50us; the 1 worst decomposed below\n\
             traced: sched, irq; 1843907 events, none lost; resolution 1us\n\
             not analysed: idle exit: no power:cpu_idle event\n"
        ));
        assert!(
            text.contains("  1. NET_RX softirq on CPU 1: 71% of spike time in 212 of 240 spikes\n"),
            "{text}"
        );
        assert!(text.contains("  3. unexplained on CPU 1: <1% of spike time in 3 of 240"));
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn lost_events_and_no_spikes_are_said() {
        let mut w = why();
        w.events_lost = 12;
        let text = render(&w);
        assert!(text.contains("12 lost"), "{text}");
        assert!(
            text.contains("  ! events_lost: the kernel dropped 12 events"),
            "{text}"
        );
        w.spikes_total = 0;
        w.spikes.clear();
        w.causes.clear();
        let text = render(&w);
        assert!(text.starts_with("why: no sample reached 50us: no spike to explain\n"));
        assert!(!text.contains("causes"), "{text}");
    }

    #[test]
    fn a_run_ends_in_short_when_stored_else_with_its_worst_spikes() {
        let mut w = why();
        w.spikes = (0..7).map(|_| spike()).collect();
        let stored = end_of_run(&w, Some(12));
        assert!(stored.starts_with(
            "why: 240 spike(s) at or above 50us; 'rtlab why 12' shows each one\n\
             causes, by share of spike time ("
        ));
        assert!(!stored.contains("spike 1:"), "{stored}");
        let unsaved = end_of_run(&w, None);
        assert!(
            unsaved.contains("; the 5 worst decomposed below\n"),
            "{unsaved}"
        );
        assert!(unsaved.contains("\nspike 5: ") && !unsaved.contains("\nspike 6: "));
        assert!(unsaved.contains("\ncauses, by share"), "{unsaved}");
    }

    #[test]
    fn causes_beyond_the_shown_are_summed() {
        let mut w = why();
        w.causes = (0..12)
            .map(|i| cause(CauseKind::Irq, &format!("q{i} (irq {i})"), 0.05, 1))
            .collect();
        let text = render(&w);
        assert!(text.contains(" 10. IRQ q9 (irq 9) on CPU 1: 5%"), "{text}");
        assert!(text.contains("  and 2 smaller cause(s): 10% of spike time in all\n"));
    }
}
