//! What a thread should have (policy, priority, CPUs), checked the way the kernel
//! will check it, and how a thread's setting differs from it.

use super::task::Setting;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy};

/// What to set; `None` fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Policy and priority.
    pub policy: Option<(Policy, i32)>,
    /// CPUs.
    pub affinity: Option<CpuList>,
}

impl Target {
    /// The setting a thread has after applying this target.
    pub fn applied_to(&self, s: &Setting) -> Setting {
        Setting {
            policy: self.policy.map_or(s.policy, |(p, _)| Some(p)),
            priority: self.policy.map_or(s.priority, |(_, prio)| prio),
            affinity: self
                .affinity
                .as_ref()
                .map_or(s.affinity.clone(), |a| a.to_string()),
        }
    }

    /// What differs between a thread's setting and this target, readable; empty
    /// when nothing does.
    pub fn drift(&self, s: &Setting) -> Vec<String> {
        let want = self.applied_to(s);
        let mut d = Vec::new();
        if want.policy != s.policy || want.priority != s.priority {
            d.push(format!("{} (want {})", s.policy_text(), want.policy_text()));
        }
        if want.affinity != s.affinity {
            d.push(format!("CPUs {} (want {})", s.affinity, want.affinity));
        }
        d
    }
}

/// The policy and priority asked for: a priority needs a policy, a real-time
/// policy needs a priority (the others default to 0), and the pair must be one
/// the kernel takes.
pub fn policy_of(
    policy: Option<Policy>,
    priority: Option<i32>,
) -> Result<Option<(Policy, i32)>, String> {
    let (p, prio) = match (policy, priority) {
        (None, Some(_)) => return Err("needs --policy (e.g. --policy fifo --priority 50)".into()),
        (None, None) => return Ok(None),
        (Some(p), Some(n)) => (p, n),
        (Some(p), None) if p.is_realtime() => return Err(format!("{p} needs a priority 1-99")),
        (Some(p), None) => (p, 0),
    };
    validate(p, prio)?;
    Ok(Some((p, prio)))
}

/// The CPUs of a list to set: not empty, each one online.
pub fn affinity_of(text: &str) -> Result<CpuList, String> {
    let l = CpuList::parse(text).map_err(|e| e.to_string())?;
    if l.is_empty() {
        return Err("empty CPU list (e.g. --affinity 2-3)".into());
    }
    check_cpus(&l, &online_cpus())?;
    Ok(l)
}

impl Target {
    /// A target that sets something.
    pub fn new(policy: Option<(Policy, i32)>, affinity: Option<CpuList>) -> Result<Target, String> {
        if policy.is_none() && affinity.is_none() {
            return Err("nothing to set: give --policy/--priority and/or --affinity".into());
        }
        Ok(Target { policy, affinity })
    }
}

/// Whether this real-time priority is the top one, which starves what the kernel
/// runs at real-time priority.
pub fn is_top(policy: Policy, priority: i32) -> bool {
    policy.is_realtime() && priority == 99
}

/// The warning about priority 99 (`what` names where it was asked for).
pub fn top_priority_warning(what: &str) -> String {
    format!(
        "{what} is the top priority: a thread there that spins starves threaded IRQs and kernel RT threads; 80-90 leaves them room"
    )
}

/// The CPUs that are online (`/sys/devices/system/cpu/online`; this thread's
/// affinity when sysfs is not there).
pub fn online_cpus() -> CpuList {
    rtlab_engine::sysinfo::SysRoot::default()
        .read("/sys/devices/system/cpu/online")
        .and_then(|s| CpuList::parse(&s).ok())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| CpuList::from_cpus(sched::thread_affinity(0).unwrap_or_default()))
}

/// Refuses a CPU list naming a CPU that is not online: the kernel would drop it
/// silently (or refuse the whole list), and the thread would never have the
/// CPUs asked for.
pub fn check_cpus(list: &CpuList, online: &CpuList) -> Result<(), String> {
    match list.cpus().iter().find(|c| !online.contains(**c)) {
        Some(bad) => Err(format!(
            "CPU {bad} does not exist or is offline (online CPUs: {online})"
        )),
        None => Ok(()),
    }
}

/// Checks a policy/priority pair the way `sched_setscheduler(2)` will.
pub fn validate(policy: Policy, priority: i32) -> Result<(), String> {
    let (lo, hi) = policy.priority_range();
    if policy == Policy::Deadline {
        return Err("deadline cannot be set by rtlab; use fifo or rr".into());
    }
    if priority < lo || priority > hi {
        return Err(if policy.is_realtime() {
            format!("{priority} is outside 1-99 for {policy}")
        } else {
            format!("{policy} takes priority 0, not {priority} (use --policy fifo or rr for a real-time priority)")
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_are_validated_like_the_kernel() {
        assert!(validate(Policy::Fifo, 50).is_ok());
        assert!(validate(Policy::Fifo, 0).is_err());
        assert!(validate(Policy::Rr, 100).is_err());
        assert!(validate(Policy::Other, 0).is_ok());
        assert!(validate(Policy::Other, 5)
            .unwrap_err()
            .contains("priority 0"));
        assert!(validate(Policy::Deadline, 0).is_err());
    }

    #[test]
    fn cpus_must_be_online() {
        let online = CpuList::parse("0-1").unwrap();
        assert!(check_cpus(&CpuList::parse("1").unwrap(), &online).is_ok());
        let e = check_cpus(&CpuList::parse("0,99").unwrap(), &online).unwrap_err();
        assert!(
            e.contains("CPU 99 does not exist") && e.contains("0-1"),
            "{e}"
        );
        assert!(online_cpus().contains(sched::thread_affinity(0).unwrap()[0]));
    }

    #[test]
    fn drift_names_what_differs() {
        let s = Setting {
            policy: Some(Policy::Other),
            priority: 0,
            affinity: "0-3".into(),
        };
        let t = Target {
            policy: Some((Policy::Fifo, 50)),
            affinity: Some(CpuList::parse("2-3").unwrap()),
        };
        assert_eq!(t.drift(&s), ["other (want fifo/50)", "CPUs 0-3 (want 2-3)"]);
        let done = t.applied_to(&s);
        assert!(t.drift(&done).is_empty());
    }

    #[test]
    fn what_is_asked_for_is_complete() {
        assert_eq!(policy_of(None, None), Ok(None));
        assert!(policy_of(None, Some(5))
            .unwrap_err()
            .contains("needs --policy"));
        assert_eq!(
            policy_of(Some(Policy::Fifo), None).unwrap_err(),
            "fifo needs a priority 1-99"
        );
        assert_eq!(
            policy_of(Some(Policy::Batch), None),
            Ok(Some((Policy::Batch, 0)))
        );
        assert!(policy_of(Some(Policy::Rr), Some(0)).is_err());
        assert!(affinity_of(" ").unwrap_err().contains("empty CPU list"));
        assert!(affinity_of("x").is_err());
        assert!(Target::new(None, None)
            .unwrap_err()
            .starts_with("nothing to set"));
        assert!(is_top(Policy::Fifo, 99) && !is_top(Policy::Fifo, 98));
    }
}
