//! `--trace`: the threshold of the spikes to explain, and the kernel trace
//! started for them (or the warning that says why it cannot be).

use super::{ClockArg, Params};
use crate::error::bad_flag;
use crate::record::Warning;
use crate::trace;
use anyhow::Result;
use rtlab_engine::probe::latency::{LatencyConfig, SpikeMarks};

impl Params {
    /// With --trace, the threshold of the spikes to explain: as given, or the
    /// deadline, or the interval.
    pub(super) fn trace_threshold_ns(
        &self,
        interval_ns: u64,
        deadline_ns: Option<u64>,
    ) -> Result<Option<u64>> {
        let threshold = self
            .tracing
            .threshold(|| deadline_ns.unwrap_or(interval_ns))?;
        if threshold.is_none() && self.timerlat {
            return Err(bad_flag("--timerlat", "needs --trace"));
        }
        if threshold.is_some() && self.clock == ClockArg::Realtime {
            return Err(bad_flag(
                "--trace",
                "the trace's timestamps are CLOCK_MONOTONIC: measure with --clock monotonic",
            ));
        }
        Ok(threshold)
    }
}

/// Starts tracing the kernel for spikes of `threshold_ns` and more, and has
/// the probe mark them; with `timerlat`, the timerlat tracer at the probe's
/// interval on the measured CPUs (every online CPU when no thread is
/// pinned). When the system cannot, a warning says why and the run goes on
/// without.
pub(super) fn start(
    threshold_ns: u64,
    timerlat: bool,
    cfg: &mut LatencyConfig,
    warnings: &mut Vec<Warning>,
) -> Option<trace::Session> {
    let mut measured: Vec<usize> = cfg.threads.iter().flatten().copied().collect();
    measured.sort_unstable();
    measured.dedup();
    let period_us = timerlat.then_some(cfg.interval_ns / 1_000);
    let s = trace::Session::start_or_warn(threshold_ns, &measured, period_us, warnings)?;
    if let Some(why) = s.timerlat_missing().filter(|_| timerlat) {
        let why = why.trim_start_matches("timerlat: ");
        let msg = format!("--timerlat: {why}; traced without it");
        warnings.push(Warning::new("timerlat", msg));
    }
    cfg.spike_marks = Some(SpikeMarks {
        path: s.marker_path(),
        threshold_ns,
    });
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(toml: &str) -> Params {
        toml_edit::de::from_str(toml).unwrap()
    }

    #[test]
    fn the_threshold_is_as_given_or_the_deadline_or_the_interval() {
        let t = |toml: &str, deadline| params(toml).trace_threshold_ns(200_000, deadline);
        assert_eq!(t("trace = true", None).unwrap(), Some(200_000));
        assert_eq!(t("trace = true", Some(150_000)).unwrap(), Some(150_000));
        let given = "trace = true\ntrace_threshold = \"50us\"";
        assert_eq!(t(given, Some(150_000)).unwrap(), Some(50_000));
        assert_eq!(t("", None).unwrap(), None);
        let e = t("trace_threshold = \"50us\"", None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--trace-threshold: needs --trace"),
            "{e}"
        );
        let e = t("timerlat = true", None).unwrap_err();
        assert!(
            e.to_string().starts_with("--timerlat: needs --trace"),
            "{e}"
        );
        assert_eq!(
            t("trace = true\ntimerlat = true", None).unwrap(),
            Some(200_000)
        );
        let e = t("trace = true\nclock = \"realtime\"", None).unwrap_err();
        assert!(e.to_string().starts_with("--trace: "), "{e}");
    }
}
