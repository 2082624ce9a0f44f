//! The risks a campaign shows, most severe first: failed requirements, loads that
//! raise the tail against the idle baseline, overruns, what the system itself
//! warns about, a failing audit and a kernel that is not preemptible.

use super::series;
use super::verdict::Requirement;
use super::HARMFUL_RATIO;
use crate::scenario::runner::StepRun;
use crate::units::Human;
use serde::Serialize;

/// A risk found by a campaign, most severe first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Risk {
    /// Higher is worse; used to rank.
    pub score: f64,
    /// What it is and what it means.
    pub text: String,
}

fn is_idle(s: &StepRun) -> bool {
    s.run.loads.is_empty()
}

/// The risks a campaign shows, most severe first.
pub fn risks(steps: &[StepRun], reqs: &[Requirement]) -> Vec<Risk> {
    let mut out: Vec<Risk> = Vec::new();
    // Requirements that failed: the worst step per requirement.
    for req in reqs {
        let worst = steps
            .iter()
            .filter_map(|s| s.run.total.as_ref().map(|t| (s, t.summary.max_ns)))
            .filter(|(_, max)| *max > req.budget_ns)
            .max_by_key(|(_, max)| *max);
        if let Some((s, max)) = worst {
            out.push(Risk {
                score: 100.0 + max as f64 / req.budget_ns as f64,
                text: format!(
                    "{}: max {} in step '{}' exceeds the {} budget",
                    req.name,
                    Human(max),
                    s.name,
                    Human(req.budget_ns)
                ),
            });
        }
    }
    // Loads that raise the tail against the idle baseline of the same probe.
    for s in steps.iter().filter(|s| !is_idle(s)) {
        let known = |r: &crate::record::Run| series::reported(r, "p999_ns");
        let base = steps
            .iter()
            .find(|b| is_idle(b) && b.run.kind == s.run.kind)
            .filter(|b| known(&b.run) && known(&s.run))
            .and_then(|b| b.run.total.as_ref());
        let (Some(base), Some(t)) = (base, s.run.total.as_ref()) else {
            continue;
        };
        let (b, v) = (base.summary.p999_ns.max(1), t.summary.p999_ns);
        let ratio = v as f64 / b as f64;
        if ratio >= HARMFUL_RATIO {
            out.push(Risk {
                score: 20.0 + 10.0 * ratio.log2(),
                text: format!(
                    "step '{}' raises p99.9 ×{:.1} ({} idle → {})",
                    s.name,
                    ratio,
                    Human(b),
                    Human(v)
                ),
            });
        }
    }
    // Overruns: periods lost entirely.
    let overruns: u64 = steps
        .iter()
        .filter_map(|s| s.run.total.as_ref())
        .map(|t| t.counters.overruns)
        .sum();
    if overruns > 0 {
        out.push(Risk {
            score: 40.0,
            text: format!("{overruns} periods expired while a thread was late (overruns): a periodic task would have skipped them"),
        });
    }
    // What the system itself says (VM, governor, throttling, ...), once each.
    let mut seen = Vec::new();
    for s in steps {
        for w in &s.run.warnings {
            if seen.contains(&w.code) {
                continue;
            }
            seen.push(w.code.clone());
            let score = match w.code.as_str() {
                "vm" => 60.0,
                "rt_throttling_off" | "not_realtime" => 50.0,
                "governor" | "smt_shared" => 35.0,
                "dma_latency" | "mlock" => 30.0,
                _ => 10.0,
            };
            out.push(Risk {
                score,
                text: w.message.clone(),
            });
        }
    }
    if let Some(a) = steps
        .iter()
        .find_map(|s| s.run.audit.as_ref())
        .filter(|a| a.fail > 0)
    {
        out.push(Risk {
            score: 30.0 + a.fail as f64,
            text: format!(
                "the system audit fails {} check(s): {} (run 'rtlab audit' for the fixes)",
                a.fail,
                a.failed.join(", ")
            ),
        });
    }
    if let Some(fp) = steps.first().map(|s| &s.run.fingerprint) {
        use rtlab_engine::sysinfo::PreemptModel;
        if matches!(fp.preempt, PreemptModel::None | PreemptModel::Voluntary) {
            out.push(Risk {
                score: 45.0,
                text: format!(
                    "the kernel runs {}: long kernel sections are not preemptible; PREEMPT (or PREEMPT_RT) bounds the worst case",
                    fp.preempt.name()
                ),
            });
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{step_run as step, unreported_idle_and_loaded};
    use crate::record::Warning;

    /// An imported run without percentiles is never the idle baseline of a
    /// "raises p99.9" risk.
    #[test]
    fn unreported_percentiles_are_no_risk() {
        let found = risks(&unreported_idle_and_loaded(), &[]);
        assert!(
            !found.iter().any(|r| r.text.contains("raises p99.9")),
            "{found:?}"
        );
    }

    #[test]
    fn ranks_a_failed_budget_first_then_the_load_that_hurts_most() {
        let idle = step("idle", &[10_000; 1000], None);
        let mut mem = vec![10_000; 1000];
        mem[999] = 2_000_000;
        mem[998] = 400_000;
        let memory = step("memory", &mem, Some("vm"));
        let cpu = step("cpu", &[12_000; 1000], Some("cpu"));
        let reqs = [Requirement {
            name: "deadline".into(),
            budget_ns: 1_000_000,
        }];
        let r = risks(&[idle, memory, cpu], &reqs);
        assert!(
            r[0].text.starts_with("deadline: max 2ms in step 'memory'"),
            "{r:?}"
        );
        assert!(r
            .iter()
            .any(|x| x.text.contains("step 'memory' raises p99.9")));
        assert!(
            !r.iter().any(|x| x.text.contains("step 'cpu' raises")),
            "1.2x is not a risk"
        );
        assert!(r.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn failed_audit_checks_are_a_risk() {
        let mut a = step("a", &[1_000; 10], None);
        a.run.audit = Some(crate::record::AuditSummary {
            fail: 2,
            failed: vec!["hrtimers".into(), "rt_throttling".into()],
            ..Default::default()
        });
        let r = risks(&[a], &[]);
        assert_eq!(
            r[0].text,
            "the system audit fails 2 check(s): hrtimers, rt_throttling (run 'rtlab audit' for the fixes)"
        );
    }

    #[test]
    fn system_warnings_count_once() {
        let mut a = step("a", &[1_000; 10], None);
        a.run
            .warnings
            .push(Warning::new("vm", "maxima reflect the hypervisor"));
        let b = a.clone();
        let r = risks(&[a, b], &[]);
        assert_eq!(
            r.iter().filter(|x| x.text.contains("hypervisor")).count(),
            1
        );
    }
}
