//! Busybox-style personalities: `rtlab install-links DIR` makes the links (and
//! keeps what is not its own), and rtlab invoked through one is the tool,
//! storing its runs unless `RTLAB_NO_STORE=1`.

use crate::common::{expect, rtlab, shown};
use crate::compat_stress::{all_lines_match, text, NG, STRESS};
use crate::store_common::{export_json, list_ids};
use std::path::{Path, PathBuf};

/// `rtlab install-links DIR`, returning the links' directory.
fn links(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let out = expect(rtlab().arg("install-links").arg(&bin), &[0]);
    let said = text(&out.stdout);
    for name in ["stress", "stress-ng"] {
        assert!(
            said.contains(&format!("made {}", bin.join(name).display())),
            "{said}"
        );
        assert!(bin
            .join(name)
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink());
    }
    bin
}

#[test]
fn through_a_symlink_rtlab_is_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let bin = links(dir.path());
    let db = dir.path().join("r.db");
    let tool = |name: &str, args: &[&str], no_store: Option<&str>| {
        let mut c = std::process::Command::new(bin.join(name));
        c.args(args)
            .env("RTLAB_DB", &db)
            .env_remove("RTLAB_NO_STORE");
        if let Some(v) = no_store {
            c.env("RTLAB_NO_STORE", v);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
        out
    };
    let out = tool("stress", &["--cpu", "1", "--timeout", "1"], None);
    all_lines_match(&text(&out.stdout), STRESS, &out);
    let out = tool(
        "stress-ng",
        &["--cpu", "1", "-t", "1", "--metrics-brief"],
        None,
    );
    all_lines_match(&text(&out.stderr), NG, &out);
    let ids = list_ids(&db);
    assert_eq!(ids.len(), 2);
    let cmd: Vec<String> =
        serde_json::from_value(export_json(&db, ids[0])["command_line"].clone()).unwrap();
    assert_eq!(
        cmd[0],
        bin.join("stress-ng").to_str().unwrap(),
        "argv[0] as invoked"
    );
    assert_eq!(cmd[1..], ["--cpu", "1", "-t", "1", "--metrics-brief"]);
    tool("stress", &["-c", "1", "-t", "1"], Some("1"));
    tool("stress-ng", &["-c", "1", "-t", "1"], Some("1"));
    assert_eq!(list_ids(&db).len(), 2, "RTLAB_NO_STORE=1 stored nothing");
    let out = std::process::Command::new(bin.join("stress"))
        .args(["-c", "1", "-t", "1"])
        .env("RTLAB_DB", &db)
        .env("RTLAB_NO_STORE", "maybe")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
}

#[test]
fn a_pasted_command_line_takes_a_label_and_tags_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let bin = links(dir.path());
    let db = dir.path().join("r.db");
    let tool = |name: &str, args: &[&str], label: &str, tags: &str| {
        std::process::Command::new(bin.join(name))
            .args(args)
            .env("RTLAB_DB", &db)
            .env_remove("RTLAB_NO_STORE")
            .env("RTLAB_LABEL", label)
            .env("RTLAB_TAGS", tags)
            .output()
            .unwrap()
    };
    let cyclictest = ["-l", "50", "-i", "1000", "-q"];
    let out = tool("cyclictest", &cyclictest, "preempt-rt", "lab 3, rt");
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let mut sysbench = rtlab();
    sysbench
        .args(["--db"])
        .arg(&db)
        .args(["sysbench", "cpu", "--events=5", "run"])
        .env_remove("RTLAB_NO_STORE")
        .env("RTLAB_LABEL", "stock")
        .env("RTLAB_TAGS", "baseline")
        .current_dir(dir.path());
    expect(&mut sysbench, &[0]);
    let runs: Vec<_> = list_ids(&db)
        .into_iter()
        .map(|id| export_json(&db, id))
        .collect();
    let labelled: Vec<(&str, Vec<&str>)> = runs
        .iter()
        .map(|r| {
            let tags = r["tags"].as_array().unwrap().iter();
            (
                r["label"].as_str().unwrap(),
                tags.map(|t| t.as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert!(
        labelled.contains(&("preempt-rt", vec!["lab 3", "rt"])),
        "{labelled:?}"
    );
    assert!(
        labelled.contains(&("stock", vec!["baseline"])),
        "{labelled:?}"
    );
    // Refused like --label and --tag, naming the variable, before anything runs.
    for (label, tags, named) in [(" ", "", "RTLAB_LABEL"), ("x", "a,,b", "RTLAB_TAGS")] {
        let out = tool("cyclictest", &cyclictest, label, tags);
        assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
        assert!(text(&out.stderr).contains(named), "{}", shown(&out));
        assert!(out.stdout.is_empty(), "{}", shown(&out));
    }
    assert_eq!(list_ids(&db).len(), 2, "nothing stored by the refusals");
}

#[test]
fn install_links_keeps_what_is_not_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let bin = links(dir.path());
    let made = std::fs::read_dir(&bin).unwrap().count();
    let out = expect(rtlab().arg("install-links").arg(&bin), &[0]);
    assert_eq!(
        text(&out.stdout).matches("kept ").count(),
        made,
        "{}",
        shown(&out)
    );
    std::fs::remove_file(bin.join("stress")).unwrap();
    std::fs::write(bin.join("stress"), "#!/bin/sh\n").unwrap();
    let out = expect(rtlab().arg("install-links").arg(&bin), &[2]);
    assert!(
        text(&out.stderr).contains("stress is a file"),
        "{}",
        shown(&out)
    );
    assert_eq!(
        std::fs::read_to_string(bin.join("stress")).unwrap(),
        "#!/bin/sh\n"
    );
    let out = expect(rtlab().args(["install-links", "--list"]).arg(&bin), &[0]);
    let list = text(&out.stdout);
    assert!(
        list.contains("stress: a file") && list.contains("stress-ng: a link to this rtlab"),
        "{list}"
    );
    let out = expect(rtlab().args(["install-links", "--force"]).arg(&bin), &[0]);
    assert!(
        text(&out.stdout).contains(&format!("replaced {}", bin.join("stress").display())),
        "{}",
        shown(&out)
    );
    assert!(bin
        .join("stress")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
    expect(
        rtlab().arg("install-links").arg(dir.path().join("none")),
        &[2],
    );
}
