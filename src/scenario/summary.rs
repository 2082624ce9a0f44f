//! What a campaign found: a table of its steps, verdicts, and the biggest risks.

use super::runner::StepRun;
use crate::analysis::verdict::{self, Requirement};
use crate::format::text::table::Table;
use crate::units::{Human, TimeUnit};
use serde::Serialize;

/// A risk found by a campaign, most severe first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Risk {
    /// Higher is worse; used to rank.
    pub score: f64,
    /// What it is and what it means.
    pub text: String,
}

/// The step table: one row per step.
pub fn step_table(steps: &[StepRun], reqs: &[Requirement], unit: TimeUnit) -> String {
    let mut header = vec![
        "step", "run", "status", "samples", "p50", "p99", "p99.9", "max", "overruns", "misses",
    ];
    let req_names: Vec<String> = reqs
        .iter()
        .map(|r| format!("{} {}", r.name, Human(r.budget_ns)))
        .collect();
    header.extend(req_names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    // Runs of several kernels (--compare-with) carry their label in the name.
    let labelled = steps.iter().any(|s| s.run.label != steps[0].run.label);
    for s in steps {
        let total = s.run.total.as_ref();
        let unknown = s.run.unreported();
        // A figure the run's source did not report is '-', never a 0.
        let cell = |field: &str, f: &dyn Fn(&crate::record::Series) -> f64| {
            total
                .filter(|_| !unknown.contains(&field))
                .map(|t| unit.cell(f(t)))
                .unwrap_or_else(|| "-".into())
        };
        let mut row = vec![
            if labelled {
                format!("{} [{}]", s.name, s.run.label)
            } else {
                s.name.clone()
            },
            s.run.id.map(|i| i.to_string()).unwrap_or_default(),
            s.run.status.name().to_string(),
            total
                .map(|t| t.counters.samples.to_string())
                .unwrap_or_default(),
            cell("p50_ns", &|t| t.summary.p50_ns as f64),
            cell("p99_ns", &|t| t.summary.p99_ns as f64),
            cell("p999_ns", &|t| t.summary.p999_ns as f64),
            cell("max_ns", &|t| t.summary.max_ns as f64),
            total
                .map(|t| t.counters.overruns.to_string())
                .unwrap_or_default(),
            total
                .map(|t| t.counters.deadline_misses.to_string())
                .unwrap_or_default(),
        ];
        for v in verdict::judge(std::slice::from_ref(&s.run), reqs) {
            row.push(v.result.to_string());
        }
        t.row(row);
    }
    format!("{}(times in {})\n", t.render(), unit.symbol())
}

/// The three biggest risks as text ("" when none).
pub fn risks_text(found: &[Risk]) -> String {
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nbiggest risks:\n");
    for (i, r) in found.iter().take(3).enumerate() {
        out.push_str(&format!("  {}. {}\n", i + 1, r.text));
    }
    out
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
        let known = |r: &crate::record::Run| !r.unreported().contains(&"p999_ns");
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
        if ratio >= 2.0 {
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
    use crate::analysis::fixture::run_from_samples;
    use crate::record::{LoadRecord, Warning};

    fn step(name: &str, samples: &[u64], load: Option<&str>) -> StepRun {
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
            run,
        }
    }

    /// An imported run without percentiles shows them as '-' and is never
    /// the idle baseline of a "raises p99.9" risk.
    #[test]
    fn unreported_percentiles_are_dashes_and_no_risk() {
        let mut idle = step("idle", &[10_000; 100], None);
        idle.run.params = serde_json::json!({"unreported": ["p50_ns", "p99_ns", "p999_ns"]});
        let loaded = step("cpu", &[90_000; 100], Some("cpu"));
        let table = step_table(&[idle.clone(), loaded.clone()], &[], TimeUnit::Us);
        let idle_row = table.lines().find(|l| l.starts_with("idle")).unwrap();
        let cells: Vec<&str> = idle_row.split_whitespace().collect();
        assert_eq!(
            &cells[cells.len() - 6..cells.len() - 2],
            ["-", "-", "-", "10.0"],
            "{table}"
        );
        let found = risks(&[idle, loaded], &[]);
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

    #[test]
    fn the_table_has_a_row_per_step_and_a_verdict_column_per_requirement() {
        let reqs = [Requirement {
            name: "gyro".into(),
            budget_ns: 1_000_000,
        }];
        let text = step_table(
            &[
                step("idle", &[5_000; 10], None),
                step("load", &[2_000_000; 10], Some("cpu")),
            ],
            &reqs,
            TimeUnit::Us,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("gyro 1ms"));
        assert!(lines[1].starts_with("idle") && lines[1].ends_with("PASS"));
        assert!(lines[2].starts_with("load") && lines[2].ends_with("FAIL"));
    }
}
