//! Load attribution: which part of a load mix does the damage. A step with
//! `attribute = true` runs under no load, under each part of its mix alone and
//! under the whole mix; the parts are then ranked by what they do to p99.9 and to
//! the maximum, against the baseline (`format::text::campaign` says it in words).

use super::HARMFUL_RATIO;
use crate::scenario::plan::{PlannedStep, Role};
use crate::scenario::runner::StepRun;
use serde::Serialize;

/// What one part of a mix does to the tail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartImpact {
    /// The part's spec.
    pub part: String,
    /// p99.9 under the part alone (ns).
    pub p999_ns: u64,
    /// Maximum under the part alone (ns).
    pub max_ns: u64,
    /// p99.9 ÷ baseline p99.9.
    pub p999_ratio: f64,
    /// max ÷ baseline max.
    pub max_ratio: f64,
}

/// The ranking of one attributed mix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranking {
    /// The mix.
    pub mix: String,
    /// Baseline p99.9 (ns).
    pub baseline_p999_ns: u64,
    /// Baseline max (ns).
    pub baseline_max_ns: u64,
    /// The whole mix's p99.9 and max (ns), when it ran.
    pub whole: Option<(u64, u64)>,
    /// The parts, the most harmful first (by p99.9 ratio, then max ratio).
    pub parts: Vec<PartImpact>,
}

/// A ratio that stays finite when the baseline is 0.
fn ratio(v: u64, base: u64) -> f64 {
    v as f64 / base.max(1) as f64
}

impl PartImpact {
    /// Whether the part alone at least doubles p99.9 or the maximum.
    pub fn is_harmful(&self) -> bool {
        self.p999_ratio >= HARMFUL_RATIO || self.max_ratio >= HARMFUL_RATIO
    }
}

impl Ranking {
    /// The whole mix's p99.9 and max as ratios to the baseline's, when it ran.
    pub fn whole_ratios(&self) -> Option<(f64, f64)> {
        self.whole.map(|(p999, max)| {
            (
                ratio(p999, self.baseline_p999_ns),
                ratio(max, self.baseline_max_ns),
            )
        })
    }

    /// Whether the whole mix harms the tail though no part does alone.
    pub fn hurts_only_together(&self) -> bool {
        !self.parts.iter().any(PartImpact::is_harmful)
            && self
                .whole_ratios()
                .is_some_and(|(p, m)| p >= HARMFUL_RATIO || m >= HARMFUL_RATIO)
    }
}

/// Ranks every attribution group whose baseline ran.
pub fn rank(plan: &[PlannedStep], steps: &[StepRun]) -> Vec<Ranking> {
    let tail = |index: usize| {
        steps
            .iter()
            .find(|s| s.index == index)
            .and_then(|s| s.run.total.as_ref())
            .filter(|t| t.counters.samples > 0)
            .map(|t| (t.summary.p999_ns, t.summary.max_ns))
    };
    let mut groups: Vec<usize> = plan
        .iter()
        .filter_map(|p| p.attribution.as_ref().map(|a| a.group))
        .collect();
    // Repeats come in rounds: a group's members recur after the other groups'.
    groups.sort_unstable();
    groups.dedup();
    let mut out = Vec::new();
    for g in groups {
        let members: Vec<&PlannedStep> = plan
            .iter()
            .filter(|p| p.attribution.as_ref().is_some_and(|a| a.group == g))
            .collect();
        let role = |p: &&PlannedStep| p.attribution.as_ref().map(|a| a.role.clone());
        let Some((bp, bm)) = members
            .iter()
            .find(|p| role(p) == Some(Role::Baseline))
            .and_then(|p| tail(p.index))
        else {
            continue;
        };
        let whole = members
            .iter()
            .find(|p| role(p) == Some(Role::Whole))
            .and_then(|p| tail(p.index));
        let mut parts: Vec<PartImpact> = members
            .iter()
            .filter_map(|p| match role(p) {
                Some(Role::Part(part)) => tail(p.index).map(|(p999, max)| PartImpact {
                    part,
                    p999_ns: p999,
                    max_ns: max,
                    p999_ratio: ratio(p999, bp),
                    max_ratio: ratio(max, bm),
                }),
                _ => None,
            })
            .collect();
        parts.sort_by(|a, b| {
            b.p999_ratio
                .total_cmp(&a.p999_ratio)
                .then(b.max_ratio.total_cmp(&a.max_ratio))
        });
        out.push(Ranking {
            mix: members[0]
                .attribution
                .as_ref()
                .map(|a| a.mix.clone())
                .unwrap_or_default(),
            baseline_p999_ns: bp,
            baseline_max_ns: bm,
            whole,
            parts,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{ranking_hurting_only_as_a_whole, run_from_samples};
    use crate::scenario::{expand, parse, DEFAULT_MAX_STEPS};

    /// Runs with a known p99.9 and max: 1000 samples of `base`, the top two set.
    fn step(index: usize, base: u64, p999: u64, max: u64) -> StepRun {
        let mut v = vec![base; 1000];
        v[998] = p999;
        v[999] = max;
        StepRun {
            index,
            name: format!("s{index}"),
            base: format!("s{index}"),
            repeat: 1,
            run: run_from_samples("k", &v),
        }
    }

    #[test]
    fn ranks_parts_by_what_they_do_to_the_tail() {
        let s = parse(
            "s",
            "name = \"a\"\n[[step]]\nprobe = \"latency\"\nload = \"dohell\"\nattribute = true\n",
        )
        .unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        let parts = crate::loads::mix::MIXES[0].parts;
        assert_eq!(plan.len(), parts.len() + 2);
        // Baseline p99.9 12 µs, max 40 µs; fswalk ×25.8 on p99.9, memcopy ×3 on max
        // only, the rest unchanged; the whole mix worst.
        let mut steps = vec![step(0, 5_000, 12_000, 40_000)];
        for (i, part) in parts.iter().enumerate() {
            let (p999, max) = match *part {
                "fswalk" => (310_000, 400_000),
                "memcopy" => (13_000, 120_000),
                _ => (12_500, 41_000),
            };
            steps.push(step(i + 1, 5_000, p999, max));
        }
        steps.push(step(parts.len() + 1, 5_000, 350_000, 900_000));
        let r = rank(&plan, &steps);
        assert_eq!(r.len(), 1);
        let r = &r[0];
        assert_eq!(r.mix, "dohell");
        // p99.9 comes from the histogram (0.1% resolution), max is exact.
        let tail = |s: &StepRun| {
            let t = s.run.total.as_ref().unwrap();
            (t.summary.p999_ns, t.summary.max_ns)
        };
        assert_eq!((r.baseline_p999_ns, r.baseline_max_ns), tail(&steps[0]));
        assert_eq!(r.baseline_max_ns, 40_000);
        assert_eq!(r.whole, Some(tail(steps.last().unwrap())));
        assert_eq!(r.parts[0].part, "fswalk");
        let fswalk = parts.iter().position(|p| *p == "fswalk").unwrap() + 1;
        let expect = tail(&steps[fswalk]).0 as f64 / r.baseline_p999_ns as f64;
        assert!((r.parts[0].p999_ratio - expect).abs() < 1e-9);
        assert!(
            (expect - 310.0 / 12.0).abs() < 0.05,
            "within histogram resolution"
        );
        assert_eq!(r.parts[1].part, "memcopy");
        assert!((r.parts[1].max_ratio - 3.0).abs() < 1e-9, "exact maxima");
        assert!(r.parts[0].is_harmful() && r.parts[1].is_harmful());
        assert!(!r.parts[2].is_harmful());
        assert!(!r.hurts_only_together());
    }

    #[test]
    fn a_mix_can_hurt_only_as_a_whole() {
        let mut r = ranking_hurting_only_as_a_whole();
        assert_eq!(r.whole_ratios(), Some((60.0, 10.0)));
        assert!(r.hurts_only_together());
        r.whole = None;
        assert!(!r.hurts_only_together());
    }

    #[test]
    fn a_group_without_its_baseline_is_not_ranked() {
        let s = parse(
            "s",
            "name = \"a\"\n[[step]]\nprobe = \"latency\"\nload = \"dohell\"\nattribute = true\n",
        )
        .unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        assert!(rank(&plan, &[step(1, 1, 2, 3)]).is_empty());
    }
}
