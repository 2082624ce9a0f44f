//! Where and how load workers run: their CPUs, nice value and scheduling policy.

use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy};

/// Where and how load workers run.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// CPUs the workers may run on (default: the parent's affinity).
    pub cpus: Option<Vec<usize>>,
    /// Nice value (SCHED_OTHER/BATCH).
    pub nice: Option<i32>,
    /// Scheduling policy (default SCHED_OTHER).
    pub policy: Policy,
    /// Priority for SCHED_FIFO/RR.
    pub priority: i32,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            cpus: None,
            nice: None,
            policy: Policy::Other,
            priority: 0,
        }
    }
}

/// The CPUs this process may use.
pub fn allowed_cpus() -> Vec<usize> {
    sched::thread_affinity(0).unwrap_or_default()
}

/// The CPUs of a list, each one this process may use.
pub fn cpus(cpus: &CpuList) -> Result<Vec<usize>, String> {
    let allowed = allowed_cpus();
    if let Some(bad) = cpus.cpus().iter().find(|c| !allowed.contains(c)) {
        return Err(format!(
            "CPU {bad} is not online or not allowed for this process (usable: {})",
            CpuList::from_cpus(allowed)
        ));
    }
    Ok(cpus.cpus().to_vec())
}

/// Refuses a nice value outside -20 to 19.
pub fn check_nice(n: i32) -> Result<(), String> {
    if (-20..=19).contains(&n) {
        Ok(())
    } else {
        Err(format!("{n} is outside -20 to 19"))
    }
}

/// The policy and priority of `other`, `batch`, `idle`, `fifo:PRIO` or `rr:PRIO`.
pub fn policy(text: &str) -> Result<(Policy, i32), String> {
    let text = text.trim();
    let (name, prio) = match text.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (text, None),
    };
    let policy = match name {
        "other" => Policy::Other,
        "batch" => Policy::Batch,
        "idle" => Policy::Idle,
        "fifo" => Policy::Fifo,
        "rr" => Policy::Rr,
        _ => {
            return Err(format!(
                "'{name}' is not one of other, batch, idle, fifo:PRIO, rr:PRIO"
            ))
        }
    };
    let priority = match (policy.is_realtime(), prio) {
        (true, Some(p)) => p
            .parse::<i32>()
            .ok()
            .filter(|p| (1..=99).contains(p))
            .ok_or_else(|| format!("priority '{p}' is not 1-99"))?,
        (true, None) => {
            return Err(format!(
                "{name} needs a priority, e.g. {name}:10 (keep it below the probe's)"
            ))
        }
        (false, Some(_)) => return Err(format!("{name} takes no priority; use --load-nice")),
        (false, None) => 0,
    };
    Ok((policy, priority))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_their_priorities() {
        assert_eq!(policy("other"), Ok((Policy::Other, 0)));
        assert_eq!(policy(" fifo:10 "), Ok((Policy::Fifo, 10)));
        assert_eq!(policy("idle"), Ok((Policy::Idle, 0)));
        for (bad, says) in [
            ("fast", "'fast' is not one of"),
            ("fifo", "fifo needs a priority"),
            ("rr:0", "priority '0' is not 1-99"),
            ("fifo:100", "priority '100'"),
            ("batch:3", "batch takes no priority"),
        ] {
            let e = policy(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn cpus_must_be_usable() {
        let mine = allowed_cpus();
        assert_eq!(cpus(&CpuList::from_cpus(vec![mine[0]])), Ok(vec![mine[0]]));
        let far = CpuList::from_cpus(vec![8000]);
        assert!(cpus(&far).unwrap_err().contains("CPU 8000 is not online"));
        assert!(check_nice(-20).is_ok() && check_nice(19).is_ok());
        assert_eq!(check_nice(40), Err("40 is outside -20 to 19".into()));
    }
}
