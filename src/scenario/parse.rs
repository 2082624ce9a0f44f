//! Reading a scenario file. Every error names the file, the line and the key, and
//! unknown keys are errors, never ignored.

use super::{Scenario, Source, StepDef, Val};
use crate::step::{self, Probe};
use crate::units::{parse_duration, DefaultUnit};
use std::collections::BTreeMap;
use std::ops::Range;
use toml_edit::{Document, Item, Key, TableLike, Value};

/// A scenario that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// File name (or `preset NAME`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The key concerned (`step[2].interval`), if any.
    pub key: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}:{}: {}: {}", self.file, self.line, k, self.message),
            None => write!(f, "{}:{}: {}", self.file, self.line, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: Option<Range<usize>>) -> usize {
        let at = span.map(|s| s.start).unwrap_or(0).min(self.text.len());
        self.text[..at].matches('\n').count() + 1
    }

    fn err(
        &self,
        span: Option<Range<usize>>,
        key: Option<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: self.line(span),
            key,
            message: message.into(),
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "defaults",
    "step",
    "requirements",
];
const STEP_KEYS: &[&str] = &["probe", "name", "repeat", "attribute", "matrix"];

/// Parses and validates a scenario. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let cx = Ctx { file, text };
    let doc = Document::parse(text)
        .map_err(|e| cx.err(e.span(), None, format!("not valid TOML: {}", e.message())))?;
    let root = doc.as_table();
    for (k, item) in root.iter() {
        if !TOP_KEYS.contains(&k) {
            let key = root.key(k);
            return Err(cx.err(
                key.and_then(Key::span).or_else(|| item.span()),
                Some(k.to_string()),
                format!("unknown key (scenario keys are: {})", TOP_KEYS.join(", ")),
            ));
        }
    }
    let name = opt_str(&cx, root, "name", "name")?.ok_or_else(|| {
        cx.err(
            None,
            Some("name".into()),
            "missing: give the scenario a name = \"...\"",
        )
    })?;
    let label = opt_str(&cx, root, "label", "label")?;
    if let Some(l) = &label {
        crate::record::plain_name("label", l).map_err(|e| {
            cx.err(
                root.get("label").and_then(Item::span),
                Some("label".into()),
                e,
            )
        })?;
    }
    let description = opt_str(&cx, root, "description", "description")?;

    let defaults: Vec<(String, Item, Option<Range<usize>>)> = match root.get("defaults") {
        None => Vec::new(),
        Some(item) => {
            let t = item.as_table_like().ok_or_else(|| {
                cx.err(
                    item.span(),
                    Some("defaults".into()),
                    "must be a table ([defaults])",
                )
            })?;
            t.iter()
                .map(|(k, v)| {
                    let span = t.key(k).and_then(Key::span).or_else(|| v.span());
                    (k.to_string(), v.clone(), span)
                })
                .collect()
        }
    };

    let steps_item = root.get("step").ok_or_else(|| {
        cx.err(
            None,
            Some("step".into()),
            "no [[step]]: a scenario needs at least one step",
        )
    })?;
    let steps_arr = steps_item.as_array_of_tables().ok_or_else(|| {
        cx.err(
            steps_item.span(),
            Some("step".into()),
            "write steps as [[step]] tables",
        )
    })?;
    let mut steps = Vec::new();
    for (i, t) in steps_arr.iter().enumerate() {
        steps.push(parse_step(&cx, i + 1, t, &defaults)?);
    }
    if steps.is_empty() {
        return Err(cx.err(steps_item.span(), Some("step".into()), "no steps"));
    }
    // A default that no step's probe accepts is a mistake, not a no-op.
    for (k, _, span) in &defaults {
        if !steps.iter().any(|s| s.probe.takes(k)) {
            return Err(cx.err(
                span.clone(),
                Some(format!("defaults.{k}")),
                "no step's probe takes this key",
            ));
        }
    }

    let mut requirements = BTreeMap::new();
    if let Some(item) = root.get("requirements") {
        let t = item.as_table_like().ok_or_else(|| {
            cx.err(
                item.span(),
                Some("requirements".into()),
                "must be a table of name = \"budget\"",
            )
        })?;
        for (k, v) in t.iter() {
            let key = format!("requirements.{k}");
            let span = v.span().or_else(|| t.key(k).and_then(Key::span));
            let s = v.as_str().ok_or_else(|| {
                cx.err(
                    span.clone(),
                    Some(key.clone()),
                    "write the budget as a string, e.g. \"1ms\"",
                )
            })?;
            let ns = parse_duration(s, DefaultUnit::Millis)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    cx.err(
                        span,
                        Some(key),
                        format!("'{s}' is not a duration above zero, e.g. \"5ms\""),
                    )
                })?;
            requirements.insert(k.to_string(), ns);
        }
    }

    Ok(Scenario {
        name,
        label,
        description,
        steps,
        requirements,
        file: file.to_string(),
        text: text.to_string(),
    })
}

fn opt_str(
    cx: &Ctx,
    t: &dyn TableLike,
    k: &str,
    key: &str,
) -> Result<Option<String>, ScenarioError> {
    match t.get(k) {
        None => Ok(None),
        Some(item) => item.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
            cx.err(
                item.span(),
                Some(key.into()),
                format!("must be a string, not {}", item.type_name()),
            )
        }),
    }
}

fn parse_step(
    cx: &Ctx,
    n: usize,
    t: &toml_edit::Table,
    defaults: &[(String, Item, Option<Range<usize>>)],
) -> Result<StepDef, ScenarioError> {
    let at = |k: &str| format!("step[{n}].{k}");
    let probe_name = match t.get("probe") {
        Some(item) => item
            .as_str()
            .ok_or_else(|| cx.err(item.span(), Some(at("probe")), "must be a string"))?,
        None => {
            return Err(cx.err(
                t.span(),
                Some(at("probe")),
                format!("missing: say which probe runs ({})", step::names()),
            ))
        }
    };
    let probe: &'static Probe = step::probe(probe_name).ok_or_else(|| {
        cx.err(
            t.get("probe").and_then(Item::span),
            Some(at("probe")),
            format!("unknown probe '{probe_name}' (known: {})", step::names()),
        )
    })?;

    let mut params: Vec<(String, Val)> = Vec::new();
    let mut sources: Vec<Source> = Vec::new();
    let mut source = |key: &str, path: String, span: Option<Range<usize>>| {
        sources.retain(|s| s.key != key);
        sources.push(Source {
            key: key.to_string(),
            path,
            line: cx.line(span),
        });
    };
    let keys = probe.keys().join(", ");
    for (k, item, span) in defaults {
        if probe.takes(k) {
            let v = item.as_value().ok_or_else(|| {
                cx.err(
                    span.clone(),
                    Some(format!("defaults.{k}")),
                    "must be a value",
                )
            })?;
            params.push((k.clone(), value(cx, v, probe, k, &format!("defaults.{k}"))?));
            source(k, format!("defaults.{k}"), span.clone());
        }
    }
    let mut name = None;
    let mut repeat = 1;
    let mut attribute = false;
    let mut matrix = Vec::new();
    for (k, item) in t.iter() {
        let key_span = t.key(k).and_then(Key::span).or_else(|| item.span());
        match k {
            "probe" => {}
            "name" => {
                name = Some(
                    item.as_str()
                        .ok_or_else(|| cx.err(item.span(), Some(at(k)), "must be a string"))?
                        .to_string(),
                )
            }
            "repeat" => {
                repeat = item
                    .as_integer()
                    .filter(|&r| (1..=1000).contains(&r))
                    .ok_or_else(|| {
                        cx.err(
                            item.span(),
                            Some(at(k)),
                            "must be a whole number from 1 to 1000",
                        )
                    })? as u32
            }
            "attribute" => {
                attribute = item
                    .as_bool()
                    .ok_or_else(|| cx.err(item.span(), Some(at(k)), "must be true or false"))?
            }
            "matrix" => {
                let m = item.as_table_like().ok_or_else(|| {
                    cx.err(
                        key_span.clone(),
                        Some(at(k)),
                        "must be a table: matrix.KEY = [values]",
                    )
                })?;
                for (mk, mv) in m.iter() {
                    let mkey = format!("step[{n}].matrix.{mk}");
                    let mspan = m.key(mk).and_then(Key::span).or_else(|| mv.span());
                    if !probe.takes(mk) {
                        return Err(cx.err(
                            mspan.clone(),
                            Some(mkey.clone()),
                            format!("probe '{}' has no key '{mk}' (keys: {keys})", probe.name),
                        ));
                    }
                    let arr = mv.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
                        cx.err(
                            mspan.clone(),
                            Some(mkey.clone()),
                            "must be a non-empty array of values",
                        )
                    })?;
                    let vals = arr
                        .iter()
                        .map(|v| value(cx, v, probe, mk, &mkey))
                        .collect::<Result<Vec<_>, _>>()?;
                    params.retain(|(pk, _)| pk != mk);
                    matrix.push((mk.to_string(), vals));
                    source(mk, mkey, mspan);
                }
            }
            _ => {
                if !probe.takes(k) {
                    return Err(cx.err(
                        key_span.clone(),
                        Some(at(k)),
                        format!(
                            "unknown key for probe '{}' (step keys: {}; probe keys: {keys})",
                            probe.name,
                            STEP_KEYS.join(", "),
                        ),
                    ));
                }
                let v = item.as_value().ok_or_else(|| {
                    cx.err(
                        key_span.clone(),
                        Some(at(k)),
                        "must be a value, not a table",
                    )
                })?;
                let v = value(cx, v, probe, k, &at(k))?;
                params.retain(|(pk, _)| pk != k);
                if matrix.iter().any(|(mk, _)| mk == k) {
                    return Err(cx.err(
                        key_span,
                        Some(at(k)),
                        "is also a matrix axis; give it once",
                    ));
                }
                params.push((k.to_string(), v));
                source(k, at(k), key_span);
            }
        }
    }
    for req in probe.required {
        let given = params.iter().any(|(k, _)| k == req) || matrix.iter().any(|(k, _)| k == req);
        if !given {
            return Err(cx.err(
                t.span(),
                Some(at(req)),
                format!(
                    "probe '{}' needs {req} (e.g. {req} = \"127.0.0.1:7700\")",
                    probe.name
                ),
            ));
        }
    }
    if attribute {
        let loads: Vec<&Val> = params
            .iter()
            .filter(|(k, _)| k == "load")
            .map(|(_, v)| v)
            .chain(
                matrix
                    .iter()
                    .filter(|(k, _)| k == "load")
                    .flat_map(|(_, vs)| vs),
            )
            .collect();
        let mixes = loads
            .iter()
            .filter(|v| super::plan::mix_of(v).is_some())
            .count();
        let plain = loads
            .iter()
            .any(|v| super::plan::mix_of(v).is_none() && v.to_string() != "none");
        if mixes == 0 || plain {
            let names: Vec<&str> = crate::loads::mix::MIXES.iter().map(|m| m.name).collect();
            return Err(cx.err(
                t.get("attribute").and_then(Item::span),
                Some(at("attribute")),
                format!(
                    "attribute = true needs the step's load to be a mix ({}) to run part by part",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(StepDef {
        line: cx.line(t.span()),
        sources,
        name,
        probe,
        params,
        matrix,
        repeat,
        attribute,
    })
}

/// One value read as the probe's `key` parameter: its type is checked by the
/// step's own parameter types; what it means (a duration that parses, a CPU that
/// exists) is checked with the whole step before anything runs.
fn value(cx: &Ctx, v: &Value, probe: &Probe, key: &str, at: &str) -> Result<Val, ScenarioError> {
    let bad = |m: String| cx.err(v.span(), Some(at.to_string()), m);
    let read = probe.value(key, json(v)).map_err(bad)?;
    Val::from_json(&read).ok_or_else(|| bad(format!("cannot be {}", v.type_name())))
}

/// A TOML value as JSON.
fn json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::String(s) => J::String(s.value().clone()),
        Value::Integer(i) => J::from(*i.value()),
        Value::Float(f) => J::from(*f.value()),
        Value::Boolean(b) => J::Bool(*b.value()),
        Value::Datetime(d) => J::String(d.value().to_string()),
        Value::Array(a) => J::Array(a.iter().map(json).collect()),
        Value::InlineTable(t) => {
            J::Object(t.iter().map(|(k, v)| (k.to_string(), json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ScenarioError {
        parse("s.toml", text).unwrap_err()
    }

    /// The error for `text`: from parsing (its structure and each value's
    /// type), else from checking its plan on a roomy machine (what the values
    /// mean), which every campaign does before it starts.
    fn bad(text: &str) -> ScenarioError {
        let s = match parse("s.toml", text) {
            Err(e) => return e,
            Ok(s) => s,
        };
        let plan = crate::scenario::expand(&s, None, crate::scenario::DEFAULT_MAX_STEPS).unwrap();
        let roomy = crate::step::Machine {
            cpus: (0..64).collect(),
            mem_available: 0,
        };
        crate::scenario::check::check(&s, &plan, &roomy).unwrap_err()
    }

    #[test]
    fn a_good_scenario_parses() {
        let s = parse(
            "s.toml",
            r#"
name = "messaging server"
label = "rhel7-rt"
[defaults]
duration = "60s"
[[step]]
probe = "latency"
interval = "200us"
matrix.priority = [0, 90]
repeat = 2
[requirements]
alarm = "5ms"
"#,
        )
        .unwrap();
        assert_eq!(s.name, "messaging server");
        assert_eq!(s.label.as_deref(), Some("rhel7-rt"));
        let st = &s.steps[0];
        assert_eq!(st.probe.name, "latency");
        assert_eq!(st.repeat, 2);
        assert_eq!(
            st.params,
            vec![
                ("duration".into(), Val::Str("60s".into())),
                ("interval".into(), Val::Str("200us".into()))
            ]
        );
        assert_eq!(
            st.matrix,
            vec![("priority".into(), vec![Val::Int(0), Val::Int(90)])]
        );
        assert_eq!(s.requirements["alarm"], 5_000_000);
    }

    #[test]
    fn unknown_keys_are_errors_with_line_and_key() {
        let e = err("name = \"x\"\n[[step]]\nprobe = \"latency\"\nintervall = \"1ms\"\n");
        assert_eq!((e.line, e.key.as_deref()), (4, Some("step[1].intervall")));
        assert!(e.message.contains("unknown key"), "{e}");
        let e = err("name = \"x\"\ncolour = 1\n[[step]]\nprobe = \"latency\"\n");
        assert_eq!((e.line, e.key.as_deref()), (2, Some("colour")));
    }

    #[test]
    fn bad_values_and_types_point_at_the_value() {
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\ninterval = \"1parsec\"\n");
        assert_eq!((e.line, e.key.as_deref()), (4, Some("step[1].interval")));
        assert!(e.message.contains("parsec"));
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\n\ninterval = 200\n");
        assert_eq!(e.line, 5);
        assert!(e.message.contains("string with a unit"));
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\npriority = 120\n");
        assert!(e.message.contains("outside"), "{e}");
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\nmatrix.priority = []\n");
        assert_eq!(e.key.as_deref(), Some("step[1].matrix.priority"));
        let e = bad("name = 3\n[[step]]\nprobe = \"latency\"\n");
        assert_eq!((e.line, e.key.as_deref()), (1, Some("name")));
    }

    #[test]
    fn zero_durations_and_sizes_are_refused_where_they_mean_nothing() {
        let step = |kv: &str| format!("name = \"x\"\n[[step]]\nprobe = \"latency\"\n{kv}\n");
        let e = bad(&step("interval = \"0us\""));
        assert_eq!((e.line, e.key.as_deref()), (4, Some("step[1].interval")));
        assert!(e.message.contains("'0us' is zero"), "{e}");
        let e = bad(&step("matrix.duration = [\"1s\", \"0s\"]"));
        assert_eq!(e.key.as_deref(), Some("step[1].matrix.duration"));
        let e = bad("name = \"x\"\n[defaults]\ninterval = \"0\"\n[[step]]\nprobe = \"latency\"\n");
        assert_eq!((e.line, e.key.as_deref()), (3, Some("defaults.interval")));
        // A distance of zero means equal periods; a payload of zero is a header alone.
        assert!(parse("s.toml", &step("distance = \"0us\"")).is_ok());
        let net = "name = \"x\"\n[[step]]\nprobe = \"net\"\ntarget = \"127.0.0.1:7700\"\n";
        assert!(parse("s.toml", &format!("{net}payload = 0\n")).is_ok());
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"bench.memory\"\nblock_size = \"0K\"\n");
        assert_eq!(e.key.as_deref(), Some("step[1].block_size"));
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"bench.memory\"\nblock_size = -4\n");
        assert_eq!(e.key.as_deref(), Some("step[1].block_size"));
    }

    #[test]
    fn cpus_are_a_list_a_number_or_an_array_of_numbers() {
        let cpus = |v: &str| {
            parse(
                "s.toml",
                &format!("name = \"x\"\n[[step]]\nprobe = \"latency\"\ncpus = {v}\n"),
            )
            .map(|s| s.steps[0].params[0].1.clone())
        };
        assert_eq!(cpus("\"0,2-3\""), Ok(Val::Str("0,2-3".into())));
        assert_eq!(cpus("3"), Ok(Val::Str("3".into())));
        assert_eq!(cpus("[0, 2]"), Ok(Val::Str("0,2".into())));
        for v in ["\"\"", "[]", "\"0,,1\"", "[\"0\"]", "\"x\"", "-1", "true"] {
            let e = bad(&format!(
                "name = \"x\"\n[[step]]\nprobe = \"latency\"\ncpus = {v}\n"
            ));
            assert_eq!(e.key.as_deref(), Some("step[1].cpus"), "{v}: {e}");
        }
        // In a matrix each element is one step's list.
        let s = parse(
            "s.toml",
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\nmatrix.cpus = [0, \"1\", [0, 1]]\n",
        )
        .unwrap();
        assert_eq!(
            s.steps[0].matrix[0].1,
            [
                Val::Str("0".into()),
                Val::Str("1".into()),
                Val::Str("0,1".into())
            ]
        );
    }

    #[test]
    fn every_key_remembers_where_it_was_given() {
        let s = parse(
            "s.toml",
            "name = \"x\"\n[defaults]\ninterval = \"1ms\"\ncpus = \"0\"\n[[step]]\nprobe = \"latency\"\ncpus = \"1\"\nmatrix.priority = [0, 1]\n",
        )
        .unwrap();
        let st = &s.steps[0];
        assert_eq!(st.line, 5);
        let at = |k: &str| {
            let src = st.sources.iter().find(|s| s.key == k).unwrap();
            (src.path.as_str(), src.line)
        };
        assert_eq!(at("interval"), ("defaults.interval", 3));
        assert_eq!(at("cpus"), ("step[1].cpus", 7));
        assert_eq!(at("priority"), ("step[1].matrix.priority", 8));
        assert_eq!(s.file, "s.toml");
    }

    #[test]
    fn structure_errors() {
        assert!(bad("name = \"x\"\n").message.contains("at least one step"));
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"warp\"\n");
        assert!(e.message.contains("unknown probe 'warp'"));
        let e = bad("name = \"x\"\n[defaults]\nwarp = \"9\"\n[[step]]\nprobe = \"latency\"\n");
        assert_eq!((e.line, e.key.as_deref()), (3, Some("defaults.warp")));
        let e =
            bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\n[requirements]\ngyro = \"fast\"\n");
        assert_eq!((e.line, e.key.as_deref()), (5, Some("requirements.gyro")));
        let e = bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\nload = \"cpu:x\"\n");
        assert_eq!((e.line, e.key.as_deref()), (4, Some("step[1].load")));
        let e =
            bad("name = \"x\"\n[[step]]\nprobe = \"latency\"\nload = \"cpu\"\nattribute = true\n");
        assert_eq!((e.line, e.key.as_deref()), (5, Some("step[1].attribute")));
        assert!(e.message.contains("dohell"));
        let e = bad("name = \"x\"\n[[step\n");
        assert!(e.message.contains("not valid TOML"));
        assert_eq!(e.line, 2);
    }
}
