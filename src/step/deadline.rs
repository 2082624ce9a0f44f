//! The SCHED_DEADLINE reservation options that `latency` and `periodic` take
//! with `--policy deadline`: `--dl-runtime`, `--dl-deadline`, `--dl-period`.
//!
//! They carry a `dl-` prefix because `latency --deadline` already names the
//! wake-up lateness counted as a miss; the kernel's three parameters are a
//! different thing (the CPU time reserved each period and by when).

use super::value::{Dur, Us};
use crate::error::{bad_flag, SystemError};
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::sched::deadline::{DlParamError, DlParams};
use rtlab_engine::rt::sched::{Policy, SchedError};
use rtlab_engine::rt::{EBUSY, EINVAL, EPERM};
use serde::{Deserialize, Serialize};

/// The reservation of SCHED_DEADLINE threads.
#[derive(Debug, Clone, PartialEq, Default, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct DeadlineArgs {
    /// With --policy deadline: CPU time reserved each period (a bare number is
    /// µs) [default: 10% of --dl-deadline, at least 1024 ns].
    #[arg(long, value_name = "DUR")]
    pub dl_runtime: Option<Dur<Us>>,
    /// With --policy deadline: by when in each period the runtime is given (a
    /// bare number is µs) [default: --dl-period].
    #[arg(long, value_name = "DUR")]
    pub dl_deadline: Option<Dur<Us>>,
    /// With --policy deadline: period of the reservation (a bare number is µs)
    /// [default: the probe's own period].
    #[arg(long, value_name = "DUR")]
    pub dl_period: Option<Dur<Us>>,
}

impl DeadlineArgs {
    fn given(&self) -> Option<&'static str> {
        [
            (self.dl_runtime.is_some(), "--dl-runtime"),
            (self.dl_deadline.is_some(), "--dl-deadline"),
            (self.dl_period.is_some(), "--dl-period"),
        ]
        .into_iter()
        .find_map(|(g, f)| g.then_some(f))
    }

    /// The reservation for threads of period `period_ns` under `policy`:
    /// `None` unless the policy is deadline. Refuses the options without
    /// `--policy deadline`, and values out of the kernel's order.
    pub fn params(&self, policy: Policy, period_ns: u64) -> Result<Option<DlParams>> {
        if policy != Policy::Deadline {
            return match self.given() {
                Some(flag) => Err(bad_flag(
                    flag,
                    "sets a SCHED_DEADLINE reservation: give it with --policy deadline",
                )),
                None => Ok(None),
            };
        }
        let dur =
            |flag: &str, v: &Option<Dur<Us>>| v.as_ref().map(|d| d.positive(flag)).transpose();
        let period_ns = dur("--dl-period", &self.dl_period)?.unwrap_or(period_ns);
        let deadline_ns = dur("--dl-deadline", &self.dl_deadline)?.unwrap_or(period_ns);
        let runtime_ns =
            dur("--dl-runtime", &self.dl_runtime)?.unwrap_or((deadline_ns / 10).max(1024));
        let p = DlParams {
            runtime_ns,
            deadline_ns,
            period_ns,
        };
        match p.check() {
            Ok(()) => Ok(Some(p)),
            Err(DlParamError::RuntimeTooSmall) => Err(bad_flag(
                "--dl-runtime",
                format!("{runtime_ns} ns is below the kernel's 1024 ns minimum"),
            )),
            Err(DlParamError::RuntimeAboveDeadline) => Err(bad_flag(
                "--dl-runtime",
                format!("{runtime_ns} ns is more than the deadline ({deadline_ns} ns): the kernel needs runtime ≤ deadline ≤ period"),
            )),
            Err(DlParamError::DeadlineAbovePeriod) => Err(bad_flag(
                "--dl-deadline",
                format!("{deadline_ns} ns is more than the period ({period_ns} ns): the kernel needs runtime ≤ deadline ≤ period"),
            )),
        }
    }
}

/// Refuses pinning deadline threads: the kernel refuses SCHED_DEADLINE to a
/// thread whose affinity is narrower than its root domain (all CPUs, unless
/// an exclusive cpuset partition makes a smaller one, as cyclicdeadline does).
pub fn refuse_pinning(flag: &str) -> anyhow::Error {
    bad_flag(
        flag,
        "SCHED_DEADLINE threads cannot be pinned: the kernel refuses a deadline thread whose CPU affinity is narrower than its root domain (here every CPU). Leave it out (the threads then run on every CPU, the deadline scheduler places them), or make an exclusive cpuset partition and run rtlab inside it, as cyclicdeadline does",
    )
}

/// The threads of a run: under SCHED_DEADLINE (`deadline`), as many but
/// unpinned, and refused when a flag of `pins` (flag, given) pins them.
pub fn unpinned(
    threads: Vec<Option<usize>>,
    deadline: bool,
    pins: &[(&str, bool)],
) -> Result<Vec<Option<usize>>> {
    if !deadline {
        return Ok(threads);
    }
    match pins.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(refuse_pinning(flag)),
        None => Ok(vec![None; threads.len()]),
    }
}

/// The error of a refused SCHED_DEADLINE reservation `p` for `threads`
/// threads, with what the kernel's refusal means.
pub fn refusal(err: SchedError, p: &DlParams, threads: usize) -> anyhow::Error {
    let asked = format!(
        "SCHED_DEADLINE runtime {} ns / deadline {} ns / period {} ns for {threads} thread(s) ({:.1}% of a CPU each)",
        p.runtime_ns,
        p.deadline_ns,
        p.period_ns,
        p.bandwidth() * 100.0
    );
    let why = match err.errno {
        EBUSY => "admission control refused the bandwidth: the deadline tasks of this root domain would need more than the kernel allows (kernel.sched_rt_runtime_us / sched_rt_period_us of every CPU, 95% by default); ask a smaller --dl-runtime or fewer threads".to_string(),
        EPERM => "not permitted: SCHED_DEADLINE needs root or CAP_SYS_NICE, a CPU affinity covering the whole root domain, and (with RT group scheduling) a task in the root cgroup".to_string(),
        EINVAL => "the kernel does not take these parameters (period too short for its resolution, or not a SCHED_DEADLINE kernel)".to_string(),
        _ => err.to_string(),
    };
    SystemError(format!("{asked}: {why}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(r: Option<&str>, d: Option<&str>, p: Option<&str>) -> DeadlineArgs {
        DeadlineArgs {
            dl_runtime: r.map(Dur::new),
            dl_deadline: d.map(Dur::new),
            dl_period: p.map(Dur::new),
        }
    }

    #[test]
    fn defaults_follow_the_probes_period() {
        let p = args(None, None, None)
            .params(Policy::Deadline, 1_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.runtime_ns, p.deadline_ns, p.period_ns),
            (100_000, 1_000_000, 1_000_000)
        );
        let p = args(Some("200us"), Some("500us"), Some("2ms"))
            .params(Policy::Deadline, 1_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.runtime_ns, p.deadline_ns, p.period_ns),
            (200_000, 500_000, 2_000_000)
        );
        assert_eq!(
            args(None, None, None).params(Policy::Fifo, 1000).unwrap(),
            None
        );
    }

    #[test]
    fn refusals_name_the_flag() {
        for (a, flag) in [
            (args(Some("2ms"), None, None), "--dl-runtime"),
            (args(None, Some("3ms"), Some("2ms")), "--dl-deadline"),
            (args(Some("1ns"), None, None), "--dl-runtime"),
            (args(Some("abc"), None, None), "--dl-runtime"),
        ] {
            let e = a
                .params(Policy::Deadline, 1_000_000)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(flag), "{e}");
        }
        let e = args(None, None, Some("1ms"))
            .params(Policy::Fifo, 1_000_000)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--dl-period") && e.contains("--policy deadline"),
            "{e}"
        );
    }

    #[test]
    fn a_refusal_says_what_the_errno_means() {
        let p = DlParams {
            runtime_ns: 900_000,
            deadline_ns: 1_000_000,
            period_ns: 1_000_000,
        };
        let e = refusal(SchedError { errno: EBUSY }, &p, 4).to_string();
        assert!(
            e.contains("admission control") && e.contains("90.0%"),
            "{e}"
        );
        let e = refusal(SchedError { errno: EPERM }, &p, 1).to_string();
        assert!(e.contains("root"), "{e}");
    }
}
