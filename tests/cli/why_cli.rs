//! `rtlab why` and the spike analysis in the outputs of stored runs: text, JSON,
//! exports and reports, on a run document that carries a `why`
//! (`tests/fixtures/why/latency-flood.json`: a latency run under a loopback UDP
//! flood, its analysis written to match its histogram).

use crate::common::{expect, json, rtlab, shown};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The fixture with an analysis.
pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/why/latency-flood.json")
}

/// The fixture's document.
pub fn fixture_doc() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap()
}

/// A store in `dir` holding the documents `docs`, imported in order (ids from 1).
pub fn store_with(dir: &Path, docs: &[Value]) -> PathBuf {
    let db = dir.join("why.db");
    for (i, d) in docs.iter().enumerate() {
        let file = dir.join(format!("run{i}.json"));
        std::fs::write(&file, serde_json::to_string(d).unwrap()).unwrap();
        expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["results", "import"])
                .arg(&file),
            &[0],
        );
    }
    db
}

fn why(db: &Path, args: &[&str], code: i32) -> (String, String) {
    let out = expect(rtlab().arg("--db").arg(db).arg("why").args(args), &[code]);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn why_prints_the_spikes_and_the_ranked_causes_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_with(dir.path(), &[fixture_doc()]);
    let (text, _) = why(&db, &["1"], 0);
    for needle in [
        "run flood on cpu1 #1\n",
        "why: 18 spike(s) at or above 50us; the 8 worst decomposed below\n",
        "traced: sched, irq, timer, power; 1843907 events, none lost; resolution 1us\n",
        "not analysed: timerlat: the kernel has no timerlat tracer",
        "spike 1: 194.533us on CPU 1, thread 0, cycle 2417 (timer expired 1.8us late)\n",
        "    1.8us  timer interrupt\n",
        "  119.5us  softirq NET_RX\n",
        "    3.1us  thread migration/1 (pid 19, fifo 99): outranked the probe\n",
        "    4.2us  IRQ virtio0-input.0 (irq 26)\n",
        "   12.5us  idle exit from haltpoll\n",
        "   1. NET_RX softirq on CPU 1: 53% of spike time in 14 of 18 spikes\n",
        "   2. thread rtlab-load (pid 4121, other) on CPU 1: 31% of spike time in 18 of 18",
    ] {
        assert!(text.contains(needle), "missing {needle:?}\n{text}");
    }
    assert_eq!(text.matches("\nspike ").count(), 8, "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // By label too, and fewer spikes on request.
    let (text, _) = why(&db, &["flood on cpu1", "--spikes", "2"], 0);
    assert!(text.contains("the 2 worst decomposed below"), "{text}");
    assert_eq!(text.matches("\nspike ").count(), 2, "{text}");
    assert!(text.contains("causes, by share of spike time (1.709ms in 18 spikes):"));
}

#[test]
fn every_decomposed_spike_adds_up_to_its_latency() {
    let doc = fixture_doc();
    for s in doc["why"]["spikes"].as_array().unwrap() {
        let ns = |v: &Value| v.as_u64().unwrap_or(0);
        let sum = |key: &str| -> u64 {
            s[key]
                .as_array()
                .map(|a| a.iter().map(|x| ns(&x["ns"])).sum())
                .unwrap_or(0)
        };
        // The timer's lateness overlaps the parts: it is not one.
        let parts = sum("irqs")
            + sum("softirqs")
            + sum("threads")
            + ns(&s["idle"]["exit_ns"])
            + ns(&s["unexplained_ns"]);
        assert_eq!(parts, ns(&s["latency_ns"]), "{s}");
    }
}

#[test]
fn why_json_is_the_stored_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let doc = fixture_doc();
    let db = store_with(dir.path(), std::slice::from_ref(&doc));
    let out = json(
        rtlab().arg("--db").arg(&db).args(["why", "1", "--json"]),
        &[0],
    );
    assert_eq!(out["format"], "rtlab/1");
    assert_eq!(out["kind"], "why");
    assert_eq!(out["run"], 1);
    assert_eq!(out["why"], doc["why"]);
    let out = json(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["why", "1", "--json", "--spikes", "1"]),
        &[0],
    );
    assert_eq!(out["why"]["spikes"].as_array().unwrap().len(), 1);
    assert_eq!(out["why"]["causes"], doc["why"]["causes"]);
}

#[test]
fn lost_events_are_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = fixture_doc();
    doc["why"]["events_lost"] = 4096.into();
    let db = store_with(dir.path(), &[doc]);
    let (text, _) = why(&db, &["1"], 0);
    assert!(text.contains("1843907 events, 4096 lost"), "{text}");
    assert!(
        text.contains("  ! events_lost: the kernel dropped 4096 events"),
        "{text}"
    );
}

#[test]
fn runs_without_an_analysis_say_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut plain = fixture_doc();
    plain.as_object_mut().unwrap().remove("why");
    let mut bench = plain.clone();
    bench["kind"] = "bench.cpu".into();
    let db = store_with(dir.path(), &[plain, bench]);
    let (_, err) = why(&db, &["1"], 2);
    assert!(
        err.contains("run flood on cpu1 #1 (latency) has no spike analysis: measure again with 'rtlab latency --trace'"),
        "{err}"
    );
    let (_, err) = why(&db, &["2"], 2);
    assert!(
        err.contains(
            "latency and noise runs are analysed: 'rtlab latency --trace', 'rtlab noise --trace'"
        ),
        "{err}"
    );
    let (_, err) = why(&db, &["99"], 2);
    assert!(err.contains("99"), "{err}");
    // No database: said, and nothing created.
    let none = dir.path().join("none.db");
    let out = expect(rtlab().arg("--db").arg(&none).args(["why", "1"]), &[2]);
    assert!(!none.exists(), "{}", shown(&out));
}

#[test]
fn stored_documents_and_exports_carry_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let doc = fixture_doc();
    let db = store_with(dir.path(), std::slice::from_ref(&doc));
    let cmd = |args: &[&str]| {
        let mut c = rtlab();
        c.arg("--db").arg(&db).args(args);
        c
    };
    let text = expect(&mut cmd(&["results", "show", "1"]), &[0]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("\nwhy: 18 spike(s) at or above 50us; 'rtlab why 1' shows each one\n"),
        "{text}"
    );
    let shown = json(&mut cmd(&["results", "show", "1", "--json"]), &[0]);
    assert_eq!(shown["why"], doc["why"]);
    let exported = json(&mut cmd(&["results", "export", "1"]), &[0]);
    assert_eq!(exported["why"], doc["why"]);
    let report = json(&mut cmd(&["report", "1", "--json"]), &[0]);
    assert_eq!(report["runs"][0]["why"], doc["why"]);
    // An exported run imports again with its analysis.
    let sub = dir.path().join("again");
    std::fs::create_dir(&sub).unwrap();
    let again = store_with(&sub, &[exported]);
    let out = json(
        rtlab().arg("--db").arg(&again).args(["why", "1", "--json"]),
        &[0],
    );
    assert_eq!(out["why"], doc["why"]);
}

#[test]
fn the_text_report_ends_its_run_with_the_causes() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_with(dir.path(), &[fixture_doc()]);
    let out = expect(rtlab().arg("--db").arg(&db).args(["report", "1"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "\nwhy: 18 spike(s) at or above 50us; 'rtlab why 1' shows each one\n\
             causes, by share of spike time (1.709ms in 18 spikes):\n   \
             1. NET_RX softirq on CPU 1: 53% of spike time in 14 of 18 spikes\n"
        ),
        "{text}"
    );
    let why = &text[text.find("\nwhy: ").unwrap()..text.find("\nsystem:").unwrap()];
    assert!(why.lines().all(|l| l.chars().count() <= 100), "{why}");
}

#[test]
fn run_trace_needs_a_latency_step() {
    let dir = tempfile::tempdir().unwrap();
    let scn = dir.path().join("b.toml");
    std::fs::write(&scn, "name = \"b\"\n[[step]]\nprobe = \"bench.cpu\"\n").unwrap();
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(dir.path().join("x.db"))
            .arg("run")
            .arg(&scn)
            .arg("--trace"),
        &[2],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--trace: "), "{}", shown(&out));
    assert!(
        err.contains("has no latency or noise step to trace"),
        "{}",
        shown(&out)
    );
    assert!(!dir.path().join("x.db").exists(), "nothing stored");
}

#[test]
fn compare_names_each_runs_top_cause_under_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let flood = fixture_doc();
    let mut hog = fixture_doc();
    hog["label"] = "fifo hog on cpu1".into();
    hog["why"]["causes"][0] = serde_json::json!({
        "kind": "thread", "name": "hog (pid 777, fifo 95)", "cpu": 1,
        "ns": 1_500_000, "share": 0.88, "spikes": 18
    });
    let mut plain = fixture_doc();
    plain["label"] = "no analysis".into();
    plain.as_object_mut().unwrap().remove("why");
    let db = store_with(dir.path(), &[flood.clone(), hog, plain, flood]);
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["compare", "1", "2", "3", "4"]),
        &[0],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.starts_with("top cause ")).unwrap();
    let cells: Vec<&str> = row.split("  ").filter(|c| !c.trim().is_empty()).collect();
    assert_eq!(
        cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
        ["top cause", "c1 53%", "c2 88%", "–", "c1 53%"],
        "{text}"
    );
    assert!(
        text.contains(
            "top cause: the cause of the largest share of spike (or noise) time ('rtlab why RUN' explains)\n  \
             c1  NET_RX softirq on CPU 1\n  c2  thread hog (pid 777, fifo 95) on CPU 1\n"
        ),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let doc = json(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["compare", "1", "3", "--json"]),
        &[0],
    );
    let cols = &doc["comparisons"][0]["comparison"]["columns"];
    assert_eq!(cols[0]["why"]["spikes_total"], 18);
    assert_eq!(cols[0]["why"]["top_cause"]["name"], "NET_RX");
    assert!(cols[1].get("why").is_none(), "{doc}");
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["compare", "1", "2", "--markdown"]),
        &[0],
    );
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("| top cause | NET_RX softirq on CPU 1: 53% | thread hog (pid 777, fifo 95) on CPU 1: 88% |"),
        "{md}"
    );
}
