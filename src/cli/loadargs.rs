//! The load options every probe takes (`--load SPEC` repeatable, `--load-cpus`,
//! `--load-nice`, `--load-policy`), and the warnings when loads and probe threads
//! share CPUs or SMT siblings.

use crate::error::bad_flag;
use crate::loads::set::{LoadSet, Placement};
use crate::loads::spec::{self, LoadSpec};
use crate::record::{LoadRecord, Warning};
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy};

/// Where load workers run.
#[derive(Debug, Clone, Args)]
pub struct PlacementArgs {
    /// CPUs the load workers may run on (default: every CPU rtlab may use).
    #[arg(long, value_name = "LIST")]
    pub load_cpus: Option<String>,
    /// Nice value of the load workers (-20 to 19).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub load_nice: Option<i32>,
    /// Scheduling policy of the load workers: other, batch, idle, fifo:PRIO or rr:PRIO.
    #[arg(long, value_name = "POLICY", default_value = "other")]
    pub load_policy: String,
}

/// The CPUs this process may use.
fn allowed_cpus() -> Vec<usize> {
    sched::thread_affinity(0).unwrap_or_default()
}

impl PlacementArgs {
    /// The validated placement.
    pub fn placement(&self) -> Result<Placement> {
        let cpus = match &self.load_cpus {
            None => None,
            Some(list) => {
                let cpus = CpuList::parse(list).map_err(|e| bad_flag("--load-cpus", e))?;
                if cpus.is_empty() {
                    return Err(bad_flag("--load-cpus", "the list is empty"));
                }
                let allowed = allowed_cpus();
                if let Some(bad) = cpus.cpus().iter().find(|c| !allowed.contains(c)) {
                    return Err(bad_flag(
                        "--load-cpus",
                        format!(
                            "CPU {bad} is not online or not allowed for this process (usable: {})",
                            CpuList::from_cpus(allowed)
                        ),
                    ));
                }
                Some(cpus.cpus().to_vec())
            }
        };
        if let Some(n) = self.load_nice {
            if !(-20..=19).contains(&n) {
                return Err(bad_flag("--load-nice", format!("{n} is outside -20 to 19")));
            }
        }
        let text = self.load_policy.trim();
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
                return Err(bad_flag(
                    "--load-policy",
                    format!("'{name}' is not one of other, batch, idle, fifo:PRIO, rr:PRIO"),
                ))
            }
        };
        let priority = match (policy.is_realtime(), prio) {
            (true, Some(p)) => p
                .parse::<i32>()
                .ok()
                .filter(|p| (1..=99).contains(p))
                .ok_or_else(|| bad_flag("--load-policy", format!("priority '{p}' is not 1-99")))?,
            (true, None) => {
                return Err(bad_flag(
                    "--load-policy",
                    format!("{name} needs a priority, e.g. {name}:10 (keep it below the probe's)"),
                ))
            }
            (false, Some(_)) => {
                return Err(bad_flag(
                    "--load-policy",
                    format!("{name} takes no priority; use --load-nice"),
                ))
            }
            (false, None) => 0,
        };
        Ok(Placement {
            cpus,
            nice: self.load_nice,
            policy,
            priority,
        })
    }
}

/// Loads to run while a probe measures.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Run a load while measuring (repeatable): cpu:4, vm:2:256M, fswalk, dohell,
    /// "exec:make -j4", ... (the grammar and every kind: rtlab load --list).
    #[arg(long = "load", value_name = "SPEC")]
    pub specs: Vec<String>,
    #[command(flatten)]
    pub place: PlacementArgs,
}

/// Loads started for a measurement.
pub struct Running {
    set: Option<LoadSet>,
    /// Warnings known at start (shared CPUs, tmpfs io dir).
    pub warnings: Vec<Warning>,
}

impl Running {
    /// Stops the loads; their records and any new warnings.
    pub fn finish(self) -> (Vec<LoadRecord>, Vec<Warning>) {
        match self.set {
            Some(set) => {
                let done = set.stop();
                (done.records, done.warnings)
            }
            None => (Vec::new(), Vec::new()),
        }
    }
}

impl LoadArgs {
    /// The parsed specs (a mix gives one per part).
    pub fn parse(&self) -> Result<Vec<LoadSpec>> {
        let mut out = Vec::new();
        for s in &self.specs {
            out.extend(spec::parse(s).map_err(|e| bad_flag("--load", e))?);
        }
        Ok(out)
    }

    /// Validates the options, starts the loads (if any) and works out whether they
    /// share CPUs with probe threads placed on `probe_cpus` (`None`: unpinned).
    pub fn start(&self, probe_cpus: &[Option<usize>]) -> Result<Running> {
        let specs = self.parse()?;
        let placement = self.place.placement()?;
        if specs.is_empty() {
            return Ok(Running {
                set: None,
                warnings: Vec::new(),
            });
        }
        let allowed = allowed_cpus();
        let load_cpus = placement.cpus.clone().unwrap_or_else(|| allowed.clone());
        let probe: Vec<usize> = if probe_cpus.iter().any(Option::is_none) {
            allowed
        } else {
            probe_cpus.iter().flatten().copied().collect()
        };
        let set = LoadSet::start(&specs, &placement)?;
        let mut warnings = sharing_warnings(&load_cpus, &probe, smt_siblings);
        warnings.extend_from_slice(set.start_warnings());
        Ok(Running {
            set: Some(set),
            warnings,
        })
    }
}

/// The SMT siblings of `cpu` (itself included), from sysfs.
pub fn smt_siblings(cpu: usize) -> Option<CpuList> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| CpuList::parse(&s).ok())
}

/// Warnings when load CPUs are probe CPUs, or SMT siblings of them.
pub fn sharing_warnings(
    load: &[usize],
    probe: &[usize],
    siblings: impl Fn(usize) -> Option<CpuList>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let shared: Vec<usize> = probe.iter().copied().filter(|c| load.contains(c)).collect();
    if !shared.is_empty() {
        out.push(Warning::new(
            "load_cpu_shared",
            format!(
                "loads run on CPU {} where probe threads run too: the probe competes with them for those CPUs \
                 (use --load-cpus to keep them apart)",
                CpuList::from_cpus(shared)
            ),
        ));
    }
    let mut smt = Vec::new();
    for &p in probe {
        if let Some(sib) = siblings(p) {
            smt.extend(
                sib.cpus()
                    .iter()
                    .copied()
                    .filter(|&s| s != p && load.contains(&s) && !probe.contains(&s)),
            );
        }
    }
    if !smt.is_empty() {
        out.push(Warning::new(
            "load_smt_shared",
            format!(
                "loads run on CPU {}, SMT siblings of probe CPUs: they share a core's execution units and caches",
                CpuList::from_cpus(smt)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cpus: Option<&str>, nice: Option<i32>, policy: &str) -> Result<Placement> {
        PlacementArgs {
            load_cpus: cpus.map(str::to_string),
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
    fn sharing_is_reported() {
        let sib = |c: usize| Some(CpuList::from_cpus(vec![c & !1, c | 1]));
        let w = sharing_warnings(&[0, 1], &[0], sib);
        let codes: Vec<&str> = w.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["load_cpu_shared", "load_smt_shared"]);
        assert!(w[0].message.contains("CPU 0 "));
        assert!(w[1].message.contains("CPU 1,"));
        assert!(sharing_warnings(&[2, 3], &[0], sib).is_empty());
        let w = sharing_warnings(&[1], &[0], sib);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, "load_smt_shared");
    }

    #[test]
    fn bad_specs_name_the_flag_and_the_part() {
        let a = LoadArgs {
            specs: vec!["cpu:2".into(), "vm:1:12Q".into()],
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
