//! Checking every value of every planned step against this machine before the
//! first step runs (and before the campaign is recorded): CPUs that exist, policy
//! and priority that fit together, sizes and loads the machine can carry, targets
//! that resolve. Parsing already checked each value's type and range; what is
//! checked here depends on the machine or on several values of one step.
//!
//! A problem names the file, the line and key the value came from, the planned
//! step (number and name), the value, and what to do about it.

use super::parse::ScenarioError;
use super::{PlannedStep, Scenario, Val};
use crate::units::parse_size;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy, SchedError};
use std::collections::HashMap;
use std::path::Path;

/// What the checks need to know about this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPUs this process may run on: online and in its affinity mask.
    pub cpus: Vec<usize>,
    /// MemAvailable in bytes (0: unknown, nothing is refused for memory).
    pub mem_available: u64,
}

impl Machine {
    /// This machine, as seen by this process.
    pub fn this() -> Machine {
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|s| CpuList::parse(&s).ok())
            .unwrap_or_default();
        let allowed = sched::thread_affinity(0).unwrap_or_default();
        let both: Vec<usize> = allowed
            .iter()
            .copied()
            .filter(|c| online.contains(*c))
            .collect();
        let cpus = if !both.is_empty() {
            both
        } else if !online.is_empty() {
            online.cpus().to_vec()
        } else {
            allowed
        };
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Machine {
            cpus,
            mem_available: rtlab_engine::sysinfo::meminfo_kib(&meminfo, "MemAvailable")
                .saturating_mul(1024),
        }
    }
}

/// The largest number of messages `net ping` sends in one run (its --count limit).
use rtlab_engine::probe::net::MAX_MESSAGES as NET_MAX_COUNT;

/// What is wrong with one value of a planned step: the key and the message.
type Problem = (String, String);

/// Results of the checks that touch the system (statfs, /proc/meminfo, name
/// resolution), by what they checked: each distinct value is checked once.
type Memo = HashMap<String, Result<(), String>>;

/// Checks every planned step; the first problem found, located in the file.
pub fn check(scn: &Scenario, plan: &[PlannedStep], m: &Machine) -> Result<(), ScenarioError> {
    let mut memo = Memo::new();
    for step in plan {
        if let Err((key, message)) = check_step(step, m, &mut memo) {
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

fn get<'a>(step: &'a PlannedStep, key: &str) -> Option<&'a Val> {
    step.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn int(step: &PlannedStep, key: &str) -> Option<i64> {
    match get(step, key) {
        Some(Val::Int(i)) => Some(*i),
        _ => None,
    }
}

fn text(step: &PlannedStep, key: &str) -> Option<String> {
    get(step, key).map(Val::to_string)
}

fn problem(key: &str, message: impl Into<String>) -> Problem {
    (key.to_string(), message.into())
}

fn check_step(step: &PlannedStep, m: &Machine, memo: &mut Memo) -> Result<(), Problem> {
    if let Some(list) = text(step, "cpus") {
        check_cpus(&list, m).map_err(|e| problem("cpus", e))?;
    }
    if let Some(load) = get(step, "load") {
        check_load(load, memo).map_err(|e| problem("load", e))?;
    }
    match step.probe.name {
        "latency" => check_latency(step),
        "net" => check_net(step, memo),
        "bench.memory" => check_memory(step, m),
        "bench.fileio" => check_fileio(step, memo),
        _ => Ok(()),
    }
}

fn check_cpus(list: &str, m: &Machine) -> Result<(), String> {
    let cpus = CpuList::parse(list).map_err(|e| e.to_string())?;
    if m.cpus.is_empty() {
        return Ok(());
    }
    let usable = CpuList::from_cpus(m.cpus.clone());
    match cpus.cpus().iter().find(|c| !m.cpus.contains(c)) {
        Some(bad) => Err(format!(
            "CPU {bad} is not online on this machine or not allowed for rtlab (usable: {usable}); use CPUs within {usable}"
        )),
        None => Ok(()),
    }
}

/// The load specs of a value; `none` is no load.
fn load_specs(v: &Val) -> Vec<String> {
    let all = match v {
        Val::List(l) => l.clone(),
        other => vec![other.to_string()],
    };
    all.into_iter().filter(|s| s != "none").collect()
}

fn check_load(v: &Val, memo: &mut Memo) -> Result<(), String> {
    let texts = load_specs(v);
    if texts.is_empty() {
        return Ok(());
    }
    memo.entry(format!("load {}", texts.join("\u{1f}")))
        .or_insert_with(|| {
            let mut specs = Vec::new();
            for t in &texts {
                specs.extend(crate::loads::spec::parse(t)?);
            }
            crate::loads::guard::check(&specs)
                .map(|_| ())
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
}

/// The policy and priority a latency step runs with, as `rtlab latency` works
/// them out from --policy and --priority.
fn latency_sched(step: &PlannedStep) -> Result<(Policy, i32), Problem> {
    let policy = match text(step, "policy").as_deref() {
        Some("rr") => Some(Policy::Rr),
        Some("other") => Some(Policy::Other),
        Some(_) => Some(Policy::Fifo),
        None => None,
    };
    let priority = int(step, "priority");
    match (policy, priority) {
        (None, None) => Ok((Policy::Fifo, 90)),
        (None, Some(0)) | (Some(Policy::Other), None | Some(0)) => Ok((Policy::Other, 0)),
        (None, Some(p)) => Ok((Policy::Fifo, p as i32)),
        (Some(Policy::Other), Some(p)) => Err(problem(
            "priority",
            format!("policy \"other\" (SCHED_OTHER) takes priority 0, not {p}; give priority = 0, or policy = \"fifo\" for an RT priority"),
        )),
        (Some(pol), Some(0)) => Err(problem(
            "priority",
            format!(
                "priority 0 is SCHED_OTHER, but policy = \"{}\"; give a priority of 1-99, or policy = \"other\"",
                pol.name()
            ),
        )),
        (Some(pol), Some(p)) => Ok((pol, p as i32)),
        (Some(pol), None) => Ok((pol, 90)),
    }
}

fn check_latency(step: &PlannedStep) -> Result<(), Problem> {
    latency_sched(step)?;
    if let Some(h) = text(step, "histogram_max") {
        let ns = crate::units::parse_duration(&h, crate::units::DefaultUnit::Micros)
            .map_err(|e| problem("histogram_max", e))?;
        let top_ns = u64::from(rtlab_engine::stats::hist::MAX_US_BUCKETS) * 1_000;
        if !(1_000..=top_ns).contains(&ns) {
            return Err(problem(
                "histogram_max",
                "must be between 1us and 10s (the 1-µs histogram's range)",
            ));
        }
    }
    if let Some(d) = text(step, "dma_latency") {
        let ok =
            matches!(d.trim(), "off" | "none") || d.trim().parse::<i32>().is_ok_and(|v| v >= 0);
        if !ok {
            return Err(problem(
                "dma_latency",
                "give a whole number of µs ≥ 0 (0 keeps the CPUs out of deep C-states) or \"off\"",
            ));
        }
    }
    Ok(())
}

fn check_net(step: &PlannedStep, memo: &mut Memo) -> Result<(), Problem> {
    if let Some(p) = text(step, "payload") {
        let bytes = parse_size(&p).map_err(|e| problem("payload", e))?;
        let max = rtlab_engine::proto::MAX_PAYLOAD as u64;
        if bytes > max {
            return Err(problem(
                "payload",
                format!(
                    "{bytes} bytes is above the {max}-byte message limit; give at most \"16K\""
                ),
            ));
        }
    }
    let ms = |k: &str| {
        text(step, k)
            .and_then(|t| crate::units::parse_duration(&t, crate::units::DefaultUnit::Millis).ok())
    };
    if let (Some(dur), Some(period)) = (
        text(step, "duration").and_then(|t| {
            crate::units::parse_duration(&t, crate::units::DefaultUnit::Seconds).ok()
        }),
        ms("period").or(Some(30_000_000)),
    ) {
        let count = dur / period.max(1);
        if count > NET_MAX_COUNT {
            return Err(problem(
                "duration",
                format!(
                    "{count} messages (duration / period) is above {NET_MAX_COUNT}; shorten the duration or lengthen the period"
                ),
            ));
        }
    }
    if let Some(target) = text(step, "target") {
        memo.entry(format!("target {target}"))
            .or_insert_with(|| rtlab_engine::probe::net::resolve(&target).map(drop))
            .clone()
            .map_err(|e| problem("target", e))?;
    }
    Ok(())
}

/// A size value in bytes (already parsed once, so it parses).
fn size(step: &PlannedStep, key: &str, default: u64) -> Result<u64, Problem> {
    match text(step, key) {
        Some(t) => parse_size(&t).map_err(|e| problem(key, e)),
        None => Ok(default),
    }
}

fn check_memory(step: &PlannedStep, m: &Machine) -> Result<(), Problem> {
    let word = rtlab_engine::bench::memory::WORD;
    let block = size(step, "block_size", 1 << 10)?;
    let total = size(step, "total_size", 100 << 30)?;
    let threads = int(step, "threads").unwrap_or(1).max(1) as u64;
    if block % word != 0 {
        return Err(problem(
            "block_size",
            format!("{block} bytes is not a multiple of the {word}-byte word; use e.g. \"1K\" or \"64M\""),
        ));
    }
    if total / block < threads {
        return Err(problem(
            "total_size",
            format!("{total} bytes is less than one {block}-byte block per thread ({threads} threads); raise total_size"),
        ));
    }
    let blocks = if text(step, "scope").as_deref() == Some("local") {
        threads
    } else {
        1
    };
    let need = block.saturating_mul(blocks);
    if m.mem_available > 0 && need > crate::limits::budget_of(m.mem_available) {
        return Err(problem(
            "block_size",
            format!(
                "{blocks} block(s) of {block} bytes need {need} bytes, more than 90% of the {} bytes available; use a smaller block_size",
                m.mem_available
            ),
        ));
    }
    Ok(())
}

fn check_fileio(step: &PlannedStep, memo: &mut Memo) -> Result<(), Problem> {
    let dir = text(step, "dir").unwrap_or_else(|| ".".into());
    if !Path::new(&dir).is_dir() {
        return Err(problem(
            "dir",
            format!("{dir} is not a directory; create it or mount the device there first"),
        ));
    }
    let total = size(step, "total_size", 2 << 30)?;
    let block = size(step, "block_size", 16 << 10)?;
    let files = int(step, "files").unwrap_or(128).max(1) as u64;
    if get(step, "direct") == Some(&Val::Bool(true)) && block % 512 != 0 {
        return Err(problem(
            "block_size",
            format!("{block} bytes is not a multiple of 512, which direct = true needs"),
        ));
    }
    let file_size = total / files / block.max(1) * block;
    if file_size == 0 {
        return Err(problem(
            "total_size",
            format!("{total} bytes is less than {files} files × {block}-byte blocks; raise total_size or lower files"),
        ));
    }
    if let Some(r) = text(step, "rw_ratio") {
        if !r
            .trim()
            .parse::<f64>()
            .is_ok_and(|r| r.is_finite() && r > 0.0)
        {
            return Err(problem(
                "rw_ratio",
                "must be a number above 0 (reads per write, e.g. \"1.5\")",
            ));
        }
    }
    let need = file_size.saturating_mul(files);
    memo.entry(format!("space {dir} {need}"))
        .or_insert_with(|| {
            let sp = rtlab_engine::bench::fileio::space(Path::new(&dir)).map_err(|e| {
                format!("cannot inspect {dir}: {}", rtlab_engine::rt::errno_text(e))
            })?;
            if sp.read_only {
                return Err(format!("{dir} is on a read-only file system; choose another dir"));
            }
            let margin = rtlab_engine::bench::fileio::space_margin(need);
            if need.saturating_add(margin) > sp.available {
                return Err(format!(
                    "{need} bytes of files (plus a {margin}-byte margin) do not fit in the {} bytes available in {dir}; lower total_size or choose another dir",
                    sp.available
                ));
            }
            Ok(())
        })
        .clone()
        .map_err(|e| problem("total_size", e))
}

/// The SCHED_FIFO/RR priority a step needs (the highest among its threads and
/// its local echo server), if it needs one.
pub fn rt_need(step: &PlannedStep) -> Option<(Policy, i32, &'static str)> {
    let mut need: Option<(Policy, i32, &'static str)> = None;
    let mut want = |p: Policy, prio: i64, key: &'static str| {
        if p.is_realtime() && prio > 0 && need.is_none_or(|(_, n, _)| (prio as i32) > n) {
            need = Some((p, prio as i32, key));
        }
    };
    match step.probe.name {
        "latency" => {
            if let Ok((p, prio)) = latency_sched(step) {
                want(p, i64::from(prio), "priority");
            }
        }
        "net" => {
            want(Policy::Fifo, int(step, "priority").unwrap_or(0), "priority");
            if get(step, "local_server") == Some(&Val::Bool(true)) {
                want(
                    Policy::Fifo,
                    int(step, "server_priority").unwrap_or(0),
                    "server_priority",
                );
            }
        }
        _ => {}
    }
    need
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
        assert!(e.to_string().contains("policy = \"rr\""), "{e}");
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
        let needs: Vec<Option<(Policy, i32, &str)>> = plan.iter().map(rt_need).collect();
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
                .filter(|st| get(st, "load").is_none_or(|l| load_specs(l).is_empty()))
                .filter(|st| st.probe.name != "bench.fileio")
                .collect();
            if let Err(e) = check(&s, &plan, &roomy) {
                panic!("{}: {e}", p.name);
            }
        }
    }
}
