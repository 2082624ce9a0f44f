//! `rtlab results`: list, show, delete, tag, label, export and import stored runs,
//! and list the campaigns they belong to.

use super::common::{self, Context};
use crate::error::{bad_flag, UsageError, EXIT_INTERRUPTED, EXIT_OK};
use crate::format::text::{latency::series_table, table::Table};
use crate::format::{self, Format};
use crate::import;
use crate::record::Run;
use crate::store::{CampaignStatus, ListFilter, RunRow, Store};
use crate::units::{parse_duration, DefaultUnit, Human, TimeUnit};
use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use rtlab_engine::rt::signals;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Stored runs: list, show, change, export, import.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(subcommand)]
    command: ResultsCommand,
}

#[derive(Debug, Subcommand)]
enum ResultsCommand {
    /// Runs, newest first: id, time, kind, label, status, headline numbers.
    List(ListArgs),
    /// Everything about one run: parameters, fingerprint, series, metrics, warnings.
    Show(ShowArgs),
    /// Delete runs (with their series and tags); all or none.
    Delete {
        /// Run ids.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<i64>,
    },
    /// Add tags to a run (or remove them with --remove).
    Tag {
        /// Run id.
        id: i64,
        /// Tags.
        #[arg(required = true, value_name = "TAG", value_parser = common::tag_value)]
        tags: Vec<String>,
        /// Remove these tags instead of adding them.
        #[arg(long)]
        remove: bool,
    },
    /// Give a run a new label.
    Label {
        /// Run id.
        id: i64,
        /// The new label.
        label: String,
    },
    /// Write a run as rtlab JSON, CSV (also several runs), or a cyclictest -h histogram.
    Export(ExportArgs),
    /// Import cyclictest (-h/-H text, --json) or sysbench 1.0 output, or rtlab JSON.
    Import(ImportArgs),
    /// Campaigns (runs of one invocation): list them, or show one's steps.
    Campaigns {
        /// Show this campaign's steps and runs.
        id: Option<i64>,
    },
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Only this label (SQL LIKE pattern when it contains %).
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Only this kind (latency, net, bench.cpu, ...; "bench" for all benchmarks).
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Only runs started within this long (30m, 12h, 2d, 1w) or since a date
    /// (2026-05-01, RFC 3339).
    #[arg(long, value_name = "AGE|DATE")]
    since: Option<String>,
    /// Only runs with this tag.
    #[arg(long, value_name = "TAG", value_parser = common::tag_value)]
    tag: Option<String>,
    /// Only runs of this campaign.
    #[arg(long, value_name = "ID")]
    campaign: Option<i64>,
    /// Only the newest N of the matching runs.
    #[arg(short = 'n', long, value_name = "N")]
    last: Option<usize>,
    /// One JSON document: an array of rows.
    #[arg(long)]
    json: bool,
    /// Unit of times.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// Run id.
    id: i64,
    /// The run record as JSON (format rtlab/1).
    #[arg(long)]
    json: bool,
    /// Unit of times.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    unit: TimeUnit,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// Run ids (several only with --format csv: one table).
    #[arg(required = true, value_name = "ID")]
    ids: Vec<i64>,
    /// Output format (hist = cyclictest -h layout, one column per thread).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of stdout ("-": stdout).
    #[arg(short, long, value_name = "PATH", value_parser = common::output_file)]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// Files to import; several files make one campaign.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Label of the imported runs (default: the kernel named in the file, else
    /// the file's name).
    #[arg(long, value_name = "TEXT", value_parser = common::label_value)]
    label: Option<String>,
    /// Tag the imported runs (repeatable).
    #[arg(long = "tag", value_name = "TAG", value_parser = common::tag_value)]
    tags: Vec<String>,
    /// The sysbench test the files come from; needed for threads and mutex, whose
    /// reports look the same.
    #[arg(long, value_name = "TEST", value_parser = clap::builder::PossibleValuesParser::new(import::SYSBENCH_TESTS))]
    sysbench_test: Option<String>,
}

/// Runs `rtlab results`.
pub fn run(ctx: &Context, a: ResultsArgs) -> Result<i32> {
    let mut store = ctx.open_store()?;
    match a.command {
        ResultsCommand::List(l) => list(&store, &l),
        ResultsCommand::Show(s) => show(&store, &s),
        ResultsCommand::Delete { ids } => {
            let n = store.delete(&ids)?;
            println!("deleted {n} run(s)");
            Ok(0)
        }
        ResultsCommand::Tag { id, tags, remove } => {
            if remove {
                let n = store.remove_tags(id, &tags)?;
                println!("run {id}: removed {n} tag(s)");
            } else {
                store.add_tags(id, &tags)?;
            }
            println!("run {id}: tags {}", store.tags(id)?.join(", "));
            Ok(0)
        }
        ResultsCommand::Label { id, label } => {
            if label.trim().is_empty() {
                return Err(UsageError("the new label is empty; give some text".into()).into());
            }
            store.set_label(id, &label)?;
            println!("run {id}: label '{label}'");
            Ok(0)
        }
        ResultsCommand::Export(e) => {
            let runs = e
                .ids
                .iter()
                .map(|&id| store.load(id))
                .collect::<Result<Vec<_>>>()?;
            let text = format::export(&runs, e.format)?;
            write_output(e.output.as_deref(), &text)?;
            Ok(0)
        }
        ResultsCommand::Import(i) => import_files(&mut store, &i),
        ResultsCommand::Campaigns { id } => campaigns(&store, id),
    }
}

/// Writes to stdout (a closed pipe is not an error) or, via a temporary file
/// and a rename, to `path`.
fn write_output(path: Option<&Path>, text: &str) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        Some(p) => {
            let tmp = p.with_extension("rtlab-tmp");
            std::fs::write(&tmp, text)
                .with_context(|| format!("--output: cannot write {}", tmp.display()))?;
            std::fs::rename(&tmp, p)
                .with_context(|| format!("--output: cannot write {}", p.display()))?;
        }
    }
    Ok(())
}

/// `--since`: an age (`2d`, `12h`, `1w`, `90m`) before now, or a date.
fn since(text: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String> {
    let t = text.trim();
    let fmt =
        |d: chrono::DateTime<chrono::Utc>| d.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(fmt(d.with_timezone(&chrono::Utc)));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(fmt(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()));
    }
    let days = |suffix: char, per: u64| {
        t.strip_suffix(suffix)
            .and_then(|n| n.parse::<u64>().ok())
            .map(|n| n.saturating_mul(per * 86_400_000_000_000))
    };
    let ns = match days('d', 1).or_else(|| days('w', 7)) {
        Some(ns) => ns,
        None => parse_duration(t, DefaultUnit::Seconds).map_err(|e| {
            bad_flag(
                "--since",
                format!("{e}; give an age (30m, 12h, 2d, 1w) or a date (2026-05-01)"),
            )
        })?,
    };
    let age = chrono::Duration::nanoseconds(i64::try_from(ns).unwrap_or(i64::MAX));
    let start = now
        .checked_sub_signed(age)
        .ok_or_else(|| bad_flag("--since", format!("'{t}' reaches before year 0")))?;
    Ok(fmt(start))
}

fn cell(ns: Option<i64>, unit: TimeUnit) -> String {
    ns.map(|v| unit.cell(v as f64))
        .unwrap_or_else(|| "-".into())
}

/// The headline rate of a benchmark row.
fn rate(r: &RunRow) -> String {
    ["events_per_s", "ops_per_s", "messages_per_s"]
        .iter()
        .find_map(|k| r.metrics.get(*k))
        .map(|v| format!("{v:.1}"))
        .unwrap_or_else(|| "-".into())
}

fn list(store: &Store, a: &ListArgs) -> Result<i32> {
    let filter = ListFilter {
        label: a.label.clone(),
        kind: a.kind.clone(),
        since: a
            .since
            .as_deref()
            .map(|s| since(s, chrono::Utc::now()))
            .transpose()?,
        tag: a.tag.clone(),
        campaign: a.campaign,
    };
    let mut rows = store.list_where(&filter)?;
    if let Some(n) = a.last {
        rows.truncate(n);
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let doc: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "started_at": r.started_at, "kind": r.kind, "label": r.label,
                    "status": r.status, "samples": r.samples, "p99_ns": r.p99_ns,
                    "max_ns": r.max_ns, "misses": r.misses, "campaign": r.campaign,
                    "tags": r.tags, "metrics": r.metrics,
                })
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    if rows.is_empty() {
        let _ = writeln!(out, "no runs match in {}", store.path().display());
        return Ok(0);
    }
    let mut t = Table::new(&[
        "id",
        "started (UTC)",
        "kind",
        "label",
        "status",
        "samples",
        "p99",
        "max",
        "misses",
        "events/s",
        "tags",
    ]);
    for col in [1, 2, 3, 4, 10] {
        t.align_left(col);
    }
    for r in &rows {
        t.row(vec![
            r.id.to_string(),
            r.started_at
                .get(..19)
                .unwrap_or(&r.started_at)
                .replace('T', " "),
            r.kind.clone(),
            r.label.clone(),
            r.status.clone(),
            r.samples
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            cell(r.p99_ns, a.unit),
            cell(r.max_ns, a.unit),
            r.misses
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            rate(r),
            r.tags.join(","),
        ]);
    }
    let _ = writeln!(
        out,
        "{}{} run(s), times in {}",
        t.render(),
        rows.len(),
        a.unit.symbol()
    );
    Ok(0)
}

/// `key  value` lines, keys padded to one width.
fn key_values(rows: &[(String, String)], indent: &str) -> String {
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{indent}{k:<width$}  {v}\n"))
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

/// The whole text view of a stored run.
fn render_run(run: &Run, unit: TimeUnit) -> Result<String> {
    let mut out = String::new();
    let id = run.id.map(|i| i.to_string()).unwrap_or_default();
    out.push_str(&format!(
        "run {id}  {}  {}  [{}]\n",
        run.kind,
        run.label,
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
    add("params", serde_json::to_string(&run.params)?);
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
        let unknown = run.unreported();
        if !unknown.is_empty() {
            out.push_str(&format!(
                "not reported by the source (shown as 0, unknown): {}\n",
                unknown.join(", ")
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
    if let Some(b) = &run.breaktrace {
        out.push_str(&format!(
            "\nbreaktrace: thread {} (tid {}) at cycle {}: {}\n",
            b.thread,
            b.tid,
            b.cycle,
            Human(b.latency_ns)
        ));
    }
    if !run.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &run.warnings {
            out.push_str(&format!("  ! {}: {}\n", w.code, w.message));
        }
    }
    Ok(out)
}

fn show(store: &Store, a: &ShowArgs) -> Result<i32> {
    let run = store.load(a.id)?;
    let text = if a.json {
        format::export(std::slice::from_ref(&run), Format::Json)?
    } else {
        render_run(&run, a.unit)?
    };
    write_output(None, &text)?;
    Ok(0)
}

fn import_files(store: &mut Store, a: &ImportArgs) -> Result<i32> {
    let opts = import::Options {
        label: a.label.clone(),
        sysbench_test: a.sysbench_test.clone(),
    };
    // Ctrl-C/SIGTERM stops between files: before writing, nothing is written;
    // while writing, the runs saved so far stay and the campaign says so.
    let stop = signals::install();
    let stopped = || stop.load(Ordering::Relaxed);
    // Every file is read and checked before anything is written.
    let mut runs = Vec::with_capacity(a.files.len());
    for f in &a.files {
        if stopped() {
            eprintln!("interrupted while reading the files: nothing was imported");
            return Ok(EXIT_INTERRUPTED);
        }
        let mut run = import::import_file(f, &opts)?;
        for t in &a.tags {
            if !run.tags.contains(t) {
                run.tags.push(t.clone());
            }
        }
        runs.push(run);
    }
    let campaign = if runs.len() > 1 {
        let scenario = std::env::args().collect::<Vec<_>>().join(" ");
        Some(store.create_campaign("import", &scenario, &runs[0].fingerprint)?)
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    let mut saved = 0;
    for (i, (run, file)) in runs.iter().zip(&a.files).enumerate() {
        if stopped() {
            break;
        }
        let id = store.save(run)?;
        saved += 1;
        if let Some(c) = campaign {
            store.add_campaign_run(c, i as i64, &file.display().to_string(), id)?;
        }
        let what = match &run.total {
            Some(t) if run.kind == "latency" => format!(
                "{} thread(s), {} samples, max {}",
                run.series.len(),
                t.counters.samples,
                Human(t.summary.max_ns)
            ),
            Some(t) => format!("{} events", t.counters.samples),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "run {id}: {} '{}' ({what}) from {}",
            run.kind,
            run.label,
            file.display()
        );
    }
    let interrupted = saved < runs.len();
    if let Some(c) = campaign {
        let status = if interrupted {
            CampaignStatus::Interrupted
        } else {
            CampaignStatus::Complete
        };
        store.set_campaign_status(c, status)?;
        let _ = writeln!(out, "campaign {c}: {saved} runs");
    }
    if interrupted {
        eprintln!(
            "interrupted: {saved} of {} files imported, the others not",
            runs.len()
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

fn campaigns(store: &Store, id: Option<i64>) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match id {
        Some(id) => {
            let c = store.load_campaign(id)?;
            let _ = writeln!(
                out,
                "campaign {}  {}  [{}]  created {}  ended {}",
                c.id,
                c.name,
                c.status.name(),
                c.created_at,
                c.ended_at.as_deref().unwrap_or("-")
            );
            let mut t = Table::new(&["step", "name", "run"]);
            t.align_left(1);
            for s in &c.steps {
                t.row(vec![
                    s.step_index.to_string(),
                    s.step_name.clone(),
                    s.run_id.to_string(),
                ]);
            }
            let _ = write!(out, "{}", t.render());
        }
        None => {
            let mut t = Table::new(&["id", "name", "status", "created (UTC)", "runs"]);
            for col in [1, 2, 3] {
                t.align_left(col);
            }
            for c in store.list_campaigns()? {
                t.row(vec![
                    c.id.to_string(),
                    c.name,
                    c.status.name().to_string(),
                    c.created_at,
                    c.runs.to_string(),
                ]);
            }
            let _ = write!(out, "{}", t.render());
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(s).unwrap().into()
    }

    #[test]
    fn since_takes_ages_and_dates() {
        let now = at("2026-05-10T12:00:00Z");
        assert_eq!(since("2d", now).unwrap(), "2026-05-08T12:00:00.000000Z");
        assert_eq!(since("1w", now).unwrap(), "2026-05-03T12:00:00.000000Z");
        assert_eq!(since("90m", now).unwrap(), "2026-05-10T10:30:00.000000Z");
        assert_eq!(
            since("2026-05-01", now).unwrap(),
            "2026-05-01T00:00:00.000000Z"
        );
        let e = since("yesterday", now).unwrap_err().to_string();
        assert!(e.starts_with("--since:") && e.contains("2d"), "{e}");
    }

    proptest! {
        #[test]
        fn ages_in_hours_and_days_agree(n in 0u64..10_000) {
            let now = at("2026-05-10T12:00:00Z");
            prop_assert_eq!(since(&format!("{n}d"), now).unwrap(), since(&format!("{}h", n * 24), now).unwrap());
        }
    }
}
