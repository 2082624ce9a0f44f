//! The table of series every probe prints: one row per series, the columns each
//! probe chooses.

use super::table::Table;
use crate::format::UNKNOWN;
use crate::record::Series;
use crate::units::TimeUnit;

/// A column of a series table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// Values recorded, under the given header (`samples`, `events`).
    Count(&'static str),
    /// Minimum.
    Min,
    /// Mean.
    Mean,
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P999,
    /// 99.99th percentile.
    P9999,
    /// Maximum.
    Max,
    /// Standard deviation.
    Stddev,
    /// Periods lost while late.
    Overruns,
    /// Values over the deadline.
    Misses,
    /// Values over the 1-µs histogram's range.
    Overflows,
    /// Stability spread max − min.
    MaxMin,
    /// Stability spread p95 − mean.
    P95Mean,
    /// Coefficient of variation (stddev ÷ mean).
    Cv,
}

impl Col {
    /// The columns of a latency table: the `count` of values, the order
    /// statistics from the minimum to the 99.9th percentile, then `rest`.
    pub fn latencies(count: &'static str, rest: &[Col]) -> Vec<Col> {
        let head = [
            Col::Count(count),
            Col::Min,
            Col::Mean,
            Col::P50,
            Col::P90,
            Col::P99,
            Col::P999,
        ];
        head.iter().chain(rest).copied().collect()
    }

    fn header(self) -> &'static str {
        match self {
            Col::Count(h) => h,
            Col::Min => "min",
            Col::Mean => "mean",
            Col::P50 => "p50",
            Col::P90 => "p90",
            Col::P95 => "p95",
            Col::P99 => "p99",
            Col::P999 => "p99.9",
            Col::P9999 => "p99.99",
            Col::Max => "max",
            Col::Stddev => "stddev",
            Col::Overruns => "overruns",
            Col::Misses => "misses",
            Col::Overflows => "overflows",
            Col::MaxMin => "max-min",
            Col::P95Mean => "p95-mean",
            Col::Cv => "cv",
        }
    }

    /// The figures the column is made of, by the names a run lists as not
    /// reported (`params.unreported`).
    fn fields(self) -> &'static [&'static str] {
        match self {
            Col::Count(_) | Col::Overflows => &[],
            Col::Min => &["min_ns"],
            Col::Mean => &["mean_ns"],
            Col::P50 => &["p50_ns"],
            Col::P90 => &["p90_ns"],
            Col::P95 => &["p95_ns"],
            Col::P99 => &["p99_ns"],
            Col::P999 => &["p999_ns"],
            Col::P9999 => &["p9999_ns"],
            Col::Max => &["max_ns"],
            Col::Stddev => &["stddev_ns"],
            Col::Overruns => &["overruns"],
            Col::Misses => &["deadline_misses"],
            Col::MaxMin => &["min_ns", "max_ns"],
            Col::P95Mean => &["p95_ns", "mean_ns"],
            Col::Cv => &["stddev_ns", "mean_ns"],
        }
    }

    fn cell(self, s: &Series, unit: TimeUnit) -> String {
        let m = &s.summary;
        let t = |ns: f64| unit.cell(ns);
        match self {
            Col::Count(_) => s.counters.samples.to_string(),
            Col::Min => t(m.min_ns as f64),
            Col::Mean => t(m.mean_ns),
            Col::P50 => t(m.p50_ns as f64),
            Col::P90 => t(m.p90_ns as f64),
            Col::P95 => t(m.p95_ns as f64),
            Col::P99 => t(m.p99_ns as f64),
            Col::P999 => t(m.p999_ns as f64),
            Col::P9999 => t(m.p9999_ns as f64),
            Col::Max => t(m.max_ns as f64),
            Col::Stddev => t(m.stddev_ns),
            Col::Overruns => s.counters.overruns.to_string(),
            Col::Misses => s.counters.deadline_misses.to_string(),
            Col::Overflows => s.counters.overflows.to_string(),
            Col::MaxMin => t(m.spread_max_min() as f64),
            Col::P95Mean => t(m.spread_p95_mean()),
            Col::Cv if m.mean_ns > 0.0 => format!("{:.3}", m.stddev_ns / m.mean_ns),
            Col::Cv => UNKNOWN.into(),
        }
    }
}

/// One row per series (names in the first column, headed `first`), the given
/// columns, times in `unit`, as text.
pub fn table<'a>(
    series: impl IntoIterator<Item = &'a Series>,
    first: &str,
    cols: &[Col],
    unit: TimeUnit,
) -> String {
    grid(series, first, cols, unit, &[]).render()
}

/// The table of [`table`], unrendered, with [`UNKNOWN`] in the columns made of
/// a figure named in `unreported` (what a run does not have:
/// `analysis::series::missing`).
pub fn grid<'a>(
    series: impl IntoIterator<Item = &'a Series>,
    first: &str,
    cols: &[Col],
    unit: TimeUnit,
    unreported: &[&str],
) -> Table {
    let header: Vec<&str> = std::iter::once(first)
        .chain(cols.iter().map(|c| c.header()))
        .collect();
    let mut t = Table::new(&header);
    for s in series {
        let mut row = vec![s.name.clone()];
        row.extend(cols.iter().map(|c| {
            if c.fields().iter().any(|f| unreported.contains(f)) {
                UNKNOWN.into()
            } else {
                c.cell(s, unit)
            }
        }));
        t.row(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::series_from_samples;

    #[test]
    fn cells_come_from_the_summary_in_the_unit() {
        let s = series_from_samples("cpu0", &[1_000, 2_000, 6_000]);
        let text = table(
            [&s],
            "thread",
            &[
                Col::Count("events"),
                Col::Min,
                Col::Max,
                Col::MaxMin,
                Col::Cv,
            ],
            TimeUnit::Us,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["thread", "events", "min", "max", "max-min", "cv"]
        );
        let cv = s.summary.stddev_ns / s.summary.mean_ns;
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["cpu0", "3", "1.0", "6.0", "5.0", &format!("{cv:.3}")]
        );
    }
}
