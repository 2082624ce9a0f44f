//! What differs between runs: the parts of their system fingerprints, loads and
//! parameters that are not the same in all of them, so that a comparison of unlike
//! runs shows itself.

use crate::record::Run;
use serde::Serialize;
use std::collections::BTreeSet;

/// One field whose values differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The field (`kernel`, `HZ`, `params.interval_ns`).
    pub field: String,
    /// Its value in each run, in column order (`-` when absent).
    pub values: Vec<String>,
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_else(|| "-".into())
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.into()
    }
}

/// The fingerprint and run fields compared, in report order.
pub fn system_fields(r: &Run) -> Vec<(&'static str, String)> {
    let f = &r.fingerprint;
    let preempt = match &f.preempt_dynamic_mode {
        Some(mode) => format!("{} (dynamic: {mode})", f.preempt.name()),
        None => f.preempt.name().into(),
    };
    vec![
        ("kind", r.kind.clone()),
        ("host", or_dash(&f.hostname)),
        ("kernel", or_dash(&f.kernel_release)),
        ("kernel build", or_dash(&f.kernel_version)),
        ("preemption", preempt),
        ("HZ", opt(&f.hz)),
        ("cmdline", or_dash(&f.cmdline)),
        ("governor", list(&f.governors)),
        ("isolated CPUs", or_dash(&f.cpus_isolated)),
        ("nohz_full CPUs", or_dash(&f.cpus_nohz_full)),
        ("CPU model", or_dash(&f.cpu_model)),
        ("CPUs online", or_dash(&f.cpus_online)),
        ("SMT", opt(&f.smt)),
        ("clocksource", or_dash(&f.clocksource)),
        ("RT runtime (us)", opt(&f.sched_rt_runtime_us)),
        ("hypervisor", opt(&f.hypervisor)),
        ("container", opt(&f.container)),
        (
            "loads",
            list(&r.loads.iter().map(|l| l.spec.clone()).collect::<Vec<_>>()),
        ),
        ("rtlab", r.rtlab_version.clone()),
    ]
}

/// `params` flattened to `params.a.b` → value text.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        serde_json::Value::String(s) => out.push((prefix.into(), s.clone())),
        other => out.push((prefix.into(), other.to_string())),
    }
}

/// The fields whose values are not the same in all `runs`.
pub fn differences(runs: &[Run]) -> Vec<Difference> {
    let mut out = Vec::new();
    let systems: Vec<Vec<(&str, String)>> = runs.iter().map(system_fields).collect();
    if let Some(first) = systems.first() {
        for (i, (field, _)) in first.iter().enumerate() {
            let values: Vec<String> = systems.iter().map(|s| s[i].1.clone()).collect();
            if values.iter().any(|v| *v != values[0]) {
                out.push(Difference {
                    field: field.to_string(),
                    values,
                });
            }
        }
    }
    let params: Vec<Vec<(String, String)>> = runs
        .iter()
        .map(|r| {
            let mut p = Vec::new();
            flatten("params", &r.params.to_value(), &mut p);
            p
        })
        .collect();
    let keys: BTreeSet<&String> = params.iter().flatten().map(|(k, _)| k).collect();
    for key in keys {
        let values: Vec<String> = params
            .iter()
            .map(|p| {
                p.iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| "-".into())
            })
            .collect();
        if values.iter().any(|v| *v != values[0]) {
            out.push(Difference {
                field: key.clone(),
                values,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use rtlab_engine::sysinfo::PreemptModel;

    #[test]
    fn only_differing_fields_are_listed() {
        let a = run_from_samples("a", &[1]);
        let mut b = run_from_samples("b", &[1]);
        assert!(differences(&[a.clone(), b.clone()]).is_empty());
        b.fingerprint.preempt = PreemptModel::Rt;
        b.fingerprint.hz = Some(1000);
        b.params = crate::record::RunParams::Recorded(serde_json::json!({
            "interval_ns": 200_000, "priority": 90, "load": {"cpu": 4}
        }));
        let d = differences(&[a, b]);
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            vec!["preemption", "HZ", "params.interval_ns", "params.load.cpu"]
        );
        assert_eq!(d[0].values, vec!["unknown", "PREEMPT_RT"]);
        assert_eq!(d[1].values, vec!["-", "1000"]);
        assert_eq!(d[2].values, vec!["1000000", "200000"]);
        assert_eq!(d[3].values, vec!["-", "4"]);
    }
}
