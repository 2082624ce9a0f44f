//! Expanding a scenario into the ordered list of steps to run: every combination of
//! a step's matrix axes (the first axis outermost), each repeated `repeat` times.

use super::probes::{Flag, ProbeDef};
use super::{Scenario, Val};
use crate::units::parse_duration;

/// One run to make.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// Position in the plan (0-based).
    pub index: usize,
    /// Which `[[step]]` it comes from (0-based).
    pub step: usize,
    /// Readable name: `latency load=dohell priority=90 #2`.
    pub name: String,
    /// The probe.
    pub probe: &'static ProbeDef,
    /// Every parameter value of this run.
    pub values: Vec<(String, Val)>,
    /// The rtlab arguments that run it (without output and store flags).
    pub argv: Vec<String>,
    /// Planned duration (ns), when the step has one.
    pub planned_ns: Option<u64>,
}

/// Expands the scenario. `duration` overrides every step's duration.
pub fn expand(s: &Scenario, duration: Option<&str>) -> Vec<PlannedStep> {
    let mut out = Vec::new();
    for (si, step) in s.steps.iter().enumerate() {
        let mut combos: Vec<Vec<(String, Val)>> = vec![Vec::new()];
        for (key, vals) in &step.matrix {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((key.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        for combo in combos {
            for r in 1..=step.repeat {
                let mut values = step.params.clone();
                values.extend(combo.iter().cloned());
                if let Some(d) = duration {
                    values.retain(|(k, _)| k != step.probe.duration_key);
                    values.push((step.probe.duration_key.to_string(), Val::Str(d.to_string())));
                }
                let mut name = step
                    .name
                    .clone()
                    .unwrap_or_else(|| step.probe.name.to_string());
                for (k, v) in &combo {
                    name.push_str(&format!(" {k}={v}"));
                }
                if step.repeat > 1 {
                    name.push_str(&format!(" #{r}"));
                }
                let planned_ns = values
                    .iter()
                    .find(|(k, _)| k == step.probe.duration_key)
                    .and_then(|(k, v)| match (step.probe.param(k), v) {
                        (Some(p), Val::Str(s)) => match p.kind {
                            super::probes::Kind::Duration(u) => parse_duration(s, u).ok(),
                            _ => None,
                        },
                        _ => None,
                    });
                out.push(PlannedStep {
                    index: out.len(),
                    step: si,
                    name,
                    probe: step.probe,
                    argv: argv(step.probe, &values),
                    values,
                    planned_ns,
                });
            }
        }
    }
    out
}

/// The command-line words for a probe and its values.
pub fn argv(probe: &ProbeDef, values: &[(String, Val)]) -> Vec<String> {
    let mut a: Vec<String> = probe.command.iter().map(|s| s.to_string()).collect();
    for (k, v) in values {
        let Some(param) = probe.param(k) else {
            continue;
        };
        match (param.flag, v) {
            (Flag::Value(f), v) => {
                a.push(f.to_string());
                a.push(v.to_string());
            }
            (Flag::Switch(f), Val::Bool(true)) => a.push(f.to_string()),
            (Flag::Switch(_), _) => {}
            (Flag::BoolValue(f), v) => a.push(format!("{f}={v}")),
            (Flag::Repeat(f), Val::List(specs)) => {
                for s in specs.iter().filter(|s| s.as_str() != "none") {
                    a.push(f.to_string());
                    a.push(s.clone());
                }
            }
            (Flag::Repeat(f), v) => {
                let s = v.to_string();
                if s != "none" {
                    a.push(f.to_string());
                    a.push(s);
                }
            }
            (Flag::Priority, Val::Int(0)) => {
                a.push("--policy".into());
                a.push("other".into());
            }
            (Flag::Priority, v) => {
                a.push("--priority".into());
                a.push(v.to_string());
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse;

    #[test]
    fn matrix_expands_to_every_combination_in_order() {
        let s = parse(
            "s.toml",
            r#"
name = "m"
[defaults]
duration = "60s"
[[step]]
probe = "latency"
interval = "200us"
matrix.priority = [0, 90]
matrix.interval = ["1ms", "500us", "200us"]
[[step]]
name = "idle"
probe = "latency"
repeat = 3
"#,
        )
        .unwrap();
        let plan = expand(&s, None);
        assert_eq!(plan.len(), 2 * 3 + 3);
        assert_eq!(plan[0].name, "latency priority=0 interval=1ms");
        assert_eq!(plan[5].name, "latency priority=90 interval=200us");
        assert_eq!(plan[6].name, "idle #1");
        assert_eq!(plan[8].name, "idle #3");
        assert!(plan.iter().enumerate().all(|(i, p)| p.index == i));
        assert_eq!(
            plan[0].argv,
            [
                "latency",
                "--duration",
                "60s",
                "--policy",
                "other",
                "--interval",
                "1ms"
            ]
        );
        assert_eq!(
            plan[5].argv,
            [
                "latency",
                "--duration",
                "60s",
                "--priority",
                "90",
                "--interval",
                "200us"
            ]
        );
        assert_eq!(plan[0].planned_ns, Some(60_000_000_000));
        // The matrix axis replaced the fixed interval rather than adding a second one.
        assert_eq!(
            plan[3].argv.iter().filter(|a| *a == "--interval").count(),
            1
        );
    }

    #[test]
    fn duration_override_scales_every_step() {
        let s = parse(
            "s.toml",
            "name = \"m\"\n[[step]]\nprobe = \"latency\"\nduration = \"1m\"\n",
        )
        .unwrap();
        let plan = expand(&s, Some("5s"));
        assert_eq!(plan[0].planned_ns, Some(5_000_000_000));
        assert_eq!(plan[0].argv, ["latency", "--duration", "5s"]);
    }
}
