//! The text view of a bench run: what it was asked, its metrics, per-event
//! time per thread, its warnings.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::Run;
use crate::units::{Human, TimeUnit};

fn metric_cell(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// The table view of a bench run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let kind = crate::step::kind(&run.kind);
    // An import has no timing overhead of rtlab's to say.
    let overhead = run
        .metrics
        .get("timing_overhead_ns")
        .map(|ns| format!("; timing overhead {ns:.0}ns per event"))
        .unwrap_or_default();
    let mut out = format!(
        "rtlab {}  {}  [{}]\n{}\n{} events in {}{overhead}\n\n",
        kind.command,
        printable(&run.label),
        run.status.name(),
        (kind.asked)(&run.params),
        run.metrics.get("total_events").copied().unwrap_or(0.0),
        Human(run.duration_ns),
    );
    let mut t = Table::new(&["metric", "value"]);
    for (k, v) in &run.metrics {
        t.row(vec![k.clone(), metric_cell(*v)]);
    }
    out.push_str(&t.render());
    out.push_str(&format!("\nper-event time ({})\n", unit.symbol()));
    let cols = [
        Col::Count("events"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::P95,
        Col::P99,
        Col::Max,
        Col::Stddev,
        Col::MaxMin,
        Col::P95Mean,
        Col::Cv,
    ];
    let all = crate::analysis::series::all(run);
    let missing = crate::analysis::series::missing(run);
    out.push_str(&series::grid(all, "thread", &cols, unit, &missing).render());
    out.push_str(&super::perf::of_run(run));
    out.push_str(&super::run::own_warnings(run));
    out
}
