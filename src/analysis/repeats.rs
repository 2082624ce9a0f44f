//! A campaign's repeats as arms, and what in it is still undecided.
//!
//! The runs of one step under its base name (`idle #1`, `idle #2`, ... are
//! `idle`) form one [`Arm`], judged over its repeats by
//! [`verdict::judge_arms`] ("PASS in 5 of 5 repeats"). A campaign is decided
//! when every verdict is (the repeats agree, the margin is beyond the noise)
//! and every comparison is: each step against the campaign's first step of
//! its kind, on the figure that heads its kind (p99 of a time series, a
//! benchmark's headline rate), judged with intervals by [`interval::judge`].
//! `rtlab run --until-decided` adds rounds until [`undecided`] is empty.

use super::arms::Arm;
use super::compare::Better;
use super::interval::{self, Change};
use super::metrics::{headline_metric, metric_direction};
use super::series;
use super::verdict::{self, Requirement};
use crate::scenario::runner::{by_base, StepRun};

/// The arms of a campaign's steps (or of campaigns shown side by side): one
/// per step base name and campaign, in the order the steps first ran, named
/// by the base name, with the runs' label when the steps have several
/// (`idle [stock]`), else with the campaign when there are several
/// (`idle [campaign 3]`).
pub fn arms(steps: &[StepRun]) -> Vec<Arm> {
    let labelled = steps.iter().any(|s| s.run.label != steps[0].run.label);
    let several = steps
        .iter()
        .any(|s| s.run.campaign != steps[0].run.campaign);
    by_base(steps)
        .iter()
        .map(|g| {
            let first = &g.steps[0].run;
            let name = match (labelled, several, first.campaign) {
                (true, _, _) => format!("{} [{}]", g.name, first.label),
                (false, true, Some(c)) => format!("{} [campaign {c}]", g.name),
                _ => g.name.to_string(),
            };
            Arm::new(name, g.steps.iter().map(|s| s.run.clone()).collect())
        })
        .collect()
}

/// The figure a campaign compares arms of this kind on, and which way it
/// improves: a benchmark's headline rate, else p99 of its time series.
fn figure(arm: &Arm) -> Option<(&'static str, Better)> {
    let run = arm.runs.first()?;
    match headline_metric(&run.metrics) {
        Some(rate) => Some((rate, metric_direction(rate))),
        None => series::primary(run).map(|_| ("p99", Better::Lower)),
    }
}

/// What in a campaign is still undecided, in words: each verdict whose
/// repeats disagree or whose margin lies within `noise`, and each comparison
/// of a step with the campaign's first step of its kind that its intervals
/// cannot decide.
pub fn undecided(arms: &[Arm], reqs: &[Requirement], noise: f64) -> Vec<String> {
    let mut open: Vec<String> = verdict::judge_arms(arms, reqs, noise)
        .iter()
        .filter(|v| !v.decided)
        .map(|v| {
            format!(
                "{} against {}: within the budget in {} of {} repeats",
                v.label, v.requirement, v.repeats_passed, v.repeats
            )
        })
        .collect();
    for (i, arm) in arms.iter().enumerate() {
        let Some(base) = arms[..i].iter().find(|b| b.kind == arm.kind) else {
            continue;
        };
        let Some((metric, better)) = figure(base) else {
            continue;
        };
        let (Some(b), Some(o)) = (base.estimate(metric), arm.estimate(metric)) else {
            continue;
        };
        let judged = interval::judge(&b, &o, better, noise);
        if !judged.decided {
            let why = match judged.change {
                Change::Unknown => "no interval to judge by",
                _ => "the intervals overlap but are too wide to call it no real difference",
            };
            open.push(format!(
                "{} against {} on {metric}: {why}",
                arm.name, base.name
            ));
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{step_run, windowed_run};
    use rtlab_engine::bench::Rng;

    fn repeat(base: &str, r: u32, samples: &[u64]) -> StepRun {
        let mut s = step_run(base, samples, None);
        s.name = format!("{base} #{r}");
        s.repeat = r;
        s
    }

    #[test]
    fn the_repeats_of_a_step_are_one_arm_in_the_order_steps_first_ran() {
        let steps = vec![
            repeat("idle", 1, &[1_000]),
            repeat("load", 1, &[2_000]),
            repeat("idle", 2, &[3_000]),
            repeat("load", 2, &[4_000]),
        ];
        let a = arms(&steps);
        let shown: Vec<(&str, usize)> = a.iter().map(|a| (a.name.as_str(), a.runs.len())).collect();
        assert_eq!(shown, [("idle", 2), ("load", 2)]);
        assert_eq!(a[0].runs[1].total.as_ref().unwrap().summary.max_ns, 3_000);
    }

    #[test]
    fn repeats_that_disagree_on_a_verdict_leave_it_undecided() {
        // idle within 1 ms in every repeat by far; load over it once.
        let steps = vec![
            repeat("idle", 1, &[100_000; 20]),
            repeat("load", 1, &[100_000; 20]),
            repeat("idle", 2, &[100_000; 20]),
            repeat("load", 2, &[1_500_000; 20]),
            repeat("idle", 3, &[100_000; 20]),
            repeat("load", 3, &[100_000; 20]),
        ];
        let reqs = verdict::parse_requirement("loop=1ms").unwrap();
        let open = undecided(&arms(&steps), &reqs, interval::DEFAULT_NOISE);
        assert!(
            open.contains(&"load against loop: within the budget in 2 of 3 repeats".to_string()),
            "{open:?}"
        );
        assert!(
            !open.iter().any(|o| o.starts_with("idle against loop")),
            "{open:?}"
        );
    }

    /// `n` latencies of 20 µs plus an exponential tail of mean 3 µs, times
    /// `scale`, drawn with `seed`.
    fn latencies(n: usize, seed: u64, scale: f64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| ((20_000.0 - 3_000.0 * (1.0 - rng.unit()).ln()) * scale) as u64)
            .collect()
    }

    fn once(base: &str, samples: &[u64]) -> StepRun {
        let mut s = step_run(base, samples, None);
        s.run = windowed_run("k", samples);
        s
    }

    #[test]
    fn a_comparison_with_the_first_step_is_decided_when_its_intervals_can_tell() {
        let reqs = verdict::parse_requirement("loop=1ms").unwrap();
        let noise = interval::DEFAULT_NOISE;
        // The same distribution: no real difference, and narrow enough to say so.
        let same = [
            once("idle", &latencies(200_000, 1, 1.0)),
            once("again", &latencies(200_000, 2, 1.0)),
        ];
        assert_eq!(undecided(&arms(&same), &reqs, noise), Vec::<String>::new());
        // 20 % slower: worse, decided.
        let shifted = [
            once("idle", &latencies(50_000, 1, 1.0)),
            once("load", &latencies(50_000, 2, 1.2)),
        ];
        assert_eq!(
            undecided(&arms(&shifted), &reqs, noise),
            Vec::<String>::new()
        );
        // 500 samples cannot support a p99: nothing to judge by yet.
        let few = [
            once("idle", &latencies(500, 1, 1.0)),
            once("load", &latencies(500, 2, 1.2)),
        ];
        assert_eq!(
            undecided(&arms(&few), &reqs, noise),
            ["load against idle on p99: no interval to judge by"]
        );
    }
}
