//! Every text table and warning within 100 columns, wrapped between words:
//! the widest outputs (`rtlab audit -v`, the warnings of `compare
//! --campaign`, `results list` of campaign steps, `results campaigns`) are
//! rendered, and every line must fit and every word of what they show (as
//! their JSON gives it) must appear whole; and a campaign run as root, with
//! the warnings it prints as it starts.

use crate::common::{expect, json, rtlab};
use serde_json::Value;
use std::path::Path;

const INPUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden/input");

/// Asserts that `text` has no line wider than 100 characters and that every
/// word of `sources` is one of its words (never cut across lines).
fn fits_with_whole_words(text: &str, sources: &[String]) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} wide: {line}\n{text}",
            line.chars().count()
        );
    }
    // Words as they stand, and without the quotes, brackets and punctuation
    // that a sentence puts around them.
    let trim = |w: &str| {
        w.trim_matches(|c: char| "()[]'\",;:".contains(c))
            .to_string()
    };
    let words: std::collections::HashSet<String> = text.split_whitespace().map(trim).collect();
    for s in sources {
        for w in s.split_whitespace().map(trim) {
            assert!(words.contains(&w), "'{w}' (of '{s}') is split:\n{text}");
        }
    }
}

/// The strings of `doc` under `key` in each object of the array `doc[list]`.
fn strings(doc: &Value, list: &str, keys: &[&str]) -> Vec<String> {
    doc[list]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| {
            keys.iter()
                .filter_map(|k| o[*k].as_str().map(str::to_string))
        })
        .collect()
}

#[test]
fn audit_wraps_between_words() {
    let root = tempfile::tempdir().unwrap();
    let audit = |extra: &[&str]| {
        let mut c = rtlab();
        c.arg("audit").arg("--root").arg(root.path()).args(extra);
        c
    };
    let doc = json(&mut audit(&["--json"]), &[0, 1]);
    let shown = strings(
        &doc,
        "checks",
        &["title", "current", "recommended", "why", "fix"],
    );
    assert!(shown
        .iter()
        .any(|s| s.contains("isolcpus/nohz_full/rcu_nocbs/irqaffinity")));
    let out = expect(&mut audit(&["-v"]), &[0, 1]);
    fits_with_whole_words(&String::from_utf8(out.stdout).unwrap(), &shown);
}

#[test]
fn campaign_warnings_steps_and_labels_fit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let at = || {
        let mut c = rtlab();
        c.current_dir(dir.path()).arg("--db").arg(&db);
        c
    };
    // Two campaigns of two steps each, imported under long labels; their runs
    // carry the warnings of a run on a VM in a container, and one more of
    // long words.
    let mut run: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(INPUT).join("rtlab-latency.json")).unwrap(),
    )
    .unwrap();
    run["warnings"].as_array_mut().unwrap().push(serde_json::json!({
        "code": "isolation",
        "message": "isolcpus/nohz_full/rcu_nocbs/irqaffinity disagree: cpus=0-1,3 in isolcpus but \
                    nohz_full=0-1 and rcu_nocbs=2-3; the RT CPUs keep their tick and their callbacks"
    }));
    let steps = [
        "idle-baseline-measurement.json",
        "under-memory-and-page-fault-load.json",
    ];
    for step in steps {
        std::fs::write(dir.path().join(step), run.to_string()).unwrap();
    }
    let labels = [
        "6.6.0-rt-preempt-full-isolated-board",
        "6.6.0-stock-voluntary-board",
    ];
    for label in labels {
        expect(
            at().args(["results", "import", "--label", label])
                .args(steps),
            &[0],
        );
    }
    let warnings: Vec<String> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w["code"].as_str().unwrap(),
                w["message"].as_str().unwrap()
            )
        })
        .collect();

    let out = expect(
        at().args(["compare", "--campaign", "1", "--campaign", "2"]),
        &[0],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("warnings:"), "{text}");
    let mut shown = warnings.clone();
    shown.extend(steps.iter().chain(&labels).map(|s| s.to_string()));
    fits_with_whole_words(&text, &shown);

    let out = expect(at().args(["results", "list"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    let shown: Vec<String> = steps.iter().chain(&labels).map(|s| s.to_string()).collect();
    fits_with_whole_words(&text, &shown);

    let out = expect(at().args(["results", "campaigns"]), &[0]);
    let text = String::from_utf8(out.stdout).unwrap();
    fits_with_whole_words(&text, &labels.map(String::from));
}

#[test]
#[ignore = "needs root: SCHED_FIFO measuring threads"]
fn a_campaign_and_its_live_warnings_fit() {
    let dir = tempfile::tempdir().unwrap();
    let out = expect(
        rtlab()
            .current_dir(dir.path())
            .arg("--db")
            .arg(dir.path().join("w.db"))
            .args(["run", "--preset", "quick", "--duration", "200ms"]),
        &[0, 1, 4],
    );
    // What the machine warns of (a VM, a container, its kernel) is printed as
    // the campaign starts, and the campaign's tables and decision at its end.
    for text in [&out.stderr, &out.stdout] {
        fits_with_whole_words(&String::from_utf8_lossy(text), &[]);
    }
}
