use super::*;
use crate::analysis::fixture::{run_from_samples, windowed_run};
use rtlab_engine::stats::windows::WINDOWS;

/// `n` latencies of 20 µs plus an exponential tail of mean 3 µs, times
/// `scale`, drawn with `seed`: iid, like a quiet machine.
fn iid(n: usize, seed: u64, scale: f64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| ((20_000.0 - 3_000.0 * (1.0 - rng.unit()).ln()) * scale) as u64)
        .collect()
}

/// The same marginal spread, but wake-ups close in time alike: the run moves
/// between 64 stretches whose level differs by up to ±10 %.
fn correlated(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let stretch = n.div_ceil(64);
    let mut level = 1.0;
    (0..n)
        .map(|i| {
            if i % stretch == 0 {
                level = 0.9 + 0.2 * rng.unit();
            }
            ((20_000.0 - 3_000.0 * (1.0 - rng.unit()).ln()) * level) as u64
        })
        .collect()
}

fn width(e: &Estimate) -> f64 {
    let (lo, hi) = e.ci.unwrap();
    hi - lo
}

fn est(value: f64, lo: f64, hi: f64, basis: Basis) -> Estimate {
    Estimate {
        value,
        ci: Some((lo, hi)),
        basis,
    }
}

const W: Basis = Basis::Windows { windows: 32 };

#[test]
fn judging_by_hand() {
    let j = |a, b, better| judge(&a, &b, better, DEFAULT_NOISE);
    let base = est(100.0, 98.0, 102.0, W);
    // Separated by more than 5 of 100: worse for a latency, better for a rate.
    let up = est(110.0, 108.0, 112.0, W);
    assert_eq!(j(base, up, Better::Lower).change, Change::Worse);
    assert_eq!(j(base, up, Better::Higher).change, Change::Better);
    assert!(j(base, up, Better::Lower).decided);
    assert_eq!(j(up, base, Better::Lower).change, Change::Better);
    // Separated, but by less than the noise: the same, and sure of it.
    let near = est(102.0, 101.0, 103.0, W);
    assert_eq!(
        j(base, near, Better::Lower),
        Judged {
            change: Change::Same,
            decided: true
        }
    );
    // Separated by less than the noise, but a larger difference (7) is
    // within the intervals: the same, undecided.
    let apart = est(104.0, 103.0, 105.0, W);
    assert_eq!(j(base, apart, Better::Lower).change, Change::Same);
    assert!(!j(base, apart, Better::Lower).decided);
    // Overlapping but wide: the same, undecided.
    let wide = est(104.0, 80.0, 130.0, W);
    assert_eq!(
        j(base, wide, Better::Lower),
        Judged {
            change: Change::Same,
            decided: false
        }
    );
    // No interval on a side, or no direction: unknown.
    let unknown = Judged {
        change: Change::Unknown,
        decided: false,
    };
    for other in [
        Estimate::point(110.0),
        Estimate {
            basis: Basis::Observed,
            ..up
        },
        Estimate {
            basis: Basis::Unsupported {
                needed: 100_000,
                have: 2_000,
            },
            ..up
        },
    ] {
        assert_eq!(j(base, other, Better::Lower), unknown);
    }
    assert_eq!(j(base, up, Better::Neither), unknown);
}

#[test]
fn ranges_of_extremes_separate_only_with_enough_runs() {
    let r = |runs, lo, hi| est(hi, lo, hi, Basis::Range { runs });
    let j = |a, b| judge(&a, &b, Better::Lower, DEFAULT_NOISE);
    // All of one side above all of the other: 2 / C(8, 4) = 3 % by chance.
    assert_eq!(j(r(4, 60.0, 70.0), r(4, 90.0, 110.0)).change, Change::Worse);
    // 2 runs a side: 2 / C(4, 2) = 33 %, nothing can be said.
    let two = j(r(2, 60.0, 70.0), r(2, 90.0, 110.0));
    assert_eq!((two.change, two.decided), (Change::Unknown, false));
    // Overlapping ranges of few runs: the same, undecided.
    let two = j(r(2, 60.0, 70.0), r(2, 65.0, 71.0));
    assert_eq!((two.change, two.decided), (Change::Same, false));
    assert!(ranks_separate(3, 5) && !ranks_separate(3, 4) && !ranks_separate(2, 6));
    assert!(ranks_separate(1, 39) && !ranks_separate(1, 38));
}

#[test]
fn percentiles_need_ten_over_one_minus_p_samples() {
    assert_eq!(needed(0.5), 20);
    assert_eq!(needed(0.99), 1_000);
    assert_eq!(needed(0.999), 10_000);
    assert_eq!(needed(0.9999), 100_000);
    assert!(supported(0.9999, 100_000) && !supported(0.9999, 99_999));
    assert!(!supported(1.0, u64::MAX));
    let run = windowed_run("r", &iid(2_000, 1, 1.0));
    let e = of_run(&run, "p99.99").unwrap();
    assert_eq!(
        e.basis,
        Basis::Unsupported {
            needed: 100_000,
            have: 2_000
        }
    );
    assert_eq!(e.ci, None);
    assert!(matches!(
        of_run(&run, "p99").unwrap().basis,
        Basis::Windows { .. }
    ));
    // p95 − mean needs what p95 needs.
    let few = windowed_run("r", &iid(150, 1, 1.0));
    assert!(matches!(
        of_run(&few, "p95-mean").unwrap().basis,
        Basis::Unsupported { needed: 200, .. }
    ));
}

#[test]
fn two_identical_distributions_are_the_same_and_decided() {
    let a = windowed_run("a", &iid(200_000, 1, 1.0));
    let b = windowed_run("b", &iid(200_000, 2, 1.0));
    for metric in ["mean", "p50", "p99", "p99.9", "stddev"] {
        let (ea, eb) = (of_run(&a, metric).unwrap(), of_run(&b, metric).unwrap());
        assert!(
            matches!(ea.basis, Basis::Windows { windows } if windows >= WINDOWS / 2),
            "{metric}: {ea:?}"
        );
        let (lo, hi) = ea.ci.unwrap();
        assert!(lo <= ea.value && ea.value <= hi, "{metric}: {ea:?}");
        let j = judge(&ea, &eb, Better::Lower, DEFAULT_NOISE);
        assert_eq!(
            j,
            Judged {
                change: Change::Same,
                decided: true
            },
            "{metric}: {ea:?} {eb:?}"
        );
    }
}

#[test]
fn shifted_by_more_than_the_noise_is_worse() {
    let a = windowed_run("a", &iid(50_000, 1, 1.0));
    let b = windowed_run("b", &iid(50_000, 2, 1.2));
    for metric in ["mean", "p50", "p99"] {
        let (ea, eb) = (of_run(&a, metric).unwrap(), of_run(&b, metric).unwrap());
        let j = judge(&ea, &eb, Better::Lower, DEFAULT_NOISE);
        assert_eq!((j.change, j.decided), (Change::Worse, true), "{metric}");
        let j = judge(&eb, &ea, Better::Lower, DEFAULT_NOISE);
        assert_eq!(j.change, Change::Better, "{metric}");
    }
    // A shift within the noise is no real difference.
    let c = windowed_run("c", &iid(200_000, 3, 1.02));
    let j = judge(
        &of_run(&a, "mean").unwrap(),
        &of_run(&c, "mean").unwrap(),
        Better::Lower,
        DEFAULT_NOISE,
    );
    assert_eq!(j.change, Change::Same);
}

#[test]
fn correlated_windows_give_wider_intervals_than_iid() {
    let flat = windowed_run("iid", &iid(100_000, 1, 1.0));
    let drift = windowed_run("drift", &correlated(100_000, 1));
    for metric in ["mean", "p50", "p99"] {
        let (f, d) = (
            of_run(&flat, metric).unwrap(),
            of_run(&drift, metric).unwrap(),
        );
        assert!(
            width(&d) > 2.0 * width(&f),
            "{metric}: iid {f:?}, correlated {d:?}"
        );
    }
}

#[test]
fn the_same_run_gives_the_same_interval() {
    let run = windowed_run("r", &correlated(20_000, 5));
    assert_eq!(of_run(&run, "p99"), of_run(&run, "p99"));
}

#[test]
fn a_maximum_is_observed_in_one_run_and_a_range_over_repeats() {
    let runs: Vec<Run> = (0..5)
        .map(|i| windowed_run("r", &iid(5_000, i, 1.0 + i as f64 / 10.0)))
        .collect();
    let one = of_run(&runs[0], "max").unwrap();
    assert_eq!((one.basis, one.ci), (Basis::Observed, None));
    assert_eq!(of_run(&runs[0], "min").unwrap().basis, Basis::Observed);
    let maxima: Vec<f64> = runs
        .iter()
        .map(|r| r.total.as_ref().unwrap().summary.max_ns as f64)
        .collect();
    let refs: Vec<&Run> = runs.iter().collect();
    let all = of_runs(&refs, "max").unwrap();
    assert_eq!(all.basis, Basis::Range { runs: 5 });
    let (lo, hi) = min_max(&maxima);
    assert_eq!((all.value, all.ci), (hi, Some((lo, hi))));
    let spread = of_runs(&refs, "max-min").unwrap();
    assert_eq!(spread.basis, Basis::Range { runs: 5 });
    assert_eq!(Some(spread.value), spread.ci.map(|c| c.1));
}

#[test]
fn runs_without_windows_have_no_interval_of_their_own() {
    // Runs stored before windows (this one measured live by an older rtlab)
    // load, and say nothing of their spread.
    let old: Run =
        serde_json::from_str(include_str!("../../tests/fixtures/why/latency-flood.json")).unwrap();
    assert!(old.total.as_ref().unwrap().windows.is_empty());
    let e = of_run(&old, "p99").unwrap();
    assert_eq!((e.basis, e.ci), (Basis::Point, None));
    let fresh = windowed_run("new", &iid(10_000, 1, 1.0));
    let j = judge(&e, &of_run(&fresh, "p99").unwrap(), Better::Lower, 0.05);
    assert_eq!(j.change, Change::Unknown);
    // Several of them: an interval across the runs.
    let plain: Vec<Run> = (0..4)
        .map(|i| run_from_samples("r", &iid(3_000, i, 1.0)))
        .collect();
    let refs: Vec<&Run> = plain.iter().collect();
    let g = of_runs(&refs, "p99").unwrap();
    assert_eq!(g.basis, Basis::Runs { runs: 4 });
    let (lo, hi) = g.ci.unwrap();
    assert!(lo < g.value && g.value < hi, "{g:?}");
}

/// The value of several runs is the figure of all their samples; the
/// interval is wider with 2 runs than with 6 of the same kind.
#[test]
fn repeats_pool_their_samples_and_two_runs_say_little() {
    let runs: Vec<Run> = (0..6)
        .map(|i| windowed_run("r", &iid(20_000, i, 1.0)))
        .collect();
    let refs: Vec<&Run> = runs.iter().collect();
    let all: Vec<u64> = (0..6).flat_map(|i| iid(20_000, i, 1.0)).collect();
    let pooled = run_from_samples("all", &all);
    let six = of_runs(&refs, "p99").unwrap();
    let p99 = pooled.total.as_ref().unwrap().summary.p99_ns as f64;
    assert_eq!(six.value, p99);
    assert_eq!(six.basis, Basis::Runs { runs: 6 });
    let two = of_runs(&refs[..2], "p99").unwrap();
    assert!(width(&two) > 2.0 * width(&six), "{two:?} {six:?}");
    assert_eq!(of_runs(&refs[..1], "p99"), of_run(&runs[0], "p99"));
    let mean = of_runs(&refs, "mean").unwrap();
    let exact = all.iter().sum::<u64>() as f64 / all.len() as f64;
    assert!((mean.value - exact).abs() < 1.0, "{mean:?}");
}

#[test]
fn metrics_of_repeats_are_their_mean_with_students_interval() {
    let mut runs: Vec<Run> = (0..3).map(|_| run_from_samples("r", &[1_000])).collect();
    for (r, v) in runs.iter_mut().zip([100.0, 110.0, 120.0]) {
        r.metrics.insert("events_per_s".into(), v);
    }
    let refs: Vec<&Run> = runs.iter().collect();
    let e = of_runs(&refs, "events_per_s").unwrap();
    // mean 110, s = 10, t(2) = 4.303: ± 4.303 · 10 / √3.
    let half = 4.303 * 10.0 / 3f64.sqrt();
    assert_eq!(e.basis, Basis::Runs { runs: 3 });
    let (lo, hi) = e.ci.unwrap();
    assert!((e.value - 110.0).abs() < 1e-9);
    assert!((lo - (110.0 - half)).abs() < 1e-9 && (hi - (110.0 + half)).abs() < 1e-9);
    // One run's metric: the value alone.
    assert_eq!(
        of_run(&runs[0], "events_per_s").unwrap().basis,
        Basis::Point
    );
    assert_eq!(of_run(&runs[0], "no_such_metric"), None);
}

/// A bench's rate moves as one over its mean event time.
#[test]
fn a_benchs_rate_has_the_interval_of_its_mean() {
    let mut run = windowed_run("b", &iid(40_000, 7, 1.0));
    let mean = run.total.as_ref().unwrap().summary.mean_ns;
    run.metrics.insert("events_per_s".into(), 1e9 / mean);
    let rate = of_run(&run, "events_per_s").unwrap();
    let m = of_run(&run, "mean").unwrap();
    let (lo, hi) = rate.ci.unwrap();
    let (mlo, mhi) = m.ci.unwrap();
    // Relative widths agree to first order.
    let rel = |lo: f64, hi: f64, v: f64| (hi - lo) / v;
    let (a, b) = (rel(lo, hi, rate.value), rel(mlo, mhi, m.value));
    assert!((a - b).abs() < 0.1 * b, "{rate:?} {m:?}");
}

#[test]
fn unreported_figures_have_no_estimate() {
    let mut run = windowed_run("r", &iid(2_000, 1, 1.0));
    run.params = crate::record::RunParams::Recorded(serde_json::json!({"unreported": ["p99_ns"]}));
    assert_eq!(of_run(&run, "p99"), None);
    assert!(of_run(&run, "p50").is_some());
    run.kind = "bench.cpu".into();
    assert_eq!(of_run(&run, "overruns"), None);
}

#[test]
fn an_estimate_in_json() {
    let e = est(100.0, 98.0, 102.5, W);
    assert_eq!(
        serde_json::to_value(e).unwrap(),
        serde_json::json!({"value": 100.0, "ci": [98.0, 102.5], "basis": "windows", "windows": 32})
    );
    let u = Estimate {
        value: 5.0,
        ci: None,
        basis: Basis::Unsupported {
            needed: 1_000,
            have: 20,
        },
    };
    assert_eq!(
        serde_json::to_value(u).unwrap(),
        serde_json::json!({"value": 5.0, "ci": null, "basis": "unsupported", "needed": 1000, "have": 20})
    );
    let j = Judged {
        change: Change::Same,
        decided: true,
    };
    assert_eq!(
        serde_json::to_value(j).unwrap(),
        serde_json::json!({"change": "same", "decided": true})
    );
}

#[test]
fn the_widening_for_few_units() {
    assert!((widening(2) - 9.17).abs() < 0.01);
    assert!((widening(3) - 2.69).abs() < 0.01);
    assert!((widening(5) - 1.58).abs() < 0.01);
    assert!(widening(32) < 1.07);
    assert!(widening(1).is_infinite());
}

/// Of 200 runs of a known distribution, about 95 % of the intervals hold the
/// true figure (deterministic seeds: the count is always the same).
#[test]
fn intervals_hold_the_truth_about_95_times_in_100() {
    let truth = [
        ("mean", 23_000.0),
        ("p50", 20_000.0 + 3_000.0 * 2f64.ln()),
        ("p99", 20_000.0 + 3_000.0 * 100f64.ln()),
    ];
    let mut held = [0; 3];
    for seed in 0..200 {
        let run = windowed_run("r", &iid(5_000, 1_000 + seed, 1.0));
        for (k, (metric, t)) in truth.iter().enumerate() {
            let (lo, hi) = of_run(&run, metric).unwrap().ci.unwrap();
            held[k] += usize::from(lo <= *t && *t <= hi);
        }
    }
    for (k, (metric, _)) in truth.iter().enumerate() {
        assert!(
            (182..=199).contains(&held[k]),
            "{metric}: {} of 200",
            held[k]
        );
    }
}
