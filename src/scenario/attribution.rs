//! Load attribution: which part of a load mix does the damage. A step with
//! `attribute = true` runs under no load, under each part of its mix alone and
//! under the whole mix; the parts are then ranked by what they do to p99.9 and to
//! the maximum, against the baseline.

use super::plan::{PlannedStep, Role};
use super::runner::StepRun;
use crate::units::Human;
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

/// The text form: the harmful parts by name, the rest summed up.
pub fn render(rankings: &[Ranking]) -> String {
    let mut out = String::new();
    for r in rankings {
        out.push_str(&format!(
            "load attribution of {} (baseline p99.9 {}, max {}):\n",
            r.mix,
            Human(r.baseline_p999_ns),
            Human(r.baseline_max_ns)
        ));
        let (harmful, mild): (Vec<&PartImpact>, Vec<&PartImpact>) = r
            .parts
            .iter()
            .partition(|p| p.p999_ratio >= 2.0 || p.max_ratio >= 2.0);
        for (i, p) in harmful.iter().enumerate() {
            out.push_str(&format!(
                "  {}. {}: p99.9 {} → {} (×{:.1}), max {} → {} (×{:.1})\n",
                i + 1,
                p.part,
                Human(r.baseline_p999_ns),
                Human(p.p999_ns),
                p.p999_ratio,
                Human(r.baseline_max_ns),
                Human(p.max_ns),
                p.max_ratio
            ));
        }
        if !mild.is_empty() {
            let names: Vec<&str> = mild.iter().map(|p| p.part.as_str()).collect();
            let lead = if harmful.is_empty() {
                "every part"
            } else {
                "the other parts"
            };
            out.push_str(&format!("  {lead} < 2× ({})\n", names.join(", ")));
        }
        if let Some((p999, max)) = r.whole {
            let (rp, rm) = (
                ratio(p999, r.baseline_p999_ns),
                ratio(max, r.baseline_max_ns),
            );
            out.push_str(&format!(
                "  the whole mix: p99.9 {} (×{rp:.1}), max {} (×{rm:.1})\n",
                Human(p999),
                Human(max),
            ));
            if harmful.is_empty() && (rp >= 2.0 || rm >= 2.0) {
                out.push_str("  no part explains it alone: the parts hurt together (CPU contention, or their interaction)\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::scenario::{expand, parse, DEFAULT_MAX_STEPS};

    /// Runs with a known p99.9 and max: 1000 samples of `base`, the top two set.
    fn step(index: usize, base: u64, p999: u64, max: u64) -> StepRun {
        let mut v = vec![base; 1000];
        v[998] = p999;
        v[999] = max;
        StepRun {
            index,
            name: format!("s{index}"),
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
        let parts = crate::loadspec::MIXES[0].parts;
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
        let text = render(std::slice::from_ref(r));
        assert!(text.contains("1. fswalk: p99.9 12.007us → 310."), "{text}");
        assert!(text.contains("(×25.8), max 40us → 400us (×10.0)"), "{text}");
        assert!(text.contains("2. memcopy"), "{text}");
        assert!(text.contains("the other parts < 2× ("), "{text}");
        assert!(text.contains("the whole mix: p99.9 "), "{text}");
    }

    #[test]
    fn a_mix_that_hurts_only_as_a_whole_says_so() {
        let r = Ranking {
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
        };
        let text = render(&[r]);
        assert!(text.contains("every part < 2× (io)"), "{text}");
        assert!(text.contains("no part explains it alone"), "{text}");
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
