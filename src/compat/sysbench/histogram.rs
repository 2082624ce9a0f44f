//! sysbench's latency histogram: 1024 buckets on a logarithmic scale from
//! 0.001 ms to 100 000 ms (each about 1.8% above the one before), printed as
//! `value |****    count` and read for its percentiles. rtlab's own histogram
//! (0.1% steps) is folded into these buckets, so that the histogram, the
//! percentile and the interval lines have sysbench's resolution and agree with
//! each other as sysbench's do.

use rtlab_engine::bench::account::{log_bucket, log_per_ln, log_value};
use rtlab_engine::stats::hist::HistogramData;
use std::collections::BTreeMap;

/// The non-empty buckets of a run's event times: `(value ms, count)`,
/// ascending.
pub fn buckets(h: &HistogramData) -> Vec<(f64, u64)> {
    let per_ln = log_per_ln();
    let mut m: BTreeMap<usize, u64> = BTreeMap::new();
    for &(ns, count) in &h.buckets {
        *m.entry(log_bucket(ns as f64 / 1e6, per_ln)).or_default() += count;
    }
    m.into_iter().map(|(i, c)| (log_value(i), c)).collect()
}

/// sysbench's percentile `p` of `buckets` (ms): the value of the bucket where
/// the running count reaches `floor(total × p / 100 + 0.5)` (at least 1); 0
/// without events.
pub fn percentile(buckets: &[(f64, u64)], p: u32) -> f64 {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return 0.0;
    }
    let rank = ((total as f64 * f64::from(p) / 100.0 + 0.5).floor() as u64).max(1);
    let mut seen = 0;
    for &(v, c) in buckets {
        seen += c;
        if seen >= rank {
            return v;
        }
    }
    buckets.last().map_or(0.0, |b| b.0)
}

/// The histogram as sysbench prints it with `--histogram`: a title, a header,
/// one line per bucket with a bar of up to 40 stars, and a line holding one
/// space.
pub fn render(buckets: &[(f64, u64)]) -> String {
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    s.push_str("       value  ------------- distribution ------------- count\n");
    let most = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    for &(v, c) in buckets {
        let stars = (c as f64 * 40.0 / most as f64).round() as usize;
        s.push_str(&format!("{v:12.3} |{:<40} {c}\n", "*".repeat(stars)));
    }
    s.push_str(" \n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_fold_and_percentiles_follow_the_rank_rule() {
        let h = HistogramData {
            buckets: vec![
                (185_000, 150),
                (185_100, 1),
                (189_000, 1274),
                (44_173_000, 2),
            ],
            ..HistogramData::default()
        };
        let b = buckets(&h);
        assert_eq!(b.len(), 3, "{b:?}");
        assert_eq!(b[0].1, 151);
        assert_eq!(percentile(&b, 50), b[1].0);
        assert_eq!(percentile(&b, 100), b[2].0);
        assert_eq!(percentile(&b, 1), b[0].0);
        assert_eq!(percentile(&[], 95), 0.0);
    }

    #[test]
    fn rendered_as_sysbench_prints_it() {
        let text = render(&[(0.185, 150), (0.189, 1274), (0.192, 1501), (44.173, 2)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Latency histogram (values are in milliseconds)");
        assert_eq!(
            lines[1],
            "       value  ------------- distribution ------------- count"
        );
        assert_eq!(
            lines[2],
            "       0.185 |****                                     150"
        );
        assert_eq!(
            lines[4],
            "       0.192 |**************************************** 1501"
        );
        assert_eq!(
            lines[5],
            "      44.173 |                                         2"
        );
        assert_eq!(lines[6], " ");
    }
}
