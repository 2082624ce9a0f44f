//! `rtlab sysbench`: each of the five tests through the personality, its output
//! in sysbench 1.0's layout line by line, imported back, stored with the
//! command line as typed; fileio's prepare, run and cleanup leave nothing
//! behind; refusals; `rtlab bench` with sysbench's option names.

use crate::common::{expect, shown};
use crate::store_common::{export_json, import, list_ids, rtlab};
use crate::sysbench_layout::{assert_layout, run_pattern};
use std::path::Path;

/// `rtlab --db DB sysbench ARGS` in `dir`, expecting `code`: stdout, stderr.
fn sysbench(db: &Path, dir: &Path, args: &str, code: i32) -> (String, String) {
    let mut c = rtlab(db);
    c.current_dir(dir)
        .env_remove("RTLAB_NO_STORE")
        .arg("sysbench");
    c.args(args.split_whitespace());
    let out = expect(&mut c, &[code]);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The first number after `key` in `text`.
fn printed(text: &str, key: &str) -> f64 {
    let rest = &text[text
        .find(key)
        .unwrap_or_else(|| panic!("no {key}:\n{text}"))
        + key.len()..];
    let n: String = rest
        .trim_start_matches([' ', ':', '('])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().unwrap()
}

/// Runs `args` through the personality, checks the layout, imports the output
/// (as `--sysbench-test test` where the output cannot tell) and checks what
/// was imported against what was printed.
fn runs_and_imports_back(test: &str, args: &str, interval: bool, histogram: bool, pct: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let (db, dir) = (tmp.path().join("r.db"), tmp.path());
    let (out, _) = sysbench(&db, dir, args, 0);
    assert_layout(&out, &run_pattern(test, interval, histogram, pct));
    let stored = export_json(&db, 1);
    assert_eq!(stored["kind"], format!("bench.{test}"));
    let typed: Vec<String> = stored["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // As typed: `rtlab --db DB sysbench ARGS`.
    assert!(
        typed.join(" ").ends_with(&format!(" sysbench {args}")),
        "{typed:?}"
    );
    let file = dir.join("out.txt");
    std::fs::write(&file, &out).unwrap();
    let imports = tmp.path().join("i.db");
    let mut a = vec![file.to_str().unwrap()];
    if matches!(test, "threads" | "mutex") {
        a.extend(["--sysbench-test", test]);
    }
    let id = import(&imports, &a)[0];
    let run = export_json(&imports, id);
    assert_eq!(run["kind"], format!("bench.{test}"));
    let m = &run["metrics"];
    assert_eq!(m["total_events"], printed(&out, "total number of events"));
    assert_eq!(m["total_time_s"], printed(&out, "total time"));
    assert_eq!(m["total_events"], stored["metrics"]["total_events"]);
    match test {
        "cpu" => assert_eq!(m["events_per_s"], printed(&out, "events per second")),
        "memory" => assert_eq!(m["mib_per_s"], printed(&out, "MiB transferred")),
        "fileio" => assert_eq!(m["reads_per_s"], printed(&out, "reads/s")),
        _ => {}
    }
    let s = &run["total"]["summary"];
    assert_eq!(s["samples"], stored["total"]["summary"]["samples"]);
}

#[test]
fn cpu_runs_in_sysbench_s_layout_and_imports_back() {
    runs_and_imports_back(
        "cpu",
        "cpu --cpu-max-prime=2000 --time=2 --report-interval=1 --histogram --percentile=99 run",
        true,
        true,
        99,
    );
}

#[test]
fn memory_runs_in_sysbench_s_layout_and_imports_back() {
    runs_and_imports_back(
        "memory",
        "memory --memory-block-size=4K --memory-total-size=64M --time=0 --threads=2 run",
        false,
        false,
        95,
    );
}

#[test]
fn threads_runs_in_sysbench_s_layout_and_imports_back() {
    runs_and_imports_back(
        "threads",
        "threads --events=100 --thread-yields=10 --percentile=0 run",
        false,
        false,
        0,
    );
}

#[test]
fn mutex_runs_in_sysbench_s_layout_and_imports_back() {
    runs_and_imports_back(
        "mutex",
        "--test=mutex --num-threads=2 --mutex-locks=2000 --mutex-loops=10 --histogram --validate run",
        false,
        true,
        95,
    );
}

#[test]
fn fileio_prepare_run_cleanup_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let db = tmp.path().join("r.db");
    let set = "fileio --file-total-size=8M --file-num=4";
    let (_, err) = sysbench(
        &db,
        &work,
        &format!("{set} --file-test-mode=rndrw --events=50 run"),
        2,
    );
    assert!(
        err.contains("Did you forget to run the prepare step?"),
        "{err}"
    );
    let (out, _) = sysbench(&db, &work, &format!("{set} prepare"), 0);
    assert!(
        out.contains("4 files, 2048Kb each, 8Mb total\nCreating files for the test...\n"),
        "{out}"
    );
    assert!(
        out.contains("Creating file test_file.3\n8388608 bytes written in "),
        "{out}"
    );
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 4);
    let (out, _) = sysbench(&db, &work, &format!("{set} prepare"), 0);
    assert!(
        out.contains("Reusing existing file test_file.0\n") && out.ends_with("No bytes written.\n")
    );
    let args = format!("{set} --file-test-mode=rndrw --time=1 --report-interval=1 run");
    let (out, _) = sysbench(&db, &work, &args, 0);
    assert_layout(&out, &run_pattern("fileio", true, false, 95));
    let file = tmp.path().join("fileio.txt");
    std::fs::write(&file, &out).unwrap();
    let run = export_json(
        &tmp.path().join("i.db"),
        import(&tmp.path().join("i.db"), &[file.to_str().unwrap()])[0],
    );
    assert_eq!(run["metrics"]["reads_per_s"], printed(&out, "reads/s"));
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        4,
        "run leaves the prepared files"
    );
    let (out, _) = sysbench(&db, &work, &format!("{set} cleanup"), 0);
    assert!(out.ends_with("\nRemoving test files...\n"), "{out}");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    // seqwr makes its files, as sysbench's; cleanup removes them.
    sysbench(
        &db,
        &work,
        &format!("{set} --file-test-mode=seqwr --events=20 run"),
        0,
    );
    sysbench(&db, &work, &format!("{set} cleanup"), 0);
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    assert_eq!(
        list_ids(&db).len(),
        2,
        "two runs stored, prepare and cleanup store nothing"
    );
}

#[test]
fn no_store_before_the_tool_s_arguments_or_in_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let (_, err) = sysbench(&db, tmp.path(), "--no-store cpu --events=10 run", 0);
    assert!(!err.contains("saved"), "{err}");
    let mut c = rtlab(&db);
    c.env("RTLAB_NO_STORE", "1")
        .args(["sysbench", "cpu", "--events=10", "run"]);
    expect(&mut c, &[0]);
    assert!(!db.exists(), "nothing was stored");
}

#[test]
fn refusals_name_sysbench_s_option_and_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let cases = [
        ("cpu --bogus=1 run", "unknown option --bogus=1"),
        ("nosuchtest run", "cannot find benchmark 'nosuchtest'"),
        ("cpu", "requires a command argument"),
        (
            "cpu prepare",
            "'cpu' test does not implement the 'prepare' command",
        ),
        (
            "memory --memory-block-size=12 run",
            "invalid value for --memory-block-size: '12' (a power of two, 8 bytes or more)",
        ),
        (
            "cpu --cpu-max-prime=2 run",
            "--cpu-max-prime: 2 leaves no number",
        ),
        (
            "fileio --file-io-mode=async --file-test-mode=rndrd run",
            "--file-io-mode=async: not supported",
        ),
    ];
    for (args, why) in cases {
        let (out, err) = sysbench(&db, tmp.path(), args, 2);
        assert!(out.is_empty(), "{args}: printed before refusing:\n{out}");
        assert!(err.contains(why), "{args}: {err}");
    }
    assert!(!db.exists());
}

#[test]
fn help_and_version_as_sysbench_s() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let (out, _) = sysbench(&db, tmp.path(), "--version", 0);
    assert!(out.starts_with("sysbench 1.0.20 "), "{out}");
    let (out, _) = sysbench(&db, tmp.path(), "memory help", 0);
    assert!(
        out.contains("\nmemory options:\n  --memory-block-size=SIZE "),
        "{out}"
    );
    let (out, _) = sysbench(&db, tmp.path(), "--help", 0);
    assert!(
        out.contains("Compiled-in tests:\n  fileio - File I/O test\n"),
        "{out}"
    );
}

/// The run `rtlab bench ARGS --no-save --json` gives.
fn bench(args: &str) -> serde_json::Value {
    let mut c = crate::common::rtlab();
    c.arg("bench")
        .args(args.split_whitespace())
        .args(["--no-save", "--json"]);
    let out = expect(&mut c, &[0]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", shown(&out)))
}

#[test]
fn bench_takes_sysbench_s_option_names() {
    let run = bench("cpu --cpu-max-prime=2000 --num-threads=2 --max-requests=20");
    let p = &run["params"];
    assert_eq!((&p["max_prime"], &p["threads"]), (&2000.into(), &2.into()));
    assert_eq!(run["metrics"]["total_events"], 20.0);
    let p = &bench(
        "memory --memory-block-size=4K --memory-total-size=1M --memory-oper=read \
         --memory-access-mode=rnd --memory-scope=local --max-time=1",
    )["params"];
    assert_eq!(
        [
            &p["block_size"],
            &p["total_size"],
            &p["oper"],
            &p["access"],
            &p["scope"]
        ],
        ["4K", "1M", "read", "rnd", "local"]
    );
    let tmp = tempfile::tempdir().unwrap();
    let p = &bench(&format!(
        "fileio --dir {} --file-total-size=1M --file-num=2 --file-block-size=4K \
         --file-test-mode=seqrd --file-rw-ratio=2 --file-fsync-freq=0 --file-fsync-end=off \
         --events=10",
        tmp.path().display()
    ))["params"];
    assert_eq!(
        [&p["total_size"], &p["block_size"], &p["mode"]],
        ["1M", "4K", "seqrd"]
    );
    assert_eq!(
        [&p["files"], &p["rw_ratio"], &p["fsync_freq"]],
        [2.0, 2.0, 0.0]
    );
    assert_eq!(p["fsync_end"], false);
    let p = &bench("threads --thread-yields=5 --thread-locks=2 --events=5")["params"];
    assert_eq!([&p["yields"], &p["locks"]], [5, 2]);
    let p = &bench("mutex --mutex-num=8 --mutex-locks=100 --mutex-loops=1")["params"];
    assert_eq!([&p["mutexes"], &p["locks"], &p["loops"]], [8, 100, 1]);
}
