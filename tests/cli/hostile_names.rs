//! Names another program or user wrote (an imported file's label, host and
//! kernel, a campaign step named after a file) reach every terminal output
//! escaped: no ESC, CR or BEL of theirs is printed, so none can clear the
//! screen, overwrite a line or forge one. A 2 MB host name is cut at import,
//! with a note, and makes no big page; labels with control characters, or
//! too long, are refused where they are given.

use crate::common::{expect, rtlab, shown};
use crate::store_common::{export_json, import};
use std::path::Path;

const HOSTILE: &str = "evil\u{1b}[2J\r\u{7}label";

/// Nothing in `out` a terminal would obey.
fn inert(what: &str, out: &std::process::Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        for c in [0x1b_u8, b'\r', 0x07] {
            assert!(
                !bytes.contains(&c),
                "{what}: {stream} holds {c:#04x}\n{}",
                shown(out)
            );
        }
    }
}

fn run(db: &Path, args: &[&str], code: i32) -> String {
    let out = expect(rtlab().arg("--db").arg(db).args(args), &[code]);
    inert(&args.join(" "), &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store with an imported run whose label, host, kernel and tag hold
/// control characters, its host 2 MB long, and a plain run beside it; the
/// hostile run's id.
fn store(dir: &Path) -> (std::path::PathBuf, i64) {
    let db = dir.join("r.db");
    let fixture = format!(
        "{}/tests/fixtures/import/cyclictest-verbose.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let plain = import(&db, &[&fixture, "--label", "plain"])[0];
    let mut doc = export_json(&db, plain);
    doc["label"] = HOSTILE.into();
    doc["tags"] = serde_json::json!(["t\u{1b}]0;title\u{7}"]);
    let fp = &mut doc["fingerprint"];
    fp["hostname"] = format!("host\u{1b}[31m{}", "h".repeat(2 << 20)).into();
    fp["kernel_release"] = "6.6\rrt".into();
    fp["kernel_version"] = "#1 SMP\u{1b}[1A".into();
    // Two files make a campaign whose steps are named after them.
    let file = dir.join("run\u{1b}[2J.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "import"])
            .arg(&file)
            .arg(&fixture),
        &[0],
    );
    inert("import", &out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("note: its host name was 2097161 characters long; the first 255 are kept"),
        "{said}"
    );
    let id = said
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next()?.parse().ok())
        .unwrap();
    (db, id)
}

#[test]
fn stored_names_reach_every_text_output_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = store(dir.path());
    let id = id.to_string();
    let list = run(&db, &["results", "list"], 0);
    assert!(list.contains("evil\\x1b[2J\\r\\x07label"), "{list}");
    let show = run(&db, &["results", "show", &id], 0);
    assert!(show.contains("host\\x1b[31mhhh"), "{show}");
    assert!(show.contains("6.6\\rrt"), "{show}");
    assert!(show.len() < 100_000, "{} bytes", show.len());
    for args in [
        vec!["results", "list", "--by", "host"],
        vec!["results", "list", "--by", "kernel"],
        vec!["results", "campaigns"],
        vec!["results", "campaigns", "1"],
        vec!["report", &id],
        vec!["compare", "1", &id],
        vec!["compare", "--by", "kernel"],
        vec!["results", "tag", &id, "more"],
    ] {
        run(&db, &args, 0);
    }
    // An error that names the run: escaped too.
    let out = expect(rtlab().arg("--db").arg(&db).args(["why", &id]), &[2]);
    inert("why", &out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("evil\\x1b[2J"));

    let html = dir.path().join("r.html");
    run(&db, &["report", &id, "--html", html.to_str().unwrap()], 0);
    let page = std::fs::read(&html).unwrap();
    assert!(
        !page.contains(&0x1b) && !page.contains(&0x07),
        "raw controls in the page"
    );
    assert!(page.len() < 1_000_000, "a page of {} bytes", page.len());
}

#[test]
fn labels_with_control_characters_or_too_long_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = store(dir.path());
    let long = "x".repeat(201);
    for (args, flag) in [
        (vec!["latency", "-l", "10", "--label", HOSTILE], "--label"),
        (vec!["latency", "-l", "10", "--label", &long], "--label"),
        (
            vec!["results", "import", "x.txt", "--label", "a\nb"],
            "--label",
        ),
        (vec!["results", "label", &id.to_string(), "a\rb"], "<LABEL>"),
        (
            vec!["run", "--preset", "quick", "--label", "a\tb"],
            "--label",
        ),
    ] {
        let out = expect(rtlab().arg("--db").arg(&db).args(&args), &[2]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            err.contains("control characters") || err.contains("at most 200"),
            "{args:?}: {err}"
        );
    }
    // A scenario's label is checked with the rest of the file, nothing run.
    let scn = dir.path().join("s.toml");
    std::fs::write(
        &scn,
        "name = \"x\"\nlabel = \"a\\u001b[2J\"\n[[step]]\nprobe = \"latency\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let out = expect(rtlab().arg("--db").arg(&db).arg("run").arg(&scn), &[2]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("label") && err.contains("control characters"),
        "{err}"
    );
}

#[test]
fn csv_cells_that_would_be_formulas_stay_text_and_numbers_stay_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let fixture = format!(
        "{}/tests/fixtures/import/cyclictest-verbose.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let formula = "=cmd|' /C calc'!A0";
    let a = import(&db, &[&fixture, "--label", formula])[0];
    // A run whose label is a negative number and whose metric is negative.
    let mut doc = export_json(&db, a);
    doc["label"] = "-5".into();
    doc["metrics"] = serde_json::json!({"drift_ns": -3.5, "@x": 1.0});
    let file = dir.path().join("b.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let b = import(&db, &[file.to_str().unwrap()])[0];
    let (a, b) = (a.to_string(), b.to_string());
    let csv = run(&db, &["results", "export", &a, &b, "--format", "csv"], 0);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(
        header.contains(&"'@x") && header.contains(&"drift_ns"),
        "{csv}"
    );
    let label = header.iter().position(|h| *h == "label").unwrap();
    let drift = header.iter().position(|h| *h == "drift_ns").unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(
        rows.iter().any(|r| r[label] == "'=cmd|' /C calc'!A0"),
        "{csv}"
    );
    let negative: Vec<&Vec<&str>> = rows.iter().filter(|r| r[label] == "-5").collect();
    assert!(!negative.is_empty(), "{csv}");
    assert!(negative.iter().all(|r| r[drift] == "-3.5"), "{csv}");
    assert!(
        !csv.lines()
            .any(|l| l.split(',').any(|c| c.starts_with('='))),
        "{csv}"
    );

    let cmp = run(&db, &["compare", &a, &b, "--csv"], 0);
    assert!(cmp.contains(",'=cmd|' /C calc'!A0,"), "{cmp}");
    assert!(cmp.lines().any(|l| l.contains(",-5,")), "{cmp}");
}
