//! `rtlab cyclictest` beside the real cyclictest: the same short command lines
//! print the same kinds of lines in the same order (numbers differ; layout and
//! fields must not), and their `--json` files have the same keys.

use crate::common::{expect, rtlab};
use crate::cyclictest_layout::{as_shown, shape};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Command lines from cyclictest's man page and common guides, short.
const LINES: &[&str] = &[
    "-l 200 -q",
    "-l 200 -q -t 2 -p 80 -i 500",
    "-l 200 -m -a 0 -t 1 -p 99 -i 400 -h 50 -q",
    "-p 30 -t -l 200 -H 50",
    "-l 200 -p 80 -t 2",
    "-l 200 -S -p 90 -q",
    "-l 200 -q -N -p 80",
    "-l 20 -v -t 2 -a 0-1 -p 80 -h 10",
    "-l 200 -q -p 80 -b 1000000",
    "-l 100 -q -p 80 -t 2 --spike=1 --spike-nodes=4",
    "-l 200 -q -p 80 --policy=rr -t 2 --priospread",
    "-l 200 -q -p 80 -r -d 100 -t 2",
    "-l 200 -q -p 80 -x",
    "-l 200 -q -p 80 -s",
    "-l 200 -q --latency=10 -p 80 -H 20 -t 2",
];

/// cyclictest's output for `args`. A run in which cyclictest itself printed a
/// negative latency (`Act: -983 Avg:-9223372036854775808`, seen with `-x` on a
/// virtual machine) is the anchor's own bad run, not a layout: it is run again,
/// three times at most.
fn cyclictest(args: &[&str]) -> String {
    let mut text = String::new();
    for _ in 0..3 {
        let out = Command::new("cyclictest").args(args).output().unwrap();
        assert!(out.status.success(), "cyclictest {args:?}: {out:?}");
        text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !text.contains("Avg:-") {
            break;
        }
    }
    text
}

fn ours(args: &[&str]) -> String {
    let out = expect(rtlab().args(["cyclictest", "--no-store"]).args(args), &[0]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
#[ignore = "needs cyclictest: rt-tests installed, and root for -p"]
fn the_same_command_lines_print_the_same_lines() {
    assert!(
        Path::new("/usr/bin/cyclictest").exists(),
        "cyclictest not found: install rt-tests (CI does)"
    );
    for line in LINES {
        let args: Vec<&str> = line.split_whitespace().collect();
        let theirs = as_shown(&cyclictest(&args));
        let mine = ours(&args);
        assert_eq!(
            shape(&mine),
            shape(&theirs),
            "cyclictest {line}\n--- cyclictest\n{theirs}\n--- rtlab\n{mine}"
        );
    }
}

#[test]
#[ignore = "needs cyclictest: rt-tests installed, and root for -p"]
fn the_json_files_have_cyclictests_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("ct.json"), dir.path().join("rt.json"));
    // A histogram wide enough that each thread has values in it on a loaded
    // machine too: an empty one is written `{}` on its key's line, which changes
    // the layout (with -h 30 beside stress-ng every wake-up of a thread was
    // sometimes later than 30 us).
    let line = ["-l", "100", "-q", "-t", "2", "-p", "80", "-h", "20000"];
    cyclictest(&[&line[..], &[&format!("--json={}", a.display())]].concat());
    ours(&[&line[..], &[&format!("--json={}", b.display())]].concat());
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let (theirs, mine) = (read(&a), read(&b));
    assert_eq!(keys(&mine), keys(&theirs));
    assert_eq!(keys(&mine["sysinfo"]), keys(&theirs["sysinfo"]));
    assert_eq!(keys(&mine["thread"]), keys(&theirs["thread"]));
    assert_eq!(keys(&mine["thread"]["0"]), keys(&theirs["thread"]["0"]));
    // Line for line the same layout, whatever the numbers: each line's key
    // (histogram buckets, as many as there are values, left out).
    let bucket = regex::Regex::new(r#"^\s+"\d+": \d+,?$"#).unwrap();
    let layout = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !bucket.is_match(l))
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(layout(&b), layout(&a));
}
