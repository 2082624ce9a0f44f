//! Benchmark metrics: which of a run's scalar results is its headline rate.

use std::collections::BTreeMap;

/// The rates that head a benchmark's results, the first one a run has winning:
/// sysbench's events, a lock or load benchmark's operations, net's messages.
const HEADLINE_RATES: [&str; 3] = ["events_per_s", "ops_per_s", "messages_per_s"];

/// The headline rate among a run's metrics, if it has one.
pub fn headline_rate(metrics: &BTreeMap<String, f64>) -> Option<f64> {
    HEADLINE_RATES.iter().find_map(|k| metrics.get(*k).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_before_operations_and_messages() {
        let mut m = BTreeMap::from([("ops_per_s".to_string(), 5.0)]);
        assert_eq!(headline_rate(&m), Some(5.0));
        m.insert("events_per_s".into(), 7.0);
        assert_eq!(headline_rate(&m), Some(7.0));
        assert_eq!(headline_rate(&BTreeMap::new()), None);
    }
}
