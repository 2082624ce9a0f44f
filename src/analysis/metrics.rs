//! Scalar metrics: which of a benchmark's is its headline rate, and which way
//! each improves.

use crate::record::Better;
use std::collections::BTreeMap;

/// The rates that head a benchmark's results, the first one a run has winning:
/// sysbench's events, a lock or load benchmark's operations, net's messages.
const HEADLINE_RATES: [&str; 3] = ["events_per_s", "ops_per_s", "messages_per_s"];

/// The headline rate among a run's metrics, if it has one.
pub fn headline_rate(metrics: &BTreeMap<String, f64>) -> Option<f64> {
    headline_metric(metrics).and_then(|k| metrics.get(k).copied())
}

/// The name of the headline rate among a run's metrics, if it has one.
pub fn headline_metric(metrics: &BTreeMap<String, f64>) -> Option<&'static str> {
    HEADLINE_RATES
        .iter()
        .copied()
        .find(|k| metrics.contains_key(*k))
}

/// Words of metric names (between `_` and `.`, also with `s`, `es` or `ed`)
/// that are better lower: losses and errors, lateness, overheads, spreads and
/// unfairness (a `_stddev` of events or time per thread).
const LOWER_WORDS: [&str; 16] = [
    "lost",
    "loss",
    "error",
    "miss",
    "fail",
    "failure",
    "overrun",
    "late",
    "lag",
    "overhead",
    "spread",
    "stddev",
    "duplicate",
    "reorder",
    "unreachable",
    "cv",
];

/// Which way a metric improves: as the kind of run that records it says
/// (the step registry), else from its name (an import's metric no kind
/// lists): rates (`per_s`) are better higher; latency percentiles
/// (`latency_p95_s`) and the names made of [`LOWER_WORDS`] lower; totals,
/// averages and times that a run was asked for (`total_time_s`,
/// `latency_sum_s`, `total_events`) have no direction.
pub fn metric_direction(name: &str) -> Better {
    crate::step::metric_direction(name).unwrap_or_else(|| by_words(name))
}

/// Which way a metric improves, from the words of its name.
fn by_words(name: &str) -> Better {
    let n = name.to_ascii_lowercase();
    let lower_word = |t: &str| {
        LOWER_WORDS.iter().any(|w| {
            t.strip_prefix(w)
                .is_some_and(|rest| ["", "s", "es", "ed"].contains(&rest))
        })
    };
    let own = n.rsplit('.').next().unwrap_or(&n);
    if n.contains("per_s") || n.ends_with("_per_sec") {
        Better::Higher
    } else if own.starts_with("latency_p") && own[9..].starts_with(|c: char| c.is_ascii_digit())
        || n.split(['_', '.']).any(lower_word)
    {
        Better::Lower
    } else {
        Better::Neither
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_directions() {
        assert_eq!(metric_direction("read_mib_per_s"), Better::Higher);
        assert_eq!(metric_direction("best_hz.busy.idle"), Better::Higher);
        assert_eq!(metric_direction("pipe/0.latency_p99_ns"), Better::Lower);
        assert_eq!(
            metric_direction("pipe/0.round_trip_mean_ns"),
            Better::Neither
        );
        assert_eq!(metric_direction("cpu.bogo_ops_per_s"), Better::Higher);
        assert_eq!(metric_direction("messages_lost"), Better::Lower);
        assert_eq!(metric_direction("latency_p95_s"), Better::Lower);
        assert_eq!(metric_direction("spread_p95_mean_ns"), Better::Lower);
        assert_eq!(metric_direction("fairness_events_stddev"), Better::Lower);
        assert_eq!(metric_direction("cv"), Better::Lower);
        assert_eq!(metric_direction("noise_gaps_per_s"), Better::Lower);
        assert_eq!(metric_direction("cpu1.noise_ppm"), Better::Lower);
        assert_eq!(metric_direction("loop_ns"), Better::Lower);
        assert_eq!(metric_direction("max_gap_at_ns"), Better::Neither);
        for none in [
            "total_time_s",
            "latency_sum_s",
            "total_events",
            "threads",
            "thread_time_s_avg",
            "primes",
        ] {
            assert_eq!(metric_direction(none), Better::Neither, "{none}");
        }
    }

    #[test]
    fn events_come_before_operations_and_messages() {
        let mut m = BTreeMap::from([("ops_per_s".to_string(), 5.0)]);
        assert_eq!(headline_rate(&m), Some(5.0));
        m.insert("events_per_s".into(), 7.0);
        assert_eq!(headline_rate(&m), Some(7.0));
        assert_eq!(headline_rate(&BTreeMap::new()), None);
    }
}
