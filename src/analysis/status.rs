//! How much a run's figures cover: a run that did not complete (interrupted or
//! failed) holds only what was observed before it stopped, which its verdicts
//! and warnings say.

use crate::record::{Run, Status};

/// The status of a run that did not complete, `None` for a complete one.
pub fn unfinished(run: &Run) -> Option<Status> {
    (run.status != Status::Complete).then_some(run.status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;

    #[test]
    fn only_complete_runs_are_finished() {
        let mut run = run_from_samples("a", &[1]);
        assert_eq!(unfinished(&run), None);
        run.status = Status::Interrupted;
        assert_eq!(unfinished(&run), Some(Status::Interrupted));
    }
}
