//! Contention on randomly chosen mutexes (`rtlab bench mutex`, scenario probe
//! `bench.mutex`; sysbench mutex). As in sysbench, it runs until every thread
//! took its locks: --time only caps it.

use super::{check_mutexes, Common, Lim};
use crate::error::bad_flag;
use crate::record::{Run, Status, Warning};
use crate::step::{Machine, Observer};
use anyhow::Result;
use clap::Args;
use rtlab_engine::bench::mutex::MutexBench;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The parameters of `rtlab bench mutex` and of a `bench.mutex` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Number of mutexes.
    #[arg(long, default_value_t = 4096, value_name = "N", alias = "mutex-num")]
    pub mutexes: usize,
    /// Locks taken by each thread.
    #[arg(
        long,
        default_value_t = 50_000,
        value_name = "N",
        alias = "mutex-locks"
    )]
    pub locks: u64,
    /// Empty-loop iterations before each lock.
    #[arg(
        long,
        default_value_t = 10_000,
        value_name = "N",
        alias = "mutex-loops"
    )]
    pub loops: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
}

bench_step!(
    "bench.mutex",
    BenchMutex,
    "bench mutex",
    0,
    super::lock_rates
);

/// What a mutex run was asked, in words.
fn what(a: &super::Asked) -> String {
    format!(
        "{} mutexes, {} locks × {} loops",
        a.count("mutexes"),
        a.count("locks"),
        a.count("loops")
    )
}

impl Params {
    /// The limits (no time limit unless --time), every value checked.
    pub fn plan(&self, _m: &Machine) -> Result<Lim> {
        let lim = self.lim()?;
        if self.mutexes == 0 {
            return Err(bad_flag("--mutexes", "give at least 1 mutex"));
        }
        check_mutexes("--mutexes", self.mutexes)?;
        if self.locks == 0 {
            return Err(bad_flag(
                "--locks",
                "0 locks measures nothing; give 1 or more",
            ));
        }
        Ok(lim)
    }

    /// What it was asked, for [`super::asked`].
    pub(super) fn asked(&self) -> Value {
        super::with_threads(
            &self.common,
            json!({ "mutexes": self.mutexes, "locks": self.locks, "loops": self.loops }),
        )
    }
}

/// Takes the locks until done, a limit or a signal; the run has the locks
/// taken, and a warning when the time limit cut it short.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let lim = p.plan(&Machine::this())?;
    let w = MutexBench::new(p.mutexes, p.locks, p.loops);
    let mut m = super::measure(&w, lim, p.recorded(), Vec::new(), obs);
    let taken = m.total.tally.ops;
    let planned = p.locks.saturating_mul(lim.limits.threads as u64);
    m.run.metrics.insert("total_ops".into(), taken as f64);
    super::rate(&mut m.run, "ops_per_s", taken as f64);
    if taken < planned && m.run.status == Status::Complete {
        m.run.warnings.push(Warning::new(
            "cut_short",
            format!(
                "the time limit ended the run after {taken} of {planned} locks: compare ops_per_s, not total_time_s"
            ),
        ));
    }
    Ok(m.run)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{machine, refusal, round_trip};
    use super::*;
    use crate::step::Step as _;

    #[test]
    fn mutex_has_no_time_limit_unless_given() {
        let p: Params = serde_json::from_value(json!({"threads": 64, "loops": 0})).unwrap();
        assert_eq!((p.common.threads, p.mutexes, p.loops), (64, 4096, 0));
        round_trip(&p);
        // No time limit unless one is given.
        assert_eq!(p.planned_ns(), None);
        assert_eq!(p.plan(&machine(0)).unwrap().limits.time_ns, 0);
    }

    #[test]
    fn refusals_name_the_flag() {
        let with = |f: fn(&mut Params)| {
            let mut p = Params::default();
            f(&mut p);
            refusal(p.plan(&machine(0)))
        };
        assert!(with(|p| p.locks = 0).starts_with("--locks: 0 locks"));
        assert!(with(|p| p.mutexes = 0).starts_with("--mutexes: give at least 1"));
        assert!(with(|p| p.mutexes = 1 << 21).starts_with("--mutexes: 2097152 mutexes"));
    }
}
