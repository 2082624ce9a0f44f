//! The load options a probe takes (`--load SPEC` repeatable, `--load-cpus`,
//! `--load-nice`, `--load-policy`), handed to [`crate::loads`].

use super::de;
use super::value::Cpus;
use crate::error::bad_flag;
use crate::loads::placement::{self, Placement};
use crate::loads::running::Running;
use crate::loads::spec::{self, LoadSpec};
use anyhow::Result;
use clap::Args;
use serde::{Deserialize, Serialize};

/// Where load workers run.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct PlacementArgs {
    /// CPUs the load workers may run on [default: every CPU rtlab may use].
    #[arg(long, value_name = "LIST")]
    pub load_cpus: Option<Cpus>,
    /// Nice value of the load workers (-20 to 19) [default: rtlab's own].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub load_nice: Option<i32>,
    /// Scheduling policy of the load workers: other, batch, idle, fifo:PRIO or rr:PRIO.
    #[arg(long, value_name = "POLICY", default_value = "other")]
    pub load_policy: String,
}

impl PlacementArgs {
    /// The validated placement.
    pub fn placement(&self) -> Result<Placement> {
        let cpus = match &self.load_cpus {
            Some(l) => {
                let list = l.list("--load-cpus")?;
                Some(placement::cpus(&list).map_err(|e| bad_flag("--load-cpus", e))?)
            }
            None => None,
        };
        if let Some(n) = self.load_nice {
            placement::check_nice(n).map_err(|e| bad_flag("--load-nice", e))?;
        }
        let (policy, priority) =
            placement::policy(&self.load_policy).map_err(|e| bad_flag("--load-policy", e))?;
        Ok(Placement {
            cpus,
            nice: self.load_nice,
            policy,
            priority,
        })
    }
}

impl Default for PlacementArgs {
    fn default() -> Self {
        super::defaults()
    }
}

/// Loads to run while a probe measures.
#[derive(Debug, Clone, PartialEq, Default, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadArgs {
    /// Run a load while measuring (repeatable): cpu:4, vm:2:256M, fswalk, dohell,
    /// "exec:make -j4", ... (the grammar: rtlab help loads) [default: no load].
    #[arg(long = "load", value_name = "SPEC")]
    #[serde(deserialize_with = "de::loads", serialize_with = "de::ser_loads")]
    pub load: Vec<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub place: PlacementArgs,
}

impl LoadArgs {
    /// The parsed specs (a mix gives one per part).
    pub fn parse(&self) -> Result<Vec<LoadSpec>> {
        let mut out = Vec::new();
        for s in &self.load {
            out.extend(spec::parse(s).map_err(|e| bad_flag("--load", e))?);
        }
        Ok(out)
    }

    /// Every check [`LoadArgs::start`] makes before it starts anything, and
    /// whether the machine can carry the loads.
    pub fn check(&self) -> Result<()> {
        let specs = self.parse()?;
        self.place.placement()?;
        crate::loads::guard::check(&specs).map_err(|e| bad_flag("--load", format!("{e:#}")))?;
        Ok(())
    }

    /// Validates the options and starts the loads (if any) beside probe threads
    /// placed on `probe_cpus` (`None`: unpinned).
    pub fn start(&self, probe_cpus: &[Option<usize>]) -> Result<Running> {
        let specs = self.parse()?;
        let placement = self.place.placement()?;
        Running::start(&specs, &placement, probe_cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

    fn place(cpus: Option<&str>, nice: Option<i32>, policy: &str) -> Result<Placement> {
        PlacementArgs {
            load_cpus: cpus.map(Cpus::new),
            load_nice: nice,
            load_policy: policy.into(),
        }
        .placement()
    }

    #[test]
    fn placement_defaults_to_sched_other() {
        assert_eq!(place(None, None, "other").unwrap(), Placement::default());
        let p = place(None, Some(5), "fifo:10").unwrap();
        assert_eq!((p.policy, p.priority, p.nice), (Policy::Fifo, 10, Some(5)));
        assert_eq!(place(None, None, "idle").unwrap().policy, Policy::Idle);
    }

    #[test]
    fn bad_placement_names_the_flag() {
        for (cpus, nice, pol, flag) in [
            (Some("x"), None, "other", "--load-cpus"),
            (Some("9999"), None, "other", "--load-cpus"),
            (None, Some(40), "other", "--load-nice"),
            (None, None, "fast", "--load-policy"),
            (None, None, "fifo", "--load-policy"),
            (None, None, "fifo:100", "--load-policy"),
            (None, None, "batch:3", "--load-policy"),
        ] {
            let e = place(cpus, nice, pol).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{e}");
        }
    }

    #[test]
    fn bad_specs_name_the_flag_and_the_part() {
        let a = LoadArgs {
            load: vec!["cpu:2".into(), "vm:1:12Q".into()],
            place: PlacementArgs {
                load_cpus: None,
                load_nice: None,
                load_policy: "other".into(),
            },
        };
        let e = a.parse().unwrap_err().to_string();
        assert!(e.starts_with("--load") && e.contains("12Q"), "{e}");
    }
}
