//! Runs of several hosts and kernels chosen and merged: `--host`, `--kernel`,
//! `--since`/`--until`, `--by host|kernel|tag` in `compare`, `report` and
//! `results list`, on runs imported from scripted cyclictest summaries whose
//! system is set in their rtlab JSON before they are imported again.

use crate::common::{expect, json, shown};
use crate::compare_common::{changes, columns, first, row};
use crate::store_common::{export_json, import, list_ids_with, rtlab};
use serde_json::Value;
use std::path::Path;

/// One scripted run: host, kernel, day of January 2026, max (µs), misses.
type Spec = (&'static str, &'static str, u32, u64, u64);

/// Hosts a (6.1.0-rt then 6.6.0-rt) and b (6.1.0-rt), ids 1, 2, 3 in order:
/// 1000 samples each, min 11 µs, mean 20 µs.
const FLEET: [Spec; 3] = [
    ("a", "6.1.0-rt", 1, 100, 2),
    ("a", "6.6.0-rt", 2, 300, 3),
    ("b", "6.1.0-rt", 3, 200, 0),
];

/// The rtlab JSON document of `file` imported into a scratch store in `dir`.
fn imported(dir: &Path, file: &Path) -> Value {
    let seed = dir.join("seed.db");
    let _ = std::fs::remove_file(&seed);
    let id = import(&seed, &[file.to_str().unwrap(), "--label", "ct"])[0];
    export_json(&seed, id)
}

/// Saves `run` as a file in `dir` and imports it into `db`.
fn reimport(dir: &Path, db: &Path, run: &Value) {
    let file = dir.join("run.json");
    std::fs::write(&file, run.to_string()).unwrap();
    import(db, &[file.to_str().unwrap()]);
}

/// A store holding `specs`, made by importing one cyclictest summary, then
/// each run as rtlab JSON with its system, start, maximum and misses set.
fn fleet(dir: &Path, specs: &[Spec]) -> std::path::PathBuf {
    let summary = dir.join("ct.txt");
    std::fs::write(
        &summary,
        "T: 0 (1) P:80 I:1000 C:   1000 Min:     11 Act:   33 Avg:   20 Max:     100\n",
    )
    .unwrap();
    let doc = imported(dir, &summary);
    let db = dir.join("fleet.db");
    for &(host, kernel, day, max_us, misses) in specs {
        let mut run = doc.clone();
        run["fingerprint"]["hostname"] = host.into();
        run["fingerprint"]["kernel_release"] = kernel.into();
        run["started_at"] = format!("2026-01-{day:02}T12:00:00.000000Z").into();
        run["ended_at"] = format!("2026-01-{day:02}T12:00:01.000000Z").into();
        let unreported = run["params"]["unreported"].as_array_mut().unwrap();
        unreported.retain(|u| u != "deadline_misses");
        for s in run["series"].as_array_mut().unwrap() {
            s["summary"]["max_ns"] = (max_us * 1000).into();
            s["counters"]["deadline_misses"] = misses.into();
        }
        run["total"] = run["series"][0].clone();
        run["total"]["name"] = "all".into();
        reimport(dir, &db, &run);
    }
    db
}

fn values(doc: &Value, name: &str) -> Vec<Option<f64>> {
    crate::compare_common::values(row(doc, name))
}

fn labels(doc: &Value) -> Vec<String> {
    columns(doc)
        .iter()
        .map(|c| c["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn by_host_merges_each_hosts_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    let cmd = |extra: &[&str]| {
        let mut c = rtlab(&db);
        c.args(["compare", "--by", "host", "--json"]).args(extra);
        c
    };
    // Host a's runs disagree about 250 µs: UNDECIDED (exit 4), b's passes.
    let doc = json(&mut cmd(&["--require", "x=250us"]), &[4]);
    assert_eq!(labels(&doc), ["a", "b"]);
    assert_eq!(values(&doc, "runs"), [Some(2.0), Some(1.0)]);
    assert_eq!(values(&doc, "worst run"), [Some(2.0), Some(3.0)]);
    assert_eq!(values(&doc, "max"), [Some(300_000.0), Some(200_000.0)]);
    assert_eq!(values(&doc, "samples"), [Some(2000.0), Some(1000.0)]);
    assert_eq!(values(&doc, "misses"), [Some(5.0), Some(0.0)]);
    assert_eq!(values(&doc, "mean"), [Some(20_000.0), Some(20_000.0)]);
    let rows = first(&doc)["comparison"]["rows"].as_array().unwrap();
    assert!(
        !rows.iter().any(|r| r["name"] == "p99"),
        "not in the summaries"
    );
    let group = &columns(&doc)[0]["group"];
    assert_eq!(group["by"], "host");
    assert_eq!(group["runs"], serde_json::json!([1, 2]));
    let verdicts: Vec<(&str, &str)> = first(&doc)["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["label"].as_str().unwrap(), v["result"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts, [("a", "UNDECIDED"), ("b", "PASS")]);
    // Judged against the group named by --baseline: the maxima of two runs
    // against one cannot be told apart.
    let doc = json(&mut cmd(&["--baseline", "b"]), &[0]);
    assert_eq!(changes(row(&doc, "max")), ["unknown", "same"]);
    assert_eq!(
        row(&doc, "max")["cells"][0]["ci"],
        serde_json::json!([100_000.0, 300_000.0])
    );
    let out = expect(rtlab(&db).args(["compare", "--by", "host"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    let worst = text.lines().find(|l| l.starts_with("worst run")).unwrap();
    assert!(worst.contains("#2") && worst.ends_with("#3"), "{text}");
    assert!(text.contains("what differs:\nfield "), "{text}");
}

#[test]
fn by_kernel_with_a_host_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    let doc = json(
        rtlab(&db).args(["compare", "--by", "kernel", "--json"]),
        &[0],
    );
    assert_eq!(labels(&doc), ["6.1.0-rt", "6.6.0-rt"]);
    assert_eq!(values(&doc, "max"), [Some(200_000.0), Some(300_000.0)]);
    assert_eq!(values(&doc, "worst run"), [Some(3.0), Some(2.0)]);
    let doc = json(
        rtlab(&db).args(["compare", "--host", "a", "--by", "kernel", "--json"]),
        &[0],
    );
    assert_eq!(values(&doc, "max"), [Some(100_000.0), Some(300_000.0)]);
    assert_eq!(values(&doc, "runs"), [Some(1.0), Some(1.0)]);
    // Without --by, the chosen runs one column each, oldest first.
    let doc = json(
        rtlab(&db).args(["compare", "--kernel", "6.1%", "--json"]),
        &[0],
    );
    let ids: Vec<i64> = columns(&doc)
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 3]);
}

#[test]
fn filters_choose_the_listed_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    let ids = |args: &[&str]| list_ids_with(&db, args);
    assert_eq!(ids(&["--host", "a"]), [2, 1]);
    assert_eq!(ids(&["--host", "a", "--host", "b", "--limit", "2"]), [3, 2]);
    assert_eq!(ids(&["--kernel", "6.1.0-rt"]), [3, 1]);
    assert_eq!(ids(&["--kernel", "6.6%"]), [2]);
    assert_eq!(
        ids(&["--since", "2026-01-02", "--until", "2026-01-03"]),
        [2]
    );
    assert_eq!(ids(&["--until", "2026-01-02"]), [1]);
    assert_eq!(ids(&["--host", "c"]), Vec::<i64>::new());
    // The same filters choose what is copied.
    let other = dir.path().join("other.db");
    let out = expect(
        rtlab(&db)
            .args([
                "results", "push", "--kernel", "6.1.0-rt", "--host", "b", "--to",
            ])
            .arg(&other),
        &[0],
    );
    assert!(
        shown(&out).contains("1 new, 0 already there"),
        "{}",
        shown(&out)
    );
    let out = expect(
        rtlab(&db).args(["results", "list", "--until", "soon"]),
        &[2],
    );
    assert!(shown(&out).contains("--until"), "{}", shown(&out));
}

#[test]
fn results_list_by_host_is_one_line_per_host() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    let out = expect(rtlab(&db).args(["results", "list", "--by", "host"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["host", "worst", "run", "runs", "samples", "p99", "max", "misses"]
    );
    assert_eq!(
        lines[1],
        ["a", "#2", "2", "2000", "–", "300.0", "5"],
        "{text}"
    );
    assert_eq!(
        lines[2],
        ["b", "#3", "1", "1000", "–", "200.0", "0"],
        "{text}"
    );
    assert!(text.ends_with(
        "2 group(s) of 3 run(s); p99 of all their samples, max of the worst run; times in us\n"
    ));
    let doc = json(
        rtlab(&db).args(["results", "list", "--by", "kernel", "--host", "a", "--json"]),
        &[0],
    );
    assert_eq!(doc[0]["group"], "6.1.0-rt");
    assert_eq!(doc[1]["run_ids"], serde_json::json!([2]));
    assert_eq!(
        (doc[1]["max_ns"].as_f64(), doc[1]["misses"].as_f64()),
        (Some(300_000.0), Some(3.0))
    );
    let out = expect(
        rtlab(&db).args(["results", "list", "--by", "host", "--host", "z"]),
        &[2],
    );
    assert!(shown(&out).contains("no runs match"), "{}", shown(&out));
}

#[test]
fn a_named_group_without_runs_and_an_unknown_by_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    let out = expect(
        rtlab(&db).args(["compare", "--host", "a", "--host", "c", "--by", "host"]),
        &[2],
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--host: no run of host 'c'"), "{err}");
    assert!(out.stdout.is_empty());
    let out = expect(rtlab(&db).args(["compare", "--by", "board"]), &[2]);
    assert!(shown(&out).contains("possible values: host, kernel, tag"));
    let out = expect(rtlab(&db).args(["compare", "--host", "c"]), &[2]);
    assert!(shown(&out).contains("no stored run matches --host c"));
    let out = expect(rtlab(&db).args(["compare", "--by", "tag"]), &[2]);
    assert!(shown(&out).contains("none of the 3 chosen runs has a tag"));
    let out = expect(
        rtlab(&db).args(["compare", "--by", "host", "--baseline", "z"]),
        &[2],
    );
    assert!(shown(&out).contains("'z' is none of them (a, b)"));
    let out = expect(rtlab(&db).args(["compare", "1", "--host", "a"]), &[2]);
    assert!(shown(&out).contains("not both"));
}

#[test]
fn tags_group_and_kinds_must_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    for (id, tag) in [("1", "nightly"), ("3", "nightly"), ("2", "isolcpus")] {
        expect(rtlab(&db).args(["results", "tag", id, tag]), &[0]);
    }
    let doc = json(rtlab(&db).args(["compare", "--by", "tag", "--json"]), &[0]);
    assert_eq!(labels(&doc), ["isolcpus", "nightly"]);
    assert_eq!(values(&doc, "max"), [Some(300_000.0), Some(200_000.0)]);
    let bench = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/sysbench-1.0-cpu.txt"
    );
    import(&db, &[bench]);
    let out = expect(rtlab(&db).args(["compare", "--by", "kernel"]), &[2]);
    assert!(
        shown(&out)
            .contains("of 2 kinds (bench.cpu, latency); merge one kind at a time with --kind"),
        "{}",
        shown(&out)
    );
    expect(
        rtlab(&db).args(["compare", "--by", "host", "--kind", "latency"]),
        &[0],
    );
}

#[test]
fn groups_in_reports_plots_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = fleet(dir.path(), &FLEET);
    // Runs with every value (cyclictest -v) have histograms to plot.
    let verbose =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/cyclictest-verbose.txt");
    let doc = imported(dir.path(), &verbose);
    let plotted = dir.path().join("plotted.db");
    for host in ["a", "a", "b"] {
        let mut run = doc.clone();
        run["fingerprint"]["hostname"] = host.into();
        reimport(dir.path(), &plotted, &run);
    }
    let html = dir.path().join("c.html");
    let svg = dir.path().join("c.svg");
    let out = expect(
        rtlab(&plotted)
            .args(["compare", "--by", "host", "--html"])
            .arg(&html)
            .arg("--svg")
            .arg(&svg),
        &[0],
    );
    assert!(out.status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("a (2 runs)"), "{page}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("b #3"));
    let out = expect(
        rtlab(&db).args(["report", "--by", "host", "--require", "x=250us"]),
        &[1],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("rtlab latency  a (2 runs, worst #2)  [complete]\n"),
        "{text}"
    );
    assert!(text.contains("2000 samples in 2s observed"), "{text}");
    let doc = json(rtlab(&db).args(["report", "--host", "b", "--json"]), &[0]);
    assert_eq!(doc["runs"][0]["id"], 3, "{doc}");
}
