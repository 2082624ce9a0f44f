//! Arms: the columns of a comparison, each one or more runs of one kind that
//! stand together: one run, the repeats of a campaign step, or a `--by`
//! group. Verdicts, intervals and the decision read arms; which runs form an
//! arm is chosen where runs are selected (`cli`).

use super::group::Group;
use super::interval::{self, Estimate};
use crate::record::Run;

/// One column of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// What the column is called (a label, a step's name, a host).
    pub name: String,
    /// The kind of its runs (`latency`, `bench.cpu`): arms of different kinds
    /// are never ranked or ratioed together.
    pub kind: String,
    /// Its runs, at least one, all of `kind`.
    pub runs: Vec<Run>,
}

impl Arm {
    /// An arm of `runs` (at least one) named `name`, of the first run's kind.
    pub fn new(name: impl Into<String>, runs: Vec<Run>) -> Arm {
        Arm {
            name: name.into(),
            kind: runs.first().map(|r| r.kind.clone()).unwrap_or_default(),
            runs,
        }
    }

    /// One run as an arm, named by its label.
    pub fn of_run(run: Run) -> Arm {
        Arm::new(run.label.clone(), vec![run])
    }

    /// A `--by` group as an arm, named by the group.
    pub fn of_group(group: Group) -> Arm {
        Arm::new(group.name, group.runs)
    }

    /// The runs, by reference.
    pub fn refs(&self) -> Vec<&Run> {
        self.runs.iter().collect()
    }

    /// The estimate of `metric` (a comparison row's name) for this arm: one
    /// run's, or across its runs ([`interval::of_runs`]).
    pub fn estimate(&self, metric: &str) -> Option<Estimate> {
        interval::of_runs(&self.refs(), metric)
    }

    /// Whether the arm's runs are repeats of one thing (more than one run).
    pub fn repeated(&self) -> bool {
        self.runs.len() > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    #[test]
    fn an_arm_takes_its_kind_from_its_runs() {
        let mut bench = run_from_samples("img1", &[1_000, 2_000]);
        bench.kind = "bench.cpu".into();
        let arm = Arm::of_run(bench.clone());
        assert_eq!(
            (arm.name.as_str(), arm.kind.as_str()),
            ("img1", "bench.cpu")
        );
        assert!(!arm.repeated());
        let two = Arm::new("image 1", vec![bench.clone(), bench]);
        assert!(two.repeated());
        assert_eq!(two.estimate("max").unwrap().value, 2_000.0);
        let groups =
            crate::analysis::group::group(&two.runs, crate::analysis::group::By::Host, &[]);
        let arm = Arm::of_group(groups.unwrap().remove(0));
        assert_eq!((arm.runs.len(), arm.kind.as_str()), (2, "bench.cpu"));
    }
}
