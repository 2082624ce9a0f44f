//! Golden output tests: what users see of every subcommand that works on stored or
//! imported data (and every `--help`), pinned byte for byte on checked-in fixtures,
//! so that a reshaping of the binary (issue 13) can show that it changed nothing.
//!
//! - Inputs: `tests/fixtures/golden/input/` (cyclictest and sysbench outputs, rtlab
//!   JSON runs; `tests/fixtures/golden/README.md` says how they were made). No test
//!   runs cyclictest or sysbench.
//! - Expected outputs: `tests/fixtures/golden/expected/AREA/NAME.txt`, one command
//!   each: its command line, exit code, stdout and stderr, after [`redact`].
//! - Regenerate them after an intended change of output with
//!   `RTLAB_BLESS=1 cargo test --test cli golden`, then read
//!   `git diff tests/fixtures/golden/expected` before committing: blessing writes
//!   what the binary prints now, right or wrong. It also deletes goldens no test
//!   produces any more; a wrong exit code still fails.
//!
//! Every test copies the inputs into its own temporary directory with fixed
//! modification times (a text import records its file's time as the run's start),
//! imports them in a fixed order into a fresh store (run ids 1 to 10, campaigns 1
//! and 2), and runs each command there with relative paths, with `HOME` in that
//! directory and without the environment's RTLAB_DB, TZ, COLUMNS, LINES and XDG
//! directories. `environment_does_not_leak_into_outputs` checks that setting those
//! changes nothing.

use crate::compare_common::parse;
use chrono::{DateTime, Utc};
use regex::Regex;
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden");

/// The store every test starts from: the arguments of each `results import`, in
/// order. They make runs 1 to 10 and campaigns 1 (the three sysbench files) and
/// 2 (the two rtlab JSON files).
const IMPORTS: &[(&str, &[&str])] = &[
    ("cyclictest-histogram", &["cyclictest-histogram.txt"]),
    (
        "cyclictest-histofall-label-tag",
        &[
            "cyclictest-histofall.txt",
            "--label",
            "stock",
            "--tag",
            "golden",
        ],
    ),
    ("cyclictest-json", &["cyclictest.json"]),
    (
        "sysbench-campaign",
        &[
            "sysbench-cpu.txt",
            "sysbench-memory.txt",
            "sysbench-fileio.txt",
        ],
    ),
    (
        "sysbench-threads",
        &["sysbench-threads.txt", "--sysbench-test", "threads"],
    ),
    ("sysbench-mutex", &["sysbench-mutex.txt"]),
    (
        "rtlab-json-campaign",
        &["rtlab-latency.json", "rtlab-bench-cpu.json"],
    ),
];

/// The modification time given to the first input file (2025-03-01T10:00:00Z);
/// each further file one minute later, in the order of `ls`.
const FIRST_MTIME_S: u64 = 1_740_823_200;

/// Variables of the environment that could change what rtlab prints or where it
/// reads and writes; every command runs without them.
const CLEARED_ENV: [&str; 7] = [
    "RTLAB_DB",
    "TZ",
    "COLUMNS",
    "LINES",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
];

fn blessing() -> bool {
    std::env::var_os("RTLAB_BLESS").is_some_and(|v| v == "1")
}

/// One test's temporary directory with the inputs, and the goldens of one area
/// (`expected/AREA/`) checked so far. Mismatches are gathered and reported together
/// by [`Golden::finish`].
struct Golden {
    dir: tempfile::TempDir,
    area: &'static str,
    /// When the test began: timestamps after it are the test's own.
    began: DateTime<Utc>,
    /// Extra environment of every command (the environment test sets some).
    env: Vec<(String, String)>,
    /// Paths of the goldens checked.
    seen: BTreeSet<PathBuf>,
    failures: Vec<String>,
}

impl Golden {
    /// A directory holding the inputs, and no store yet.
    fn new(area: &'static str) -> Golden {
        let began = Utc::now();
        let dir = tempfile::tempdir().unwrap();
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(Path::new(GOLDEN).join("input"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        for (i, src) in inputs.iter().enumerate() {
            let dst = dir.path().join(src.file_name().unwrap());
            std::fs::copy(src, &dst).unwrap();
            let mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(FIRST_MTIME_S + 60 * i as u64);
            std::fs::File::options()
                .write(true)
                .open(&dst)
                .and_then(|f| f.set_modified(mtime))
                .unwrap();
        }
        Golden {
            dir,
            area,
            began,
            env: Vec::new(),
            seen: BTreeSet::new(),
            failures: Vec::new(),
        }
    }

    /// A directory with the inputs imported into `golden.db` (runs 1 to 10).
    fn with_store(area: &'static str) -> Golden {
        let g = Golden::new(area);
        for (_, args) in IMPORTS {
            let out = g.output(&store_args(&["results", "import"], args));
            assert_eq!(out.status.code(), Some(0), "{}", framed(args, &out));
        }
        g
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `rtlab ARGS` in the test's directory, with no state of the environment
    /// leaking in, invoked as `rtlab` (its argv[0]) as a user types it, so that
    /// a recorded command line, and where it wraps, does not depend on where
    /// the checkout lies.
    fn output(&self, args: &[String]) -> Output {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
        c.arg0("rtlab");
        for v in CLEARED_ENV {
            c.env_remove(v);
        }
        c.env("HOME", self.path()).current_dir(self.path());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.args(args).output().unwrap()
    }

    /// Runs `rtlab --db golden.db ARGS`, checks its exit code, and compares what it
    /// printed with the golden `NAME`.
    fn check(&mut self, name: &str, args: &[&str], code: i32) -> Output {
        self.check_args(name, &store_args(args, &[]), code)
    }

    /// Runs `rtlab ARGS` (no --db added), checks its exit code, and compares what
    /// it printed with the golden `NAME`.
    fn check_args(&mut self, name: &str, args: &[String], code: i32) -> Output {
        let out = self.output(args);
        let text = framed(args, &out);
        if out.status.code() != Some(code) {
            self.failures.push(format!(
                "{}: expected exit code {code}\n{text}",
                self.golden_path(name).display()
            ));
        }
        self.compare(name, &text);
        out
    }

    fn golden_path(&self, name: &str) -> PathBuf {
        Path::new(GOLDEN)
            .join("expected")
            .join(self.area)
            .join(format!("{name}.txt"))
    }

    /// Compares `actual` (redacted here) with the golden `NAME`, or writes it when
    /// blessing.
    fn compare(&mut self, name: &str, actual: &str) {
        let path = self.golden_path(name);
        assert!(
            self.seen.insert(path.clone()),
            "golden {} checked twice",
            path.display()
        );
        let actual = self.redact(actual);
        if blessing() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if std::fs::read_to_string(&path).ok().as_deref() != Some(actual.as_str()) {
                std::fs::write(&path, &actual).unwrap();
            }
            return;
        }
        match std::fs::read_to_string(&path) {
            Err(e) => self.failures.push(format!(
                "{}: cannot read the golden ({e}); RTLAB_BLESS=1 writes it. Output:\n{actual}",
                path.display()
            )),
            Ok(expected) => {
                let expected = self.redact(&expected);
                if expected != actual {
                    self.failures.push(format!(
                        "{} differs from the output of\n  {}\n{}",
                        path.display(),
                        actual.lines().next().unwrap_or(""),
                        line_diff(&expected, &actual)
                    ));
                }
            }
        }
    }

    fn redact(&self, text: &str) -> String {
        redact(text, self.path(), self.began)
    }

    /// Fails with every mismatch found; also fails on goldens of the area that no
    /// check produced (deleting them when blessing).
    fn finish(mut self) {
        let dir = Path::new(GOLDEN).join("expected").join(self.area);
        let mut stale = Vec::new();
        for e in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = e.unwrap().path();
            if !self.seen.contains(&path) {
                if blessing() {
                    std::fs::remove_file(&path).unwrap();
                } else {
                    stale.push(path);
                }
            }
        }
        for p in stale {
            self.failures.push(format!(
                "{}: no test produces this golden any more (RTLAB_BLESS=1 deletes it)",
                p.display()
            ));
        }
        if !self.failures.is_empty() {
            panic!(
                "{} golden mismatch(es) in {}; if the change is intended, regenerate with \
                 RTLAB_BLESS=1 cargo test --test cli golden and review the diff\n\n{}",
                self.failures.len(),
                dir.display(),
                self.failures.join("\n\n")
            );
        }
    }
}

/// A directory holding the inputs imported into `golden.db` (runs 1 to 10,
/// campaigns 1 and 2), for tests of what other programs make of rtlab's output.
pub fn imported_store() -> tempfile::TempDir {
    Golden::with_store("none").dir
}

/// `--db golden.db ARGS EXTRA` as owned strings.
fn store_args(args: &[&str], extra: &[&str]) -> Vec<String> {
    ["--db", "golden.db"]
        .iter()
        .chain(args)
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

/// A command's output as a golden: the command line, exit code, stdout, stderr.
fn framed<S: AsRef<str>>(args: &[S], out: &Output) -> String {
    let line: Vec<String> = args
        .iter()
        .map(|a| {
            let a = a.as_ref();
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'') {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.to_string()
            }
        })
        .collect();
    format!(
        "$ rtlab {}\nexit code: {}\n--- stdout\n{}--- stderr\n{}",
        line.join(" "),
        out.status
            .code()
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none (killed by a signal)".into()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Replaces what differs between runs of the test and between machines by
/// placeholders, and leaves everything else as it is:
/// - `<RTLAB>`: the path of the binary under test, should an output name it
///   (a recorded command line starts with `rtlab`, the argv[0] it is given);
/// - `<TMP>`: the test's temporary directory;
/// - `<VERSION>`: rtlab's own version where it is printed as such (`rtlab X`,
///   `"rtlab_version": "X"`), so that a release does not touch every golden;
/// - `<NOW>`: RFC 3339 timestamps taken while the test ran (campaign creation and
///   end, the time a report was written). Timestamps from the inputs (file times,
///   times inside the files) are fixed and stay.
fn redact(text: &str, tmp: &Path, began: DateTime<Utc>) -> String {
    let mut text = text.to_string();
    let rtlab = assert_cmd::cargo::cargo_bin("rtlab");
    let mut literal = vec![(rtlab.display().to_string(), "<RTLAB>")];
    if let Ok(canonical) = tmp.canonicalize() {
        literal.push((canonical.display().to_string(), "<TMP>"));
    }
    literal.push((tmp.display().to_string(), "<TMP>"));
    for (from, to) in literal {
        text = text.replace(&from, to);
    }
    let version = Regex::new(&format!(
        r#"("rtlab_version": "|\brtlab\s+){}\b"#,
        regex::escape(env!("CARGO_PKG_VERSION"))
    ))
    .unwrap();
    text = version.replace_all(&text, "${1}<VERSION>").into_owned();
    let timestamp = Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)").unwrap();
    let window = began - chrono::Duration::seconds(5)..Utc::now() + chrono::Duration::seconds(5);
    timestamp
        .replace_all(
            &text,
            |c: &regex::Captures<'_>| match DateTime::parse_from_rfc3339(&c[0]) {
                Ok(t) if window.contains(&t.with_timezone(&Utc)) => "<NOW>".to_string(),
                _ => c[0].to_string(),
            },
        )
        .into_owned()
}

/// The first difference between two texts as lines, with three lines of context:
/// `-` expected, `+` actual.
fn line_diff(expected: &str, actual: &str) -> String {
    const CONTEXT: usize = 3;
    const SHOWN: usize = 20;
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    let prefix = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suffix = e[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let show = |mark: &str, lines: &[&str]| -> String {
        let mut s: String = lines
            .iter()
            .take(SHOWN)
            .map(|l| {
                format!(
                    "{mark} {}\n",
                    l.strip_suffix('\n')
                        .unwrap_or(&format!("{l}⏎ (no newline at the end)"))
                )
            })
            .collect();
        if lines.len() > SHOWN {
            s.push_str(&format!(
                "{mark} ... {} more line(s)\n",
                lines.len() - SHOWN
            ));
        }
        s
    };
    format!(
        "@@ line {} (expected {} lines, actual {})\n{}{}{}{}",
        prefix + 1,
        e.len(),
        a.len(),
        show(" ", &e[prefix.saturating_sub(CONTEXT)..prefix]),
        show("-", &e[prefix..e.len() - suffix]),
        show("+", &a[prefix..a.len() - suffix]),
        show(
            " ",
            &e[e.len() - suffix..(e.len() - suffix + CONTEXT).min(e.len())]
        ),
    )
}

/// The shape of an HTML document: its title, headings, sections, tables (with
/// their header cells) and plots, one line each in document order.
fn html_outline(html: &str) -> String {
    let doc = parse(html);
    let text = |n: roxmltree::Node<'_, '_>| -> String {
        n.descendants()
            .filter(|d| d.is_text())
            .filter_map(|d| d.text())
            .collect::<String>()
            .trim()
            .to_string()
    };
    let mut out = String::new();
    for n in doc.descendants().filter(|n| n.is_element()) {
        let tag = n.tag_name().name();
        match tag {
            "title" | "h1" | "h2" | "h3" => out.push_str(&format!("{tag}: {}\n", text(n))),
            "section" => out.push_str(&format!("section #{}\n", n.attribute("id").unwrap_or(""))),
            "table" => {
                let head: Vec<String> = n
                    .descendants()
                    .filter(|d| d.has_tag_name("th"))
                    .map(text)
                    .collect();
                out.push_str(&format!("table: {}\n", head.join(" | ")));
            }
            "svg" if !n.ancestors().skip(1).any(|a| a.has_tag_name("svg")) => out.push_str("svg\n"),
            _ => {}
        }
    }
    out
}

/// The subcommands a `--help` text lists.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn results_import_prints_one_line_per_run_and_refuses_bad_files() {
    let mut g = Golden::new("import");
    for (name, args) in IMPORTS {
        g.check(name, &[&["results", "import"], *args].concat(), 0);
    }
    // Refusals name the file and the problem; nothing is imported.
    std::fs::write(g.path().join("notes.txt"), "hello\n").unwrap();
    g.check(
        "refused-unknown-file",
        &["results", "import", "notes.txt"],
        2,
    );
    g.check(
        "refused-missing-file",
        &["results", "import", "missing.txt"],
        2,
    );
    let threads = std::fs::read_to_string(g.path().join("sysbench-threads.txt")).unwrap();
    let cut: String = threads.lines().take(16).map(|l| format!("{l}\n")).collect();
    std::fs::write(g.path().join("cut.txt"), cut).unwrap();
    g.check("refused-cut-file", &["results", "import", "cut.txt"], 2);
    g.check(
        "refused-test-of-cyclictest-file",
        &[
            "results",
            "import",
            "cyclictest-histogram.txt",
            "--sysbench-test",
            "cpu",
        ],
        2,
    );
    g.check("list-after-refusals", &["results", "list"], 0);
    g.finish();
}

#[test]
fn results_list_campaigns_and_show() {
    let mut g = Golden::with_store("results");
    g.check("list", &["results", "list"], 0);
    g.check("list-json", &["results", "list", "--json"], 0);
    g.check(
        "list-kind-bench",
        &["results", "list", "--kind", "bench"],
        0,
    );
    g.check(
        "list-kind-latency-ns",
        &["results", "list", "--kind", "latency", "--unit", "ns"],
        0,
    );
    g.check("list-tag", &["results", "list", "--tag", "golden"], 0);
    g.check(
        "list-label",
        &["results", "list", "--label", "sysbench-%"],
        0,
    );
    g.check(
        "list-campaign-json",
        &["results", "list", "--campaign", "1", "--json"],
        0,
    );
    g.check("list-last-3", &["results", "list", "-n", "3"], 0);
    g.check(
        "list-since-date",
        &["results", "list", "--since", "2025-03-01T10:05:00Z"],
        0,
    );
    g.check(
        "list-no-match",
        &["results", "list", "--label", "nothing"],
        0,
    );
    g.check("campaigns", &["results", "campaigns"], 0);
    g.check("campaign-1", &["results", "campaigns", "1"], 0);
    g.check("campaign-2", &["results", "campaigns", "2"], 0);
    for id in 1..=10 {
        let id = id.to_string();
        g.check(&format!("show-{id}"), &["results", "show", &id], 0);
    }
    for id in ["1", "3", "4", "9"] {
        g.check(
            &format!("show-{id}-json"),
            &["results", "show", id, "--json"],
            0,
        );
    }
    g.check("show-9-ms", &["results", "show", "9", "--unit", "ms"], 0);
    g.check("show-unknown-id", &["results", "show", "99"], 2);
    g.finish();
}

#[test]
fn results_export_as_json_csv_and_hist() {
    let mut g = Golden::with_store("export");
    for id in ["2", "8", "10"] {
        g.check(
            &format!("json-{id}"),
            &["results", "export", id, "--format", "json"],
            0,
        );
    }
    g.check("csv-1", &["results", "export", "1", "--format", "csv"], 0);
    let all: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
    let mut args = vec!["results", "export", "--format", "csv"];
    args.extend(all.iter().map(String::as_str));
    g.check("csv-all", &args, 0);
    for id in ["1", "2", "3", "9"] {
        g.check(
            &format!("hist-{id}"),
            &["results", "export", id, "--format", "hist"],
            0,
        );
    }
    // -o writes the file (through a temporary one) and prints nothing.
    g.check(
        "hist-1-to-file",
        &[
            "results", "export", "1", "--format", "hist", "-o", "one.hist",
        ],
        0,
    );
    let written = std::fs::read_to_string(g.path().join("one.hist")).unwrap();
    g.compare("hist-1-file-content", &written);
    g.check(
        "hist-of-bench-refused",
        &["results", "export", "4", "--format", "hist"],
        2,
    );
    g.check(
        "json-of-two-refused",
        &["results", "export", "1", "2", "--format", "json"],
        2,
    );
    g.finish();
}

#[test]
fn compare_tables_formats_and_verdict_exit_codes() {
    let mut g = Golden::with_store("compare");
    let latency = ["compare", "1", "2", "3", "9"];
    g.check("latency", &latency, 0);
    g.check("latency-json", &[&latency[..], &["--json"]].concat(), 0);
    g.check("latency-csv", &[&latency[..], &["--csv"]].concat(), 0);
    g.check(
        "latency-markdown",
        &[&latency[..], &["--markdown"]].concat(),
        0,
    );
    g.check("latency-ns", &[&latency[..], &["--unit", "ns"]].concat(), 0);
    g.check(
        "latency-baseline-9",
        &[&latency[..], &["--baseline", "9"]].concat(),
        0,
    );
    g.check(
        "by-label",
        &["compare", "stock", "rt-board", "cyclictest-histogram@1"],
        0,
    );
    g.check("label-like", &["compare", "--label-like", "cyclictest%"], 0);
    g.check("bench", &["compare", "4", "10"], 0);
    g.check("bench-json", &["compare", "4", "10", "--json"], 0);
    g.check("campaign-1", &["compare", "--campaign", "1"], 0);
    // Verdicts: exit 0 when every run meets every budget, 1 when one fails.
    g.check(
        "require-pass",
        &[&latency[..], &["--require", "gyro=5ms"]].concat(),
        0,
    );
    g.check(
        "require-fail",
        &["compare", "1", "9", "--require", "gyro=1ms"],
        1,
    );
    g.check(
        "require-fail-json",
        &["compare", "1", "9", "--require", "gyro=1ms", "--json"],
        1,
    );
    g.check(
        "require-fail-markdown",
        &["compare", "1", "9", "--require", "gyro=1ms", "--markdown"],
        1,
    );
    g.check(
        "require-fail-csv",
        &["compare", "1", "9", "--require", "gyro=1ms", "--csv"],
        1,
    );
    g.check(
        "require-bare-us-pass",
        &["compare", "9", "--require", "loop=100"],
        0,
    );
    g.check(
        "require-preset-drone",
        &["compare", "1", "9", "--require", "drone"],
        1,
    );
    g.check(
        "require-preset-messaging",
        &["compare", "9", "--require", "messaging"],
        0,
    );
    g.check(
        "require-bad-budget",
        &["compare", "1", "--require", "gyro=abc"],
        2,
    );
    g.check("unknown-run", &["compare", "nosuchlabel"], 2);
    g.check(
        "html",
        &[
            "compare",
            "1",
            "9",
            "--require",
            "gyro=1ms",
            "--html",
            "c.html",
            "--title",
            "Golden",
        ],
        1,
    );
    let html = std::fs::read_to_string(g.path().join("c.html")).unwrap();
    g.compare("html-outline", &html_outline(&html));
    g.finish();
}

#[test]
fn report_text_verdicts_and_html_outline() {
    let mut g = Golden::with_store("report");
    for id in 1..=10 {
        let id = id.to_string();
        g.check(&format!("run-{id}"), &["report", &id], 0);
    }
    g.check("by-label-ns", &["report", "rt-board", "--unit", "ns"], 0);
    g.check("require-pass", &["report", "9", "--require", "gyro=1ms"], 0);
    g.check(
        "require-fail",
        &["report", "9", "--require", "gyro=50us"],
        1,
    );
    g.check("campaign-1", &["report", "--campaign", "1"], 0);
    g.check("campaign-2", &["report", "--campaign", "2"], 0);
    g.check("unknown-run", &["report", "99"], 2);
    g.check("html-run", &["report", "9", "--html", "r.html"], 0);
    let html = std::fs::read_to_string(g.path().join("r.html")).unwrap();
    g.compare("html-run-outline", &html_outline(&html));
    g.check(
        "html-campaign",
        &["report", "--campaign", "2", "--html", "c.html"],
        0,
    );
    let html = std::fs::read_to_string(g.path().join("c.html")).unwrap();
    g.compare("html-campaign-outline", &html_outline(&html));
    g.finish();
}

#[test]
fn kconfig_diff_and_check_of_the_pinned_configs() {
    let mut g = Golden::new("kconfig");
    let kconfig = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kconfig");
    for f in ["config-6.1.0-56-amd64.gz", "config-6.1.0-56-rt-amd64.gz"] {
        std::fs::copy(kconfig.join(f), g.path().join(f)).unwrap();
    }
    let (old, new) = ("config-6.1.0-56-amd64.gz", "config-6.1.0-56-rt-amd64.gz");
    let run = |g: &mut Golden, name: &str, args: &[&str], code| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        g.check_args(name, &args, code);
    };
    run(&mut g, "diff", &["kconfig", "diff", old, new], 0);
    run(&mut g, "diff-reverse", &["kconfig", "diff", new, old], 0);
    run(
        &mut g,
        "diff-summary",
        &["kconfig", "diff", "--summary", old, new],
        0,
    );
    run(
        &mut g,
        "diff-json",
        &["kconfig", "diff", "--json", old, new],
        0,
    );
    run(
        &mut g,
        "diff-summary-json",
        &["kconfig", "diff", "--summary", "--json", old, new],
        0,
    );
    run(&mut g, "diff-same", &["kconfig", "diff", new, new], 0);
    run(&mut g, "check-vanilla", &["kconfig", "check", old], 0);
    run(&mut g, "check-rt", &["kconfig", "check", new], 0);
    run(
        &mut g,
        "check-rt-json",
        &["kconfig", "check", "--json", new],
        0,
    );
    run(
        &mut g,
        "check-vanilla-strict",
        &["kconfig", "check", "--strict", old],
        1,
    );
    run(
        &mut g,
        "check-rt-strict",
        &["kconfig", "check", "--strict", new],
        1,
    );
    run(
        &mut g,
        "check-missing-file",
        &["kconfig", "check", "missing.gz"],
        2,
    );
    g.finish();
}

#[test]
fn presets_and_load_kinds() {
    let mut g = Golden::new("presets");
    let args = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.to_string()).collect() };
    let list = g.check_args("list", &args(&["presets", "list"]), 0);
    let names: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.len() >= 6, "presets list shows {names:?}");
    for n in &names {
        g.check_args(&format!("show-{n}"), &args(&["presets", "show", n]), 0);
    }
    g.check_args("show-unknown", &args(&["presets", "show", "nosuch"]), 2);
    g.check_args("load-list", &args(&["load", "--list"]), 0);
    g.finish();
}

#[test]
fn help_of_every_subcommand() {
    let mut g = Golden::new("help");
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let name = if path.is_empty() {
            "rtlab".to_string()
        } else {
            path.join("-")
        };
        let args: Vec<String> = path.iter().cloned().chain(["--help".to_string()]).collect();
        let out = g.check_args(&name, &args, 0);
        for sub in subcommands(&String::from_utf8_lossy(&out.stdout)) {
            let mut p = path.clone();
            p.push(sub);
            pending.push(p);
        }
    }
    g.check_args("rtlab-version", &["--version".to_string()], 0);
    let args = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.to_string()).collect() };
    for topic in ["units", "exit-codes", "loads", "scenarios", "store"] {
        g.check_args(&format!("topic-{topic}"), &args(&["help", topic]), 0);
    }
    let by_help = g.output(&args(&["help", "net", "ping"]));
    let by_flag = g.output(&args(&["net", "ping", "--help"]));
    assert_eq!(by_help.stdout, by_flag.stdout, "rtlab help net ping");
    g.check_args("help-nosuch", &args(&["help", "nosuch"]), 2);
    g.finish();
}

/// What the goldens pin does not depend on the user's time zone, terminal width,
/// locale or RTLAB_DB when --db is given.
#[test]
fn environment_does_not_leak_into_outputs() {
    if blessing() {
        return; // reads goldens that other tests may be writing
    }
    let mut g = Golden::with_store("results");
    let other_db = g.path().join("other.db");
    g.env = vec![
        ("TZ".into(), "Asia/Tokyo".into()),
        ("COLUMNS".into(), "40".into()),
        ("LINES".into(), "10".into()),
        ("LANG".into(), "de_DE.UTF-8".into()),
        ("LC_ALL".into(), "de_DE.UTF-8".into()),
        ("RTLAB_DB".into(), other_db.display().to_string()),
        (
            "XDG_DATA_HOME".into(),
            g.path().join("xdg").display().to_string(),
        ),
    ];
    g.check("list", &["results", "list"], 0);
    g.check("list-json", &["results", "list", "--json"], 0);
    g.check("show-1", &["results", "show", "1"], 0);
    g.check("show-9", &["results", "show", "9"], 0);
    g.check("show-1-json", &["results", "show", "1", "--json"], 0);
    g.check("campaign-1", &["results", "campaigns", "1"], 0);
    g.area = "compare";
    g.check("latency", &["compare", "1", "2", "3", "9"], 0);
    g.check(
        "require-fail",
        &["compare", "1", "9", "--require", "gyro=1ms"],
        1,
    );
    g.area = "report";
    g.check("run-3", &["report", "3"], 0);
    g.check("campaign-1", &["report", "--campaign", "1"], 0);
    assert!(
        !other_db.exists(),
        "RTLAB_DB was used although --db was given"
    );
    // Not `finish`: this test checks a subset of other tests' goldens.
    assert!(g.failures.is_empty(), "{}", g.failures.join("\n\n"));
}
