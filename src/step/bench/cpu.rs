//! Prime search by trial division (`rtlab bench cpu`, scenario probe
//! `bench.cpu`; sysbench cpu).

use super::{Common, Lim, DEFAULT_TIME_NS};
use crate::error::bad_flag;
use crate::record::Run;
use crate::step::{Machine, Observer};
use anyhow::Result;
use clap::Args;
use rtlab_engine::bench::cpu::Cpu;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The parameters of `rtlab bench cpu` and of a `bench.cpu` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Check the numbers below this for primality, once per event.
    #[arg(
        long,
        default_value_t = 10_000,
        value_name = "N",
        alias = "cpu-max-prime"
    )]
    pub max_prime: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
}

bench_step!(
    "bench.cpu",
    BenchCpu,
    "bench cpu",
    DEFAULT_TIME_NS,
    |_, _, _| String::new()
);

/// What a cpu run was asked, in words.
fn what(a: &super::Asked) -> String {
    format!("max prime {}", a.count("max_prime"))
}

impl Params {
    /// The limits, every value checked.
    pub fn plan(&self, _m: &Machine) -> Result<Lim> {
        let lim = self.lim()?;
        if self.max_prime < 3 {
            return Err(bad_flag(
                "--max-prime",
                format!(
                    "{} leaves no number to check; give 3 or more (sysbench's default is 10000)",
                    self.max_prime
                ),
            ));
        }
        Ok(lim)
    }

    /// What it was asked, for [`super::asked`].
    pub(super) fn asked(&self) -> Value {
        super::with_threads(&self.common, json!({ "max_prime": self.max_prime }))
    }
}

/// Searches primes until a limit or a signal; the run has `primes`, the primes
/// found per event.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let lim = p.plan(&Machine::this())?;
    let w = Cpu {
        max_prime: p.max_prime,
    };
    let mut m = super::measure(&w, lim, p.recorded(), Vec::new(), obs);
    if m.total.events() > 0 {
        let primes = m.total.tally.ops as f64 / m.total.events() as f64;
        m.run.metrics.insert("primes".into(), primes);
    }
    Ok(m.run)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{machine, refusal, round_trip};
    use super::*;
    use crate::step::Step as _;

    #[test]
    fn a_step_sets_the_prime_limit_and_time() {
        let p = Params {
            max_prime: 2000,
            common: Common {
                time: Some("2s".into()),
                ..Default::default()
            },
        };
        round_trip(&p);
        assert_eq!(p.planned_ns(), Some(2_000_000_000));
    }

    #[test]
    fn refusals_name_the_flag() {
        let p = Params {
            max_prime: 2,
            ..Default::default()
        };
        assert!(refusal(p.plan(&machine(0))).starts_with("--max-prime: 2 leaves no number"));
        assert!(Params::default().plan(&machine(0)).is_ok());
    }
}
