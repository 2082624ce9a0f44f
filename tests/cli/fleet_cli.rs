//! Moving runs between stores: bundles (export, import, idempotent by run UUID,
//! campaigns kept, damaged runs refused, bad bundles refused untouched), and a
//! database named by URL refused (never taken for a file path).

use crate::common::{expect, rtlab, shown};
use crate::store_common::{export_json, import, list_ids};
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

/// A store with a campaign of two imported runs and one run alone.
fn source(db: &Path) -> Vec<i64> {
    let f = |name: &str| format!("{FIXTURES}/{name}");
    let mut ids = import(
        db,
        &[
            &f("cyclictest-summary.txt"),
            &f("cyclictest-verbose.txt"),
            "--label",
            "stock",
        ],
    );
    ids.extend(import(
        db,
        &[&f("cyclictest-summary-ns.txt"), "--tag", "lab"],
    ));
    ids
}

/// `rtlab --db DB results ARGS` with its exit code checked; stdout and stderr.
fn results(db: &Path, args: &[&str], code: i32) -> (String, String) {
    let out = expect(
        crate::store_common::rtlab(db).arg("results").args(args),
        &[code],
    );
    (
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A run as exported, without what differs between stores (its id, its
/// campaign's id).
fn portable(db: &Path, id: i64) -> serde_json::Value {
    let mut v = export_json(db, id);
    v.as_object_mut().unwrap().remove("id");
    v.as_object_mut().unwrap().remove("campaign");
    v
}

#[test]
fn a_bundle_carries_runs_whole_and_importing_twice_stores_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, bundle) = (
        dir.path().join("a.db"),
        dir.path().join("b.db"),
        dir.path().join("runs.rtlab"),
    );
    let ids = source(&a);
    let bundle_s = bundle.to_str().unwrap();
    let (out, _) = results(&a, &["export", "--bundle", bundle_s], 0);
    assert!(out.ends_with(": 3 run(s) written\n"), "{out}");
    // b already has a run of its own; the copies come after it.
    import(&b, &[&format!("{FIXTURES}/cyclictest-verbose-q.txt")]);
    let (out, _) = results(&b, &["import", "--bundle", bundle_s], 0);
    assert!(
        out.ends_with(": 3 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    let (out, _) = results(&b, &["import", "--bundle", bundle_s], 0);
    assert!(
        out.ends_with(": 0 new, 3 already there, 0 refused\n"),
        "{out}"
    );
    let copied = list_ids(&b);
    assert_eq!(copied, vec![4, 3, 2, 1]);
    for (from, to) in ids.iter().zip([2, 3, 4]) {
        assert_eq!(portable(&a, *from), portable(&b, to), "run {from}");
    }
    let (campaigns, _) = results(&b, &["campaigns", "1"], 0);
    assert!(
        campaigns.contains("import") && campaigns.contains("complete"),
        "{campaigns}"
    );
    assert_eq!(export_json(&b, 2)["campaign"], 1);
    // Each step keeps its name, base name and repeat.
    let steps = |db: &Path| -> Vec<(String, String, i64)> {
        let c = rusqlite::Connection::open(db).unwrap();
        let mut q = c
            .prepare(
                "SELECT step_name, base_name, repeat_index FROM campaign_runs ORDER BY step_index",
            )
            .unwrap();
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(steps(&a).len(), 2);
    assert_eq!(steps(&a), steps(&b));
    assert_eq!(
        steps(&a)[0].0,
        steps(&a)[0].1,
        "an imported file is its own step"
    );
    assert_eq!(export_json(&b, 4)["tags"], serde_json::json!(["lab"]));
    // Back again: the runs b got from a are a's, so only b's own run is new.
    let back = dir.path().join("back.rtlab");
    results(&b, &["export", "--bundle", back.to_str().unwrap()], 0);
    let (out, _) = results(&a, &["import", "--bundle", back.to_str().unwrap()], 0);
    assert!(
        out.ends_with(": 1 new, 3 already there, 0 refused\n"),
        "{out}"
    );
    // Selected runs only; an existing file is never written over.
    let one = dir.path().join("one.rtlab");
    results(&a, &["export", "2", "--bundle", one.to_str().unwrap()], 0);
    let (_, err) = results(&a, &["export", "--bundle", one.to_str().unwrap()], 2);
    assert!(err.contains("already exists"), "{err}");
    let (out, _) = results(
        &dir.path().join("c.db"),
        &["import", "--bundle", one.to_str().unwrap()],
        0,
    );
    assert!(
        out.ends_with(": 1 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    let (_, err) = results(&a, &["export", "99", "--bundle", "x.rtlab"], 2);
    assert!(err.contains("no run with id 99"), "{err}");
}

#[test]
fn a_damaged_run_is_refused_and_the_others_are_imported() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, bundle) = (
        dir.path().join("a.db"),
        dir.path().join("b.db"),
        dir.path().join("runs.rtlab"),
    );
    source(&a);
    results(&a, &["export", "--bundle", bundle.to_str().unwrap()], 0);
    rusqlite::Connection::open(&bundle)
        .unwrap()
        .execute("UPDATE runs SET record = '{' WHERE id = 2", [])
        .unwrap();
    let (out, err) = results(&b, &["import", "--bundle", bundle.to_str().unwrap()], 2);
    assert!(
        out.ends_with(": 2 new, 0 already there, 1 refused\n"),
        "{out}"
    );
    assert!(err.contains("run 2 refused: run 2 is damaged"), "{err}");
    assert_eq!(list_ids(&b), vec![2, 1]);
}

#[test]
fn bad_bundles_are_refused_untouched_and_nothing_is_imported() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    source(&a);
    let newer = dir.path().join("newer.rtlab");
    results(&a, &["export", "--bundle", newer.to_str().unwrap()], 0);
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let garbage = dir.path().join("garbage.rtlab");
    std::fs::write(&garbage, vec![7u8; 8192]).unwrap();
    let empty = dir.path().join("empty.rtlab");
    std::fs::write(&empty, "").unwrap();
    for (file, says) in [
        (&newer, "was written by a newer rtlab (schema version 99"),
        (&garbage, "cannot be read as an rtlab bundle"),
        (
            &empty,
            "cannot be read as an rtlab bundle (it holds no runs)",
        ),
        (&dir.path().join("missing.rtlab"), "no such file"),
    ] {
        let before = std::fs::read(file).ok();
        let (_, err) = results(&b, &["import", "--bundle", file.to_str().unwrap()], 2);
        assert!(err.contains(says), "{err}");
        assert_eq!(
            std::fs::read(file).ok(),
            before,
            "{} is left unchanged",
            file.display()
        );
    }
    assert!(list_ids(&b).is_empty());
}

/// What rtlab says of a PostgreSQL URL (as shown) where no server listens.
fn no_server(shown: &str) -> String {
    if cfg!(feature = "postgres") {
        format!("cannot open the PostgreSQL store {shown}")
    } else {
        "this rtlab was built without them".into()
    }
}

#[test]
fn a_database_url_no_server_answers_or_rtlab_cannot_use_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    for (url, source, says) in [
        (
            "postgres://rt:secret@127.0.0.1:1/rtlab",
            "",
            no_server("postgres://rt:***@127.0.0.1:1/rtlab").as_str(),
        ),
        (
            "postgresql://127.0.0.1:1/rtlab",
            "",
            no_server("postgresql://127.0.0.1:1/rtlab").as_str(),
        ),
        ("mysql://rt:secret@db.lab/rtlab", "names", "a URL"),
    ] {
        let out = expect(
            rtlab()
                .current_dir(dir.path())
                .args(["--db", url, "results", "list"]),
            &[2],
        );
        let err = shown(&out);
        let flag = format!("--db {source}");
        assert!(err.contains(flag.trim()) || source.is_empty(), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(
            !err.contains("secret"),
            "the password is never repeated: {err}"
        );
        let out = expect(
            rtlab()
                .current_dir(dir.path())
                .env("RTLAB_DB", url)
                .args(["results", "list"]),
            &[2],
        );
        let err = shown(&out);
        assert!(err.contains(says) && !err.contains("secret"), "{err}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing is created: {left:?}");
}

#[test]
fn push_and_pull_copy_a_selection_once_and_continue_where_they_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, fleet, b) = (
        dir.path().join("a.db"),
        dir.path().join("fleet.db"),
        dir.path().join("b.db"),
    );
    source(&a);
    let to = fleet.to_str().unwrap();
    // One run of the campaign first (as if the connection was lost after it).
    let (out, _) = results(&a, &["push", "--to", to, "1"], 0);
    assert!(
        out.ends_with(": 1 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    let (out, _) = results(&a, &["push", "--to", to], 0);
    assert!(
        out.ends_with(": 2 new, 1 already there, 0 refused\n"),
        "{out}"
    );
    // The campaign was found again by its UUID: one campaign, both steps.
    let (campaigns, _) = results(&fleet, &["campaigns"], 0);
    assert_eq!(campaigns.lines().count(), 2, "{campaigns}");
    assert_eq!(export_json(&fleet, 2)["campaign"], 1);
    let (out, _) = results(&b, &["pull", "--from", to, "--label", "stock"], 0);
    assert!(
        out.ends_with(": 2 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    let (out, _) = results(&b, &["pull", "--from", to, "--tag", "lab", "1", "3"], 0);
    assert!(
        out.ends_with(": 1 new, 0 already there, 0 refused\n"),
        "{out}"
    );
    assert_eq!(list_ids(&b), vec![3, 2, 1]);
    assert_eq!(portable(&a, 3), portable(&b, 3));
    for (args, says) in [
        (
            vec!["pull", "--from", "postgres://u:pw@127.0.0.1:1/db"],
            no_server("postgres://u:***@127.0.0.1:1/db").as_str(),
        ),
        (vec!["push", "--to", "https://h/x"], "--to names https://…"),
        (vec!["pull", "--from", "missing.db"], "no such store"),
        (vec!["push", "--to", to, "9"], "no run with id 9"),
    ] {
        let (_, err) = results(&b, &args, 2);
        assert!(err.contains(says) && !err.contains(":pw@"), "{err}");
    }
}

#[test]
fn a_push_stopped_by_ctrl_c_keeps_whole_runs_and_the_next_push_copies_the_rest() {
    const RUNS: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let (a, fleet) = (dir.path().join("a.db"), dir.path().join("fleet.db"));
    let file = format!("{FIXTURES}/cyclictest-summary.txt");
    let files = vec![file.as_str(); RUNS];
    assert_eq!(import(&a, &files).len(), RUNS);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .env_remove("RTLAB_DB")
        .arg("--db")
        .arg(&a)
        .args(["results", "push", "--to"])
        .arg(&fleet)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it has begun to write the fleet's store.
    crate::common::wait_until_catching_sigint(child.id());
    crate::common::wait_for("the push to begin", || fleet.exists());
    // SAFETY: kill(2) on the child just spawned, which has not been waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let first = list_ids(&fleet).len();
    match out.status.code() {
        Some(130) => {
            assert!(err.contains("run the same command again"), "{err}");
            assert!(first < RUNS, "{first}");
        }
        // The machine was quick: it had copied them all.
        Some(0) => assert_eq!(first, RUNS),
        other => panic!("exit {other:?}: {err}"),
    }
    let (out, _) = results(&a, &["push", "--to", fleet.to_str().unwrap()], 0);
    let expected = format!(": {} new, {first} already there, 0 refused\n", RUNS - first);
    assert!(out.ends_with(&expected), "{out}");
    assert_eq!(list_ids(&fleet).len(), RUNS);
    let (campaigns, _) = results(&fleet, &["campaigns"], 0);
    assert!(campaigns.contains(&format!("{RUNS}\n")), "{campaigns}");
}
