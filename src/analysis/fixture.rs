//! Runs, campaign steps and rankings built from known samples, for the unit
//! tests of analyses, formats and queries.

use crate::analysis::attribution::{PartImpact, Ranking};
use crate::record::{Counters, LoadRecord, Run, Series, Status, FORMAT};
use crate::scenario::runner::StepRun;
use rtlab_engine::stats::hist::LatencyHistogram;
use rtlab_engine::stats::trace::TracePoint;
use rtlab_engine::stats::windows::Windows;
use rtlab_engine::stats::{Moments, Summary};
use rtlab_engine::sysinfo::Fingerprint;

/// One series holding exactly `samples` (ns), with a trace point per sample.
pub fn series_from_samples(name: &str, samples: &[u64]) -> Series {
    let mut m = Moments::default();
    let mut h = LatencyHistogram::new();
    for &v in samples {
        m.record(v);
        h.record(v);
    }
    Series {
        name: name.into(),
        thread: None,
        cpu: None,
        tid: None,
        interval_ns: Some(1_000_000),
        counters: Counters {
            samples: m.count,
            overruns: 0,
            deadline_misses: 0,
            overflows: 0,
        },
        summary: Summary::new(&m, &h),
        max_at: None,
        histogram: h.to_data(),
        us_histogram: None,
        windows: Default::default(),
        trace: samples
            .iter()
            .enumerate()
            .map(|(i, &v)| TracePoint {
                first_sample: i as u64,
                offset_ns: i as u64 * 1_000_000,
                max_ns: v,
            })
            .collect(),
    }
}

/// A complete latency run whose one thread (and total) saw `samples`, observed
/// for one period per sample.
pub fn run_from_samples(label: &str, samples: &[u64]) -> Run {
    let s = series_from_samples("cpu0", samples);
    let mut total = s.clone();
    total.name = "all".into();
    total.trace.clear();
    Run {
        format: FORMAT.into(),
        id: None,
        kind: "latency".into(),
        label: label.into(),
        tags: Vec::new(),
        campaign: None,
        status: Status::Complete,
        exit_code: 0,
        started_at: "2026-01-01T00:00:00.000000Z".into(),
        ended_at: "2026-01-01T00:00:01.000000Z".into(),
        duration_ns: samples.len() as u64 * 1_000_000,
        rtlab_version: "test".into(),
        command_line: vec!["rtlab".into(), "latency".into()],
        params: crate::record::RunParams::Recorded(
            serde_json::json!({"interval_ns": 1_000_000, "priority": 90}),
        ),
        fingerprint: Fingerprint {
            kernel_release: "6.1.0".into(),
            ..Fingerprint::default()
        },
        audit: None,
        loads: Vec::new(),
        series: vec![s],
        total: Some(total),
        metrics: Default::default(),
        breaktrace: None,
        why: None,
        page_faults: None,
        sweep: None,
        perf: None,
        background: None,
        warnings: Vec::new(),
    }
}

/// A latency run as [`run_from_samples`] makes it, its thread and total also
/// cut into time windows as the probes cut them (as runs of this rtlab are
/// stored).
pub fn windowed_run(label: &str, samples: &[u64]) -> Run {
    let mut run = run_from_samples(label, samples);
    let mut w = Windows::new();
    for &v in samples {
        w.record(v);
    }
    for s in run.series.iter_mut().chain(&mut run.total) {
        s.windows = w.to_data();
        s.trace.clear();
    }
    run
}

/// Runs `a` and `b` of one distribution of 20 000 values (50-60 µs), and `c`
/// of the same shifted by half again, each cut into windows: b is the same
/// as a, c is worse.
pub fn same_and_shifted() -> Vec<Run> {
    let samples: Vec<u64> = (0..20_000).map(|i| 50_000 + (i * 7_919) % 10_000).collect();
    let shifted: Vec<u64> = samples.iter().map(|v| v * 3 / 2).collect();
    vec![
        windowed_run("a", &samples),
        windowed_run("b", &samples),
        windowed_run("c", &shifted),
    ]
}

/// Two runs whose figures are computed by hand:
/// a = 10, 20, 30, 40 µs: min 10, mean 25, max 40, max-min 30
/// b = 5, 5, 5, 85 µs:    min 5,  mean 25, max 85, max-min 80
pub fn two_compared_runs() -> Vec<Run> {
    let mut a = run_from_samples("a", &[10_000, 20_000, 30_000, 40_000]);
    let mut b = run_from_samples("b", &[5_000, 5_000, 5_000, 85_000]);
    a.id = Some(1);
    b.id = Some(2);
    b.metrics.insert("events_per_s".into(), 300.0);
    a.metrics.insert("events_per_s".into(), 200.0);
    b.metrics.insert("total_time_s".into(), 2.5);
    vec![a, b]
}

/// A campaign step named `name` whose run saw `samples`, under the load `load`
/// (none: the idle step).
pub fn step_run(name: &str, samples: &[u64], load: Option<&str>) -> StepRun {
    let mut run = run_from_samples("k", samples);
    if let Some(l) = load {
        run.loads.push(LoadRecord {
            spec: l.into(),
            kind: l.into(),
            workers: 1,
            params: serde_json::Value::Null,
            ..LoadRecord::default()
        });
    }
    StepRun {
        index: 0,
        name: name.into(),
        base: name.into(),
        repeat: 1,
        run,
    }
}

/// An idle step whose source reported no percentiles (p50, p99, p99.9 are 0 and
/// unknown), and a step under CPU load with a 9 times higher tail.
pub fn unreported_idle_and_loaded() -> [StepRun; 2] {
    let mut idle = step_run("idle", &[10_000; 100], None);
    idle.run.params = crate::record::RunParams::Recorded(
        serde_json::json!({"unreported": ["p50_ns", "p99_ns", "p999_ns"]}),
    );
    [idle, step_run("cpu", &[90_000; 100], Some("cpu"))]
}

/// The attribution of a mix whose one part stays under 2× while the whole mix
/// multiplies p99.9 by 60 and the maximum by 10.
pub fn ranking_hurting_only_as_a_whole() -> Ranking {
    Ranking {
        mix: "dohell".into(),
        baseline_p999_ns: 100_000,
        baseline_max_ns: 1_000_000,
        whole: Some((6_000_000, 10_000_000)),
        parts: vec![PartImpact {
            part: "io".into(),
            p999_ns: 150_000,
            max_ns: 1_100_000,
            p999_ratio: 1.5,
            max_ratio: 1.1,
        }],
    }
}
