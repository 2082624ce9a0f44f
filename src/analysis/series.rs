//! The series of a run: all of them in table order, and the one whose figures
//! stand for the whole run (its total, else its only series, else all of them
//! merged).

use crate::record::{Counters, Run, Series};
use rtlab_engine::stats::hist::LatencyHistogram;
use rtlab_engine::stats::windows::WindowsData;
use rtlab_engine::stats::{Moments, Summary};
use std::borrow::Cow;

/// Every series of a run in table order: the threads (or legs), then the total.
pub fn all(run: &Run) -> impl Iterator<Item = &Series> {
    run.series.iter().chain(&run.total)
}

/// Whether the run has this figure (a summary field such as `p99_ns`, or the
/// counter `overruns` or `deadline_misses`): its kind measures it (a benchmark
/// or a load has no period to overrun and no deadline to miss) and its source
/// reported it (importers list in `params.unreported` what they could not
/// fill). A figure a run does not have holds 0 and is shown as unknown, never
/// as a value.
pub fn reported(run: &Run, field: &str) -> bool {
    crate::step::reports(run, field)
}

/// The figures a run does not have (see [`reported`]): of the order
/// statistics, the mean, the stddev and the counters.
pub fn missing(run: &Run) -> Vec<&'static str> {
    let order = Summary::default().ordered().map(|(name, _)| name);
    order
        .into_iter()
        .chain(["mean_ns", "stddev_ns", "overruns", "deadline_misses"])
        .filter(|f| !reported(run, f))
        .collect()
}

/// The series whose figures stand for a run: its total, else its only series,
/// else its series merged (runs imported without a total).
pub fn primary(run: &Run) -> Option<Cow<'_, Series>> {
    if let Some(t) = &run.total {
        return Some(Cow::Borrowed(t));
    }
    match run.series.as_slice() {
        [] => None,
        [only] => Some(Cow::Borrowed(only)),
        many => Some(Cow::Owned(merge(many))),
    }
}

/// All series as one: histograms, counters and time windows added (window by
/// window); the exact mean and standard deviation recombined from each series'
/// own (to within a nanosecond).
pub fn merge(many: &[Series]) -> Series {
    let mut h = LatencyHistogram::new();
    let mut counters = Counters::default();
    let mut m = Moments::default();
    let mut windows = WindowsData::default();
    for s in many {
        windows.merge(&s.windows);
        // Straight into `h`: a histogram of its own per series would be
        // allocated and zeroed whole (the range is 1 ns to 100 s) to be added.
        for &(v, n) in &s.histogram.buckets {
            h.record_n(v, n);
        }
        counters.samples += s.counters.samples;
        counters.overruns += s.counters.overruns;
        counters.deadline_misses += s.counters.deadline_misses;
        counters.overflows += s.counters.overflows;
        let sm = &s.summary;
        if sm.samples == 0 {
            continue;
        }
        let n = sm.samples as f64;
        m.count += sm.samples;
        m.min = m.min.min(sm.min_ns);
        m.max = m.max.max(sm.max_ns);
        m.sum += (n * sm.mean_ns).round() as u128;
        m.sum_sq += (n * (sm.stddev_ns * sm.stddev_ns + sm.mean_ns * sm.mean_ns)).round() as u128;
    }
    Series {
        windows,
        ..Series::new("all".into(), counters, Summary::new(&m, &h), h.to_data())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{run_from_samples, series_from_samples};

    #[test]
    fn runs_without_a_total_are_merged() {
        let mut run = run_from_samples("x", &[]);
        run.total = None;
        run.series = vec![
            series_from_samples("cpu0", &[10_000, 20_000]),
            series_from_samples("cpu1", &[30_000, 40_000]),
        ];
        run.series[1].counters.overruns = 3;
        let all = primary(&run).unwrap().into_owned();
        let s = &all.summary;
        assert_eq!((s.samples, s.min_ns, s.max_ns), (4, 10_000, 40_000));
        assert_eq!(s.mean_ns, 25_000.0);
        // Population stddev of 10, 20, 30, 40 µs: sqrt(125) µs.
        assert!(
            (s.stddev_ns - 125f64.sqrt() * 1000.0).abs() < 1.0,
            "{}",
            s.stddev_ns
        );
        assert_eq!(all.counters.overruns, 3);
        assert_eq!(all.histogram.buckets.iter().map(|b| b.1).sum::<u64>(), 4);
    }

    #[test]
    fn fields_listed_as_unreported_are_unknown() {
        let mut run = run_from_samples("x", &[1_000]);
        assert!(reported(&run, "p99_ns"));
        run.params =
            crate::record::RunParams::Recorded(serde_json::json!({"unreported": ["p99_ns"]}));
        assert!(!reported(&run, "p99_ns") && reported(&run, "max_ns"));
        assert!(reported(&run, "overruns"));
        run.kind = "bench.cpu".into();
        assert!(!reported(&run, "overruns") && !reported(&run, "deadline_misses"));
        assert_eq!(missing(&run), ["p99_ns", "overruns", "deadline_misses"]);
    }

    #[test]
    fn all_is_the_threads_then_the_total() {
        let run = run_from_samples("x", &[1_000]);
        let names: Vec<&str> = all(&run).map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["cpu0", "all"]);
    }
}
