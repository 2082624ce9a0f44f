//! A store damaged in the middle (a page of its runs table overwritten, as a
//! failing disk or a power cut may leave it): reading it says it is damaged
//! and names it, writing to it is refused from then on (nothing written),
//! `results check` names the runs that can and cannot be read, `results
//! push` keeps every run that can be read in a new store, which then takes
//! the damaged one's place; and `results backup` copies a store while a
//! monitor writes to it.

use crate::common::{expect, rtlab};
use crate::store_common::{import, list_ids};
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import");

/// A store of 40 imported runs, written to its file (no write-ahead log left).
fn store(db: &Path) {
    let v = format!("{FIXTURES}/cyclictest-verbose.txt");
    let s = format!("{FIXTURES}/cyclictest-summary.txt");
    for _ in 0..20 {
        import(db, &[&v, &s]);
    }
    checkpoint(db);
}

fn checkpoint(db: &Path) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
}

/// A SQLite varint at `b[at..]`: its value and length.
fn varint(b: &[u8], at: usize) -> (u64, usize) {
    let mut v = 0u64;
    for i in 0..9 {
        let byte = b[at + i];
        if i == 8 {
            return ((v << 8) | u64::from(byte), 9);
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    unreachable!()
}

/// Overwrites a leaf page in the middle of the runs table with garbage;
/// the ids of the runs it held.
fn damage(db: &Path) -> Vec<i64> {
    let c = rusqlite::Connection::open(db).unwrap();
    let root: u32 = c
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 'runs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let size: usize = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    drop(c);
    let mut file = std::fs::read(db).unwrap();
    let page = |n: u32| (n as usize - 1) * size;
    let u16_at = |b: &[u8], at: usize| usize::from(u16::from_be_bytes([b[at], b[at + 1]]));
    let r = page(root);
    assert_eq!(file[r], 0x05, "the runs table spans several pages");
    let cells = u16_at(&file, r + 3);
    let child = |i: usize| {
        let cell = r + u16_at(&file, r + 12 + 2 * i);
        u32::from_be_bytes(file[cell..cell + 4].try_into().unwrap())
    };
    let leaf = page(child(cells / 2));
    assert_eq!(file[leaf], 0x0d, "a leaf of the table");
    let ids = (0..u16_at(&file, leaf + 3))
        .map(|i| {
            let cell = leaf + u16_at(&file, leaf + 8 + 2 * i);
            let (_, n) = varint(&file, cell);
            varint(&file, cell + n).0 as i64
        })
        .collect();
    file[leaf..leaf + size].fill(0xff);
    std::fs::write(db, file).unwrap();
    ids
}

fn said(db: &Path, args: &[&str], code: i32) -> (String, String) {
    let out = expect(rtlab().arg("--db").arg(db).args(args), &[code]);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_damaged_store_is_named_refuses_writes_and_gives_up_what_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("years.db");
    store(&db);
    let lost = damage(&db);
    assert!(!lost.is_empty());
    let kept = (1..=40).find(|id| !lost.contains(id)).unwrap();

    let (_, err) = said(&db, &["results", "list"], 2);
    assert!(
        err.contains(&format!(
            "{} is damaged (SQLite: database disk image is malformed",
            db.display()
        )),
        "{err}"
    );
    assert!(err.contains("results check"), "{err}");
    let before = std::fs::read(&db).unwrap();
    let id = kept.to_string();
    for args in [
        vec!["results", "label", &id, "new"],
        vec!["results", "tag", &id, "t"],
        vec!["results", "delete", &id],
        vec![
            "latency", "-l", "20", "-i", "1ms", "--policy", "other", "-q",
        ],
    ] {
        let (_, err) = said(&db, &args, 2);
        assert!(
            err.contains("is damaged") && err.contains("writes nothing more"),
            "{args:?}: {err}"
        );
    }
    assert!(std::fs::read(&db).unwrap() == before, "nothing was written");
    let (show, _) = said(&db, &["results", "show", &id], 0);
    assert!(show.starts_with(&format!("run {id} ")), "{show}");

    let (check, _) = said(&db, &["results", "check"], 1);
    assert!(check.contains(": damaged"), "{check}");
    let line = check
        .lines()
        .find_map(|l| l.strip_prefix("runs that cannot be read: "))
        .unwrap_or_else(|| panic!("{check}"));
    assert!(
        lost.iter().all(|id| line.contains(&id.to_string())),
        "{check}"
    );
    assert!(
        check.contains(&format!("runs that can be read: {} ", 40 - lost.len())),
        "{check}"
    );

    let copy = dir.path().join("copy.db");
    let (backed, _) = said(&db, &["results", "backup", copy.to_str().unwrap()], 1);
    assert!(backed.contains("found problems"), "{backed}");

    let new = dir.path().join("new.db");
    let (pushed, err) = said(&db, &["results", "push", "--to", new.to_str().unwrap()], 2);
    assert!(
        pushed.contains(&format!(
            "{} new, 0 already there, {} refused",
            40 - lost.len(),
            lost.len()
        )),
        "{pushed}"
    );
    assert!(
        err.contains(&format!("run {} refused: it cannot be read", lost[0])),
        "{err}"
    );
    let (check, _) = said(&new, &["results", "check"], 0);
    assert!(check.contains(": whole"), "{check}");

    // The recovered store in the damaged one's place, as the check says,
    // takes writes again.
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::rename(&new, &db).unwrap();
    said(&db, &["results", "label", &id, "recovered"], 0);
    assert_eq!(list_ids(&db).len(), 40 - lost.len());
}

#[test]
fn a_backup_is_a_whole_store_made_while_a_monitor_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    store(&db);
    let mut monitor = std::process::Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("--db")
        .arg(&db)
        .args(["monitor", "-a", "0", "--policy", "other", "--window", "1s"])
        .args(["--duration", "3s", "-q"])
        .env_remove("RTLAB_DB")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let copy = dir.path().join("backup.db");
    let (said_, _) = said(&db, &["results", "backup", copy.to_str().unwrap()], 0);
    assert!(said_.contains("40 run(s)"), "{said_}");
    assert!(said_.contains("quick check of the copy: ok"), "{said_}");
    assert!(monitor.wait().unwrap().success());
    // One file, a store of its own.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("backup"))
        .collect();
    assert_eq!(names, ["backup.db"]);
    assert_eq!(list_ids(&copy), list_ids(&db));
    let (check, _) = said(&copy, &["results", "check"], 0);
    assert!(check.contains(": whole"), "{check}");
    // Never over a file.
    let (_, err) = said(&db, &["results", "backup", copy.to_str().unwrap()], 2);
    assert!(err.contains("already exists"), "{err}");
}
