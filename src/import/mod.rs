//! Importers: other tools' result files turned into [`Run`]s of the same shape as
//! rtlab's own, so that they list, compare and export like native runs.
//!
//! | file | kind | how it is recognised |
//! |------|------|----------------------|
//! | cyclictest `-h N` / `-H N` text, with or without `-q` | `latency` | `# Histogram` lines |
//! | cyclictest `--json=FILE` (2.x, keys `"cmdline:"`) | `latency` | JSON with `rt_test_version:` |
//! | cyclictest `-v` samples (`thread: cycle: latency`) | `latency` | such lines |
//! | cyclictest summary lines (`-q`), or its captured live view | `latency` | `T: 0 (tid) P:..` lines |
//! | sysbench 1.0 and 0.4/0.5 `cpu`, `memory`, `fileio`, `threads`, `mutex` | `bench.<test>` | `sysbench 1.` / `sysbench 0.` banner |
//! | stress-ng `--yaml FILE` | `load` | `stress-ng-version:`, `- stressor:` |
//! | stress-ng `--metrics-brief` / `--metrics` log | `load` | its `stressor  bogo ops` table |
//! | rtlab's own JSON (`--json`, `results export --format json`) | as saved | `"format": "rtlab/1"` |
//!
//! A file that is not complete or not well formed is refused with the line that is
//! wrong; nothing is imported from it.
//!
//! Figures the source does not report are listed in `params.unreported` (names of
//! [`rtlab_engine::stats::Summary`] fields, e.g. `p99_ns`, and of counters,
//! `overruns` and `deadline_misses`); they hold 0 and must be shown as unknown.

mod cyclictest;
#[cfg(test)]
mod props;
mod stressng;
mod sysbench;

pub use sysbench::TESTS as SYSBENCH_TESTS;

use crate::format::histfile::ParseError;
use crate::record::{self, Run, Warning};
use anyhow::{bail, Context, Result};
use rtlab_engine::sysinfo::{self, Fingerprint, SysRoot, Uname};
use std::path::Path;

/// The summary fields a source that reports only min/mean/max (or one
/// percentile) leaves unknown; an importer lists those it could not fill.
const ESTIMATES: [&str; 7] = [
    "stddev_ns",
    "p50_ns",
    "p90_ns",
    "p95_ns",
    "p99_ns",
    "p999_ns",
    "p9999_ns",
];

/// What the user said about a file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Label for the run (default: from the file, else the file's name).
    pub label: Option<String>,
    /// The sysbench test, when the user names it: checked against what the
    /// output says, and taken for sysbench 1.0's threads or mutex, which the
    /// output tells apart only by its events per thread.
    pub sysbench_test: Option<String>,
}

/// Where the text came from: its name for messages and labels, and its
/// modification time (RFC 3339 UTC), the best start time a text file offers.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file name as given.
    pub name: String,
    /// Modification time, if known.
    pub modified: Option<String>,
}

/// Reads and parses one file.
pub fn import_file(path: &Path, opts: &Options) -> Result<Run> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        crate::error::UsageError(format!(
            "{}: not a text file (invalid UTF-8 at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        });
    let src = Source {
        name: path.display().to_string(),
        modified,
    };
    import_text(&text, &src, opts)
}

/// The most 1-µs buckets one imported file may make rtlab hold. cyclictest's
/// histograms are dense (one count per µs per thread) and a short file can name
/// a bucket far away: at 8 bytes a bucket, twice over (the threads' columns and
/// their total), they must fit in 90% of MemAvailable; 16 Mi buckets (128 MiB)
/// when that is unknown.
fn bucket_budget() -> usize {
    match crate::limits::memory_budget() {
        Some(bytes) => usize::try_from(bytes / 16).unwrap_or(usize::MAX),
        None => 1 << 24,
    }
}

/// Parses a file's text.
pub fn import_text(text: &str, src: &Source, opts: &Options) -> Result<Run> {
    parse_text(text, src, opts, bucket_budget())
}

/// Parses a file's text, holding at most `max_cells` histogram buckets. The
/// run it returns satisfies [`Run::check_numbers`].
fn parse_text(text: &str, src: &Source, opts: &Options, max_cells: usize) -> Result<Run> {
    let at_line = |e: ParseError| -> anyhow::Error {
        crate::error::UsageError(format!(
            "{} line {}: {}; nothing was imported",
            src.name, e.line, e.message
        ))
        .into()
    };
    let trimmed = text.trim_start();
    let sysbench_banner = match trimmed.starts_with('{') {
        true => None,
        false => sysbench::banner_line(text),
    };
    let mut run = if trimmed.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text)
            .or_else(|e| cyclictest::json_with_nan(text).ok_or(e))
            .map_err(|e| {
                at_line(ParseError {
                    line: e.line(),
                    message: format!("not valid JSON: {e}"),
                })
            })?;
        if value.get("format").is_some() {
            rtlab_json(value, src, max_cells)?
        } else {
            cyclictest::from_json(&value, text, src, max_cells).map_err(at_line)?
        }
    } else if let Some(n) = sysbench_banner {
        sysbench::parse(text, n, src, opts.sysbench_test.as_deref()).map_err(at_line)?
    } else if text.lines().any(|l| l.trim_end() == "# Histogram") {
        cyclictest::from_histogram_text(text, src, max_cells).map_err(at_line)?
    } else if stressng::is_yaml(text) {
        stressng::from_yaml(text, src).map_err(at_line)?
    } else if stressng::is_brief(text) {
        stressng::from_brief(text, src).map_err(at_line)?
    } else if cyclictest::is_verbose(text) {
        cyclictest::from_verbose(text, src, max_cells).map_err(at_line)?
    } else if cyclictest::is_summary(text) {
        cyclictest::from_summary(text, src).map_err(at_line)?
    } else {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        bail!(crate::error::UsageError(format!(
            "{}: not a file rtlab imports (cyclictest summary lines, live view, -v, -h/-H or --json output; sysbench 0.4 or 1.0 output; stress-ng --metrics-brief or --yaml output; rtlab JSON); it starts with '{}'",
            src.name,
            first.chars().take(60).collect::<String>()
        )));
    };
    if opts.sysbench_test.is_some() && sysbench_banner.is_none() {
        bail!(crate::error::bad_flag(
            "--sysbench-test",
            format!("{} holds a {} run, not sysbench output", src.name, run.kind)
        ));
    }
    if let Some(label) = &opts.label {
        run.label = label.clone();
    }
    run.bound_names();
    if let Err(e) = run.check_numbers() {
        // Pretty-printed rtlab JSON names each series on a line of its own.
        let needle = format!("\"name\": \"{}\"", e.series);
        return Err(match text.lines().position(|l| l.contains(&needle)) {
            Some(i) => at_line(ParseError {
                line: i + 1,
                message: e.to_string(),
            }),
            None => {
                crate::error::UsageError(format!("{}: {e}; nothing was imported", src.name)).into()
            }
        });
    }
    Ok(run)
}

/// An rtlab JSON document (what `--json` and `results export --format json`
/// print), saved again as a new run.
fn rtlab_json(value: serde_json::Value, src: &Source, max_cells: usize) -> Result<Run> {
    let format = value["format"].as_str().unwrap_or("");
    if format != record::FORMAT {
        bail!(crate::error::UsageError(format!(
            "{}: format '{format}' is not {} (written by another rtlab version?)",
            src.name,
            record::FORMAT
        )));
    }
    let mut run: Run = serde_json::from_value(value).map_err(|e| {
        crate::error::UsageError(format!(
            "{}: not a complete rtlab run record: {e}; nothing was imported",
            src.name
        ))
    })?;
    // Exporting a run in cyclictest's layout makes its 1-µs histograms dense.
    let cells = run
        .series
        .iter()
        .chain(&run.total)
        .filter_map(|s| s.us_histogram.as_ref())
        .fold(0usize, |a, us| a.saturating_add(us.max_us as usize));
    if cells > max_cells {
        bail!(crate::error::UsageError(format!(
            "{}: its 1-µs histograms have {cells} buckets in all, more than rtlab holds for one run on this machine ({max_cells}, from 90% of MemAvailable); nothing was imported",
            src.name
        )));
    }
    // Ids and campaigns belong to the database the run came from.
    run.id = None;
    run.campaign = None;
    Ok(run)
}

/// A fingerprint holding what a file says about its system (`uname` fields);
/// everything else is unknown.
fn fingerprint_from_uname(u: Uname) -> Fingerprint {
    // A root with nothing below it: every file is missing, so every value that
    // is not in `u` stays unknown instead of describing this machine.
    let mut fp = sysinfo::collect_from(&SysRoot::new("/nonexistent/rtlab-import"), u, None);
    if fp.preempt == sysinfo::PreemptModel::Unknown && !fp.kernel_version.is_empty() {
        fp.preempt_source = "uname -v in the file (a PREEMPT_DYNAMIC mode is not recorded)".into();
    }
    fp
}

/// A run record with what every import shares.
struct Skeleton<'a> {
    kind: String,
    label: String,
    src: &'a Source,
    fingerprint: Fingerprint,
    started_at: Option<String>,
    ended_at: Option<String>,
    duration_ns: u64,
    params: serde_json::Value,
    warnings: Vec<Warning>,
}

impl<'a> Skeleton<'a> {
    /// The skeleton of a file that names neither its system nor its times:
    /// labelled by its name, at its modification time.
    fn of_file(
        kind: &str,
        src: &'a Source,
        duration_ns: u64,
        params: serde_json::Value,
        warnings: Vec<Warning>,
    ) -> Self {
        Skeleton {
            kind: kind.into(),
            label: file_label(src),
            src,
            fingerprint: Fingerprint::default(),
            started_at: None,
            ended_at: None,
            duration_ns,
            params,
            warnings,
        }
    }

    fn into_run(self) -> Run {
        let when = self
            .src
            .modified
            .clone()
            .unwrap_or_else(record::now_rfc3339);
        let mut run = Run::new(
            &self.kind,
            self.label,
            self.fingerprint,
            self.started_at.unwrap_or_else(|| when.clone()),
            record::RunParams::Recorded(self.params),
        );
        run.ended_at = self.ended_at.unwrap_or(when);
        run.duration_ns = self.duration_ns;
        run.warnings = self.warnings;
        run
    }
}

/// The label of a run imported from a file that names no system: its file name
/// without directory and extension.
fn file_label(src: &Source) -> String {
    Path::new(&src.name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| src.name.clone())
}

/// The warning every run from a file without system information carries.
fn unknown_system() -> Warning {
    Warning::new(
        "fingerprint_unknown",
        "imported from a file that does not record its system: kernel, preemption model and CPUs are unknown (label the run to say what it measured)",
    )
}

/// A file's source for tests: its name, modified 2026-01-02T03:04:05Z.
#[cfg(test)]
fn test_source(name: &str) -> Source {
    Source {
        name: name.into(),
        modified: Some("2026-01-02T03:04:05.000000Z".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Source {
        test_source("x.txt")
    }

    #[test]
    fn unknown_text_is_refused_naming_its_start() {
        let e = import_text("hello world\n", &src(), &Options::default()).unwrap_err();
        assert!(
            e.to_string().contains("it starts with 'hello world'"),
            "{e}"
        );
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn broken_json_names_the_line() {
        let e = import_text("{\n \"a\": 1,\n x\n}", &src(), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("x.txt line 3"), "{e}");
    }

    /// cyclictest writes `"avg": -nan` for a thread that made no cycle (it
    /// stops every thread once the first is done): such a file imports, with
    /// that thread empty; NaN elsewhere is still not JSON.
    #[test]
    fn cyclictest_json_with_a_thread_that_made_no_cycle_imports() {
        let text = r#"{
  "file_version": 1,
  "cmdline:": "cyclictest -q -l 300 -i 200 -t 2 -h 30 --json=h.json",
  "rt_test_version:": "2.40",
  "num_threads": 2,
  "thread": {
    "0": { "histogram": { "12": 2 }, "cycles": 0, "min": 1000000, "max": 0, "avg": -nan, "cpu": 0, "node": 0 },
    "1": { "histogram": { "12": 2, "20": 1 }, "cycles": 3, "min": 12, "max": 20, "avg": 14.67, "cpu": 1, "node": 0 }
  }
}"#
        .replace(r#"{ "12": 2 }, "cycles": 0"#, r#"{ }, "cycles": 0"#);
        let run = import_text(&text, &src(), &Options::default()).unwrap();
        let samples: Vec<u64> = run.series.iter().map(|s| s.counters.samples).collect();
        assert_eq!(samples, [0, 3]);
        assert_eq!(run.total.as_ref().unwrap().summary.max_ns, 20_000);
        let e = import_text("{\"a\": -nan}", &src(), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
    }

    #[test]
    fn rtlab_json_of_another_format_version_is_refused() {
        let e = import_text("{\"format\": \"rtlab/9\"}", &src(), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("'rtlab/9' is not rtlab/1"), "{e}");
    }

    #[test]
    fn rtlab_json_with_more_dense_buckets_than_the_budget_is_refused() {
        let mut run = Run::new(
            "latency",
            "x".into(),
            Fingerprint::default(),
            "t".into(),
            record::RunParams::Recorded(serde_json::json!({})),
        );
        let series = |max_us| crate::record::Series {
            us_histogram: Some(rtlab_engine::stats::hist::UsBucketsData {
                max_us,
                ..Default::default()
            }),
            ..crate::record::Series::new(
                "cpu0".into(),
                Default::default(),
                Default::default(),
                Default::default(),
            )
        };
        run.series = vec![series(6000), series(6000)];
        let text = serde_json::to_string_pretty(&run).unwrap();
        let e = parse_text(&text, &src(), &Options::default(), 10_000).unwrap_err();
        assert!(e.to_string().contains("12000 buckets in all"), "{e}");
        assert!(parse_text(&text, &src(), &Options::default(), 12_000).is_ok());
    }

    #[test]
    fn uname_fields_give_kernel_and_preemption_and_nothing_else() {
        let fp = fingerprint_from_uname(Uname {
            hostname: "bbb".into(),
            release: "4.19.127-rt55".into(),
            version: "#1 SMP PREEMPT RT Mon".into(),
            machine: "armv7l".into(),
        });
        assert_eq!(fp.kernel_release, "4.19.127-rt55");
        assert_eq!(fp.preempt, sysinfo::PreemptModel::Rt);
        assert_eq!(fp.cpu_count, 0);
        assert!(fp.cmdline.is_empty());
        assert_eq!(fp.hypervisor, None);
    }
}
