//! Verdicts: requirements `name=budget` (or presets of several) judged against the
//! observed latencies of each run, or of each arm's repeats. A run passes a
//! requirement when its observed maximum is within the budget; the margin is
//! budget − observed max. A verdict is PASS or FAIL only when the repeats agree
//! and the margin is larger than the noise threshold; otherwise UNDECIDED (exit
//! code [`EXIT_UNDECIDED`] when nothing failed). Every verdict states the
//! repeats, the samples and the time it was observed over, because a PASS over
//! 500 samples says much less than one over ten million.

use super::arms::Arm;
use super::interval::DEFAULT_NOISE;
use super::{series, status};
use crate::error::{EXIT_FAILED, EXIT_OK, EXIT_UNDECIDED};
use crate::record::Run;
use crate::units::{parse_positive_duration, DefaultUnit, Human};
use rtlab_engine::stats::hist::LatencyHistogram;
use serde::Serialize;

/// One requirement: a named deadline budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// What needs it (`gyro`, `gps`, `loop`).
    pub name: String,
    /// The budget (ns): the largest latency the deadline tolerates.
    pub budget_ns: u64,
}

/// A named set of requirements.
pub struct Preset {
    /// The name given to `--require`.
    pub name: &'static str,
    /// What it stands for.
    pub about: &'static str,
    /// Requirement names and budgets in µs.
    pub budgets_us: &'static [(&'static str, u64)],
}

/// The presets, from the field reports.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "drone",
        about:
            "autopilot sensor loops: gyro/accel 1 ms, baro/compass/airspeed/sonar 20 ms, GPS 200 ms",
        budgets_us: &[
            ("gyro", 1_000),
            ("accel", 1_000),
            ("baro", 20_000),
            ("compass", 20_000),
            ("airspeed", 20_000),
            ("sonar", 20_000),
            ("gps", 200_000),
        ],
    },
    Preset {
        name: "messaging",
        about: "a message every 30 ms, answered before the next one is sent",
        budgets_us: &[("message", 30_000)],
    },
];

/// Parses one `--require` value: `name=budget` (a bare budget number is µs) or a
/// preset name. The error says what is accepted.
pub fn parse_requirement(text: &str) -> Result<Vec<Requirement>, String> {
    let t = text.trim();
    if let Some((name, budget)) = t.split_once('=') {
        let name = name.trim();
        if name.is_empty() {
            return Err(format!(
                "'{t}' has no name before '=' (write e.g. gyro=1ms)"
            ));
        }
        let budget_ns = parse_positive_duration(budget, DefaultUnit::Micros)
            .map_err(|e| format!("budget of '{name}': {e}"))?;
        return Ok(vec![Requirement {
            name: name.into(),
            budget_ns,
        }]);
    }
    match PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(t)) {
        Some(p) => Ok(p
            .budgets_us
            .iter()
            .map(|&(name, us)| Requirement {
                name: name.into(),
                budget_ns: us * 1_000,
            })
            .collect()),
        None => {
            let presets: Vec<String> = PRESETS
                .iter()
                .map(|p| format!("{} ({})", p.name, p.about))
                .collect();
            Err(format!(
                "'{t}' is neither name=budget (e.g. gyro=1ms) nor a preset: {}",
                presets.join("; ")
            ))
        }
    }
}

/// A verdict's result: every observed value within the budget, in every
/// repeat, with a margin larger than the noise.
pub const PASS: &str = "PASS";
/// A value above the budget was observed, in every repeat.
pub const FAIL: &str = "FAIL";
/// The repeats disagree (some within the budget, some not), or every one is
/// within it by less than the noise threshold: another run may go either way.
pub const UNDECIDED: &str = "UNDECIDED";
/// No latency values to judge.
pub const NO_DATA: &str = "NO DATA";

/// The outcome of one requirement for one arm (one run, or the repeats of a
/// step, or a `--by` group).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Id of the run whose maximum the verdict gives (the worst repeat's).
    pub run_id: Option<i64>,
    /// The run's label, or the arm's name.
    pub label: String,
    /// Requirement name.
    pub requirement: String,
    /// Budget (ns).
    pub budget_ns: u64,
    /// [`PASS`], [`FAIL`], [`UNDECIDED`] or [`NO_DATA`] (the arm has no
    /// latency values; counts as a failure, since nothing shows the deadline
    /// holds).
    pub result: &'static str,
    /// Whether more runs could not change the result: true for PASS, FAIL
    /// and NO DATA, false for UNDECIDED.
    pub decided: bool,
    /// Runs with values the verdict rests on.
    pub repeats: usize,
    /// Of them, the runs whose maximum is within the budget.
    pub repeats_passed: usize,
    /// Observed maximum (ns), the worst of the repeats.
    pub max_ns: Option<u64>,
    /// Budget − observed max (ns); negative when the budget is exceeded.
    pub margin_ns: Option<i64>,
    /// Values above the budget, over all repeats (at the histogram's 0.1%
    /// resolution, at least 1 in a run whose maximum exceeds the budget).
    pub misses: Option<u64>,
    /// Periods that expired unserved while a thread was late, over all repeats.
    pub overruns: Option<u64>,
    /// Values observed, over all repeats.
    pub samples: u64,
    /// Time observed (ns; 0 when unknown, as for some imported runs).
    pub duration_ns: u64,
    /// Why the verdict is weaker than it looks (a run interrupted or failed,
    /// repeats that disagree, a margin within the noise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verdict {
    /// Whether the requirement is met.
    pub fn passed(&self) -> bool {
        self.result == PASS
    }
}

/// What one run shows against a requirement: its primary series' values.
struct Observed {
    id: Option<i64>,
    max_ns: u64,
    overruns: u64,
    samples: u64,
}

/// Judges every run on its own against every requirement (run-major order),
/// with the [default noise](DEFAULT_NOISE).
pub fn judge(runs: &[Run], reqs: &[Requirement]) -> Vec<Verdict> {
    runs.iter()
        .flat_map(|r| judge_runs(&r.label, &[r], reqs, DEFAULT_NOISE))
        .collect()
}

/// Judges every arm against every requirement (arm-major order), over the
/// arm's repeats: FAIL when every repeat exceeds the budget, PASS when every
/// one stays within it by more than `noise` (a fraction of the budget),
/// UNDECIDED otherwise ("PASS in 3 of 5 repeats"; or all within, but one by
/// less than the noise: the next run may miss). A single run is judged the
/// same way: within the budget by less than the noise is UNDECIDED; above it
/// is a FAIL, since a miss was seen.
pub fn judge_arms(arms: &[Arm], reqs: &[Requirement], noise: f64) -> Vec<Verdict> {
    arms.iter()
        .flat_map(|a| judge_runs(&a.name, &a.refs(), reqs, noise))
        .collect()
}

fn judge_runs(name: &str, runs: &[&Run], reqs: &[Requirement], noise: f64) -> Vec<Verdict> {
    let seen: Vec<(Observed, LatencyHistogram)> = runs
        .iter()
        .filter_map(|run| {
            let s = series::primary(run).filter(|s| s.counters.samples > 0)?;
            let seen = Observed {
                id: run.id,
                max_ns: s.summary.max_ns,
                overruns: s.counters.overruns,
                samples: s.counters.samples,
            };
            Some((seen, LatencyHistogram::from_data(&s.histogram)))
        })
        .collect();
    let unfinished: Vec<&str> = runs
        .iter()
        .filter_map(|r| status::unfinished(r).map(|s| s.name()))
        .collect();
    let note = match unfinished.as_slice() {
        [] => None,
        [one] if runs.len() == 1 => Some(format!(
            "run {one}: judged on what was observed before it stopped"
        )),
        many => Some(format!(
            "{} of {} runs stopped early: judged on what they observed",
            many.len(),
            runs.len()
        )),
    };
    let duration_ns = runs.iter().map(|r| r.duration_ns).sum();
    reqs.iter()
        .map(|req| {
            let mut v = Verdict {
                run_id: runs.first().and_then(|r| r.id),
                label: name.to_string(),
                requirement: req.name.clone(),
                budget_ns: req.budget_ns,
                result: NO_DATA,
                decided: true,
                repeats: seen.len(),
                repeats_passed: 0,
                max_ns: None,
                margin_ns: None,
                misses: None,
                overruns: None,
                samples: 0,
                duration_ns,
                note: note.clone(),
            };
            let Some(worst) = seen.iter().map(|(o, _)| o).max_by_key(|o| o.max_ns) else {
                let kind = runs.first().map_or("", |r| r.kind.as_str());
                v.note = Some(format!("a {kind} run holds no latency values to judge"));
                return v;
            };
            let misses = seen.iter().map(|(o, h)| match o.max_ns <= req.budget_ns {
                true => 0,
                false => o.samples.saturating_sub(h.count_le(req.budget_ns)).max(1),
            });
            v.misses = Some(misses.sum());
            v.repeats_passed = seen
                .iter()
                .filter(|(o, _)| o.max_ns <= req.budget_ns)
                .count();
            v.run_id = worst.id;
            v.max_ns = Some(worst.max_ns);
            let margin = req.budget_ns as i64 - worst.max_ns as i64;
            v.margin_ns = Some(margin);
            v.overruns = Some(seen.iter().map(|(o, _)| o.overruns).sum());
            v.samples = seen.iter().map(|(o, _)| o.samples).sum();
            let (result, doubt) = rule(
                v.repeats,
                v.repeats_passed,
                worst.max_ns,
                req.budget_ns,
                noise,
            );
            v.result = result;
            let why = doubt.map(|d| match d {
                Doubt::Disagree => format!(
                    "the repeats disagree: within the budget in {} of {}",
                    v.repeats_passed, v.repeats
                ),
                Doubt::Close { margin_ns } => format!(
                    "within the budget by {}, less than the {}% noise: another run may miss it",
                    Human(margin_ns),
                    noise * 100.0
                ),
            });
            v.decided = v.result != UNDECIDED;
            if let Some(why) = why {
                v.note = Some(match v.note.take() {
                    Some(n) => format!("{why}; {n}"),
                    None => why,
                });
            }
            v
        })
        .collect()
}

/// Why a verdict is [`UNDECIDED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// Some of its units stayed within the budget, others did not.
    Disagree,
    /// Every unit stayed within it, the worst by `margin_ns`: no more than the
    /// noise.
    Close { margin_ns: u64 },
}

/// The rule of every verdict, over `units` (runs, the repeats of a step, a
/// host's monitor rows and runs) of which `within` stayed within `budget_ns`,
/// the worst maximum `worst_ns`: [`NO_DATA`] without units, [`FAIL`] when
/// none stayed within, [`UNDECIDED`] when some did not or the worst is within
/// by no more than `noise` of the budget, else [`PASS`].
pub fn rule(
    units: usize,
    within: usize,
    worst_ns: u64,
    budget_ns: u64,
    noise: f64,
) -> (&'static str, Option<Doubt>) {
    let margin_ns = budget_ns.saturating_sub(worst_ns);
    if units == 0 {
        (NO_DATA, None)
    } else if within == 0 {
        (FAIL, None)
    } else if within < units {
        (UNDECIDED, Some(Doubt::Disagree))
    } else if margin_ns as f64 <= noise * budget_ns as f64 {
        (UNDECIDED, Some(Doubt::Close { margin_ns }))
    } else {
        (PASS, None)
    }
}

/// How many verdicts are not a PASS: FAIL, NO DATA and UNDECIDED (a deadline
/// not shown to hold).
pub fn failures(verdicts: &[Verdict]) -> usize {
    verdicts.iter().filter(|v| !v.passed()).count()
}

/// The exit code the verdicts give: [`EXIT_FAILED`] when any failed or has no
/// data, else [`EXIT_UNDECIDED`] when any is undecided, else [`EXIT_OK`].
pub fn exit_code(verdicts: &[Verdict]) -> i32 {
    if verdicts
        .iter()
        .any(|v| v.result == FAIL || v.result == NO_DATA)
    {
        EXIT_FAILED
    } else if verdicts.iter().any(|v| v.result == UNDECIDED) {
        EXIT_UNDECIDED
    } else {
        EXIT_OK
    }
}

/// A run's own `--max-latency` threshold and how its maximum fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    /// The threshold (ns).
    pub limit_ns: u64,
    /// The observed maximum of all threads (ns; 0 without a total).
    pub max_ns: u64,
    /// Threshold − observed max (ns); negative when it is exceeded.
    pub margin_ns: i64,
    /// Whether the maximum is within the threshold.
    pub passed: bool,
}

/// The run's `--max-latency` threshold judged, when it was given one.
pub fn max_latency(run: &Run) -> Option<Threshold> {
    let limit_ns = crate::step::latency::asked(&run.params).max_latency_ns?;
    let max_ns = run.total.as_ref().map(|t| t.summary.max_ns).unwrap_or(0);
    Some(Threshold {
        limit_ns,
        max_ns,
        margin_ns: limit_ns as i64 - max_ns as i64,
        passed: max_ns <= limit_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::record::Status;

    #[test]
    fn requirements_and_presets() {
        assert_eq!(
            parse_requirement("gyro=1ms").unwrap(),
            vec![Requirement {
                name: "gyro".into(),
                budget_ns: 1_000_000
            }]
        );
        assert_eq!(parse_requirement("loop=250").unwrap()[0].budget_ns, 250_000);
        let drone = parse_requirement("drone").unwrap();
        let budgets: Vec<(&str, u64)> = drone
            .iter()
            .map(|r| (r.name.as_str(), r.budget_ns))
            .collect();
        assert_eq!(
            budgets,
            vec![
                ("gyro", 1_000_000),
                ("accel", 1_000_000),
                ("baro", 20_000_000),
                ("compass", 20_000_000),
                ("airspeed", 20_000_000),
                ("sonar", 20_000_000),
                ("gps", 200_000_000)
            ]
        );
        assert!(parse_requirement("=1ms").unwrap_err().contains("no name"));
        assert!(parse_requirement("gyro=0").unwrap_err().contains("zero"));
        assert!(parse_requirement("gyro=fast").unwrap_err().contains("gyro"));
        assert!(parse_requirement("plane").unwrap_err().contains("drone"));
    }

    #[test]
    fn verdicts_by_hand() {
        // max 1.2 ms: 2 of 5 values above 1 ms; all within 20 ms.
        let mut run = run_from_samples("stock", &[100_000, 200_000, 900_000, 1_100_000, 1_200_000]);
        run.id = Some(7);
        let reqs = parse_requirement("drone").unwrap();
        let v = judge(&[run], &reqs);
        assert_eq!(v.len(), 7);
        let gyro = &v[0];
        assert_eq!(gyro.result, "FAIL");
        assert_eq!(gyro.margin_ns, Some(-200_000));
        assert_eq!(gyro.misses, Some(2));
        assert_eq!((gyro.samples, gyro.duration_ns), (5, 5_000_000));
        let baro = &v[2];
        assert_eq!(baro.result, "PASS");
        assert_eq!(baro.margin_ns, Some(18_800_000));
        assert_eq!(baro.misses, Some(0));
        assert_eq!(failures(&v), 2);
    }

    #[test]
    fn the_max_latency_threshold_of_a_run() {
        let mut run = run_from_samples("x", &[500_000, 1_200_000]);
        assert_eq!(max_latency(&run), None);
        run.params =
            crate::record::RunParams::Recorded(serde_json::json!({"max_latency_ns": 1_000_000}));
        let t = max_latency(&run).unwrap();
        assert_eq!(
            (t.max_ns, t.margin_ns, t.passed),
            (1_200_000, -200_000, false)
        );
        run.params =
            crate::record::RunParams::Recorded(serde_json::json!({"max_latency_ns": 1_200_000}));
        assert!(max_latency(&run).unwrap().passed, "at the threshold passes");
    }

    #[test]
    fn at_the_budget_is_undecided_and_no_data_fails() {
        let run = run_from_samples("x", &[500_000, 1_000_000]);
        let req = parse_requirement("a=1ms").unwrap();
        let v = &judge(std::slice::from_ref(&run), &req)[0];
        assert_eq!(
            (v.margin_ns, v.result, v.decided),
            (Some(0), UNDECIDED, false)
        );
        assert_eq!((v.repeats, v.repeats_passed), (1, 1));
        assert!(v.note.as_deref().unwrap().contains("noise"), "{v:?}");
        // 60 µs of 1 ms is beyond the 5 % noise: a PASS.
        let ok = run_from_samples("x", &[500_000, 940_000]);
        let v = &judge(&[ok], &req)[0];
        assert_eq!((v.result, v.decided, v.note.as_deref()), (PASS, true, None));
        let mut bench = run_from_samples("b", &[1]);
        bench.kind = "bench.cpu".into();
        bench.total = None;
        bench.series.clear();
        bench.status = Status::Interrupted;
        let v = &judge(&[bench], &req)[0];
        assert_eq!((v.result, v.decided), (NO_DATA, true));
        assert!(!v.passed());
        assert!(v.note.as_deref().unwrap().contains("bench.cpu"));
    }

    /// An arm of `maxima.len()` repeats, each with one wake-up at its maximum.
    fn repeats(maxima: &[u64]) -> Arm {
        let runs = maxima
            .iter()
            .enumerate()
            .map(|(i, &m)| {
                let mut r = run_from_samples("k", &[100_000, m]);
                r.id = Some(i as i64 + 1);
                r
            })
            .collect();
        Arm::new("PREEMPT_RT", runs)
    }

    #[test]
    fn verdicts_over_repeats() {
        let gyro = parse_requirement("gyro=1ms").unwrap();
        let judged =
            |maxima: &[u64]| judge_arms(&[repeats(maxima)], &gyro, DEFAULT_NOISE).remove(0);
        // PASS in 5 of 5 repeats, worst max 455 µs.
        let v = judged(&[300_000, 455_000, 200_000, 410_000, 390_000]);
        assert_eq!((v.result, v.decided), (PASS, true));
        assert_eq!((v.repeats, v.repeats_passed), (5, 5));
        assert_eq!((v.max_ns, v.run_id), (Some(455_000), Some(2)));
        assert_eq!((v.samples, v.label.as_str()), (10, "PREEMPT_RT"));
        // The repeats disagree.
        let v = judged(&[300_000, 1_200_000, 200_000]);
        assert_eq!((v.result, v.decided), (UNDECIDED, false));
        assert_eq!((v.repeats_passed, v.misses), (2, Some(1)));
        assert!(v.note.as_deref().unwrap().contains("2 of 3"), "{v:?}");
        assert_eq!(v.margin_ns, Some(-200_000));
        // Every repeat misses.
        let v = judged(&[1_100_000, 1_200_000]);
        assert_eq!((v.result, v.decided, v.misses), (FAIL, true, Some(2)));
        // All within, but the worst by less than the noise.
        let v = judged(&[300_000, 990_000]);
        assert_eq!(v.result, UNDECIDED);
    }

    #[test]
    fn exit_codes_of_verdicts() {
        let req = parse_requirement("a=1ms").unwrap();
        let code = |maxima: &[u64]| exit_code(&judge_arms(&[repeats(maxima)], &req, 0.05));
        assert_eq!(code(&[100_000]), EXIT_OK);
        assert_eq!(code(&[100_000, 2_000_000]), EXIT_UNDECIDED);
        assert_eq!(code(&[2_000_000]), EXIT_FAILED);
        let mut both = judge_arms(&[repeats(&[100_000, 2_000_000])], &req, 0.05);
        both.extend(judge_arms(&[repeats(&[2_000_000])], &req, 0.05));
        assert_eq!(exit_code(&both), EXIT_FAILED, "a failure outweighs");
        assert_eq!(failures(&both), 2, "undecided is no pass");
    }
}
