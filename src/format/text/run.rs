//! One stored run in words: the report of `rtlab report RUN` (its table, metrics,
//! system and parameters, then its verdicts), the full record of `rtlab results
//! show`, and the warnings of runs.

use super::latency::{self, series_table};
use super::table::{paragraph, printable, Table};
use super::verdict;
use crate::analysis::diff::system_fields;
use crate::analysis::{status, verdict::judge};
use crate::format::{params_shown, run_name, Exporter, Options, UNKNOWN};
use crate::record::Run;
use crate::step::View;
use crate::units::{Human, TimeUnit};
use anyhow::Result;

/// The report of each run, then their verdicts against `opts.reqs`.
pub struct Report;

impl Exporter for Report {
    fn serialize(&self, runs: &[Run], opts: &Options) -> Result<String> {
        let mut out: String = runs.iter().map(|r| report(r, opts.unit)).collect();
        let verdicts = judge(runs, opts.reqs);
        if !verdicts.is_empty() {
            out.push('\n');
            out.push_str(&verdict::render_text(&verdicts));
        }
        Ok(out)
    }
}

/// A run as its kind shows it (its view in the step registry): the same text
/// when it was measured and when it is reported from the store.
pub fn view(run: &Run, unit: TimeUnit) -> String {
    match crate::step::kind(&run.kind).view {
        View::Plain => plain(run, unit),
        View::Latency => latency::render(run, unit),
        View::Noise => super::noise::render(run, unit),
        View::Ipc => super::ipc::render(run, unit),
        View::Periodic => super::periodic::render(run, unit),
        View::Net => super::net::render(run, unit),
        View::Bench => super::bench::render(run, unit),
        View::Load => super::loads::render(run),
    }
}

/// Whether the view of `run` shows its metrics (a report then adds no table
/// of them).
fn shows_metrics(run: &Run) -> bool {
    match crate::step::kind(&run.kind).view {
        View::Bench => true,
        View::Ipc => crate::step::ipc::asked(&run.params).is_some(),
        _ => false,
    }
}

/// What a probe prints when it has measured: its view, the loads that ran
/// beside it, and what its trace explained.
pub fn measured(run: &Run, unit: TimeUnit) -> String {
    let mut out = view(run, unit);
    if !run.loads.is_empty() && crate::step::kind(&run.kind).view != View::Load {
        out.push_str("\nloads:\n");
        out.push_str(&super::loads::loads_table(&run.loads));
    }
    if let Some(w) = &run.why {
        out.push('\n');
        out.push_str(&super::why::end_of_run(w, run.id));
    }
    out
}

/// The view of a run no probe's view fits: its headline, series, counters
/// and warnings.
pub fn plain(run: &Run, unit: TimeUnit) -> String {
    let mut out = format!(
        "rtlab {}  {}  [{}]\n{} observed\n",
        printable(&run.kind),
        printable(&run.label),
        run.status.name(),
        Human(run.duration_ns)
    );
    if run.total.is_some() || !run.series.is_empty() {
        out.push('\n');
        out.push_str(&series_table(run, unit));
    }
    out.push_str(&super::perf::of_run(run));
    out.push_str(&warnings_after(run));
    out
}

/// The warnings of `run` and whether it completed, after a blank line (""
/// when there is nothing to say).
pub fn warnings_after(run: &Run) -> String {
    match warnings_text(std::slice::from_ref(run)) {
        w if w.is_empty() => w,
        w => format!("\n{w}"),
    }
}

/// The text report of any kind of run: its view, what its trace explained,
/// its metrics, system and parameters.
pub fn report(run: &Run, unit: TimeUnit) -> String {
    let mut out = view(run, unit);
    if let Some(w) = &run.why {
        out.push('\n');
        out.push_str(&super::why::summary(w, run.id));
    }
    if !run.metrics.is_empty() && !shows_metrics(run) {
        let mut t = Table::new(&["metric", "value"]);
        for (k, v) in &run.metrics {
            t.row(vec![k.clone(), v.to_string()]);
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    out.push_str("\nsystem:\n");
    for (k, v) in system_fields(run) {
        out.push_str(&format!("  {k:<16} {}\n", printable(&v)));
    }
    // A group of runs (`--by`) has no id.
    let id = run.id.map(|id| format!("run {id} ")).unwrap_or_default();
    out.push_str(&format!(
        "\n{id}started {}, ended {}\n",
        printable(&run.started_at),
        printable(&run.ended_at),
    ));
    out.push_str(&paragraph("command: ", &run.command_line.join(" ")));
    out.push_str(&paragraph("parameters: ", &params_line(run)));
    out
}

/// A run's parameters as one line of `key=value` items ([`params_shown`]),
/// a value with spaces in quotes.
fn params_line(run: &Run) -> String {
    let items: Vec<String> = params_shown(run)
        .into_iter()
        .map(|(k, v)| {
            let v = match v.contains(' ') {
                true => format!("'{v}'"),
                false => v,
            };
            match k.is_empty() {
                true => v,
                false => format!("{k}={v}"),
            }
        })
        .collect();
    items.join(" ")
}

/// `key  value` lines, keys padded to one width, values wrapped to
/// [`WIDTH`](super::table::WIDTH) under themselves.
fn key_values(rows: &[(String, String)], indent: &str) -> String {
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(k, v)| paragraph(&format!("{indent}{:<width$}  ", printable(k)), v))
        .collect()
}

/// The fingerprint fields that are known, as text.
fn known_fields(value: &serde_json::Value) -> Vec<(String, String)> {
    use serde_json::Value;
    let Some(map) = value.as_object() else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::Null => return None,
                Value::String(s) if s.is_empty() || s == "unknown" => return None,
                Value::Number(n) if n.as_f64() == Some(0.0) => return None,
                Value::Array(a) if a.is_empty() => return None,
                Value::String(s) => s.clone(),
                Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).unwrap_or(x.to_string()))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            Some((k.clone(), text))
        })
        .collect()
}

/// The whole record of a stored run (`rtlab results show`).
pub fn show(run: &Run, unit: TimeUnit) -> Result<String> {
    let mut out = String::new();
    let id = run.id.map(|i| i.to_string()).unwrap_or_default();
    out.push_str(&format!(
        "run {id}  {}  {}  [{}]\n",
        printable(&run.kind),
        printable(&run.label),
        run.status.name()
    ));
    let mut kv: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| kv.push((k.to_string(), v));
    add("started", run.started_at.clone());
    add("ended", run.ended_at.clone());
    add("observed", Human(run.duration_ns).to_string());
    add("exit code", run.exit_code.to_string());
    if !run.tags.is_empty() {
        add("tags", run.tags.join(", "));
    }
    if let Some(c) = run.campaign {
        add("campaign", c.to_string());
    }
    add("rtlab", run.rtlab_version.clone());
    add("command", run.command_line.join(" "));
    add("params", params_line(run));
    out.push_str(&key_values(&kv, ""));

    let system = known_fields(&serde_json::to_value(&run.fingerprint)?);
    if system.is_empty() {
        out.push_str("\nsystem: unknown (the source does not record it)\n");
    } else {
        out.push_str("\nsystem:\n");
        out.push_str(&key_values(&system, "  "));
    }

    for l in &run.loads {
        out.push_str(&format!(
            "load {} ({} workers): {}\n",
            l.spec,
            l.workers,
            serde_json::to_string(&l.achieved)?
        ));
    }
    if run.total.is_some() || !run.series.is_empty() {
        out.push('\n');
        out.push_str(&series_table(run, unit));
        let unknown = crate::analysis::series::missing(run);
        if !unknown.is_empty() {
            out.push_str(&format!(
                "{UNKNOWN} not known: {} (not reported by the source, or not measured by a {} run)\n",
                unknown.join(", "),
                run.kind
            ));
        }
    }
    if !run.metrics.is_empty() {
        out.push_str("\nmetrics:\n");
        let m: Vec<(String, String)> = run
            .metrics
            .iter()
            .map(|(k, v)| (k.clone(), format!("{v}")))
            .collect();
        out.push_str(&key_values(&m, "  "));
    }
    if let Some(w) = &run.why {
        out.push('\n');
        out.push_str(&super::why::summary(w, run.id));
    }
    if let Some(b) = &run.breaktrace {
        out.push_str(&format!(
            "\nbreaktrace: thread {} (tid {}) at cycle {}: {}\n",
            b.thread,
            b.tid,
            b.cycle,
            Human(b.latency_ns)
        ));
    }
    out.push_str(&super::perf::of_run(run));
    out.push_str(&own_warnings(run));
    Ok(out)
}

/// Warnings of all runs as text lines, each naming its run, and which runs did
/// not complete ("" when there is nothing to say).
pub fn warnings_text(runs: &[Run]) -> String {
    let mut out = String::new();
    for r in runs {
        if let Some(s) = status::unfinished(r) {
            out.push_str(&paragraph(
                "  ! ",
                &format!(
                    "{}: status: the run is {}: its figures cover only what was observed",
                    run_name(r),
                    s.name()
                ),
            ));
        }
        for w in &r.warnings {
            let text = format!("{}: {}: {}", run_name(r), w.code, w.message);
            out.push_str(&paragraph("  ! ", &text));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("warnings:\n{out}")
    }
}

/// The warnings of one run under a `warnings:` heading after a blank line (""
/// when it has none).
pub fn own_warnings(run: &Run) -> String {
    let mut out = String::new();
    if !run.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &run.warnings {
            out.push_str(&paragraph("  ! ", &format!("{}: {}", w.code, w.message)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::run_from_samples;
    use crate::record::{Status, Warning};

    #[test]
    fn bench_runs_are_reported_in_their_own_view_with_the_system() {
        let mut run = run_from_samples("pi", &[]);
        run.kind = "bench.cpu".into();
        run.total = None;
        run.series.clear();
        run.id = Some(4);
        run.metrics.insert("events_per_s".into(), 1234.5);
        let t = report(&run, TimeUnit::Us);
        assert!(t.starts_with("rtlab bench cpu  pi  [complete]\n"), "{t}");
        assert!(t.starts_with(&view(&run, TimeUnit::Us)), "{t}");
        assert_eq!(
            t.matches("events_per_s").count(),
            1,
            "one table of metrics: {t}"
        );
        assert!(t.contains("events_per_s  1234.50"), "{t}");
        assert!(t.contains("  kernel           6.1.0\n"), "{t}");
    }

    #[test]
    fn latency_runs_use_the_latency_table() {
        let t = report(&run_from_samples("rt", &[1_000, 3_000]), TimeUnit::Us);
        assert!(t.starts_with("rtlab latency  rt  [complete]"), "{t}");
        assert!(t.contains("\ncpu0          2"), "{t}");
    }

    #[test]
    fn a_report_ends_with_its_verdicts() {
        let runs = [run_from_samples("rt", &[1_000, 3_000])];
        let reqs = crate::analysis::verdict::parse_requirement("loop=2us").unwrap();
        let opts = Options {
            reqs: &reqs,
            ..Options::default()
        };
        let t = Report.serialize(&runs, &opts).unwrap();
        assert!(t.starts_with(&report(&runs[0], TimeUnit::Us)), "{t}");
        assert!(t.ends_with("1 of 1 verdict(s) failed\n"), "{t}");
    }

    #[test]
    fn unfinished_runs_and_warnings_are_listed() {
        let mut a = run_from_samples("a", &[1_000]);
        a.id = Some(1);
        assert_eq!(warnings_text(std::slice::from_ref(&a)), "");
        assert_eq!(own_warnings(&a), "");
        a.status = Status::Interrupted;
        a.warnings.push(Warning::new("vm", "under kvm"));
        assert_eq!(
            warnings_text(std::slice::from_ref(&a)),
            "warnings:\n  ! a #1: status: the run is interrupted: its figures cover only what was observed\n  ! a #1: vm: under kvm\n"
        );
        assert_eq!(own_warnings(&a), "\nwarnings:\n  ! vm: under kvm\n");
    }
}
