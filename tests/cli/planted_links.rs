//! Files rtlab writes (as root, in directories others may write) never follow
//! a link planted at their name or at the temporary name older versions used
//! (`NAME.rtlab-tmp`), nor at SQLite's names beside a bundle: each test plants
//! links to "victim" files in a directory of their own and checks that the
//! victims are untouched, the output is a plain file with its content, and
//! nothing is left beside it.

use crate::common::{expect, rtlab};
use crate::store_common::import;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// Files another user cares about, each linked from a name rtlab writes.
struct Victims {
    dir: PathBuf,
    n: usize,
}

impl Victims {
    fn new(root: &Path) -> Victims {
        let dir = root.join("private");
        std::fs::create_dir(&dir).unwrap();
        Victims { dir, n: 0 }
    }

    /// Plants a link at `name` to a new victim file.
    fn plant(&mut self, name: &Path) {
        self.n += 1;
        let victim = self.dir.join(format!("victim-{}", self.n));
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, name).unwrap();
    }

    /// Every victim still holds what it held.
    fn untouched(&self) {
        for e in std::fs::read_dir(&self.dir).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(
                text == "precious",
                "{} was written through a link ({} bytes now)",
                p.display(),
                text.len()
            );
        }
    }
}

/// Links at `path` itself and at its old temporary name.
fn plant_around(v: &mut Victims, path: &Path) {
    v.plant(&path.with_extension("rtlab-tmp"));
    v.plant(path);
}

/// `path` is a plain file now (the link at its name replaced), holding `needle`.
fn written(path: &Path, needle: &str) {
    let meta = path.symlink_metadata().unwrap();
    assert!(meta.is_file(), "{} is still a link", path.display());
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(needle), "{}: {text}", path.display());
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn outputs_replace_planted_links_and_never_write_through_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    let ids = import(
        &db,
        &[&fixture("cyclictest-verbose.txt"), "--label", "stock"],
    );
    let id = ids[0].to_string();
    let mut v = Victims::new(d);

    let html = d.join("report.html");
    let json = d.join("run.json");
    let csv = d.join("runs.csv");
    let hist = d.join("hist.txt");
    let plots = d.join("plots");
    std::fs::create_dir(&plots).unwrap();
    let svg = plots.join("histograms.svg");
    for p in [&html, &json, &csv, &hist, &svg] {
        plant_around(&mut v, p);
    }
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["report", &id, "--html"])
            .arg(&html)
            .arg("--plots")
            .arg(&plots),
        &[0],
    );
    for (p, format) in [(&json, "json"), (&csv, "csv")] {
        expect(
            rtlab()
                .arg("--db")
                .arg(&db)
                .args(["results", "export", &id, "--format", format, "-o"])
                .arg(p),
            &[0],
        );
    }
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["latency", "-l", "50", "-i", "1ms", "--policy", "other"])
            .args(["--no-save", "--quiet", "--histfile"])
            .arg(&hist),
        &[0],
    );
    v.untouched();
    written(&html, "<html");
    written(&svg, "<svg");
    written(&json, "\"format\"");
    written(&csv, "run,kind,label");
    written(&hist, "# Total:");
    for dir in [d, plots.as_path()] {
        let hidden: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "left behind: {hidden:?}");
    }
}

#[test]
fn the_monitor_unit_and_man_pages_replace_planted_links() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut v = Victims::new(d);
    let unit = d.join("rtlab-monitor.service");
    v.plant(&unit);
    let man = d.join("man");
    std::fs::create_dir(&man).unwrap();
    v.plant(&man.join("rtlab.1"));
    expect(
        rtlab()
            .arg("--db")
            .arg(d.join("m.db"))
            .args(["monitor", "-a", "0", "--policy", "other", "--install-unit"])
            .arg("--unit-dir")
            .arg(d),
        &[0],
    );
    expect(rtlab().args(["man", "--dir"]).arg(&man), &[0]);
    v.untouched();
    written(&unit, "ExecStart=");
    written(&man.join("rtlab.1"), ".TH rtlab");
}

#[test]
fn bundles_are_made_and_copied_where_no_one_can_plant_anything() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    import(&db, &[&fixture("cyclictest-summary.txt")]);
    let mut v = Victims::new(d);
    // SQLite's names beside the bundle as older versions wrote it.
    let bundle = d.join("b.rtlab");
    for suffix in [".part", ".part-journal", ".part-wal", ".part-shm"] {
        v.plant(Path::new(&format!("{}{suffix}", bundle.display())));
    }
    expect(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["results", "export", "--bundle"])
            .arg(&bundle),
        &[0],
    );
    let head = std::fs::read(&bundle).unwrap();
    assert!(
        head.starts_with(b"SQLite format 3\0"),
        "a plain bundle file"
    );
    assert!(!bundle.symlink_metadata().unwrap().is_symlink());

    // Import copied the bundle to /tmp/rtlab-bundle-<pid>-<name>.db: names
    // anyone could take first for the next few thousand process ids.
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for pid in last + 1..last + 3000 {
        let copy = tmp.join(format!("rtlab-bundle-{pid}-b.rtlab.db"));
        std::fs::create_dir(&copy).unwrap();
        v.plant(Path::new(&format!("{}-wal", copy.display())));
    }
    let other = d.join("other.db");
    expect(
        rtlab()
            .env("TMPDIR", &tmp)
            .arg("--db")
            .arg(&other)
            .args(["results", "import", "--bundle"])
            .arg(&bundle),
        &[0],
    );
    v.untouched();
    let left = std::fs::read_dir(&tmp).unwrap().count();
    assert_eq!(left, 2 * 2999, "the private copy was removed");
}
