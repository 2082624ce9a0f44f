//! The human table of a latency run.

use super::run::own_warnings;
use super::series::{grid, Col};
use super::table::{printable, Table};
use super::verdict::signed;
use crate::analysis::{series, verdict};
use crate::record::Run;
use crate::step::latency;
use crate::units::{Human, TimeUnit};

/// Headline text of a run: what, where, how long, observed how much.
pub fn headline(run: &Run) -> String {
    let asked = latency::asked(&run.params);
    let total = run.total.as_ref().map(|t| t.counters.samples).unwrap_or(0);
    // A group of runs (`--by`) has its total only.
    let threads = match run.series.len() {
        0 => String::new(),
        n => format!("{n} thread(s), "),
    };
    format!(
        "rtlab latency  {}  [{}]\ninterval {}, {} {}, {threads}{} samples in {} observed\n",
        printable(&run.label),
        run.status.name(),
        Human(asked.interval_ns),
        asked.policy,
        asked.priority,
        total,
        Human(run.duration_ns),
    )
}

/// The per-thread table of a run with its `all` row.
pub fn series_table(run: &Run, unit: TimeUnit) -> String {
    format!(
        "{}(times in {})\n",
        series_grid(run, unit).render(),
        unit.symbol()
    )
}

/// The table of [`series_table`], unrendered.
pub fn series_grid(run: &Run, unit: TimeUnit) -> Table {
    let tail = [
        Col::P9999,
        Col::Max,
        Col::Stddev,
        Col::Overruns,
        Col::Misses,
        Col::Overflows,
    ];
    let cols = Col::latencies("samples", &tail);
    grid(
        series::all(run),
        "thread",
        &cols,
        unit,
        &series::missing(run),
    )
}

/// The whole text report of a latency run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let mut out = headline(run);
    out.push('\n');
    out.push_str(&series_table(run, unit));
    if let Some(f) = run.page_faults {
        out.push_str(&format!(
            "page faults while measuring: {} ({} major)\n",
            f.total(),
            f.major
        ));
    }
    if let Some(n) = run.metrics.get("dl_overruns") {
        out.push_str(&format!(
            "SCHED_DEADLINE runtime overruns signalled by the kernel: {n}\n"
        ));
    }
    if let Some(b) = &run.breaktrace {
        out.push_str(&format!(
            "\nbreaktrace: thread {} (tid {}) at cycle {}: {} ({})\n",
            b.thread,
            b.tid,
            b.cycle,
            Human(b.latency_ns),
            if b.trace_marker {
                "marker written to trace_marker, tracing stopped"
            } else {
                "no ftrace marker: tracefs not available"
            }
        ));
    }
    if let Some(t) = verdict::max_latency(run) {
        out.push_str(&format!(
            "\nmax-latency {}: {} (observed max {}, margin {})\n",
            Human(t.limit_ns),
            if t.passed { "PASS" } else { "FAIL" },
            Human(t.max_ns),
            signed(t.margin_ns)
        ));
    }
    out.push_str(&super::perf::of_run(run));
    out.push_str(&own_warnings(run));
    out
}
