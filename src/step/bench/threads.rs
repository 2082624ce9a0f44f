//! Lock, sched_yield, unlock among threads (`rtlab bench threads`, scenario
//! probe `bench.threads`; sysbench threads).

use super::{check_mutexes, Common, Lim, DEFAULT_TIME_NS};
use crate::error::bad_flag;
use crate::record::Run;
use crate::step::{Machine, Observer};
use anyhow::Result;
use clap::Args;
use rtlab_engine::bench::threads::Threads;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The parameters of `rtlab bench threads` and of a `bench.threads` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Lock/yield/unlock rounds per event.
    #[arg(
        long,
        default_value_t = 1000,
        value_name = "N",
        alias = "thread-yields"
    )]
    pub yields: u32,
    /// Number of mutexes the threads share.
    #[arg(long, default_value_t = 8, value_name = "N", alias = "thread-locks")]
    pub locks: usize,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
}

bench_step!(
    "bench.threads",
    BenchThreads,
    "bench threads",
    DEFAULT_TIME_NS,
    super::lock_rates
);

/// What a threads run was asked, in words.
fn what(a: &super::Asked) -> String {
    format!("{} yields, {} locks", a.count("yields"), a.count("locks"))
}

impl Params {
    /// The limits, every value checked.
    pub fn plan(&self, _m: &Machine) -> Result<Lim> {
        let lim = self.lim()?;
        check_mutexes("--locks", self.locks)?;
        if self.yields == 0 {
            return Err(bad_flag(
                "--yields",
                "0 yields makes empty events; give 1 or more",
            ));
        }
        if self.locks == 0 {
            return Err(bad_flag("--locks", "give at least 1 mutex"));
        }
        Ok(lim)
    }

    /// What it was asked, for [`super::asked`].
    pub(super) fn asked(&self) -> Value {
        super::with_threads(
            &self.common,
            json!({ "yields": self.yields, "locks": self.locks }),
        )
    }
}

/// Locks, yields and unlocks until a limit or a signal; the run has the rounds
/// (`total_ops`, `ops_per_s`).
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let lim = p.plan(&Machine::this())?;
    let w = Threads::new(p.yields, p.locks);
    let mut m = super::measure(&w, lim, p.recorded(), Vec::new(), obs);
    let ops = m.total.tally.ops as f64;
    m.run.metrics.insert("total_ops".into(), ops);
    super::rate(&mut m.run, "ops_per_s", ops);
    Ok(m.run)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{machine, refusal, round_trip};
    use super::*;

    #[test]
    fn unset_values_keep_their_defaults() {
        let p: Params = serde_json::from_value(json!({"locks": 1, "time": "12s"})).unwrap();
        assert_eq!((p.locks, p.yields), (1, 1000));
        round_trip(&p);
    }

    #[test]
    fn refusals_name_the_flag() {
        let p = Params {
            yields: 0,
            ..Default::default()
        };
        assert!(refusal(p.plan(&machine(0))).starts_with("--yields: 0 yields"));
        let mut p = Params {
            locks: 0,
            ..Default::default()
        };
        assert!(refusal(p.plan(&machine(0))).starts_with("--locks: give at least 1"));
        p.locks = 1 << 21;
        assert!(refusal(p.plan(&machine(0))).starts_with("--locks: 2097152 mutexes is more"));
    }
}
