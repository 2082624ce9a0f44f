//! Expanding a scenario into the ordered list of steps to run: every combination of
//! a step's matrix axes (the first axis outermost), each repeated `repeat` times.
//! Repeats are interleaved in rounds (A B C A B C, never A A B B C C), so that
//! whatever drifts over a campaign (temperature, other load, a daemon waking up)
//! falls on every step alike: round r runs every combination that repeats at
//! least r times, in file order. A repeated step is named `NAME #r` and keeps
//! its base name (`NAME`) and round (`r`), by which its repeats are grouped.
//!
//! The plan is counted (with checked arithmetic) before anything is expanded, and
//! a plan above the limit is refused: a few hundred bytes of matrix can ask for
//! millions of steps, and those must never be built in memory.

use super::{Scenario, Val};
use crate::step::{self, Probe};

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
pub fn mix_of(v: &Val) -> Option<&'static crate::loads::mix::Mix> {
    let text = v.to_string();
    let name = text.split(':').next().unwrap_or("").trim();
    crate::loads::mix::MIXES.iter().find(|m| m.name == name)
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
    /// The name without its repeat: `latency load=dohell priority=90` (the
    /// same for every repeat of one combination).
    pub base: String,
    /// Which repeat it is (1-based; 1 for a step that is not repeated).
    pub repeat: u32,
    /// The probe.
    pub probe: &'static Probe,
    /// Every parameter value of this run, as the file gives them.
    pub values: Vec<(String, Val)>,
    /// The step's parameters: what `rtlab __step` runs.
    pub params: step::Params,
    /// Planned duration (ns), when the step has one.
    pub planned_ns: Option<u64>,
    /// Its place in a load attribution, when its step has `attribute = true`.
    pub attribution: Option<Attribution>,
}

impl PlannedStep {
    /// How the campaign records it, once it saved run `run_id`.
    pub fn record(&self, run_id: i64) -> crate::store::CampaignStep {
        crate::store::CampaignStep {
            step_index: self.index as i64,
            step_name: self.name.clone(),
            base_name: self.base.clone(),
            repeat: self.repeat,
            run_id,
        }
    }
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

/// The largest plan `rtlab run` accepts unless `--max-steps` raises it.
pub const DEFAULT_MAX_STEPS: u64 = 10_000;

/// How many runs one `[[step]]` makes, factor by factor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCount {
    /// Which `[[step]]` (0-based).
    pub step: usize,
    /// Its factors in file order: each matrix axis with its size (a load axis
    /// counted with its attribution parts), an attributed fixed load, `repeat`.
    pub factors: Vec<(String, u64)>,
    /// Their product; `None` when it does not fit in a u64.
    pub total: Option<u64>,
}

/// A plan above the limit, refused before it is expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooBig {
    /// The number of steps; `None` when it does not fit in a u64.
    pub total: Option<u64>,
    /// Each `[[step]]`'s share.
    pub steps: Vec<StepCount>,
    /// The limit it is above.
    pub limit: u64,
}

impl std::fmt::Display for TooBig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let factors = |c: &StepCount| {
            if c.factors.is_empty() {
                return "1".to_string();
            }
            c.factors
                .iter()
                .map(|(k, n)| format!("{k}: {}", grouped(*n)))
                .collect::<Vec<_>>()
                .join(" × ")
        };
        match self.total {
            Some(n) => write!(f, "scenario expands to {} steps (", grouped(n))?,
            None => write!(
                f,
                "scenario expands to more than {} steps (",
                grouped(u64::MAX)
            )?,
        }
        if let [only] = self.steps.as_slice() {
            f.write_str(&factors(only))?;
        } else {
            // The largest shares, in file order; the rest are summed up.
            const SHOWN: usize = 4;
            let mut big: Vec<&StepCount> = self.steps.iter().collect();
            big.sort_by_key(|c| std::cmp::Reverse(c.total.unwrap_or(u64::MAX)));
            big.truncate(SHOWN);
            big.sort_by_key(|c| c.step);
            let parts: Vec<String> = big
                .iter()
                .map(|c| {
                    let total = c.total.map_or_else(|| "overflow".into(), grouped);
                    format!("step[{}]: {} = {total}", c.step + 1, factors(c))
                })
                .collect();
            f.write_str(&parts.join("; "))?;
            if self.steps.len() > SHOWN {
                write!(f, "; and {} smaller steps", self.steps.len() - SHOWN)?;
            }
        }
        write!(
            f,
            "); the limit is {}, raise it with --max-steps (or shrink the matrix)",
            grouped(self.limit)
        )
    }
}

impl std::error::Error for TooBig {}

/// `10000000` as `10 000 000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// How many runs one load value makes: 1, or with `attribute` and a mix, the
/// baseline, each part and the whole.
fn load_variants(v: &Val, attribute: bool) -> u64 {
    match mix_of(v).filter(|_| attribute) {
        Some(m) => m.parts.len() as u64 + 2,
        None => 1,
    }
}

/// Counts the plan without building it: the total (`None` if it overflows a
/// u64) and each `[[step]]`'s factors.
pub fn count(s: &Scenario) -> (Option<u64>, Vec<StepCount>) {
    let mut total = Some(0u64);
    let mut steps = Vec::with_capacity(s.steps.len());
    for (si, step) in s.steps.iter().enumerate() {
        let mut factors: Vec<(String, u64)> = Vec::new();
        for (key, vals) in &step.matrix {
            let n = if key == "load" {
                // At most `vals.len() × (parts + 2)`: a small sum, no overflow.
                vals.iter().map(|v| load_variants(v, step.attribute)).sum()
            } else {
                vals.len() as u64
            };
            factors.push((key.clone(), n));
        }
        if let Some((_, v)) = step.params.iter().find(|(k, _)| k == "load") {
            let n = load_variants(v, step.attribute);
            if n > 1 {
                factors.push(("load (attributed)".into(), n));
            }
        }
        if step.repeat > 1 {
            factors.push(("repeat".into(), u64::from(step.repeat)));
        }
        let product = factors
            .iter()
            .try_fold(1u64, |acc, (_, n)| acc.checked_mul(*n));
        total = total.zip(product).and_then(|(t, p)| t.checked_add(p));
        steps.push(StepCount {
            step: si,
            factors,
            total: product,
        });
    }
    (total, steps)
}

/// One combination of a step's matrix (one variant of an attribution): what
/// each of its repeats runs.
struct Combo {
    step: usize,
    base: String,
    values: Vec<(String, Val)>,
    params: step::Params,
    attribution: Option<Attribution>,
}

/// Every combination of every step, in file order (the first matrix axis
/// outermost); `duration` overrides each one's duration.
fn combinations(s: &Scenario, duration: Option<&str>) -> Vec<Combo> {
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
            for (mut values, suffix, attribution) in variants(base, step.attribute, &mut groups) {
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
                let params = step
                    .probe
                    .params(
                        values
                            .iter()
                            .map(|(k, v)| (k.clone(), v.to_json()))
                            .collect(),
                    )
                    .expect("each value was read as its parameter when the file was parsed");
                out.push(Combo {
                    step: si,
                    base: name,
                    values,
                    params,
                    attribution,
                });
            }
        }
    }
    out
}

/// Expands the scenario, or refuses (before building anything) a plan of more
/// than `max_steps` steps. `duration` overrides every step's duration.
pub fn expand(
    s: &Scenario,
    duration: Option<&str>,
    max_steps: u64,
) -> Result<Vec<PlannedStep>, TooBig> {
    let (total, steps) = count(s);
    let len = match total {
        Some(n) if n <= max_steps => n,
        _ => {
            return Err(TooBig {
                total,
                steps,
                limit: max_steps,
            })
        }
    };
    // `len` ≤ `max_steps`, which the caller chose to allow in memory.
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    let combos = combinations(s, duration);
    let rounds = s.steps.iter().map(|st| st.repeat).max().unwrap_or(0);
    for r in 1..=rounds {
        for c in combos.iter().filter(|c| s.steps[c.step].repeat >= r) {
            let step = &s.steps[c.step];
            let name = match step.repeat {
                1 => c.base.clone(),
                _ => format!("{} #{r}", c.base),
            };
            out.push(PlannedStep {
                index: out.len(),
                step: c.step,
                name,
                base: c.base.clone(),
                repeat: r,
                probe: step.probe,
                planned_ns: c.params.step().planned_ns(),
                params: c.params.clone(),
                values: c.values.clone(),
                attribution: c.attribution.clone(),
            });
        }
    }
    debug_assert_eq!(out.len() as u64, len, "count() and expand() agree");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::rt::PolicyArg;

    fn latency(p: &PlannedStep) -> &step::latency::Params {
        match &p.params {
            step::Params::Latency(l) => l,
            other => panic!("not a latency step: {other:?}"),
        }
    }
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
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        assert_eq!(plan.len(), 2 * 3 + 3);
        assert_eq!(plan[0].name, "latency priority=0 interval=1ms");
        assert_eq!(plan[5].name, "latency priority=90 interval=200us");
        assert_eq!(plan[6].name, "idle #1");
        assert_eq!(plan[8].name, "idle #3");
        assert_eq!((plan[8].base.as_str(), plan[8].repeat), ("idle", 3));
        assert_eq!(
            (plan[0].base.as_str(), plan[0].repeat),
            (plan[0].name.as_str(), 1)
        );
        assert!(plan.iter().enumerate().all(|(i, p)| p.index == i));
        let first = latency(&plan[0]);
        assert_eq!(first.duration.as_ref().map(|v| v.text()), Some("60s"));
        assert_eq!(
            (first.sched.policy, first.sched.priority),
            (PolicyArg::Other, Some(0))
        );
        assert_eq!(first.period.interval, "1ms");
        let sixth = latency(&plan[5]);
        assert_eq!(
            (sixth.sched.policy, sixth.sched.priority),
            (PolicyArg::Fifo, Some(90))
        );
        // The matrix axis replaced the fixed interval.
        assert_eq!(sixth.period.interval, "200us");
        assert_eq!(
            latency(&plan[6]),
            &step::latency::Params {
                duration: Some("60s".into()),
                ..Default::default()
            }
        );
        assert_eq!(plan[0].planned_ns, Some(60_000_000_000));
    }

    #[test]
    fn repeats_are_interleaved_in_rounds_so_drift_hits_every_step_alike() {
        let s = parse(
            "s.toml",
            r#"
name = "r"
[[step]]
name = "a"
probe = "latency"
repeat = 3
matrix.priority = [80, 90]
[[step]]
name = "b"
probe = "latency"
[[step]]
name = "c"
probe = "latency"
repeat = 2
"#,
        )
        .unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        let names: Vec<&str> = plan.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a priority=80 #1",
                "a priority=90 #1",
                "b",
                "c #1",
                "a priority=80 #2",
                "a priority=90 #2",
                "c #2",
                "a priority=80 #3",
                "a priority=90 #3",
            ]
        );
        let (total, _) = count(&s);
        assert_eq!(total, Some(plan.len() as u64));
        assert!(plan.iter().enumerate().all(|(i, p)| p.index == i));
        let of = |i: usize| (plan[i].base.as_str(), plan[i].repeat, plan[i].step);
        assert_eq!(of(0), ("a priority=80", 1, 0));
        assert_eq!(of(2), ("b", 1, 1));
        assert_eq!(of(6), ("c", 2, 2));
        assert_eq!(of(8), ("a priority=90", 3, 0));
        // Every repeat of a combination runs the same parameters.
        assert_eq!(plan[1].params, plan[8].params);
        assert_ne!(plan[0].params, plan[1].params);
    }

    #[test]
    fn attribution_runs_baseline_each_part_and_the_whole_mix() {
        let s = parse(
            "s.toml",
            "name = \"a\"\n[[step]]\nprobe = \"latency\"\nmatrix.load = [\"none\", \"dohell\"]\nattribute = true\n",
        )
        .unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        let parts = crate::loads::mix::MIXES[0].parts;
        // load=none runs once as is; dohell runs as baseline + parts + whole.
        assert_eq!(plan.len(), 1 + 1 + parts.len() + 1);
        assert_eq!(plan[0].attribution, None);
        let group: Vec<&Attribution> = plan[1..]
            .iter()
            .map(|p| p.attribution.as_ref().unwrap())
            .collect();
        assert_eq!(group[0].role, Role::Baseline);
        assert!(latency(&plan[1]).shared.load.load.is_empty());
        for (i, part) in parts.iter().enumerate() {
            assert_eq!(group[i + 1].role, Role::Part(part.to_string()));
            assert_eq!(latency(&plan[i + 2]).shared.load.load, [*part]);
        }
        assert_eq!(group.last().unwrap().role, Role::Whole);
        assert_eq!(latency(plan.last().unwrap()).shared.load.load, ["dohell"]);
        assert!(plan.last().unwrap().name.ends_with("(dohell whole)"));
    }

    #[test]
    fn a_plan_is_counted_before_it_is_built_and_refused_above_the_limit() {
        let s = parse(
            "s.toml",
            "name = \"m\"\n[[step]]\nprobe = \"latency\"\nrepeat = 3\nmatrix.priority = [1, 2]\nmatrix.load = [\"none\", \"dohell\"]\nattribute = true\n[[step]]\nprobe = \"latency\"\n",
        )
        .unwrap();
        let parts = crate::loads::mix::MIXES[0].parts.len() as u64;
        let (total, steps) = count(&s);
        // priority × (none + baseline, parts, whole) × repeat, then one step.
        let first = 2 * (1 + parts + 2) * 3;
        assert_eq!(total, Some(first + 1));
        assert_eq!(
            steps[0].factors,
            [
                ("priority".to_string(), 2),
                ("load".to_string(), 1 + parts + 2),
                ("repeat".to_string(), 3)
            ]
        );
        assert_eq!(
            expand(&s, None, first + 1).unwrap().len() as u64,
            first + 1,
            "count and expansion agree"
        );
        let e = expand(&s, None, first).unwrap_err();
        assert_eq!(e.total, Some(first + 1));
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("scenario expands to {} steps (step[1]: priority: 2 × load: {} × repeat: 3 = {first}; step[2]: 1 = 1); the limit is {first}", first + 1, parts + 3)),
            "{text}"
        );
    }

    #[test]
    fn a_product_beyond_64_bits_is_refused_not_wrapped() {
        let axis = |k: &str, v: &str| format!("matrix.{k} = [{}]\n", vec![v; 1000].join(","));
        let text = format!(
            "name = \"m\"\n[[step]]\nprobe = \"latency\"\nrepeat = 1000\n{}{}{}{}{}{}",
            axis("priority", "1"),
            axis("interval", "\"1ms\""),
            axis("loops", "5"),
            axis("threads", "1"),
            axis("clock", "\"monotonic\""),
            axis("mlock", "true"),
        );
        let s = parse("s.toml", &text).unwrap();
        assert_eq!(count(&s).0, None);
        let e = expand(&s, None, u64::MAX).unwrap_err();
        assert!(
            e.to_string()
                .contains("more than 18 446 744 073 709 551 615 steps"),
            "{e}"
        );
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1 000");
        assert_eq!(grouped(10_000_000), "10 000 000");
    }

    #[test]
    fn priority_zero_means_sched_other_unless_the_step_names_a_policy() {
        let plan = |text: &str| {
            let s = parse(
                "s.toml",
                &format!("name = \"m\"\n[[step]]\nprobe = \"latency\"\n{text}"),
            );
            expand(&s.unwrap(), None, DEFAULT_MAX_STEPS).unwrap()
        };
        let p = plan("policy = \"other\"\npriority = 0\n");
        assert_eq!(latency(&p[0]).sched.policy, PolicyArg::Other);
        let p = plan("priority = 0\n");
        assert_eq!(latency(&p[0]).sched.policy, PolicyArg::Other);
        // Given both, the check refuses the pair rather than guessing.
        let p = plan("policy = \"fifo\"\npriority = 0\n");
        assert_eq!(
            (latency(&p[0]).sched.policy, latency(&p[0]).sched.priority),
            (PolicyArg::Fifo, Some(0))
        );
    }

    #[test]
    fn duration_override_scales_every_step() {
        let s = parse(
            "s.toml",
            "name = \"m\"\n[[step]]\nprobe = \"latency\"\nduration = \"1m\"\n",
        )
        .unwrap();
        let plan = expand(&s, Some("5s"), DEFAULT_MAX_STEPS).unwrap();
        assert_eq!(plan[0].planned_ns, Some(5_000_000_000));
        assert_eq!(
            latency(&plan[0]).duration.as_ref().map(|v| v.text()),
            Some("5s")
        );
    }
}
