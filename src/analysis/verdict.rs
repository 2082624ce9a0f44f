//! Verdicts: requirements `name=budget` (or presets of several) judged against the
//! observed latencies of each run. A run passes a requirement when its observed
//! maximum is within the budget; the margin is budget − observed max. Every verdict
//! states the samples and the time it was observed over, because a PASS over 500
//! samples says much less than one over ten million.

use super::{series, status};
use crate::record::Run;
use crate::units::{parse_positive_duration, DefaultUnit};
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

/// The outcome of one requirement for one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Run id.
    pub run_id: Option<i64>,
    /// Run label.
    pub label: String,
    /// Requirement name.
    pub requirement: String,
    /// Budget (ns).
    pub budget_ns: u64,
    /// `PASS`, `FAIL`, or `NO DATA` (the run has no latency values; counts as a
    /// failure, since nothing shows the deadline holds).
    pub result: &'static str,
    /// Observed maximum (ns).
    pub max_ns: Option<u64>,
    /// Budget − observed max (ns); negative when the budget is exceeded.
    pub margin_ns: Option<i64>,
    /// Values above the budget (at the histogram's 0.1% resolution, at least 1
    /// when the maximum exceeds the budget).
    pub misses: Option<u64>,
    /// Periods that expired unserved while a thread was late.
    pub overruns: Option<u64>,
    /// Values observed.
    pub samples: u64,
    /// Time observed (ns; 0 when unknown, as for some imported runs).
    pub duration_ns: u64,
    /// Why the verdict is weaker than it looks (run interrupted or failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verdict {
    /// Whether the requirement is met.
    pub fn passed(&self) -> bool {
        self.result == "PASS"
    }
}

/// Judges every run against every requirement (run-major order).
pub fn judge(runs: &[Run], reqs: &[Requirement]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for run in runs {
        let series = series::primary(run).filter(|s| s.counters.samples > 0);
        let hist = series
            .as_ref()
            .map(|s| LatencyHistogram::from_data(&s.histogram));
        let note = status::unfinished(run).map(|s| {
            format!(
                "run {}: judged on what was observed before it stopped",
                s.name()
            )
        });
        for req in reqs {
            let mut v = Verdict {
                run_id: run.id,
                label: run.label.clone(),
                requirement: req.name.clone(),
                budget_ns: req.budget_ns,
                result: "NO DATA",
                max_ns: None,
                margin_ns: None,
                misses: None,
                overruns: None,
                samples: 0,
                duration_ns: run.duration_ns,
                note: note.clone(),
            };
            if let (Some(s), Some(h)) = (&series, &hist) {
                let max = s.summary.max_ns;
                let over = s.counters.samples.saturating_sub(h.count_le(req.budget_ns));
                let pass = max <= req.budget_ns;
                v.result = if pass { "PASS" } else { "FAIL" };
                v.max_ns = Some(max);
                v.margin_ns = Some(req.budget_ns as i64 - max as i64);
                v.misses = Some(if pass { 0 } else { over.max(1) });
                v.overruns = Some(s.counters.overruns);
                v.samples = s.counters.samples;
            } else {
                v.note = Some(format!(
                    "a {} run holds no latency values to judge",
                    run.kind
                ));
            }
            out.push(v);
        }
    }
    out
}

/// How many verdicts failed (NO DATA counts as failed).
pub fn failures(verdicts: &[Verdict]) -> usize {
    verdicts.iter().filter(|v| !v.passed()).count()
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
    fn exactly_at_budget_passes_and_no_data_fails() {
        let run = run_from_samples("x", &[500_000, 1_000_000]);
        let req = parse_requirement("a=1ms").unwrap();
        assert_eq!(judge(&[run], &req)[0].margin_ns, Some(0));
        let mut bench = run_from_samples("b", &[1]);
        bench.kind = "bench.cpu".into();
        bench.total = None;
        bench.series.clear();
        bench.status = Status::Interrupted;
        let v = &judge(&[bench], &req)[0];
        assert_eq!(v.result, "NO DATA");
        assert!(!v.passed());
        assert!(v.note.as_deref().unwrap().contains("bench.cpu"));
    }
}
