//! Expanding a scenario into the ordered list of steps to run: every combination of
//! a step's matrix axes (the first axis outermost), each repeated `repeat` times.

use super::probes::{Flag, ProbeDef};
use super::{Scenario, Val};
use crate::units::parse_duration;

/// A step's place in a load attribution: the probe under no load, under one part
/// of a mix alone, or under the whole mix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// No load: what the parts are measured against.
    Baseline,
    /// One part of the mix alone (its spec).
    Part(String),
    /// The whole mix.
    Whole,
}

/// Membership of a planned step in an attribution group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// Group number (one per attributed combination).
    pub group: usize,
    /// The mix being attributed.
    pub mix: String,
    /// What this step measures.
    pub role: Role,
}

/// The mix a load value names, if it names one.
pub fn mix_of(v: &Val) -> Option<&'static crate::loadspec::Mix> {
    let text = v.to_string();
    let name = text.split(':').next().unwrap_or("").trim();
    crate::loadspec::MIXES.iter().find(|m| m.name == name)
}

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
    /// Its place in a load attribution, when its step has `attribute = true`.
    pub attribution: Option<Attribution>,
}

/// A variant of one matrix combination: its values, a name suffix, and its
/// attribution role.
type Variant = (Vec<(String, Val)>, String, Option<Attribution>);

/// The variants one combination runs as: itself, or, when attributed, baseline,
/// each part of the mix alone, and the whole mix.
fn variants(values: Vec<(String, Val)>, attribute: bool, groups: &mut usize) -> Vec<Variant> {
    let mix = values
        .iter()
        .find(|(k, _)| k == "load")
        .and_then(|(_, v)| mix_of(v))
        .filter(|_| attribute);
    let Some(m) = mix else {
        return vec![(values, String::new(), None)];
    };
    let group = *groups;
    *groups += 1;
    let with_load = |load: &str, suffix: String, role: Role| {
        let mut v: Vec<(String, Val)> = values
            .iter()
            .filter(|(k, _)| k != "load")
            .cloned()
            .collect();
        v.push(("load".into(), Val::Str(load.into())));
        let a = Attribution {
            group,
            mix: m.name.into(),
            role,
        };
        (v, suffix, Some(a))
    };
    let mut out = vec![with_load("none", " (baseline)".into(), Role::Baseline)];
    for part in m.parts {
        out.push(with_load(
            part,
            format!(" ({} part {part})", m.name),
            Role::Part(part.to_string()),
        ));
    }
    out.push(with_load(
        m.name,
        format!(" ({} whole)", m.name),
        Role::Whole,
    ));
    out
}

/// Expands the scenario. `duration` overrides every step's duration.
pub fn expand(s: &Scenario, duration: Option<&str>) -> Vec<PlannedStep> {
    let mut out = Vec::new();
    let mut groups = 0;
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
            let mut base = step.params.clone();
            base.extend(combo.iter().cloned());
            for (values, suffix, attribution) in variants(base, step.attribute, &mut groups) {
                for r in 1..=step.repeat {
                    let mut values = values.clone();
                    if let Some(d) = duration {
                        values.retain(|(k, _)| k != step.probe.duration_key);
                        values.push((step.probe.duration_key.to_string(), Val::Str(d.to_string())));
                    }
                    let mut name = step
                        .name
                        .clone()
                        .unwrap_or_else(|| step.probe.name.to_string());
                    for (k, v) in &combo {
                        if !(attribution.is_some() && k == "load") {
                            name.push_str(&format!(" {k}={v}"));
                        }
                    }
                    name.push_str(&suffix);
                    if step.repeat > 1 {
                        name.push_str(&format!(" #{r}"));
                    }
                    out.push(PlannedStep {
                        index: out.len(),
                        step: si,
                        name,
                        probe: step.probe,
                        planned_ns: planned_ns(step.probe, &values),
                        argv: argv(step.probe, &values),
                        values,
                        attribution: attribution.clone(),
                    });
                }
            }
        }
    }
    out
}

/// How long a step is planned to run, from its duration value.
fn planned_ns(probe: &ProbeDef, values: &[(String, Val)]) -> Option<u64> {
    let (_, v) = values.iter().find(|(k, _)| k == probe.duration_key)?;
    match (probe.param(probe.duration_key)?.kind, v) {
        (super::probes::Kind::Duration(u), Val::Str(s)) => parse_duration(s, u).ok(),
        _ => None,
    }
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
            (Flag::RtPriority, Val::Int(0)) => {}
            (Flag::Priority | Flag::RtPriority, v) => {
                a.push("--priority".into());
                a.push(v.to_string());
            }
            (Flag::Positional, v) => a.push(v.to_string()),
            (Flag::Runner, _) => {}
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
    fn attribution_runs_baseline_each_part_and_the_whole_mix() {
        let s = parse(
            "s.toml",
            "name = \"a\"\n[[step]]\nprobe = \"latency\"\nmatrix.load = [\"none\", \"dohell\"]\nattribute = true\n",
        )
        .unwrap();
        let plan = expand(&s, None);
        let parts = crate::loadspec::MIXES[0].parts;
        // load=none runs once as is; dohell runs as baseline + parts + whole.
        assert_eq!(plan.len(), 1 + 1 + parts.len() + 1);
        assert_eq!(plan[0].attribution, None);
        let group: Vec<&Attribution> = plan[1..]
            .iter()
            .map(|p| p.attribution.as_ref().unwrap())
            .collect();
        assert_eq!(group[0].role, Role::Baseline);
        assert!(!plan[1].argv.contains(&"--load".to_string()));
        for (i, part) in parts.iter().enumerate() {
            assert_eq!(group[i + 1].role, Role::Part(part.to_string()));
            assert_eq!(plan[i + 2].argv.last().unwrap(), part);
        }
        assert_eq!(group.last().unwrap().role, Role::Whole);
        assert_eq!(plan.last().unwrap().argv.last().unwrap(), "dohell");
        assert!(plan.last().unwrap().name.ends_with("(dohell whole)"));
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
