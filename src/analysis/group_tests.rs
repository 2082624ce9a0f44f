use super::*;
use crate::analysis::fixture::run_from_samples;
use crate::record::{RunParams, Warning};

/// A run of `host` with id `id` that saw `samples` (ns).
fn on(host: &str, id: i64, samples: &[u64]) -> Run {
    let mut r = run_from_samples(&format!("run{id}"), samples);
    r.id = Some(id);
    r.fingerprint.hostname = host.into();
    r
}

fn values(c: &Comparison, name: &str) -> Vec<Option<f64>> {
    let row = c.rows.iter().find(|r| r.name == name).unwrap();
    row.cells.iter().map(|c| c.value).collect()
}

#[test]
fn groups_come_in_the_order_named_then_by_name() {
    let runs = [
        on("c", 1, &[1]),
        on("a", 2, &[1]),
        on("b", 3, &[1]),
        on("a", 4, &[1]),
    ];
    let g = group(&runs, By::Host, &["b".into()]).unwrap();
    let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    assert_eq!(
        g[1].runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [Some(2), Some(4)]
    );
    assert_eq!(
        group(&runs, By::Host, &["a".into(), "x".into()]).unwrap_err(),
        "x"
    );
}

#[test]
fn a_run_is_in_the_group_of_each_of_its_tags() {
    let mut a = on("h", 1, &[1]);
    a.tags = vec!["nightly".into(), "isolcpus".into()];
    let b = on("h", 2, &[1]);
    let g = group(&[a, b], By::Tag, &[]).unwrap();
    let names: Vec<(&str, usize)> = g.iter().map(|g| (g.name.as_str(), g.runs.len())).collect();
    assert_eq!(names, [("isolcpus", 1), ("nightly", 1)]);
    let mut k = on("h", 3, &[1]);
    k.fingerprint.kernel_release = "6.6.0-rt".into();
    let g = group(&[k, on("h", 4, &[1])], By::Kernel, &[]).unwrap();
    assert_eq!(
        g.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
        ["6.1.0", "6.6.0-rt"]
    );
}

/// Two hosts: a = runs 1 (10, 20 µs) and 2 (30, 90 µs); b = run 3 (50 µs).
#[test]
fn merged_groups_add_histograms_and_keep_the_worst_maximum() {
    let mut r1 = on("a", 1, &[10_000, 20_000]);
    let mut r2 = on("a", 2, &[30_000, 90_000]);
    let r3 = on("b", 3, &[50_000]);
    r1.total.as_mut().unwrap().counters.deadline_misses = 2;
    r2.total.as_mut().unwrap().counters.deadline_misses = 3;
    r2.status = Status::Interrupted;
    r2.started_at = "2026-01-03T00:00:00.000000Z".into();
    r2.ended_at = "2026-01-03T00:00:02.000000Z".into();
    let groups = group(&[r1, r2, r3], By::Host, &[]).unwrap();
    let (runs, c) = compare_groups(&groups, By::Host, 1, 0.05);
    assert_eq!(runs[0].label, "a");
    assert_eq!(runs[0].status, Status::Interrupted);
    assert_eq!(runs[0].started_at, "2026-01-01T00:00:00.000000Z");
    assert_eq!(runs[0].ended_at, "2026-01-03T00:00:02.000000Z");
    assert_eq!(runs[0].duration_ns, 4_000_000);
    assert_eq!(values(&c, "runs"), [Some(2.0), Some(1.0)]);
    assert_eq!(values(&c, "worst run"), [Some(2.0), Some(3.0)]);
    assert_eq!(values(&c, "samples"), [Some(4.0), Some(1.0)]);
    assert_eq!(values(&c, "max"), [Some(90_000.0), Some(50_000.0)]);
    assert_eq!(values(&c, "min"), [Some(10_000.0), Some(50_000.0)]);
    assert_eq!(values(&c, "mean"), [Some(37_500.0), Some(50_000.0)]);
    assert_eq!(values(&c, "misses"), [Some(5.0), Some(0.0)]);
    // Four values support no median: never a number.
    assert_eq!(values(&c, "p50"), [None, None]);
    assert_eq!(c.rows[0].name, "runs");
    let info = c.columns[0].group.as_ref().unwrap();
    assert_eq!(
        (info.by, info.runs.clone(), info.worst),
        (By::Host, vec![1, 2], Some(2))
    );
}

#[test]
fn a_merged_group_keeps_the_worst_metric_and_every_unreported_figure() {
    let mut a = on("h", 1, &[10_000]);
    let mut b = on("h", 2, &[20_000]);
    a.metrics = [("events_per_s".into(), 200.0), ("total_time_s".into(), 1.0)].into();
    b.metrics = [
        ("events_per_s".into(), 150.0),
        ("messages_lost".into(), 3.0),
    ]
    .into();
    b.params = RunParams::Recorded(serde_json::json!({"unreported": ["p99_ns"]}));
    a.warnings = vec![Warning::new("vm", "a VM")];
    b.warnings = a.warnings.clone();
    let g = &group(&[a.clone(), b], By::Host, &[]).unwrap()[0];
    let m = g.merged();
    let want: BTreeMap<String, f64> = [
        ("events_per_s".into(), 150.0),
        ("messages_lost".into(), 3.0),
    ]
    .into();
    assert_eq!(m.metrics, want);
    assert!(!crate::step::reports(&m, "p99_ns") && crate::step::reports(&m, "max_ns"));
    assert_eq!(m.warnings.len(), 1);
    assert_eq!(m.id, None);
    // One run stands for itself: its figures, its own parameters.
    let one = &group(&[a.clone()], By::Host, &[]).unwrap()[0].merged();
    assert_eq!(one.params, a.params);
    let (s, own) = (
        &one.total.as_ref().unwrap().summary,
        &a.total.unwrap().summary,
    );
    assert_eq!(
        (s.max_ns, s.p99_ns, s.samples),
        (own.max_ns, own.p99_ns, own.samples)
    );
}
