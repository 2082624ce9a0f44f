//! The timerlat entries on pages laid out as the kernel's, the options set
//! and put back on a directory shaped as tracefs, and the refusals.

use super::*;
use crate::trace::page::{for_each_record, PageLayout};
use std::fs;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");

fn fixture(name: &str) -> String {
    fs::read_to_string(format!("{FIXTURE}/{name}")).unwrap()
}

/// A `ftrace:timerlat` record: common fields, seqnum, context, latency, as
/// its `format` file lays them out (id 18 on the kernel it was read from).
fn entry(id: u16, seq: u32, context: i32, ns: u64) -> Vec<u8> {
    let mut r = id.to_le_bytes().to_vec();
    r.extend([0, 0]);
    r.extend(4242i32.to_le_bytes());
    r.extend(seq.to_le_bytes());
    r.extend(context.to_le_bytes());
    r.extend(ns.to_le_bytes());
    r
}

/// A page of `records`, each in a short event header (type = its 4-byte
/// words, time delta 1).
fn page(records: &[Vec<u8>], layout: &PageLayout) -> Vec<u8> {
    let mut data = Vec::new();
    for r in records {
        data.extend(((r.len() as u32 / 4) | (1 << 5)).to_le_bytes());
        data.extend(r);
    }
    let mut p = 1_000u64.to_le_bytes().to_vec();
    p.extend((data.len() as u64).to_le_bytes());
    p.extend(data);
    p.resize(layout.size, 0);
    p
}

#[test]
fn timerlat_entries_on_raw_pages_give_the_worst_irq_and_thread_latency() {
    let format = fixture("timerlat.format");
    let layout = PageLayout::parse(&fixture("header_page")).unwrap();
    let mut samples = Samples::new(&format).unwrap();
    assert_eq!(samples.id, 18);
    let print = 5; // ftrace:print, not a timerlat entry
    let cpu0 = page(
        &[
            entry(18, 1, 0, 1_500),
            entry(18, 1, 1, 4_000),
            entry(print, 0, 0, 999_999),
            entry(18, 2, 0, 2_500),
            entry(18, 2, 1, 9_000),
        ],
        &layout,
    );
    let cpu1 = page(
        &[
            entry(18, 1, 0, 7_000),
            entry(18, 1, 1, 8_000),
            entry(18, 1, 2, 50_000), // a user-space thread's: not counted
        ],
        &layout,
    );
    let mut others = 0;
    for (cpu, p) in [(0, cpu0), (1, cpu1)] {
        let st = for_each_record(&p, &layout, |_, r| {
            if !samples.take(cpu, r) {
                others += 1;
            }
        })
        .unwrap();
        assert!(st.records >= 3);
    }
    assert_eq!(others, 1, "the print record is left to the analysis");
    let t = samples.summary();
    assert_eq!(
        (t.irq_max_ns, t.thread_max_ns, t.samples),
        (7_000, 9_000, 3)
    );
    let cpus: Vec<_> = t
        .per_cpu
        .iter()
        .map(|c| {
            (
                c.cpu,
                c.samples,
                c.irq_avg_ns,
                c.irq_max_ns,
                c.thread_avg_ns,
                c.thread_max_ns,
            )
        })
        .collect();
    assert_eq!(
        cpus,
        [
            (0, 2, 2_000, 2_500, 6_500, 9_000),
            (1, 1, 7_000, 7_000, 8_000, 8_000)
        ]
    );
}

#[test]
fn a_format_without_the_latency_field_is_refused() {
    let format = fixture("timerlat.format").replace("timer_latency;", "latency;");
    let e = Samples::new(&format).unwrap_err();
    assert!(format!("{e:#}").contains("timer_latency"), "{e:#}");
}

/// A directory shaped as tracefs: the top level, `osnoise/` and the instance
/// `instances/rtlab-1`, with the files timerlat reads and writes.
fn tracefs(tracers: &str, in_instance: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let inst = root.join("instances/rtlab-1");
    fs::create_dir_all(&inst).unwrap();
    fs::create_dir_all(root.join("osnoise")).unwrap();
    fs::create_dir_all(root.join("events/ftrace/timerlat")).unwrap();
    fs::write(
        root.join("events/ftrace/timerlat/format"),
        fixture("timerlat.format"),
    )
    .unwrap();
    fs::write(root.join("available_tracers"), tracers).unwrap();
    fs::write(inst.join("available_tracers"), in_instance).unwrap();
    for dir in [root, &inst] {
        fs::write(dir.join("current_tracer"), "nop\n").unwrap();
    }
    for (name, value) in [
        ("cpus", "0-1\n"),
        ("timerlat_period_us", "1000\n"),
        ("stop_tracing_us", "50\n"),
        ("stop_tracing_total_us", "0\n"),
    ] {
        fs::write(root.join("osnoise").join(name), value).unwrap();
    }
    (d, inst)
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else {
            out.push((p.clone(), fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn the_options_are_set_for_the_run_and_put_back_after() {
    let all = "timerlat osnoise function nop";
    let (d, inst) = tracefs(all, "timerlat osnoise nop");
    let root = d.path();
    let before = snapshot(root);
    let (running, _) = start(root, &inst, &[1, 3], 200).unwrap();
    let read = |p: &str| fs::read_to_string(root.join(p)).unwrap();
    assert_eq!(read("osnoise/cpus"), "1,3");
    assert_eq!(read("osnoise/timerlat_period_us"), "200");
    assert_eq!(read("osnoise/stop_tracing_us"), "0");
    assert_eq!(read("osnoise/stop_tracing_total_us"), "0");
    assert_eq!(read("instances/rtlab-1/current_tracer"), "timerlat");
    assert_eq!(
        read("current_tracer"),
        "nop\n",
        "the top level is left alone"
    );
    drop(running);
    let trim = |s: Vec<(PathBuf, String)>| -> Vec<(PathBuf, String)> {
        s.into_iter()
            .map(|(p, v)| (p, v.trim().to_string()))
            .collect()
    };
    assert_eq!(trim(snapshot(root)), trim(before.clone()));
    // Threads not pinned: every online CPU.
    let (running, _) = offer(root, &inst, &[], Some(200)).unwrap();
    let online: Vec<String> = crate::trace::online_cpus()
        .iter()
        .map(usize::to_string)
        .collect();
    assert_eq!(read("osnoise/cpus"), online.join(","));
    drop(running);
    assert_eq!(read("osnoise/cpus"), "0-1");
    // Not asked for: what the kernel offers, and nothing touched.
    let e = offer(root, &inst, &[1], None).unwrap_err();
    assert!(e[0].contains("--timerlat"), "{e:?}");
    assert_eq!(trim(snapshot(root)), trim(before));
}

#[test]
fn what_cannot_run_is_said_and_nothing_is_touched() {
    let cases = [
        (
            "blk function nop",
            "nop",
            200,
            "",
            "the kernel has no timerlat tracer",
        ),
        (
            "timerlat nop",
            "timerlat nop",
            200,
            "",
            "the kernel has no osnoise tracer",
        ),
        (
            "timerlat osnoise nop",
            "nop",
            200,
            "",
            "only in the top-level buffer",
        ),
        (
            "timerlat osnoise nop",
            "timerlat osnoise nop",
            50,
            "",
            "100 µs to 1 s",
        ),
        (
            "timerlat osnoise nop",
            "timerlat osnoise nop",
            200,
            "osnoise",
            "the top-level buffer runs the osnoise tracer",
        ),
    ];
    for (tracers, in_instance, period, top, needle) in cases {
        let (d, inst) = tracefs(tracers, in_instance);
        if !top.is_empty() {
            fs::write(d.path().join("current_tracer"), top).unwrap();
        }
        let before = snapshot(d.path());
        let e = start(d.path(), &inst, &[1], period).unwrap_err();
        assert!(e.starts_with("timerlat: ") && e.contains(needle), "{e}");
        assert_eq!(snapshot(d.path()), before, "{needle}");
    }
}

#[test]
fn without_the_flag_what_the_kernel_offers_is_said() {
    let (d, _) = tracefs("blk function nop", "nop");
    assert_eq!(
        not_asked(d.path()),
        [
            "timerlat: the kernel has no timerlat tracer (IRQ versus thread latency is not split)",
            "osnoise: the kernel has no osnoise tracer"
        ]
    );
    fs::write(d.path().join("available_tracers"), "timerlat osnoise nop").unwrap();
    let said = not_asked(d.path());
    assert!(said[0].contains("--timerlat"), "{said:?}");
    assert!(
        said[1].starts_with("osnoise: the kernel has the tracer"),
        "{said:?}"
    );
}

#[test]
#[ignore = "needs root: reads the kernel's tracefs"]
fn on_a_kernel_without_the_tracer_it_is_said_and_nothing_is_touched() {
    let root = crate::trace::tracefs().unwrap();
    if offers(&root, TRACER) {
        eprintln!("skipped: this kernel has the timerlat tracer");
        return;
    }
    let top = fs::read_to_string(root.join("current_tracer")).unwrap();
    let e = start(&root, &root.join("instances/rtlab-absent"), &[0], 1_000).unwrap_err();
    assert_eq!(e, absent(TRACER));
    assert!(!root.join("instances/rtlab-absent").exists());
    assert_eq!(
        fs::read_to_string(root.join("current_tracer")).unwrap(),
        top
    );
    assert!(not_asked(&root)[0].starts_with("timerlat: the kernel has no timerlat tracer"));
}
