//! Moving runs between stores: a database named by URL is refused (never taken
//! for a file path).

use crate::common::{expect, rtlab, shown};

#[test]
fn a_database_url_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    for (url, says) in [
        ("postgres://rt:secret@db.lab/rtlab", "PostgreSQL"),
        ("postgresql://db.lab/rtlab", "PostgreSQL"),
        ("mysql://db.lab/rtlab", "a URL"),
    ] {
        let out = expect(
            rtlab()
                .current_dir(dir.path())
                .args(["--db", url, "results", "list"]),
            &[2],
        );
        let err = shown(&out);
        assert!(err.contains("--db names") && err.contains(says), "{err}");
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
        assert!(shown(&out).contains("RTLAB_DB names"), "{}", shown(&out));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing is created: {left:?}");
}
