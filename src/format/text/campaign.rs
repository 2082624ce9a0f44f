//! What a campaign found, in words: the table of its steps with a verdict column
//! per requirement, its benchmark steps' stability figures, its biggest risks,
//! which part of a load mix does the damage, and its steps compared with the
//! decision they lead to.

use super::decision::estimate_text;
use super::table::{paragraph, printable, Table};
use crate::analysis::attribution::{PartImpact, Ranking};
use crate::analysis::compare::Quantity;
use crate::analysis::interval;
use crate::analysis::outcome::Outcome;
use crate::analysis::risks::Risk;
use crate::analysis::series;
use crate::analysis::verdict::{self, Requirement};
use crate::format::UNKNOWN;
use crate::record::Series;
use crate::scenario::runner::StepRun;
use crate::store::Campaign;
use crate::units::{Human, TimeUnit};

/// The step table: one row per step.
pub fn step_table(steps: &[StepRun], reqs: &[Requirement], unit: TimeUnit) -> String {
    let mut out = format!(
        "{}(times in {}; {UNKNOWN}: not measured, or too few samples for the percentile: p99.9 \
         needs 10000)\n",
        step_grid(steps, reqs, unit).render(),
        unit.symbol()
    );
    if let Some(b) = bench_grid(steps, unit) {
        out.push_str(&format!(
            "\nbenchmark steps (± 95% interval; max−min of one run is observed):\n{}",
            b.render()
        ));
    }
    // A sweep's verdict is the highest frequency each method held.
    for s in steps {
        if let Some(sw) = &s.run.sweep {
            out.push_str(&format!(
                "\n{} (run {}): highest frequency held within {:.0}% of nominal\n{}",
                printable(&s.name),
                s.run.id.unwrap_or(0),
                sw.tolerance * 100.0,
                super::periodic::sweep_table(sw)
            ));
        }
    }
    out
}

/// The benchmark steps' stability figures, unrendered: step, run, events/s,
/// max − min and p95 − mean with their intervals (from each run's windows);
/// `None` without a benchmark step.
pub fn bench_grid(steps: &[StepRun], unit: TimeUnit) -> Option<Table> {
    let benches: Vec<&StepRun> = steps
        .iter()
        .filter(|s| s.run.metrics.contains_key("events_per_s"))
        .collect();
    if benches.is_empty() {
        return None;
    }
    let mut t = Table::new(&["step", "run", "events/s", "max−min", "p95−mean"]);
    t.wrap(0);
    for s in benches {
        let of = |metric: &str, q: Quantity| {
            estimate_text(interval::of_run(&s.run, metric).as_ref(), q, unit)
        };
        t.row(vec![
            s.name.clone(),
            s.run.id.map(|i| i.to_string()).unwrap_or_default(),
            of("events_per_s", Quantity::Metric),
            of("max-min", Quantity::Time),
            of("p95-mean", Quantity::Time),
        ]);
    }
    Some(t)
}

/// The table of [`step_table`], unrendered: step, run id, status, samples, p50,
/// p99, p99.9, max, overruns, misses, then a verdict per requirement.
pub fn step_grid(steps: &[StepRun], reqs: &[Requirement], unit: TimeUnit) -> Table {
    let mut header = vec![
        "step", "run", "status", "samples", "p50", "p99", "p99.9", "max", "overruns", "misses",
    ];
    let req_names: Vec<String> = reqs
        .iter()
        .map(|r| format!("{} {}", r.name, Human(r.budget_ns)))
        .collect();
    header.extend(req_names.iter().map(String::as_str));
    let mut t = Table::new(&header);
    t.wrap(0);
    // Runs of several kernels (--compare-with) carry their label in the name.
    let labelled = steps.iter().any(|s| s.run.label != steps[0].run.label);
    for s in steps {
        let total = s.run.total.as_ref();
        // A figure the run does not have is a dash, never a 0.
        let known = |field: &str| total.filter(|_| series::reported(&s.run, field));
        let cell = |field: &str, f: &dyn Fn(&Series) -> f64| {
            known(field)
                .map(|t| unit.cell(f(t)))
                .unwrap_or_else(|| UNKNOWN.into())
        };
        // A percentile too few samples support is no value either.
        let pct = |field: &str, p: f64, f: &dyn Fn(&Series) -> f64| match total {
            Some(t) if !interval::supported(p, t.counters.samples) => UNKNOWN.into(),
            _ => cell(field, f),
        };
        let count = |field: &str, f: &dyn Fn(&Series) -> u64| {
            known(field)
                .map(|t| f(t).to_string())
                .unwrap_or_else(|| UNKNOWN.into())
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
            pct("p50_ns", 0.5, &|t| t.summary.p50_ns as f64),
            pct("p99_ns", 0.99, &|t| t.summary.p99_ns as f64),
            pct("p999_ns", 0.999, &|t| t.summary.p999_ns as f64),
            cell("max_ns", &|t| t.summary.max_ns as f64),
            count("overruns", &|t| t.counters.overruns),
            count("deadline_misses", &|t| t.counters.deadline_misses),
        ];
        for v in verdict::judge(std::slice::from_ref(&s.run), reqs) {
            row.push(v.result.to_string());
        }
        t.row(row);
    }
    t
}

/// `rtlab run`: the campaign's step table and its biggest risks.
pub fn run_text(
    campaign: i64,
    name: &str,
    status: &str,
    steps: &[StepRun],
    reqs: &[Requirement],
    found: &[Risk],
    unit: TimeUnit,
) -> String {
    let mut out = format!(
        "rtlab run  {}  campaign {campaign}  [{status}]\n\n",
        printable(name)
    );
    out.push_str(&step_table(steps, reqs, unit));
    out.push_str(&super::why::steps(steps));
    out.push_str(&risks_text(found));
    out.push('\n');
    out
}

/// The comparisons of a campaign's steps (each kind's steps side by side,
/// repeats taken together) and its decision, the end of `rtlab run` and of
/// `rtlab report --campaign`.
pub fn decision_text(o: &Outcome, unit: TimeUnit) -> String {
    let mut out = String::new();
    let numbered = o.parts.len() > 1;
    for (i, p) in o.parts.iter().enumerate().filter(|(_, p)| p.arms.len() > 1) {
        let heading = match numbered {
            true => super::compare::part_heading(i + 1, p),
            false => format!("the steps compared ({})", p.kind),
        };
        out.push_str(&format!("{heading}:\n"));
        out.push_str(&super::compare::render_text(&p.comparison, unit).0);
        out.push('\n');
    }
    out.push_str(&super::decision::render(o, unit));
    out
}

/// `rtlab report --campaign`: the campaign, its step table, its biggest risks,
/// its load attribution and its decision.
pub fn campaign_report(
    c: &Campaign,
    steps: &[StepRun],
    reqs: &[Requirement],
    (found, ranked): (&[Risk], &[Ranking]),
    o: &Outcome,
    unit: TimeUnit,
) -> String {
    let mut out = format!(
        "rtlab run  {}  campaign {}  [{}]  created {}\n\n",
        printable(&c.name),
        c.id,
        c.status.name(),
        c.created_at
    );
    out.push_str(&step_table(steps, reqs, unit));
    out.push_str(&super::why::steps(steps));
    out.push_str(&risks_text(found));
    if !ranked.is_empty() {
        out.push('\n');
        out.push_str(&attribution_text(ranked));
    }
    out.push('\n');
    out.push_str(&decision_text(o, unit));
    out
}

/// How many of a campaign's risks its reports show.
pub const RISKS_SHOWN: usize = 3;

/// The [`RISKS_SHOWN`] biggest risks as text ("" when none).
pub fn risks_text(found: &[Risk]) -> String {
    if found.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nbiggest risks:\n");
    for (i, r) in found.iter().take(RISKS_SHOWN).enumerate() {
        out.push_str(&paragraph(&format!("  {}. ", i + 1), &r.text));
    }
    out
}

/// One attributed mix in words.
pub struct Attribution {
    /// The mix and its baseline.
    pub heading: String,
    /// Each harmful part with what it does, the most harmful first.
    pub harmful: Vec<String>,
    /// The mild parts summed up, the whole mix, and whether only the parts
    /// together hurt.
    pub notes: Vec<String>,
}

/// The ranking of one mix in words: the harmful parts by name, the rest summed up.
pub fn attribution(r: &Ranking) -> Attribution {
    let (harmful, mild): (Vec<&PartImpact>, Vec<&PartImpact>) =
        r.parts.iter().partition(|p| p.is_harmful());
    let mut notes = Vec::new();
    if !mild.is_empty() {
        let names: Vec<&str> = mild.iter().map(|p| p.part.as_str()).collect();
        let lead = if harmful.is_empty() {
            "every part"
        } else {
            "the other parts"
        };
        notes.push(format!("{lead} < 2× ({})", names.join(", ")));
    }
    if let (Some((p999, max)), Some((rp, rm))) = (r.whole, r.whole_ratios()) {
        notes.push(format!(
            "the whole mix: p99.9 {} (×{rp:.1}), max {} (×{rm:.1})",
            Human(p999),
            Human(max),
        ));
        if r.hurts_only_together() {
            notes.push("no part explains it alone: the parts hurt together (CPU contention, or their interaction)".into());
        }
    }
    Attribution {
        heading: format!(
            "load attribution of {} (baseline p99.9 {}, max {})",
            r.mix,
            Human(r.baseline_p999_ns),
            Human(r.baseline_max_ns)
        ),
        harmful: harmful
            .iter()
            .map(|p| {
                format!(
                    "{}: p99.9 {} → {} (×{:.1}), max {} → {} (×{:.1})",
                    p.part,
                    Human(r.baseline_p999_ns),
                    Human(p.p999_ns),
                    p.p999_ratio,
                    Human(r.baseline_max_ns),
                    Human(p.max_ns),
                    p.max_ratio
                )
            })
            .collect(),
        notes,
    }
}

/// Load attribution of every mix as text.
pub fn attribution_text(rankings: &[Ranking]) -> String {
    let mut out = String::new();
    for r in rankings {
        let a = attribution(r);
        out.push_str(&format!("{}:\n", a.heading));
        for (i, h) in a.harmful.iter().enumerate() {
            out.push_str(&format!("  {}. {h}\n", i + 1));
        }
        for n in &a.notes {
            out.push_str(&format!("  {n}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{
        ranking_hurting_only_as_a_whole, step_run as step, unreported_idle_and_loaded,
    };

    /// An imported run without percentiles shows them as dashes.
    #[test]
    fn unreported_percentiles_are_dashes() {
        let table = step_table(&unreported_idle_and_loaded(), &[], TimeUnit::Us);
        let idle_row = table.lines().find(|l| l.starts_with("idle")).unwrap();
        let cells: Vec<&str> = idle_row.split_whitespace().collect();
        assert_eq!(
            &cells[cells.len() - 6..cells.len() - 2],
            [UNKNOWN, UNKNOWN, UNKNOWN, "10.0"],
            "{table}"
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

    #[test]
    fn a_sweep_step_shows_its_table_of_best_frequencies() {
        use crate::record::sweep::{Curve, Point, Sweep};
        let curve = |method: &str, load: &str, best_hz: Option<f64>| Curve {
            method: method.into(),
            load: load.into(),
            best_hz,
            truncated: false,
            out_of_time: false,
            repeats: 1,
            points: vec![Point {
                requested_hz: 1000.0,
                achieved_hz: 1000.0,
                worst_deviation: 0.01,
                missed: 0,
                held: best_hz.is_some(),
            }],
        };
        let mut sweep = step("sweep", &[5_000; 10], None);
        sweep.run.sweep = Some(Sweep {
            lo_hz: 1000.0,
            hi_hz: 1e7,
            tolerance: 0.1,
            curves: vec![
                curve("sleep", "idle", Some(50_000.0)),
                curve("sleep", "cpu", None),
            ],
        });
        let text = step_table(
            &[step("idle", &[5_000; 10], None), sweep],
            &[],
            TimeUnit::Us,
        );
        assert!(
            text.contains("sweep (run 0): highest frequency held within 10% of nominal\n"),
            "{text}"
        );
        let row = text.lines().find(|l| l.starts_with("sleep")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["sleep", "50.000", "kHz", "<", "1.000", "kHz"],
            "{text}"
        );
    }

    fn part(part: &str, p999_ns: u64, max_ns: u64) -> PartImpact {
        PartImpact {
            part: part.into(),
            p999_ns,
            max_ns,
            p999_ratio: p999_ns as f64 / 12_000.0,
            max_ratio: max_ns as f64 / 40_000.0,
        }
    }

    #[test]
    fn harmful_parts_by_name_the_others_summed_up() {
        let r = Ranking {
            mix: "dohell".into(),
            baseline_p999_ns: 12_000,
            baseline_max_ns: 40_000,
            whole: Some((350_000, 900_000)),
            parts: vec![
                part("fswalk", 310_000, 400_000),
                part("memcopy", 13_000, 120_000),
                part("cpu", 12_500, 41_000),
            ],
        };
        let text = attribution_text(&[r]);
        assert!(
            text.contains("1. fswalk: p99.9 12us → 310us (×25.8), max 40us → 400us (×10.0)"),
            "{text}"
        );
        assert!(text.contains("2. memcopy"), "{text}");
        assert!(text.contains("the other parts < 2× (cpu)"), "{text}");
        assert!(
            text.contains("the whole mix: p99.9 350us (×29.2)"),
            "{text}"
        );
        assert!(!text.contains("no part explains it alone"), "{text}");
    }

    #[test]
    fn a_mix_that_hurts_only_as_a_whole_says_so() {
        let r = ranking_hurting_only_as_a_whole();
        let text = attribution_text(&[r]);
        assert!(text.contains("every part < 2× (io)"), "{text}");
        assert!(text.contains("no part explains it alone"), "{text}");
    }
}
