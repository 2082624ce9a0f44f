//! The parser on a buffer captured on a real kernel, and the analysis on
//! scripted events.

use super::analyse::Analyser;
use super::event::{Decoder, Event, EVENTS, PRINT};
use super::page::{for_each_record, PageLayout};
use crate::record::why::CauseKind;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURE}/{name}")).unwrap()
}

/// Every record of the captured CPU 1 buffer, decoded: its time, the
/// thread it was recorded in, the event.
fn captured() -> Vec<(u64, i32, Event)> {
    let layout = PageLayout::parse(&fixture("header_page")).unwrap();
    let mut d = Decoder::default();
    for (sys, name) in EVENTS.iter().map(|e| (e.0, e.1)).chain([PRINT]) {
        if name != "sched_wakeup" {
            d.add(sys, name, &fixture(&format!("{name}.format")))
                .unwrap();
        }
    }
    let raw = std::fs::read(format!("{FIXTURE}/cpu1.raw")).unwrap();
    let mut out = Vec::new();
    for page in raw.chunks(layout.size) {
        for_each_record(page, &layout, |ts, r| {
            out.extend(d.decode(r).map(|(pid, e)| (ts, pid, e)))
        })
        .unwrap();
    }
    out
}

#[test]
fn the_captured_buffer_decodes_as_the_kernel_printed_it() {
    let events = captured();
    let text = fixture("cpu1.txt");
    assert_eq!(events.len(), text.lines().count());
    let count = |ev: &str| {
        text.lines()
            .filter(|l| l.contains(&format!(" {ev}: ")))
            .count()
    };
    let switches = events
        .iter()
        .filter(|e| matches!(e.2, Event::Switch { .. }))
        .count();
    assert_eq!(switches, count("sched_switch"));
    let idles = events
        .iter()
        .filter(|e| matches!(e.2, Event::Idle { .. }))
        .count();
    assert_eq!(idles, count("cpu_idle"));
    // Timestamps in µs as the text shows them (11547.348027: ...).
    let us_of = |line: &str| -> u64 {
        let t = line
            .split_whitespace()
            .find(|w| w.ends_with(':') && w.contains('.'))
            .unwrap();
        t.trim_end_matches(':').replace('.', "").parse().unwrap()
    };
    let lines: Vec<&str> = text.lines().collect();
    // The kernel prints ns rounded to the nearest µs.
    let us = |ns: u64| (ns + 500) / 1000;
    for (e, line) in events.iter().zip(&lines) {
        assert_eq!(us(e.0), us_of(line), "{line}");
    }
    assert!(events.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    let marker = events.iter().find_map(|e| match &e.2 {
        Event::Print { text } => Some((e.1, text.clone())),
        _ => None,
    });
    assert_eq!(
        marker,
        Some((
            18800,
            "rtlab-spike thread=0 cycle=7 latency=1234 expected=5678\n".into()
        ))
    );
    let first = lines[0];
    assert!(first.contains("next_comm=rustc next_pid=18527 next_prio=120"));
    // Each record names the thread that ran: a switch, the one it leaves.
    assert_eq!(events[0].1, 18772);
    assert_eq!(
        events[0].2,
        Event::Switch {
            prev_pid: 18772,
            prev_prio: 120,
            prev_comm: "rustc".into(),
            next_pid: 18527,
            next_prio: 120,
            next_comm: "rustc".into()
        }
    );
}

/// A switch to `next_pid` (from the thread [`play`] says runs).
fn switch(next_pid: i32, next_prio: i32, comm: &str) -> Event {
    Event::Switch {
        prev_pid: 0,
        prev_prio: 120,
        prev_comm: String::new(),
        next_pid,
        next_prio,
        next_comm: comm.into(),
    }
}

/// Feeds `evs` of `cpu`, each recorded in the thread the script's switches
/// say runs (the idle task before the first): a switch leaves that thread.
fn play(a: &mut Analyser, cpu: usize, evs: impl IntoIterator<Item = (u64, Event)>) {
    let (mut running, mut prio, mut comm) = (0, 120, format!("swapper/{cpu}"));
    for (ts, mut e) in evs {
        let pid = running;
        if let Event::Switch {
            prev_pid,
            prev_prio,
            prev_comm,
            next_pid,
            next_prio,
            next_comm,
        } = &mut e
        {
            (*prev_pid, *prev_prio) = (running, prio);
            *prev_comm = std::mem::replace(&mut comm, next_comm.clone());
            (running, prio) = (*next_pid, *next_prio);
        }
        a.feed(cpu, ts, pid, e);
    }
}

/// The probe's (pid 100) spike marker.
fn marker(latency: u64, expected: u64) -> Event {
    Event::Print {
        text: format!("rtlab-spike thread=0 cycle=3 latency={latency} expected={expected}\n"),
    }
}

#[test]
fn nested_contexts_are_counted_once_and_the_parts_add_up() {
    let mut a = Analyser::default();
    let evs = [
        (500, switch(200, 4, "hog")), // fifo 95 runs
        (
            1_000,
            Event::IrqEntry {
                irq: 24,
                name: "eth0".into(),
            },
        ), // expected at 1_000
        (1_300, Event::IrqExit),
        (1_300, Event::SoftirqEntry { vec: 3 }),
        (
            1_400,
            Event::IrqEntry {
                irq: 24,
                name: "eth0".into(),
            },
        ), // inside the softirq
        (1_450, Event::IrqExit),
        (1_700, Event::SoftirqExit),
        (1_750, Event::TimerEntry { hrtimer: 0xdead }),
        (1_760, Event::Waking { pid: 100 }),
        (1_800, Event::TimerExit),
        (3_000, switch(100, 19, "rtlab-lat0")), // the hog ran 50 + 1_200 more
        (3_100, marker(2_050, 1_000)),
    ];
    play(&mut a, 1, evs);
    let (spikes, causes) = std::mem::take(&mut a.tally).finish();
    let s = &spikes[0];
    assert_eq!((s.cpu, s.cycle, s.latency_ns), (1, 3, 2_050));
    assert_eq!(s.irqs[0].ns, 350, "300 + 50 nested in NET_RX");
    assert_eq!((s.irqs[0].name.as_str(), s.irqs[0].irq), ("eth0", 24));
    assert_eq!(s.softirqs[0].vector, "NET_RX");
    assert_eq!(s.softirqs[0].ns, 350, "400 less the nested IRQ");
    assert_eq!(s.irqs[1].ns, 50, "the timer callback");
    let t = &s.threads[0];
    assert_eq!(
        (t.pid, t.comm.as_str(), t.priority, t.ns),
        (200, "hog", 95, 1_250)
    );
    assert!(t.outranked, "fifo 95 over the probe's fifo 80");
    assert_eq!(s.timer_irq_delay_ns, Some(750));
    assert_eq!(
        s.unexplained_ns, 50,
        "from the switch to the wake-up at 3_050"
    );
    let parts: u64 = s.irqs.iter().map(|i| i.ns).sum::<u64>()
        + s.softirqs.iter().map(|x| x.ns).sum::<u64>()
        + s.threads.iter().map(|t| t.ns).sum::<u64>();
    assert_eq!(parts + s.unexplained_ns, s.latency_ns);
    assert_eq!(causes[0].kind, CauseKind::Thread);
    assert_eq!(causes[0].name, "hog (pid 200, rt 95)");
    assert!((causes[0].share - 1_250.0 / 2_050.0).abs() < 1e-9);
}

/// The spike of a probe (pid 100, fifo 90) on a CPU where a fifo 95 hog
/// (pid 200) was switched in from idle before the window opened, and the
/// kernel recorded no event of that switch (it records no task-context event
/// of some CPUs' idle task): the events after the window opens, each recorded
/// while the hog ran, put the window on the hog.
#[test]
fn a_window_that_opens_while_a_thread_already_runs_is_that_thread_s() {
    const PROBE: i32 = 100;
    const HOG: i32 = 200;
    let to_idle = Event::Switch {
        prev_pid: PROBE,
        prev_prio: 9,
        prev_comm: "rtlab-lat0".into(),
        next_pid: 0,
        next_prio: 120,
        next_comm: "swapper/1".into(),
    };
    let to_probe = Event::Switch {
        prev_pid: HOG,
        prev_prio: 4,
        prev_comm: "hog".into(),
        next_pid: PROBE,
        next_prio: 9,
        next_comm: "rtlab-lat0".into(),
    };
    let timer = [
        (1_050, HOG, Event::TimerEntry { hrtimer: 0 }),
        (1_060, HOG, Event::TimerEntry { hrtimer: 0xbeef }),
        (1_070, HOG, Event::Waking { pid: PROBE }),
        (1_080, HOG, Event::TimerExit),
        (1_090, HOG, Event::TimerExit),
    ];
    // With the timer's interrupt traced, and with the hog's switch out alone.
    for with_timer in [true, false] {
        let mut a = Analyser::default();
        // The probe sleeps at 0; the hog runs from 500 (not traced); the
        // probe's timer expires at 1_000 while the hog runs.
        a.feed(1, 0, PROBE, to_idle.clone());
        for (ts, pid, e) in timer.iter().filter(|_| with_timer).cloned() {
            a.feed(1, ts, pid, e);
        }
        a.feed(1, 2_000, HOG, to_probe.clone());
        a.feed(1, 2_100, PROBE, marker(1_050, 1_000));
        let (spikes, causes) = std::mem::take(&mut a.tally).finish();
        let s = &spikes[0];
        let timer_ns = if with_timer { 40 } else { 0 };
        let t = &s.threads[0];
        assert_eq!(
            (t.pid, t.comm.as_str(), t.policy.as_str(), t.priority),
            (HOG, "hog", "rt", 95),
            "with the timer traced: {with_timer}"
        );
        assert_eq!(t.ns, 1_000 - timer_ns, "the window to the switch");
        assert!(t.outranked);
        assert_eq!(s.irqs.iter().map(|i| i.ns).sum::<u64>(), timer_ns);
        assert_eq!(s.unexplained_ns, 50, "the probe's own 50 ns to its read");
        assert_eq!(causes[0].name, "hog (pid 200, rt 95)");
        assert_eq!(causes[0].kind, CauseKind::Thread);
    }
}

#[test]
fn a_thread_never_switched_in_the_trace_has_the_priority_the_kernel_gives_it() {
    // The trace begins while this test's process (SCHED_OTHER) runs on CPU 1:
    // no switch tells its priority, the kernel does.
    let me = std::process::id() as i32;
    let mut a = Analyser::default();
    a.feed(1, 1_500, me, Event::TimerEntry { hrtimer: 0 });
    a.feed(1, 1_510, me, Event::TimerExit);
    let to_probe = Event::Switch {
        prev_pid: me,
        prev_prio: 120,
        prev_comm: "tests".into(),
        next_pid: 100,
        next_prio: 9,
        next_comm: "rtlab-lat0".into(),
    };
    a.feed(1, 2_000, me, to_probe);
    a.feed(1, 2_100, 100, marker(1_050, 1_000));
    let (spikes, _) = std::mem::take(&mut a.tally).finish();
    let t = &spikes[0].threads[0];
    assert_eq!((t.pid, t.policy.as_str(), t.priority), (me, "other", 0));
    assert_eq!(
        t.ns, 490,
        "from its first event to its switch, less the tick"
    );
    assert!(!t.outranked);
}

#[test]
fn an_idle_cpu_names_its_idle_exit_and_causes_rank_over_every_spike() {
    let mut a = Analyser::default();
    let evs = [
        (0, switch(0, 120, "swapper/0")),
        (10, Event::Idle { state: 1 }),
        (1_400, Event::TimerEntry { hrtimer: 1 }),
        (1_410, Event::Waking { pid: 100 }),
        (1_450, Event::TimerExit),
        (1_500, Event::Idle { state: u32::MAX }),
        (1_600, switch(100, 9, "rtlab-lat0")),
        (1_700, marker(650, 1_000)),
    ];
    let more = (0..150).map(|cycle| (2_000 + cycle * 10, marker(1, 0)));
    play(&mut a, 0, evs.into_iter().chain(more));
    let total = a.tally.total;
    let (spikes, causes) = std::mem::take(&mut a.tally).finish();
    assert_eq!(total, 151);
    assert_eq!(spikes.len(), super::spike::SPIKES_KEPT);
    let s = &spikes[0];
    let idle = s.idle.as_ref().unwrap();
    assert_eq!(
        idle.exit_ns,
        400 + 50,
        "to the timer, then back to the exit"
    );
    assert_eq!(s.timer_irq_delay_ns, Some(400));
    assert_eq!(s.unexplained_ns, 650 - 450 - 50);
    let idle_cause = causes.iter().find(|c| c.kind == CauseKind::Idle).unwrap();
    assert_eq!(
        (idle_cause.ns, idle_cause.spikes, idle_cause.cpu),
        (450, 1, Some(0))
    );
}

#[test]
fn lost_events_are_the_overwritten_and_the_dropped() {
    let stats = "entries: 69\noverrun: 184\ncommit overrun: 0\nbytes: 6108\n\
                 oldest event ts: 11959.494619\nnow ts: 13007.936725\n\
                 dropped events: 3\nread events: 0\n";
    assert_eq!(super::lost_in(stats), 187);
}

#[test]
fn a_policy_read_now_is_kept_only_where_the_traced_priority_agrees() {
    // This test's thread runs SCHED_OTHER: so it is named at a normal
    // priority, and at an RT or deadline one it had then (the trace says so).
    let me = std::process::id() as i32;
    assert_eq!(super::analyse::policy_of(me, 120), "other");
    assert_eq!(super::analyse::policy_of(me, 4), "rt");
    assert_eq!(super::analyse::policy_of(me, -1), "deadline");
    // A thread gone since: its priority alone.
    let gone = (4_000_000..)
        .find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    assert_eq!(super::analyse::policy_of(gone, 4), "rt");
    assert_eq!(super::analyse::policy_of(gone, 139), "other");
}

#[test]
fn a_noise_gap_is_its_window_on_its_cpu_with_nmis_carved_out() {
    let mut a = Analyser::default();
    let gap = |n: u64, start: u64, end: u64| Event::Print {
        text: format!("rtlab-gap cpu=1 thread=0 gap={n} start={start} end={end}\n"),
    };
    let evs = [
        (0, switch(100, 98, "rtlab-noise1")),      // the spinner, fifo 1
        (1_000, Event::TimerEntry { hrtimer: 0 }), // the gap starts at 1_000
        (1_200, Event::TimerExit),
        (1_200, Event::SoftirqEntry { vec: 1 }),
        (1_500, Event::Nmi { delta_ns: 100 }), // 1_400-1_500, in the softirq
        (1_600, Event::SoftirqExit),
        (1_600, switch(200, 97, "burst")), // fifo 2 preempts
        (2_600, switch(100, 98, "rtlab-noise1")),
        (2_650, gap(0, 1_000, 2_640)),
    ];
    play(&mut a, 1, evs);
    // On another CPU: not this gap's.
    let elsewhere = [
        (1_500, switch(300, 120, "elsewhere")),
        (2_500, switch(0, 120, "swapper/0")),
    ];
    play(&mut a, 0, elsewhere);
    // A gap on a CPU no event was seen on is not decomposed.
    let text = "rtlab-gap cpu=7 thread=0 gap=1 start=1 end=2\n".into();
    a.feed(0, 2_700, 100, Event::Print { text });
    let total = a.tally.total;
    let (gaps, causes) = std::mem::take(&mut a.tally).finish();
    assert_eq!(total, 1);
    let g = &gaps[0];
    assert_eq!((g.cpu, g.cycle, g.latency_ns), (1, 0, 1_640));
    assert_eq!(g.timer_irq_delay_ns, None, "a gap has no timer to be late");
    assert_eq!(g.irqs[0].ns, 200, "the tick");
    assert_eq!(g.softirqs[0].vector, "TIMER");
    assert_eq!(g.softirqs[0].ns, 300, "400 less the NMI inside it");
    assert_eq!(g.nmi_ns, 100);
    let t = &g.threads[0];
    assert_eq!(
        (t.pid, t.comm.as_str(), t.priority, t.ns),
        (200, "burst", 2, 1_000)
    );
    assert!(t.outranked);
    assert_eq!(
        g.unexplained_ns, 40,
        "the spinner's own 40 ns before its read"
    );
    assert_eq!(200 + 300 + 100 + 1_000 + g.unexplained_ns, g.latency_ns);
    assert_eq!(causes[0].name, "burst (pid 200, rt 2)");
    let nmi = causes.iter().find(|c| c.kind == CauseKind::Nmi).unwrap();
    assert_eq!((nmi.ns, nmi.spikes, nmi.cpu), (100, 1, Some(1)));
}
