//! What differs between runs: the parts of their system fingerprints, loads,
//! other load on the machine and parameters whose known values are not the
//! same in all of them, so that a comparison of unlike runs shows itself. A
//! field a run does not know (an imported run records no kernel, no
//! parameters of rtlab's) is no difference: only known values are compared.

use super::arms::Arm;
use crate::record::{LoadRecord, Run};
use serde::Serialize;
use std::collections::BTreeSet;

/// One field whose values differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The field (`kernel`, `HZ`, `params.interval_ns`).
    pub field: String,
    /// Its value in each run (or arm), in column order ([`UNKNOWN`] where
    /// the run does not know it; an arm whose runs disagree lists their
    /// values, `a / b`).
    pub values: Vec<String>,
}

/// How a value a run does not know is shown.
pub const UNKNOWN: &str = "-";

/// The name of the field of other load on the machine.
pub const OTHER_LOAD: &str = "other load";

/// Other load counts as a difference when the other processes' CPU time of
/// two runs differs by at least this many CPUs (or when they saw different
/// real-time threads of other processes).
const OTHER_LOAD_CPUS: f64 = 0.25;

fn list(v: &[String]) -> String {
    if v.is_empty() {
        UNKNOWN.into()
    } else {
        v.join(",")
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(T::to_string)
        .unwrap_or_else(|| UNKNOWN.into())
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        UNKNOWN.into()
    } else {
        s.into()
    }
}

/// The loads of a run as [`loads_text`] names them; unknown for a run
/// imported from another tool, which does not record what ran beside it.
fn loads_of(r: &Run) -> String {
    if r.loads.is_empty() && r.params.recorded("source").is_string() {
        return UNKNOWN.into();
    }
    loads_text(&r.loads)
}

/// The loads of a run, each named by its spec, a mix by its spec and its
/// parts (`dohell (procfs+msg+memcopy+fswalk+io)`); `none` without loads.
pub fn loads_text(loads: &[LoadRecord]) -> String {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in loads {
        match out.last_mut() {
            Some((spec, parts)) if *spec == l.spec => parts.push(l.kind.clone()),
            _ => out.push((l.spec.clone(), vec![l.kind.clone()])),
        }
    }
    if out.is_empty() {
        return "none".into();
    }
    let named: Vec<String> = out
        .into_iter()
        .map(|(spec, parts)| match parts.as_slice() {
            [_] => spec,
            _ => format!("{spec} ({})", parts.join("+")),
        })
        .collect();
    named.join(", ")
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
        ("loads", loads_of(r)),
        (OTHER_LOAD, other_load(r)),
        ("rtlab", r.rtlab_version.clone()),
    ]
}

/// Other load during the run in words: `1.90 CPUs busy, loadavg 0.20/2.10`
/// (the other processes' CPUs; the load average at the start and the end),
/// then the other processes' real-time threads when there were any
/// (`; RT threads perl fifo 95`).
pub fn other_load(r: &Run) -> String {
    match &r.background {
        Some(b) => {
            let mut s = format!(
                "{:.2} CPUs busy, loadavg {:.2}/{:.2}",
                b.other_cpus, b.loadavg.0, b.loadavg.1
            );
            if !b.rt_threads.is_empty() {
                s.push_str(RT_THREADS);
                s.push_str(&b.rt_threads.join(", "));
            }
            s
        }
        None => UNKNOWN.into(),
    }
}

/// What leads the real-time threads in [`other_load`].
const RT_THREADS: &str = "; RT threads ";

/// The real-time threads of an [`other_load`] text ("" for none).
fn rt_threads(other_load: &str) -> &str {
    other_load.split_once(RT_THREADS).map_or("", |(_, t)| t)
}

/// Parameters not compared: the file a run was imported from (where it came
/// from, not what it measured) and the load specs (`loads` names them, a mix
/// by its parts).
const NOT_COMPARED: [&str; 2] = ["params.file", "params.load"];

/// `params` flattened to `params.a.b` → value text; a null of parameters
/// recorded by another tool is a value it did not know, and left out, as are
/// the parameters [`NOT_COMPARED`].
fn flatten(prefix: &str, v: &serde_json::Value, recorded: bool, out: &mut Vec<(String, String)>) {
    match v {
        _ if NOT_COMPARED.contains(&prefix) => {}
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, recorded, out);
            }
        }
        serde_json::Value::Null if recorded => {}
        serde_json::Value::String(s) => out.push((prefix.into(), s.clone())),
        other => out.push((prefix.into(), other.to_string())),
    }
}

/// Every field of `runs` with its value in each run ([`UNKNOWN`] where a
/// run does not know it), system fields first, then the parameters by name.
fn fields(runs: &[&Run]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let systems: Vec<Vec<(&str, String)>> = runs.iter().map(|r| system_fields(r)).collect();
    if let Some(first) = systems.first() {
        for (i, (field, _)) in first.iter().enumerate() {
            let values = systems.iter().map(|s| s[i].1.clone()).collect();
            out.push((field.to_string(), values));
        }
    }
    let params: Vec<Vec<(String, String)>> = runs
        .iter()
        .map(|r| {
            let mut p = Vec::new();
            let recorded = r.params.step().is_none();
            flatten("params", &r.params.to_value(), recorded, &mut p);
            p
        })
        .collect();
    let keys: BTreeSet<&String> = params.iter().flatten().map(|(k, _)| k).collect();
    for key in keys {
        let values = params
            .iter()
            .map(|p| {
                p.iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| UNKNOWN.into())
            })
            .collect();
        out.push((key.clone(), values));
    }
    out
}

/// Whether `value` of `field` is known: not [`UNKNOWN`], nor a preemption
/// model no source told.
fn known(field: &str, value: &str) -> bool {
    value != UNKNOWN && !(field == "preemption" && value == "unknown")
}

/// Whether the known values of `field` among `values` differ.
fn differ(field: &str, values: &[&str]) -> bool {
    let known: Vec<&str> = values.iter().copied().filter(|v| known(field, v)).collect();
    if field == OTHER_LOAD {
        let cpus: Vec<f64> = known
            .iter()
            .filter_map(|v| v.split(' ').next()?.parse().ok())
            .collect();
        let lo = cpus.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = cpus.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return hi - lo >= OTHER_LOAD_CPUS
            || known.iter().any(|v| rt_threads(v) != rt_threads(known[0]));
    }
    known.iter().any(|v| *v != known[0])
}

/// The fields whose known values are not the same in all `runs`.
pub fn differences(runs: &[Run]) -> Vec<Difference> {
    let refs: Vec<&Run> = runs.iter().collect();
    fields(&refs)
        .into_iter()
        .filter(|(f, v)| differ(f, &v.iter().map(String::as_str).collect::<Vec<_>>()))
        .map(|(field, values)| Difference { field, values })
        .collect()
}

/// The fields whose known values differ between `arms`: one value per arm,
/// the distinct known values of its runs joined by ` / ` when they disagree.
pub fn between_arms(arms: &[Arm]) -> Vec<Difference> {
    let refs: Vec<&Run> = arms.iter().flat_map(|a| &a.runs).collect();
    let mut out = Vec::new();
    for (field, values) in fields(&refs) {
        if !differ(
            &field,
            &values.iter().map(String::as_str).collect::<Vec<_>>(),
        ) {
            continue;
        }
        let mut at = 0;
        let per_arm: Vec<String> = arms
            .iter()
            .map(|a| {
                let mut seen: Vec<&str> = Vec::new();
                for v in &values[at..at + a.runs.len()] {
                    if known(&field, v) && !seen.contains(&v.as_str()) {
                        seen.push(v);
                    }
                }
                at += a.runs.len();
                match seen.as_slice() {
                    [] => UNKNOWN.to_string(),
                    _ => seen.join(" / "),
                }
            })
            .collect();
        let arm_values: Vec<&str> = per_arm.iter().map(String::as_str).collect();
        if differ(&field, &arm_values) || arm_values.iter().any(|v| v.contains(" / ")) {
            out.push(Difference {
                field,
                values: per_arm,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::record::Background;
    use rtlab_engine::sysinfo::PreemptModel;

    #[test]
    fn only_differing_fields_are_listed() {
        let a = run_from_samples("a", &[1]);
        let mut b = run_from_samples("b", &[1]);
        assert!(differences(&[a.clone(), b.clone()]).is_empty());
        b.fingerprint.preempt = PreemptModel::Rt;
        b.fingerprint.hz = Some(1000);
        b.fingerprint.kernel_release = "6.6.0-rt".into();
        b.params = crate::record::RunParams::Recorded(serde_json::json!({
            "interval_ns": 200_000, "priority": 90, "load": {"cpu": 4}
        }));
        let d = differences(&[a, b]);
        let fields: Vec<&str> = d.iter().map(|d| d.field.as_str()).collect();
        // Unknown on one side (preemption, HZ, params.load.cpu): no difference.
        assert_eq!(fields, vec!["kernel", "params.interval_ns"]);
        assert_eq!(d[0].values, vec!["6.1.0", "6.6.0-rt"]);
        assert_eq!(d[1].values, vec!["1000000", "200000"]);
    }

    #[test]
    fn an_imported_runs_unknowns_are_no_difference() {
        let mut imported = run_from_samples("ct", &[1]);
        imported.fingerprint = Default::default();
        imported.params = crate::record::RunParams::Recorded(serde_json::json!({
            "source": "cyclictest", "priority": null, "interval_ns": 1_000_000
        }));
        let own = run_from_samples("k", &[1]);
        assert_eq!(differences(&[imported, own]), []);
    }

    #[test]
    fn a_mix_is_named_by_its_parts_and_other_load_differs_by_a_quarter_cpu() {
        let part = |kind: &str| LoadRecord {
            spec: "dohell".into(),
            kind: kind.into(),
            ..LoadRecord::default()
        };
        let mut a = run_from_samples("a", &[1]);
        a.loads = vec![part("procfs"), part("msg"), part("io")];
        a.loads.push(LoadRecord {
            spec: "cpu:2".into(),
            kind: "cpu".into(),
            ..LoadRecord::default()
        });
        assert_eq!(loads_text(&a.loads), "dohell (procfs+msg+io), cpu:2");
        assert_eq!(loads_text(&[]), "none");
        let mut b = run_from_samples("b", &[1]);
        b.loads = a.loads.clone();
        let busy = |cpus: f64| {
            Some(Background {
                loadavg: (0.1, 0.2),
                other_cpus: cpus,
                rt_threads: Vec::new(),
            })
        };
        a.background = busy(0.02);
        b.background = busy(0.2);
        assert!(differences(&[a.clone(), b.clone()]).is_empty());
        let mut hog = busy(0.02);
        if let Some(h) = hog.as_mut() {
            h.rt_threads = vec!["perl fifo 95".into()];
        }
        b.background = hog;
        let d = differences(&[a.clone(), b.clone()]);
        assert_eq!(
            d[0].values[1],
            "0.02 CPUs busy, loadavg 0.10/0.20; RT threads perl fifo 95"
        );
        b.background = busy(1.9);
        let d = differences(&[a, b]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].field, OTHER_LOAD);
        assert_eq!(
            d[0].values,
            [
                "0.02 CPUs busy, loadavg 0.10/0.20",
                "1.90 CPUs busy, loadavg 0.10/0.20"
            ]
        );
    }

    #[test]
    fn arms_differ_by_what_each_arm_holds() {
        let run = |hz: u32, cmdline: &str| {
            let mut r = run_from_samples("k", &[1]);
            r.fingerprint.hz = Some(hz);
            r.fingerprint.cmdline = cmdline.into();
            r
        };
        let a = Arm::new("a", vec![run(250, "quiet"), run(250, "quiet")]);
        let b = Arm::new("b", vec![run(1000, "quiet"), run(1000, "isolcpus=1")]);
        let d = between_arms(&[a, b]);
        let shown: Vec<(&str, Vec<String>)> = d
            .iter()
            .map(|d| (d.field.as_str(), d.values.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                ("HZ", vec!["250".into(), "1000".into()]),
                ("cmdline", vec!["quiet".into(), "quiet / isolcpus=1".into()])
            ]
        );
    }
}
