//! The text view of a bench run: what it was asked, its metrics, per-event
//! time per thread, its warnings.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::Run;
use crate::step::bench::{asked, bytes};
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

/// What the parameters say, in one line: from the step's parameters or, for
/// imports and runs of older rtlab, as recorded; `?` where nothing says.
fn describe(run: &Run) -> String {
    let p = asked(&run.params);
    let u = |k: &str| {
        p.get(k)
            .and_then(|v| v.as_u64())
            .map_or_else(|| "?".to_string(), |n| n.to_string())
    };
    let b = |k: &str| {
        p.get(k)
            .and_then(|v| v.as_u64())
            .map_or_else(|| "?".to_string(), bytes)
    };
    let s = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
    let what = match run.kind.as_str() {
        "bench.cpu" => format!("max prime {}", u("max_prime")),
        "bench.memory" => format!(
            "block {}, {} {} {}, total {}{}",
            b("block_size"),
            s("access"),
            s("oper"),
            s("scope"),
            b("total_size"),
            match p.get("mode").and_then(|v| v.as_str()) {
                Some("bandwidth") => ", bandwidth mode",
                _ => "",
            }
        ),
        "bench.fileio" => format!(
            "{} in {}: {} files × {}, block {}{}",
            s("mode"),
            s("dir"),
            u("files"),
            b("file_size"),
            b("block_size"),
            if p.get("direct").and_then(|v| v.as_bool()) == Some(true) {
                ", O_DIRECT"
            } else {
                ""
            }
        ),
        "bench.threads" => format!("{} yields, {} locks", u("yields"), u("locks")),
        "bench.mutex" => format!(
            "{} mutexes, {} locks × {} loops",
            u("mutexes"),
            u("locks"),
            u("loops")
        ),
        _ => String::new(),
    };
    format!("{what}, {} thread(s)", u("threads"))
}

/// The table view of a bench run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let mut out = format!(
        "rtlab {}  {}  [{}]\n{}\n{} events in {}; timing overhead {:.0}ns per event\n\n",
        printable(&run.kind.replace('.', " ")),
        printable(&run.label),
        run.status.name(),
        describe(run),
        run.metrics.get("total_events").copied().unwrap_or(0.0),
        Human(run.duration_ns),
        run.metrics
            .get("timing_overhead_ns")
            .copied()
            .unwrap_or(0.0),
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
    out.push_str(&series::table(
        run.series.iter().chain(run.total.as_ref()),
        "thread",
        &cols,
        unit,
    ));
    out.push_str(&super::perf::of_run(run));
    for w in &run.warnings {
        out.push_str(&format!("warning ({}): {}\n", w.code, w.message));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::record::RunParams;
    use crate::step::bench::{fileio, memory};
    use crate::step::Params;

    fn described(kind: &str, params: RunParams) -> String {
        let mut run = run_from_samples("x", &[]);
        run.kind = kind.into();
        run.params = params;
        describe(&run)
    }

    #[test]
    fn typed_and_recorded_parameters_read_the_same() {
        let mut m = memory::Params::default();
        m.common.threads = 2;
        let typed = described(
            "bench.memory",
            RunParams::Step(Box::new(Params::BenchMemory(m))),
        );
        let old = RunParams::Recorded(serde_json::json!({
            "block_size": 1024, "total_size": 100u64 << 30, "oper": "write",
            "access": "seq", "scope": "global", "threads": 2,
        }));
        assert_eq!(typed, described("bench.memory", old));
        assert_eq!(
            typed,
            "block 1KiB, seq write global, total 100GiB, 2 thread(s)"
        );
        let bw = memory::Params {
            mode: memory::ModeArg::Bandwidth,
            ..Default::default()
        };
        assert_eq!(
            described(
                "bench.memory",
                RunParams::Step(Box::new(Params::BenchMemory(bw)))
            ),
            "block 1KiB, seq write global, total 100GiB, bandwidth mode, 1 thread(s)"
        );

        let f = fileio::Params {
            total_size: "8M".into(),
            direct: true,
            ..Default::default()
        };
        let typed = described(
            "bench.fileio",
            RunParams::Step(Box::new(Params::BenchFileio(f))),
        );
        assert_eq!(
            typed,
            "rndrw in .: 128 files × 64KiB, block 16KiB, O_DIRECT, 1 thread(s)"
        );
    }

    #[test]
    fn imported_runs_say_what_they_know() {
        let sysbench = RunParams::Recorded(serde_json::json!({
            "source": "sysbench", "cpu_max_prime": 20000, "threads": 4,
        }));
        assert_eq!(
            described("bench.cpu", sysbench),
            "max prime 20000, 4 thread(s)"
        );
        let bare = RunParams::Recorded(serde_json::json!({"source": "sysbench"}));
        assert_eq!(
            described("bench.threads", bare),
            "? yields, ? locks, ? thread(s)"
        );
    }
}
