//! `rtlab report` end to end: one run in depth as text and as HTML, verdicts and
//! exit codes.

use crate::compare_common::{measure, parse, polylines_per_colour, rtlab};
use predicates::prelude::*;

#[test]
#[ignore = "needs root: SCHED_FIFO latency runs"]
fn one_run_in_depth() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let run = measure(&db, "board", &["--cpus", "0", "-t", "2"]);
    let max = run["total"]["summary"]["max_ns"].as_u64().unwrap();
    let html = dir.path().join("run.html");
    rtlab(&db)
        .args(["report", "board", "--html"])
        .arg(&html)
        .args(["--title", "Board <1>", "--require", "loop=10s"])
        .assert()
        .success()
        .stdout(predicate::str::contains("rtlab latency  board  [complete]"))
        .stdout(predicate::str::contains("system:"))
        .stdout(predicate::str::contains("all requirements met"))
        .stderr(predicate::str::contains("wrote"));
    let text = std::fs::read_to_string(&html).unwrap();
    let doc = parse(&text);
    let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
    assert_eq!(title.text(), Some("Board <1>"));
    let svgs: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("svg"))
        .collect();
    // Histogram, percentiles, per-thread histograms (two threads), time series.
    assert_eq!(svgs.len(), 4);
    // The per-thread plot holds one step line (and legend sample) per thread.
    let per_thread = roxmltree::Document::parse(&text[svgs[2].range()]).unwrap();
    assert_eq!(polylines_per_colour(&per_thread, 3), vec![2, 2, 0]);
    assert!(text.contains("class=\"PASS\">PASS<"));

    // A budget below the maximum fails: exit 1, negative margin shown.
    rtlab(&db)
        .args(["report", &run["id"].to_string(), "--require"])
        .arg(format!("tight={}ns", max - 1))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL"))
        .stdout(predicate::str::contains("-1ns"))
        .stdout(predicate::str::contains("1 of 1 verdict(s) failed"));
}
