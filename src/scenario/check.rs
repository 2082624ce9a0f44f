//! Checking every planned step against this machine before the first step runs
//! (and before the campaign is recorded), with the checks its probe makes before
//! measuring: CPUs that exist, policy and priority that fit together, sizes and
//! loads the machine can carry, targets that resolve. Parsing already checked
//! each value's type.
//!
//! A problem names the file, the line and key the value came from, the planned
//! step (number and name), the value, and what to do about it.

use super::parse::ScenarioError;
use super::{PlannedStep, Scenario, Val};
use crate::error::BadValue;
use crate::step::Machine;
use rtlab_engine::rt::sched::{self, Policy, SchedError};
use std::collections::HashSet;

/// Checks every planned step; the first problem found, located in the file.
pub fn check(scn: &Scenario, plan: &[PlannedStep], m: &Machine) -> Result<(), ScenarioError> {
    // Steps that differ only in their repeat or name are checked once: some
    // checks touch the system (statfs, /proc/meminfo, name resolution).
    let mut seen = HashSet::new();
    for step in plan {
        if !seen.insert(serde_json::to_string(&step.params).unwrap_or_default()) {
            continue;
        }
        if let Err(e) = step.params.step().check(m) {
            let (key, message) = match e.downcast_ref::<BadValue>() {
                Some(b) => (b.key(), b.message.clone()),
                None => (String::new(), format!("{e:#}")),
            };
            return Err(locate(scn, step, plan.len(), &key, &message));
        }
    }
    Ok(())
}

/// The error for `key` of `step`: at the line where the file gives the key.
pub fn locate(
    scn: &Scenario,
    step: &PlannedStep,
    steps: usize,
    key: &str,
    message: &str,
) -> ScenarioError {
    let def = &scn.steps[step.step];
    let source = def.sources.iter().find(|s| s.key == key);
    let value = step
        .values
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| format!("{key} = {}: ", shown(v)))
        .unwrap_or_default();
    ScenarioError {
        file: scn.file.clone(),
        line: source.map_or(def.line, |s| s.line),
        key: Some(source.map_or_else(|| format!("step[{}]", step.step + 1), |s| s.path.clone())),
        message: format!(
            "in step {} of {} ({}): {value}{message}",
            step.index + 1,
            steps,
            step.name
        ),
    }
}

/// A value as the file would spell it.
fn shown(v: &Val) -> String {
    match v {
        Val::Str(s) => format!("\"{s}\""),
        Val::List(l) => format!("{l:?}"),
        other => other.to_string(),
    }
}

/// Whether a thread of this process may take `policy` at `priority`: a short-lived
/// thread tries it and ends, so nothing of this process changes.
pub fn try_rt(policy: Policy, priority: i32) -> Result<(), SchedError> {
    std::thread::spawn(move || sched::set_thread_policy(0, policy, priority))
        .join()
        .unwrap_or(Err(SchedError {
            errno: rtlab_engine::rt::EAGAIN,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{expand, parse, DEFAULT_MAX_STEPS};

    fn machine() -> Machine {
        Machine {
            cpus: vec![0, 1],
            mem_available: 4 << 30,
        }
    }

    fn check_text(text: &str) -> Result<(), ScenarioError> {
        let s = parse("s.toml", text).unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        check(&s, &plan, &machine())
    }

    #[test]
    fn a_cpu_that_does_not_exist_names_the_step_the_value_and_the_fix() {
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\npriority = 0\nmatrix.cpus = [\"0\", \"1\", 99]\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (5, Some("step[1].matrix.cpus")));
        let text = e.to_string();
        for want in [
            "step 3 of 3",
            "latency cpus=99",
            "cpus = \"99\"",
            "CPU 99",
            "usable: 0-1",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        let e =
            check_text("name = \"x\"\n[defaults]\ncpus = [1, 7]\n[[step]]\nprobe = \"latency\"\n")
                .unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (3, Some("defaults.cpus")));
        assert!(check_text("name = \"x\"\n[[step]]\nprobe = \"latency\"\ncpus = [0, 1]\n").is_ok());
    }

    #[test]
    fn policy_and_priority_must_fit_together() {
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\npolicy = \"other\"\nmatrix.priority = [0, 50]\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("takes priority 0, not 50"), "{e}");
        assert!(e.to_string().contains("step 2 of 2"), "{e}");
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\npolicy = \"rr\"\npriority = 0\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("outside 1-99 for SCHED_RR"), "{e}");
        assert!(check_text(
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\npolicy = \"other\"\npriority = 0\n"
        )
        .is_ok());
    }

    #[test]
    fn sizes_and_counts_the_probe_would_refuse() {
        let e = check_text("name = \"x\"\n[[step]]\nprobe = \"bench.memory\"\nblock_size = 1001\n")
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].block_size"));
        let e = check_text("name = \"x\"\n[[step]]\nprobe = \"bench.memory\"\nblock_size = \"3G\"\nscope = \"local\"\nthreads = 4\n")
            .unwrap_err();
        assert!(e.to_string().contains("90%"), "{e}");
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"net\"\ntarget = \"127.0.0.1:7\"\npayload = \"1M\"\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].payload"));
        let e = check_text("name = \"x\"\n[[step]]\nprobe = \"net\"\ntarget = \"127.0.0.1:7\"\nduration = \"100h\"\nperiod = \"1ms\"\n")
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].duration"));
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"net\"\ntarget = \"no such host.invalid\"\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].target"));
        let e =
            check_text("name = \"x\"\n[[step]]\nprobe = \"latency\"\nhistogram_max = \"20s\"\n")
                .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].histogram_max"));
        let e = check_text("name = \"x\"\n[[step]]\nprobe = \"latency\"\ndma_latency = \"soon\"\n")
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].dma_latency"));
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"bench.fileio\"\ndir = \"/nonexistent/rtlab\"\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].dir"));
    }

    #[test]
    fn a_load_the_machine_cannot_carry_is_refused_before_running() {
        let e = check_text(
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\nmatrix.load = [\"none\", \"vm:64:1T\"]\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("step[1].matrix.load"));
        assert!(
            e.to_string().contains("MemAvailable") && e.to_string().contains("step 2 of 2"),
            "{e}"
        );
    }

    #[test]
    fn rt_needs_follow_the_probe_defaults() {
        let s = parse(
            "s.toml",
            "name = \"x\"\n[[step]]\nprobe = \"latency\"\nmatrix.priority = [0, 95]\n[[step]]\nprobe = \"latency\"\n[[step]]\nprobe = \"bench.cpu\"\n[[step]]\nprobe = \"net\"\ntarget = \"127.0.0.1:7\"\nlocal_server = true\nserver_priority = 80\npriority = 10\n",
        )
        .unwrap();
        let plan = expand(&s, None, DEFAULT_MAX_STEPS).unwrap();
        let needs: Vec<Option<(Policy, i32, &str)>> =
            plan.iter().map(|s| s.params.step().rt_need()).collect();
        assert_eq!(
            needs,
            [
                None,
                Some((Policy::Fifo, 95, "priority")),
                Some((Policy::Fifo, 90, "priority")),
                None,
                Some((Policy::Fifo, 80, "server_priority")),
            ]
        );
    }

    #[test]
    fn every_preset_passes_on_a_roomy_machine() {
        let roomy = Machine {
            cpus: (0..64).collect(),
            mem_available: 0,
        };
        for p in crate::scenario::presets::PRESETS {
            let s = parse(p.name, p.text).unwrap();
            let plan = expand(&s, Some("1s"), DEFAULT_MAX_STEPS).unwrap();
            // Loads and fileio space depend on this machine; skip steps that use them.
            let plan: Vec<PlannedStep> = plan
                .into_iter()
                .filter(|st| {
                    st.values
                        .iter()
                        .all(|(k, v)| k != "load" || *v == Val::Str("none".into()))
                })
                .filter(|st| st.probe.name != "bench.fileio")
                .collect();
            if let Err(e) = check(&s, &plan, &roomy) {
                panic!("{}: {e}", p.name);
            }
        }
    }
}
