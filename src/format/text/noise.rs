//! The text of a noise run: per-CPU noise, the gap table and histogram, its
//! gates, counters and warnings.

use super::run::own_warnings;
use super::series::{table, Col};
use super::table::{printable, Table};
use crate::analysis::series;
use crate::record::Run;
use crate::step::noise::{self, gates};
use crate::units::{Human, TimeUnit};

/// Gap buckets in powers of two from the threshold's µs, each `(low_ns,
/// high_ns, gaps)`, from a histogram's `(value_ns, count)` pairs.
pub fn log2_buckets(buckets: &[(u64, u64)]) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for &(v, n) in buckets {
        let us = (v / 1_000).max(1);
        let low = 1u64 << (63 - us.leading_zeros());
        let (lo, hi) = (low * 1_000, low * 2_000);
        match out.last_mut() {
            Some(last) if last.0 == lo => last.2 += n,
            _ => out.push((lo, hi, n)),
        }
    }
    out
}

/// The whole text report of a noise run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let (threshold, sched, clock) = noise::asked(&run.params).unwrap_or_default();
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0);
    let mut out = format!(
        "rtlab noise  {}  [{}]\n{sched}, clock {clock} ({:.1} ticks/us), gaps above {}, {} CPU(s), {} observed\n\n",
        printable(&run.label),
        run.status.name(),
        m("clock_ticks_per_us"),
        Human(threshold),
        run.series.len(),
        Human(run.duration_ns),
    );
    let mut t = Table::new(&[
        "cpu",
        "noise ppm",
        "noise/s",
        "gaps/s",
        "max gap",
        "max at",
        "loop",
        "loop min",
    ]);
    for s in series::all(run) {
        let g = |k: &str| noise::metric(run, &s.name, k).unwrap_or(0.0);
        t.row(vec![
            s.name.clone(),
            format!("{:.1}", g("noise_ppm")),
            Human(g("noise_ns_per_s") as u64).to_string(),
            format!("{:.1}", g("noise_gaps_per_s")),
            Human(s.summary.max_ns).to_string(),
            Human(g("max_gap_at_ns") as u64).to_string(),
            format!("{:.1}ns", g("loop_ns")),
            match g("loop_min_ns") as u64 {
                // Out-of-order reads of the TSC can be a tick apart.
                0 => "<1ns".to_string(),
                ns => Human(ns).to_string(),
            },
        ]);
    }
    out.push_str(&t.render());
    out.push_str("(noise: time in gaps per time observed; max at: into the run; loop: cost of a quiet iteration)\n\ngaps:\n");
    let cols = Col::latencies("gaps", &[Col::Max]);
    out.push_str(&table(series::all(run), "cpu", &cols, unit));
    out.push_str(&format!("(times in {})\n", unit.symbol()));
    if let Some(total) = &run.total {
        let b = log2_buckets(&total.histogram.buckets);
        if !b.is_empty() {
            let mut h = Table::new(&["gap", "count"]);
            h.align_left(0);
            for (lo, hi, n) in b {
                h.row(vec![format!("{}-{}", Human(lo), Human(hi)), n.to_string()]);
            }
            out.push_str("\ngap histogram (all CPUs):\n");
            out.push_str(&h.render());
        }
    }
    for g in gates(run) {
        out.push_str(&format!(
            "\n{} {}: {} (worst {} on {})",
            g.name,
            g.limit,
            if g.passed { "PASS" } else { "FAIL" },
            g.worst,
            g.cpu
        ));
    }
    if !gates(run).is_empty() {
        out.push('\n');
    }
    out.push_str(&super::perf::of_run(run));
    out.push_str(&own_warnings(run));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fall_in_power_of_two_microsecond_buckets() {
        let b = log2_buckets(&[(1_500, 3), (1_999, 1), (2_000, 2), (5_000, 1), (70_000, 4)]);
        assert_eq!(
            b,
            [
                (1_000, 2_000, 4),
                (2_000, 4_000, 2),
                (4_000, 8_000, 1),
                (64_000, 128_000, 4)
            ]
        );
        let total: u64 = b.iter().map(|x| x.2).sum();
        assert_eq!(total, 11);
    }
}
