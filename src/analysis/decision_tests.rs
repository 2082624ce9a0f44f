use super::*;
use crate::analysis::fixture::windowed_run;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::verdict::{parse_requirement, FAIL, PASS, UNDECIDED};
use crate::record::{LoadRecord, Run};
use rtlab_engine::bench::Rng;

/// `n` values around `base` ns with an exponential tail of mean `tail` ns.
fn values(n: usize, seed: u64, base: f64, tail: f64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| (base - tail * (1.0 - rng.unit()).ln()) as u64)
        .collect()
}

/// A latency arm of one run whose largest wake-up is `max_ns`.
fn kernel(name: &str, max_ns: u64) -> Arm {
    let mut v = values(2_000, 1, 20_000.0, 2_000.0);
    v.push(max_ns);
    Arm::of_run(windowed_run(name, &v))
}

/// A cpu bench arm of one run whose events take `base` ns, spread by `tail`.
fn image(name: &str, seed: u64, base: f64, tail: f64) -> Arm {
    let mut run = windowed_run(name, &values(40_000, seed, base, tail));
    run.kind = "bench.cpu".into();
    let mean = run.total.as_ref().unwrap().summary.mean_ns;
    run.metrics.insert("events_per_s".into(), 1e9 / mean);
    Arm::of_run(run)
}

#[test]
fn the_drones_tier_matrix() {
    let arms = [
        kernel("vanilla", 193_000),
        kernel("PREEMPT", 1_500_000),
        kernel("RT", 19_500_000),
        image("bench", 1, 1_000.0, 100.0),
    ];
    let t = tiers(&arms, &parse_requirement("drone").unwrap(), DEFAULT_NOISE).unwrap();
    let names: Vec<(&str, u64)> = t
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.budget_ns))
        .collect();
    assert_eq!(
        names,
        [
            ("gyro, accel", 1_000_000),
            ("baro, compass, airspeed, sonar", 20_000_000),
            ("gps", 200_000_000)
        ]
    );
    // The bench's event times are no deadline's: no row.
    assert_eq!(t.rows.len(), 3);
    let results: Vec<(&str, Vec<&str>)> = t
        .rows
        .iter()
        .map(|r| (r.arm.as_str(), r.cells.iter().map(|c| c.result).collect()))
        .collect();
    assert_eq!(results[0], ("vanilla", vec![PASS, PASS, PASS]));
    assert_eq!(results[1], ("PREEMPT", vec![FAIL, PASS, PASS]));
    // 19.5 ms against 20 ms: within the 5 % noise.
    assert_eq!(results[2], ("RT", vec![FAIL, UNDECIDED, PASS]));
    assert_eq!(t.rows[1].cells[0].margin_ns, Some(-500_000));
    assert_eq!(t.rows[1].cells[0].requirement, "gyro, accel");
    assert!(tiers(&arms, &[], DEFAULT_NOISE).is_none());
}

#[test]
fn the_most_stable_image_is_named_when_it_is() {
    let arms = [
        image("image1", 1, 1_000.0, 400.0),
        image("image2", 2, 1_000.0, 100.0),
        image("image3", 3, 1_000.0, 250.0),
    ];
    let s = stability(&arms, DEFAULT_NOISE);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].kind, "bench.cpu");
    assert_eq!(
        s[0].outcome,
        Ranked::MostStable {
            arm: "image2".into()
        }
    );
    let order: Vec<&str> = s[0].entries.iter().map(|e| e.arm.as_str()).collect();
    assert_eq!(order, ["image2", "image3", "image1"]);
    let e = &s[0].entries[0];
    assert!(e.events_per_s.unwrap().ci.is_some());
    assert_eq!(
        e.max_min.unwrap().basis,
        crate::analysis::interval::Basis::Observed
    );
}

#[test]
fn images_alike_cannot_be_told_apart() {
    // The same distribution: no repeat would tell them apart.
    let alike = [
        image("image2", 2, 1_000.0, 100.0),
        image("image3", 3, 1_000.0, 100.0),
    ];
    let s = stability(&alike, DEFAULT_NOISE).remove(0);
    match s.outcome {
        Ranked::CannotTell { others, repeat, .. } => {
            assert_eq!(others.len(), 1);
            assert_eq!(repeat, None, "within the noise");
        }
        other => panic!("{other:?}"),
    }
    // Runs without windows say nothing of their spread: repeat them.
    let mut plain = alike.clone();
    for a in &mut plain {
        let run = &mut a.runs[0];
        for s in run.series.iter_mut().chain(&mut run.total) {
            s.windows = Default::default();
        }
    }
    match stability(&plain, DEFAULT_NOISE).remove(0).outcome {
        Ranked::CannotTell { repeat, .. } => assert_eq!(repeat, Some(3)),
        other => panic!("{other:?}"),
    }
    // Benches of different kinds are never ranked together.
    let mut io = image("usb", 4, 5_000.0, 100.0);
    io.kind = "bench.fileio".into();
    assert!(stability(&[alike[0].clone(), io], DEFAULT_NOISE).is_empty());
}

#[test]
fn a_suggested_number_of_repeats() {
    use crate::analysis::interval::Basis;
    let e = |value: f64, half: f64| Estimate {
        value,
        ci: Some((value - half, value + half)),
        basis: Basis::Runs { runs: 2 },
    };
    // A gap of 20 beyond the noise (5 of 100), intervals ±20 each: 2 · (40/20)² = 8.
    assert_eq!(
        repeats_to_separate(&e(100.0, 20.0), &e(125.0, 20.0), 2, 0.05),
        Some(8)
    );
    assert_eq!(
        repeats_to_separate(&e(100.0, 20.0), &e(104.0, 20.0), 2, 0.05),
        None
    );
    assert_eq!(
        repeats_to_separate(&e(100.0, 1.0), &e(125.0, 1.0), 2, 0.05),
        Some(3)
    );
}

/// A run under a CPU hog on the measured CPU: the tail grows tenfold.
fn hogged(label: &str) -> Run {
    let mut v = values(20_000, 2, 20_000.0, 2_000.0);
    for (i, x) in v.iter_mut().enumerate() {
        if i % 50 == 0 {
            *x *= 10;
        }
    }
    let mut run = windowed_run(label, &v);
    run.loads.push(LoadRecord {
        spec: "cpu:1".into(),
        kind: "cpu".into(),
        workers: 1,
        params: serde_json::Value::Null,
        ..LoadRecord::default()
    });
    run
}

#[test]
fn the_biggest_real_change_and_what_may_explain_it() {
    let idle = Arm::of_run(windowed_run("idle", &values(20_000, 1, 20_000.0, 2_000.0)));
    let hog = Arm::of_run(hogged("hog"));
    let c = biggest_change(&[idle.clone(), hog.clone()], 0, DEFAULT_NOISE).unwrap();
    assert_eq!((c.baseline.as_str(), c.arm.as_str()), ("idle", "hog"));
    assert_eq!(c.change, Change::Worse);
    assert!(c.ratio > 3.0, "{c:?}");
    let fields: Vec<&str> = c.differences.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(fields, ["loads"]);
    assert_eq!(c.differences[0].values, ["none", "cpu:1"]);
    // Repeats of one thing: nothing real changed.
    let again = Arm::of_run(windowed_run("idle2", &values(20_000, 3, 20_000.0, 2_000.0)));
    assert_eq!(
        biggest_change(&[idle.clone(), again], 0, DEFAULT_NOISE),
        None
    );
    // The whole decision: no requirements, no benches.
    let d = decide(&[idle, hog], 0, &[], DEFAULT_NOISE);
    assert!(d.tiers.is_none() && d.stability.is_empty());
    assert_eq!(d.biggest.unwrap().arm, "hog");
}

#[test]
fn a_field_that_differs_within_an_arm_explains_nothing() {
    let mut a1 = windowed_run("a", &[1_000; 40]);
    let a2 = a1.clone();
    a1.fingerprint.hz = Some(250);
    let mut b = a2.clone();
    b.fingerprint.kernel_release = "6.6.0-rt".into();
    let a = Arm::new("a", vec![a1, a2]);
    let d = between(&a, &Arm::of_run(b));
    let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(fields, ["kernel"]);
}
