//! The personality next to the real sysbench 1.0: the same command lines give
//! outputs of the same shape, line by line (numbers differ; sections, fields,
//! their order, spacing and decimals must not).

use crate::store_common::{need, run_tool};
use crate::sysbench_layout::shape;
use std::path::Path;

/// What `rtlab sysbench ARGS` prints in `dir`, nothing stored.
fn personality(dir: &Path, args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("rtlab")
        .unwrap()
        .current_dir(dir)
        .env("RTLAB_NO_STORE", "1")
        .arg("sysbench")
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn same_shape(args: &[&str], dirs: (&Path, &Path)) {
    let mut theirs = vec!["sysbench"];
    theirs.extend_from_slice(args);
    let real = run_tool(dirs.0, &theirs);
    let ours = personality(dirs.1, args);
    let (a, b) = (shape(&real), shape(&ours));
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(
            x,
            y,
            "{args:?}: line {} differs\n--- sysbench\n{real}\n--- rtlab\n{ours}",
            i + 1
        );
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{args:?}\n--- sysbench\n{real}\n--- rtlab\n{ours}"
    );
}

#[test]
#[ignore = "needs sysbench: the real tool's output is the reference"]
fn every_test_has_sysbench_s_sections_line_by_line() {
    need("sysbench");
    let tmp = tempfile::tempdir().unwrap();
    let (real, ours) = (tmp.path().join("real"), tmp.path().join("ours"));
    std::fs::create_dir(&real).unwrap();
    std::fs::create_dir(&ours).unwrap();
    let dirs = (real.as_path(), ours.as_path());
    for args in [
        "cpu --cpu-max-prime=2000 --time=2 --report-interval=1 run",
        "cpu --cpu-max-prime=2000 --events=500 --time=0 --histogram --percentile=99 run",
        "--test=cpu --num-threads=2 --max-requests=200 --max-time=0 run",
        "memory --memory-total-size=64M --time=0 run",
        "memory --memory-block-size=64M --memory-total-size=256M --memory-oper=read --time=0 run",
        "threads --events=200 --time=0 --percentile=0 run",
        "threads --threads=2 --time=1 --histogram run",
        "mutex --threads=2 --mutex-locks=2000 run",
        "fileio --file-total-size=8M --file-num=4 prepare",
        "fileio --file-total-size=8M --file-num=4 --file-test-mode=rndrw --time=2 --report-interval=1 run",
        "fileio --file-total-size=8M --file-num=4 --file-test-mode=seqrd --events=100 --time=0 --file-fsync-freq=0 run",
        "fileio --file-total-size=8M --file-num=4 --file-test-mode=seqwr --events=100 --time=0 --file-fsync-end=off run",
        "fileio --file-total-size=8M --file-num=4 cleanup",
    ] {
        let args: Vec<&str> = args.split_whitespace().collect();
        same_shape(&args, dirs);
    }
    assert_eq!(
        std::fs::read_dir(&ours).unwrap().count(),
        0,
        "cleanup left files"
    );
}
