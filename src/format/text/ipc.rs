//! The text of an ipc run: the wake-up table and the round trips, or the
//! priority-inversion check's verdict.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::Run;
use crate::step::ipc;
use crate::units::{Human, TimeUnit};

/// The text report of an ipc run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let Some(a) = ipc::asked(&run.params) else {
        return super::run::plain(run, unit);
    };
    let mut out = format!(
        "rtlab ipc {}  {}  [{}]\n",
        printable(&a.mechanism),
        printable(&run.label),
        run.status.name()
    );
    if a.mechanism == "pi-check" {
        out.push_str(&pi_check(run, unit));
    } else {
        out.push_str(&pairs(run, &a, unit));
    }
    out.push_str(&super::perf::of_run(run));
    out.push_str(&super::run::warnings_after(run));
    out
}

fn pairs(run: &Run, a: &ipc::Asked, unit: TimeUnit) -> String {
    let spread = if a.pairs > 1 && a.policy != "other" && a.priority > 0 {
        " (pair N at priority − N)"
    } else {
        ""
    };
    let mut out = format!(
        "{} pair(s), placement {}, {} {}{spread}, interval {}{}, {} observed\n\n",
        a.pairs,
        a.placement,
        a.policy,
        a.priority,
        Human(a.interval_ns),
        if a.pi { ", priority inheritance" } else { "" },
        Human(run.duration_ns)
    );
    let cols = [
        Col::Count("samples"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::P99,
        Col::Max,
        Col::Stddev,
        Col::Overruns,
    ];
    let total = run.total.iter().filter(|_| run.series.len() > 1);
    out.push_str(&series::table(
        run.series.iter().chain(total),
        "mechanism/pair",
        &cols,
        unit,
    ));
    out.push_str(&format!(
        "(wake-up latency in {}: the sender's clock read before it wakes the receiver, to the receiver's after its wait)\n\n",
        unit.symbol()
    ));
    let mut t = Table::new(&["round trip", "min", "mean", "max"]);
    t.align_left(0);
    for s in &run.series {
        let m = |k: &str| {
            run.metrics
                .get(&format!("{}.round_trip_{k}_ns", s.name))
                .map_or_else(|| crate::format::UNKNOWN.to_string(), |v| unit.cell(*v))
        };
        t.row(vec![s.name.clone(), m("min"), m("mean"), m("max")]);
    }
    out.push_str(&t.render());
    out.push_str(&format!(
        "(round trip in {}: the receiver's ready to the sender, to its wake-up: both hand-overs)\n",
        unit.symbol()
    ));
    if let Some(limit) = a.max_latency_ns {
        let max = run
            .series
            .iter()
            .map(|s| s.summary.max_ns)
            .max()
            .unwrap_or(0);
        let verdict = if max > limit { "FAIL" } else { "PASS" };
        out.push_str(&format!(
            "\nmax-latency {}: {verdict} (observed max {})\n",
            Human(limit),
            Human(max)
        ));
    }
    out
}

/// "PI off: high blocked behind medium in 37 of 40 rounds; PI on: 0 of 40".
pub fn pi_verdict(run: &Run) -> String {
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0) as u64;
    format!(
        "PI off: high blocked behind medium in {} of {} rounds; PI on: {} of {}",
        m("pi_off_inversions"),
        m("pi_off_rounds"),
        m("pi_on_inversions"),
        m("pi_on_rounds")
    )
}

fn pi_check(run: &Run, unit: TimeUnit) -> String {
    let cpu = run.series.first().and_then(|s| s.cpu);
    let mut out = format!(
        "low/medium/high SCHED_FIFO threads around one mutex on CPU {}, {} observed\n\n",
        cpu.map_or_else(|| "?".into(), |c| c.to_string()),
        Human(run.duration_ns)
    );
    let cols = [
        Col::Count("rounds"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::Max,
    ];
    out.push_str(&series::table(&run.series, "high's wait", &cols, unit));
    out.push_str(&format!(
        "(time in {} the high thread waited for the mutex the low one held)\n\n",
        unit.symbol()
    ));
    out.push_str(&pi_verdict(run));
    out.push('\n');
    let on = run.metrics.get("pi_on_inversions").copied().unwrap_or(0.0);
    out.push_str(if on > 0.0 {
        "FAIL: with priority inheritance the medium thread still ran while the high one waited\n"
    } else {
        "PASS: priority inheritance kept the medium thread out while the high one waited\n"
    });
    out
}
