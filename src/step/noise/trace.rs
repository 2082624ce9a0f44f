//! `--trace`: the threshold of the gaps to explain.

use super::Params;
use crate::error::bad_flag;
use crate::units::Human;
use anyhow::Result;

/// The default threshold of the gaps explained, in multiples of --threshold.
const DEFAULT_FACTOR: u64 = 10;

impl Params {
    /// With --trace, the length of the gaps to explain: as given, or ten times
    /// `threshold_ns` (--threshold); never below it, since only recorded gaps
    /// are marked.
    pub(super) fn trace_threshold_ns(&self, threshold_ns: u64) -> Result<Option<u64>> {
        let default = || threshold_ns.saturating_mul(DEFAULT_FACTOR);
        let Some(t) = self.tracing.threshold(default)? else {
            return Ok(None);
        };
        if t <= threshold_ns {
            return Err(bad_flag(
                "--trace-threshold",
                format!(
                    "{} is not above --threshold ({}): only gaps above --threshold are seen",
                    Human(t),
                    Human(threshold_ns)
                ),
            ));
        }
        Ok(Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(toml: &str) -> Params {
        toml_edit::de::from_str(toml).unwrap()
    }

    #[test]
    fn the_threshold_is_as_given_or_ten_times_the_gap_threshold() {
        let t = |toml: &str| params(toml).trace_threshold_ns(2_000);
        assert_eq!(t("trace = true").unwrap(), Some(20_000));
        let given = "trace = true\ntrace_threshold = \"500us\"";
        assert_eq!(t(given).unwrap(), Some(500_000));
        assert_eq!(
            t("trace_threshold = \"7\"\ntrace = true").unwrap(),
            Some(7_000)
        );
        assert_eq!(t("").unwrap(), None);
        for (toml, why) in [
            ("trace_threshold = \"50us\"", "needs --trace"),
            (
                "trace = true\ntrace_threshold = \"2us\"",
                "2us is not above",
            ),
            ("trace = true\ntrace_threshold = \"-1\"", ""),
        ] {
            let e = t(toml).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--trace-threshold: {why}")),
                "{toml}: {e}"
            );
        }
    }
}
