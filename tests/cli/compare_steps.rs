//! `rtlab compare` of campaigns: labels that stand for a campaign's steps are
//! compared step by step (cpu with cpu, fileio with fileio), `label@step`
//! names one step, a campaign is never narrowed to its newest run nor mixed
//! with single runs, runs of different kinds are never ratioed, and the drone
//! workflow ends in a kernel × deadline tier matrix. All on imported files,
//! so that no answer depends on the machine running the test.

use crate::common::{expect, json, rtlab, shown};
use crate::compare_common::{columns, first};
use serde_json::Value;
use std::path::{Path, PathBuf};

const IMPORT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");
const DRONE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/drone");

/// `rtlab --db DB`.
fn at(db: &Path) -> assert_cmd::Command {
    let mut c = rtlab();
    c.arg("--db").arg(db);
    c
}

/// A store with `images` campaigns, each the four sysbench outputs of the
/// satellite preset imported together under the label `imageN` (steps
/// `cpu.txt`, `fileio.txt`, `threads.txt`, `mutex.txt`; runs 1-4, 5-8, ...).
fn satellite(dir: &Path, images: usize) -> PathBuf {
    let db = dir.join("s.db");
    let files = [
        ("sysbench-1.0-cpu.txt", "cpu.txt"),
        ("sysbench-1.0-fileio-seqwr.txt", "fileio.txt"),
        ("sysbench-1.0-threads.txt", "threads.txt"),
        ("sysbench-1.0-mutex.txt", "mutex.txt"),
    ];
    for i in 1..=images {
        let d = dir.join(format!("img{i}"));
        std::fs::create_dir(&d).unwrap();
        for (src, dst) in files {
            std::fs::copy(Path::new(IMPORT).join(src), d.join(dst)).unwrap();
        }
        expect(
            at(&db)
                .current_dir(&d)
                .args(["results", "import", "--label", &format!("image{i}")])
                .args(files.map(|f| f.1)),
            &[0],
        );
    }
    db
}

/// Each comparison of a `compare --json` document: its title, kind and
/// columns' labels.
fn parts(doc: &Value) -> Vec<(String, String, Vec<String>)> {
    doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let labels = p["comparison"]["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["label"].as_str().unwrap().to_string())
                .collect();
            (
                p["title"].as_str().unwrap().to_string(),
                p["kind"].as_str().unwrap().to_string(),
                labels,
            )
        })
        .collect()
}

#[test]
fn labels_of_campaigns_are_compared_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = satellite(dir.path(), 3);
    let images = ["image1", "image2", "image3"];
    let doc = json(at(&db).args(["compare"]).args(images).arg("--json"), &[0]);
    let want = |step: &str, kind: &str| {
        (
            step.to_string(),
            kind.to_string(),
            images.map(String::from).to_vec(),
        )
    };
    assert_eq!(
        parts(&doc),
        [
            want("cpu.txt", "bench.cpu"),
            want("fileio.txt", "bench.fileio"),
            want("threads.txt", "bench.threads"),
            want("mutex.txt", "bench.mutex"),
        ]
    );
    // The same campaigns named by id pair the same way.
    let by_id = json(
        at(&db).args(["compare", "--campaign", "1", "--campaign", "2", "--json"]),
        &[0],
    );
    assert_eq!(parts(&by_id).len(), 4);
    // Each step ends in a stability ranking; imported runs keep no windows,
    // so no image is named most stable.
    let ranked = &doc["comparisons"][0]["decision"]["stability"][0];
    assert_eq!(ranked["kind"], "bench.cpu");
    assert_eq!(ranked["outcome"]["outcome"], "cannot_tell");
    let out = expect(at(&db).args(["compare"]).args(images), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    for heading in [
        "1. cpu.txt (bench.cpu)\n",
        "2. fileio.txt (bench.fileio)\n",
        "4. mutex.txt (bench.mutex)\n",
    ] {
        assert!(text.contains(heading), "{text}");
    }
    assert!(
        text.contains("cannot tell image1 from image2, image3 with these runs: repeat with"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

#[test]
fn a_step_is_named_by_its_name_and_campaigns_are_not_mixed_with_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = satellite(dir.path(), 2);
    let doc = json(
        at(&db).args(["compare", "image1@cpu.txt", "image2@cpu.txt", "--json"]),
        &[0],
    );
    assert_eq!(
        parts(&doc),
        [(
            "bench.cpu".to_string(),
            "bench.cpu".to_string(),
            vec![
                "cpu.txt · image1".to_string(),
                "cpu.txt · image2".to_string()
            ]
        )]
    );
    let ids: Vec<i64> = columns(&doc)
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 5]);
    // A label that stands for four steps is never narrowed to one of them.
    let out = expect(at(&db).args(["compare", "image1", "5"]), &[2]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'image1' stands for 4 steps: image1@cpu.txt, image1@fileio.txt"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{}", shown(&out));
    let out = expect(at(&db).args(["compare", "image1@nope"]), &[2]);
    assert!(
        shown(&out).contains("its steps: cpu.txt, fileio.txt, threads.txt, mutex.txt"),
        "{}",
        shown(&out)
    );
    // label@N stays the Nth newest run of the label: 1 is the mutex step.
    let doc = json(at(&db).args(["compare", "image1@1", "--json"]), &[0]);
    assert_eq!(columns(&doc)[0]["id"], 4);
}

/// cpu and fileio runs are never ratioed: one comparison per kind, each of
/// the runs of its kind.
#[test]
fn runs_of_different_kinds_are_compared_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = satellite(dir.path(), 2);
    let doc = json(
        at(&db).args(["compare", "1", "2", "5", "6", "--json"]),
        &[0],
    );
    let kinds: Vec<(String, Vec<i64>)> = doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ids = p["comparison"]["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_i64().unwrap())
                .collect();
            (p["kind"].as_str().unwrap().to_string(), ids)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("bench.cpu".to_string(), vec![1, 5]),
            ("bench.fileio".to_string(), vec![2, 6]),
        ]
    );
}

#[test]
fn by_step_pairs_chosen_runs_by_the_step_they_were_saved_as() {
    let dir = tempfile::tempdir().unwrap();
    let db = satellite(dir.path(), 2);
    let doc = json(
        at(&db).args(["compare", "1", "2", "5", "6", "--by-step", "--json"]),
        &[0],
    );
    let got: Vec<(String, Vec<String>)> = parts(&doc).into_iter().map(|p| (p.0, p.2)).collect();
    let both = vec!["image1".to_string(), "image2".to_string()];
    assert_eq!(
        got,
        [
            ("cpu.txt".to_string(), both.clone()),
            ("fileio.txt".to_string(), both)
        ]
    );
    assert_eq!(first(&doc)["comparison"]["columns"][1]["id"], 5);
    // With a step only one column has, that step is said, not compared.
    let out = expect(at(&db).args(["compare", "1", "2", "5", "--by-step"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("not compared: step 'fileio.txt' (bench.fileio): only image1 has it"),
        "{text}"
    );
}

/// The drone workflow: four kernels' cyclictest histograms against the
/// drone's deadlines, one row per kernel and one column per tier.
#[test]
fn the_drone_kernels_in_a_tier_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let kernels = ["vanilla", "preempt", "preempt-rt", "xenomai"];
    for k in kernels {
        expect(
            at(&db)
                .args(["results", "import", "--label", k])
                .arg(Path::new(DRONE).join(format!("{k}.txt"))),
            &[0],
        );
    }
    let out = expect(
        at(&db)
            .arg("compare")
            .args(kernels)
            .args(["--require", "drone"]),
        &[0],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let decision = &text[text.find("decision:\n").expect("a decision")..];
    let header: Vec<&str> = decision
        .lines()
        .nth(2)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["arm", "≤1ms", "≤20ms", "≤200ms"], "{decision}");
    let xenomai = decision
        .lines()
        .find(|l| l.trim_start().starts_with("xenomai "))
        .unwrap();
    assert_eq!(
        xenomai.split_whitespace().collect::<Vec<_>>(),
        [
            "xenomai",
            "PASS",
            "+370us",
            "PASS",
            "+19.37ms",
            "PASS",
            "+199.37ms"
        ]
    );
    assert!(decision.contains("≤1ms gyro, accel; ≤20ms baro, compass, airspeed, sonar; ≤200ms gps"));
    // Imported histograms keep no time windows: no change is called.
    assert!(decision.contains("no change can be told"), "{decision}");
    // What differs: nothing known (the files' names are where they came from).
    assert!(
        text.contains("what differs: nothing known differs"),
        "{text}"
    );
    let doc = json(
        at(&db)
            .arg("compare")
            .args(kernels)
            .args(["--require", "drone", "--json"]),
        &[0],
    );
    let tiers = &first(&doc)["decision"]["tiers"];
    assert_eq!(tiers["rows"].as_array().unwrap().len(), 4);
    assert_eq!(tiers["columns"][1]["budget_ns"], 20_000_000);
    assert_eq!(first(&doc)["verdicts"].as_array().unwrap().len(), 4 * 7);
}
