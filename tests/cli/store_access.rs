//! Who may read a store, and what a read never does: commands that only read
//! open the store read-only, so that another user can read a store root made
//! (its directory not theirs to write); a read on a mistyped path creates no
//! store and no directory (exit 2 naming the path); a `--db` in libpq's
//! keyword form, or `postgres:` with one slash, is refused and never becomes
//! a file.

use crate::common::{expect, rtlab};
use crate::store_common::import;
use std::path::Path;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/import/cyclictest-verbose.txt"
);

/// The read commands, each with the arguments that name run 1.
const READS: &[&[&str]] = &[
    &["results", "list"],
    &["results", "show", "1"],
    &["results", "export", "1"],
    &["results", "campaigns"],
    &["results", "windows"],
    &["results", "check"],
    &["report", "1"],
    &["compare", "1", "1"],
    &["monitor", "--show"],
];

#[test]
#[ignore = "needs root: runs rtlab as the user nobody (runuser)"]
fn another_user_reads_a_store_root_made_and_cannot_change_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("root.db");
    import(&db, &[FIXTURE, "--label", "rootrun"]);
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&bin)
            .arg("--db")
            .arg(&db)
            .args(args)
            .env_remove("RTLAB_DB")
            .current_dir("/")
            .output()
            .unwrap()
    };
    for args in READS {
        let out = as_nobody(args);
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if args[..2] == ["results", "list"] {
            assert!(said.contains("rootrun"), "{said}");
        }
    }
    let out = as_nobody(&["results", "label", "1", "mine"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&db.display().to_string()) && err.contains("cannot be written by this user"),
        "{err}"
    );
    let after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "nobody made no file");
}

#[test]
fn a_read_on_a_mistyped_path_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("no/such/dir/r.db");
    let mut reads: Vec<Vec<&str>> = READS.iter().map(|a| a.to_vec()).collect();
    reads.push(vec!["why", "1"]);
    reads.push(vec!["results", "backup", "b.db"]);
    reads.push(vec!["results", "label", "1", "x"]);
    reads.push(vec!["results", "delete", "1"]);
    for args in reads {
        let out = expect(
            rtlab()
                .current_dir(dir.path())
                .arg("--db")
                .arg(&db)
                .args(&args),
            &[2],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&db.display().to_string()), "{args:?}: {err}");
    }
    assert!(!dir.path().join("no").exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn libpq_strings_and_single_slash_urls_never_become_files() {
    let dir = tempfile::tempdir().unwrap();
    for (db, says) in [
        (
            "host=db.lab dbname=rtlab user=rt password=s3cret",
            "libpq's keyword form",
        ),
        ("dbname = rtlab", "libpq's keyword form"),
        ("postgres:/var/lib/rtlab", "needs two slashes"),
        ("postgresql:rtlab", "needs two slashes"),
    ] {
        for args in [vec!["results", "list"], vec!["results", "import", FIXTURE]] {
            let out = expect(
                rtlab()
                    .current_dir(dir.path())
                    .args(["--db", db])
                    .args(&args),
                &[2],
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(says), "{db}: {err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        let out = expect(
            rtlab()
                .current_dir(dir.path())
                .env("RTLAB_DB", db)
                .args(["results", "list"]),
            &[2],
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("RTLAB_DB"));
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing made"
    );
}

/// `path` holds a store with one run.
fn one_run(path: &Path) {
    import(path, &[FIXTURE]);
}

#[test]
fn reading_a_store_changes_nothing_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    one_run(&db);
    let before = std::fs::read(&db).unwrap();
    for args in READS {
        expect(rtlab().arg("--db").arg(&db).args(*args), &[0]);
    }
    assert!(std::fs::read(&db).unwrap() == before);
}
