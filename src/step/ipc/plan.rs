//! The checks of an ipc step: its flags turned into the engine's configuration.

use super::{MechanismArg, Params, PlacementArg};
use crate::error::bad_flag;
use crate::step::value::{opt_positive, Cpus};
use crate::step::Machine;
use anyhow::Result;
use rtlab_engine::probe::ipc::pi::PiConfig;
use rtlab_engine::probe::ipc::{IpcConfig, PairSpec};
use rtlab_engine::probe::net::client::ThreadSetup;
use rtlab_engine::rt::sched::Policy;

/// SCHED_FIFO priorities of the check's low, medium and high threads.
pub const PI_PRIORITIES: [i32; 3] = [10, 20, 30];
/// Length of one round of the check: the medium thread's bounded spin, the
/// low thread's hold and the pause after them.
const PI_SPIN_NS: u64 = 2_000_000;
const PI_HOLD_NS: u64 = 100_000;
const PI_GAP_NS: u64 = 20_000_000;
/// Most pairs a run takes.
const MAX_PAIRS: usize = 256;

/// What an ipc step runs.
#[derive(Debug, Clone)]
pub enum Work {
    /// Every mechanism asked, in turn, over the same pairs.
    Pairs(Vec<(String, IpcConfig)>),
    /// The priority-inversion check: without, then with inheritance.
    PiCheck([PiConfig; 2]),
}

/// The checked configuration of a step.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What runs.
    pub work: Work,
    /// The --max-latency gate (ns).
    pub max_latency_ns: Option<u64>,
}

fn cpu_list(flag: &str, list: &Option<Cpus>, m: &Machine) -> Result<Option<Vec<usize>>> {
    list.as_ref().map(|l| m.usable(flag, l)).transpose()
}

impl Params {
    /// The engine's configuration, every value checked on machine `m`; a
    /// [`BadValue`](crate::error::BadValue) names the flag of the first value
    /// that cannot be used.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let max_latency_ns = opt_positive("--max-latency", &self.max_latency)?;
        let duration_ns = opt_positive("--duration", &self.duration)?;
        let pool = cpu_list("--cpus", &self.cpus, m)?.unwrap_or_else(|| m.cpus.clone());
        if self.pi_check {
            self.only_check_flags()?;
            return Ok(Plan {
                work: Work::PiCheck(self.pi_check_plan(duration_ns, &pool)?),
                max_latency_ns,
            });
        }
        if self.loops == Some(0) {
            return Err(bad_flag(
                "--loops",
                "0 wake-ups measures nothing; give 1 or more",
            ));
        }
        if self.mechanism == MechanismArg::All && self.loops.is_none() && duration_ns.is_none() {
            return Err(bad_flag(
                "--mechanism",
                "all runs each mechanism in turn: give --loops or --duration (per mechanism)",
            ));
        }
        if self.pi && !self.mechanism.uses_mutex() {
            return Err(bad_flag(
                "--pi",
                format!(
                    "{} uses no mutex; priority inheritance applies to --mechanism mutex or condvar",
                    self.mechanism.name()
                ),
            ));
        }
        if self.pairs == 0 || self.pairs > MAX_PAIRS {
            return Err(bad_flag(
                "--pairs",
                format!("{} is outside 1-{MAX_PAIRS}", self.pairs),
            ));
        }
        let interval_ns = self.period.interval.positive("--interval")?;
        let distance_ns = self.distance.ns("--distance")?;
        let (policy, priority) = self.checked_sched()?;
        let senders = cpu_list("--sender-cpus", &self.sender_cpus, m)?;
        let receivers = cpu_list("--receiver-cpus", &self.receiver_cpus, m)?;
        if self.placement == PlacementArg::Split && pool.len() < 2 {
            return Err(bad_flag(
                "--placement",
                "split needs two CPUs or more in --cpus; use --placement same",
            ));
        }
        let pick = |list: &Option<Vec<usize>>, n: usize, split_at: usize| -> Vec<usize> {
            if let Some(l) = list {
                return vec![l[n % l.len()]];
            }
            match self.placement {
                PlacementArg::Free => Vec::new(),
                PlacementArg::Same => vec![pool[n % pool.len()]],
                PlacementArg::Split => vec![pool[(2 * n + split_at) % pool.len()]],
            }
        };
        let pairs: Vec<PairSpec> = (0..self.pairs)
            .map(|n| {
                let prio = if policy.is_realtime() {
                    priority - n as i32
                } else {
                    priority
                };
                let setup = |cpus| ThreadSetup {
                    cpus,
                    policy,
                    priority: prio,
                };
                PairSpec {
                    sender: setup(pick(&senders, n, 0)),
                    receiver: setup(pick(&receivers, n, 1)),
                    interval_ns: interval_ns.saturating_add(distance_ns.saturating_mul(n as u64)),
                }
            })
            .collect();
        let each: Vec<MechanismArg> = match self.mechanism {
            MechanismArg::All => MechanismArg::EACH.to_vec(),
            one => vec![one],
        };
        let runs = each
            .into_iter()
            .filter_map(|mech| {
                let pi = self.pi && mech.uses_mutex();
                let name = if pi {
                    format!("{}+pi", mech.name())
                } else {
                    mech.name().to_string()
                };
                Some((
                    name,
                    IpcConfig {
                        mechanism: mech.engine()?,
                        pi,
                        loops: self.loops.unwrap_or(0),
                        duration_ns: duration_ns.unwrap_or(0),
                        pairs: pairs.clone(),
                        perf: self.shared.perf.perf,
                    },
                ))
            })
            .collect();
        Ok(Plan {
            work: Work::Pairs(runs),
            max_latency_ns,
        })
    }

    /// The policy and pair 0's priority, refused outside the policy's range
    /// or when the last pair would fall below it.
    fn checked_sched(&self) -> Result<(Policy, i32)> {
        let (policy, priority) = self.sched();
        crate::step::rt::check_priority("--priority", policy, priority)?;
        let (lo, _) = policy.priority_range();
        let last = priority - (self.pairs as i32 - 1);
        if policy.is_realtime() && last < lo {
            return Err(bad_flag(
                "--pairs",
                format!(
                    "pair N runs at priority − N: {} pairs from priority {priority} leave the last at {last}; give --priority {} or more",
                    self.pairs,
                    self.pairs as i32 - 1 + lo
                ),
            ));
        }
        Ok((policy, priority))
    }

    /// Refuses the pairs' flags with --pi-check, which sets its own threads.
    fn only_check_flags(&self) -> Result<()> {
        let d = Params::default();
        let given = [
            ("--mechanism", self.mechanism != d.mechanism),
            ("--pi", self.pi),
            ("--pairs", self.pairs != d.pairs),
            ("--placement", self.placement != d.placement),
            ("--sender-cpus", self.sender_cpus.is_some()),
            ("--receiver-cpus", self.receiver_cpus.is_some()),
            ("--priority", self.priority.is_some()),
            ("--policy", self.policy.is_some()),
            ("--interval", self.period.interval != d.period.interval),
            ("--distance", self.distance != d.distance),
            ("--loops", self.loops.is_some()),
            ("--max-latency", self.max_latency.is_some()),
        ];
        match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(bad_flag(
                flag,
                "does not apply to --pi-check, which runs its own low, medium and high SCHED_FIFO threads (it takes --duration and --cpus)",
            )),
            None => Ok(()),
        }
    }

    /// The check's two configurations: rounds to fill half the duration each
    /// (default 2 s in all), on the last CPU of --cpus.
    fn pi_check_plan(&self, duration_ns: Option<u64>, pool: &[usize]) -> Result<[PiConfig; 2]> {
        let round_ns = PI_GAP_NS + PI_SPIN_NS + 3 * PI_HOLD_NS;
        let total = duration_ns.unwrap_or(2_000_000_000);
        let rounds = (total / 2 / round_ns).max(1);
        if rounds > 100_000 {
            return Err(bad_flag(
                "--duration",
                "the check needs no more than an hour; a few seconds show what it can",
            ));
        }
        let cpu = *pool
            .last()
            .ok_or_else(|| bad_flag("--cpus", "no CPU to run the check on"))?;
        let cfg = |pi| PiConfig {
            cpu,
            pi,
            rounds: rounds as u32,
            priorities: PI_PRIORITIES,
            hold_ns: PI_HOLD_NS,
            spin_ns: PI_SPIN_NS,
            gap_ns: PI_GAP_NS,
        };
        Ok([cfg(false), cfg(true)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BadValue;
    use crate::step::Step as _;
    use serde_json::{json, Value};

    fn machine() -> Machine {
        Machine {
            cpus: vec![0, 1],
            mem_available: 0,
        }
    }

    fn with(values: Value) -> Params {
        match super::super::KIND
            .probe
            .unwrap()
            .params(values.as_object().unwrap().clone())
            .unwrap()
        {
            crate::step::Params::Ipc(p) => p,
            other => panic!("{other:?}"),
        }
    }

    fn pairs_of(p: &Params) -> Vec<(String, IpcConfig)> {
        match p.plan(&machine()).unwrap().work {
            Work::Pairs(runs) => runs,
            Work::PiCheck(_) => panic!("not pairs"),
        }
    }

    #[test]
    fn refusals_name_the_flag() {
        assert!(with(json!({"loops": 10})).plan(&machine()).is_ok());
        for (v, flag) in [
            (json!({"pairs": 0}), "--pairs"),
            (json!({"pairs": 257}), "--pairs"),
            (json!({"interval": "0"}), "--interval"),
            (json!({"interval": "x"}), "--interval"),
            (json!({"distance": "-1"}), "--distance"),
            (json!({"loops": 0}), "--loops"),
            (json!({"duration": "0"}), "--duration"),
            (json!({"mechanism": "all"}), "--mechanism"),
            (json!({"mechanism": "pipe", "pi": true}), "--pi"),
            (json!({"priority": 100}), "--priority"),
            (json!({"policy": "other", "priority": 5}), "--priority"),
            (json!({"priority": 2, "pairs": 3}), "--pairs"),
            (json!({"cpus": "7"}), "--cpus"),
            (json!({"cpus": "0", "placement": "split"}), "--placement"),
            (json!({"sender_cpus": "x"}), "--sender-cpus"),
            (json!({"receiver_cpus": "5"}), "--receiver-cpus"),
            (json!({"max_latency": "abc"}), "--max-latency"),
        ] {
            let e = with(v.clone()).plan(&machine()).expect_err("refused");
            let b = e.downcast_ref::<BadValue>().expect("a BadValue");
            assert_eq!(b.flag, flag, "{v}: {e}");
        }
    }

    #[test]
    fn placement_pins_pairs_as_asked() {
        let cpus = |p: &Params| -> Vec<(Vec<usize>, Vec<usize>)> {
            pairs_of(p)[0]
                .1
                .pairs
                .iter()
                .map(|s| (s.sender.cpus.clone(), s.receiver.cpus.clone()))
                .collect()
        };
        let p = with(json!({"pairs": 2, "loops": 1}));
        assert_eq!(cpus(&p), vec![(vec![], vec![]); 2]);
        let p = with(json!({"pairs": 3, "loops": 1, "placement": "same"}));
        assert_eq!(
            cpus(&p),
            vec![(vec![0], vec![0]), (vec![1], vec![1]), (vec![0], vec![0])]
        );
        let p = with(json!({"pairs": 2, "loops": 1, "placement": "split"}));
        assert_eq!(cpus(&p), vec![(vec![0], vec![1]), (vec![0], vec![1])]);
        let p = with(json!({"loops": 1, "placement": "split", "receiver_cpus": "0"}));
        assert_eq!(cpus(&p), vec![(vec![0], vec![0])]);
    }

    #[test]
    fn priorities_intervals_and_mechanisms_reach_the_engine() {
        let p = with(
            json!({"pairs": 3, "priority": 80, "interval": "200us", "distance": "100us",
                            "mechanism": "all", "duration": "1s", "pi": true}),
        );
        let runs = pairs_of(&p);
        let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "mqueue",
                "mutex+pi",
                "condvar+pi",
                "signal",
                "sem",
                "pipe",
                "eventfd",
                "futex"
            ]
        );
        let c = &runs[0].1;
        let prio: Vec<i32> = c.pairs.iter().map(|s| s.receiver.priority).collect();
        let ival: Vec<u64> = c.pairs.iter().map(|s| s.interval_ns).collect();
        assert_eq!(prio, [80, 79, 78]);
        assert_eq!(ival, [200_000, 300_000, 400_000]);
        assert_eq!((c.loops, c.duration_ns), (0, 1_000_000_000));
        assert_eq!(c.pairs[0].sender.policy, Policy::Fifo);
        assert_eq!(p.planned_ns(), Some(8_000_000_000));
        assert_eq!(p.rt_need(), Some((Policy::Fifo, 80, "priority")));
        let p = with(json!({"loops": 5}));
        assert_eq!(pairs_of(&p)[0].1.pairs[0].sender.policy, Policy::Other);
        assert_eq!(p.rt_need(), None);
        let p = with(json!({"loops": 5, "policy": "rr"}));
        assert_eq!(pairs_of(&p)[0].1.pairs[0].sender.priority, 90);
    }

    #[test]
    fn the_pi_check_fills_its_duration_on_the_last_cpu() {
        for (key, value, flag) in [
            ("pairs", json!(2), "--pairs"),
            ("mechanism", json!("futex"), "--mechanism"),
            ("priority", json!(80), "--priority"),
            ("loops", json!(10), "--loops"),
        ] {
            let mut v = json!({"pi_check": true});
            v[key] = value;
            let e = with(v).plan(&machine()).expect_err("refused");
            assert_eq!(e.downcast_ref::<BadValue>().unwrap().flag, flag);
        }
        let p = with(json!({"pi_check": true, "duration": "1s"}));
        let Work::PiCheck([off, on]) = p.plan(&machine()).unwrap().work else {
            panic!("not the check")
        };
        assert_eq!((off.pi, on.pi, off.cpu), (false, true, 1));
        let round = PI_GAP_NS + PI_SPIN_NS + 3 * PI_HOLD_NS;
        assert_eq!(u64::from(off.rounds), 500_000_000 / round);
        assert!(
            off.spin_ns <= 5_000_000,
            "the medium thread spins a few ms at most"
        );
        assert_eq!(p.rt_need(), Some((Policy::Fifo, 30, "pi_check")));
    }

    #[test]
    fn params_survive_a_round_trip() {
        let p = with(json!({"mechanism": "sem", "pairs": 2, "cpus": [0, 1],
                            "placement": "split", "priority": 70, "loops": 10}));
        assert_eq!(p.cpus.as_ref().map(|v| v.text()), Some("0,1"));
        let tagged = crate::step::Params::Ipc(p);
        let text = serde_json::to_string(&tagged).unwrap();
        assert_eq!(
            serde_json::from_str::<crate::step::Params>(&text).unwrap(),
            tagged
        );
        let a = super::super::asked(&crate::record::RunParams::Step(Box::new(tagged))).unwrap();
        assert_eq!(
            (
                a.mechanism.as_str(),
                a.pairs,
                a.placement.as_str(),
                a.priority
            ),
            ("sem", 2, "split", 70)
        );
    }
}
