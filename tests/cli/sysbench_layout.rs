//! sysbench 1.0's output layout, as patterns: what every line of `sysbench
//! TEST run` looks like, section by section, and the shape of an output (its
//! lines with the numbers masked) to compare two outputs line by line.
#![allow(dead_code)] // each test file uses a different subset

use regex::Regex;

/// A number printed with two decimals.
const N2: &str = r"\d+\.\d{2}";

/// The pattern of a whole `sysbench TEST run` output. `interval` and
/// `histogram` say whether `--report-interval` lines and `--histogram` may
/// appear; `percentile` is `--percentile` (0: disabled).
pub fn run_pattern(test: &str, interval: bool, histogram: bool, percentile: u32) -> Regex {
    // sysbench warns on stdout first of old option names and of a run with
    // neither a time nor an event limit.
    let mut p = String::from(
        r"^(WARNING: (--[a-z-]+ is deprecated, use --[a-z]+ instead|Both event and time limits are disabled, running an endless test)\n)*",
    );
    p.push_str(
        r"sysbench 1\.0\.20 \(using [^)]+\)\n\nRunning the test with following options:\nNumber of threads: \d+\n",
    );
    if interval {
        p.push_str(r"Report intermediate results every \d+ second\(s\)\n");
    }
    p.push_str(r"Initializing random number generator from (current time|seed \(\d+\)\.)\n\n\n");
    p.push_str(match test {
        "cpu" => r"Prime numbers limit: \d+\n\n",
        "memory" => concat!(
            r"Running memory speed test with the following options:\n",
            r"  block size: \d+KiB\n  total size: \d+MiB\n  operation: (read|write)\n",
            r"  scope: (global|local)\n\n"
        ),
        "fileio" => concat!(
            r"Extra file open flags: (\(none\)|directio)\n",
            r"\d+ files, [\d.]+[KMGT]?i?B each\n[\d.]+[KMGT]?i?B total file size\n",
            r"Block size [\d.]+[KMGT]?i?B\n",
            r"(Number of IO requests: \d+\nRead/Write ratio for combined random IO test: \d+\.\d{2}\n)?",
            r"(Periodic FSYNC enabled, calling fsync\(\) each \d+ requests\.\n)?",
            r"(Calling fsync\(\) at the end of test, Enabled\.\n)?",
            r"Using synchronous I/O mode\n",
            r"Doing (sequential write \(creation\)|sequential rewrite|sequential read|random read|random write|random r/w) test\n"
        ),
        _ => "",
    });
    p.push_str(r"Initializing worker threads\.\.\.\n\nThreads started!\n\n");
    if interval {
        p.push_str(&match test {
            "memory" => format!(r"(\[ \d+s \] {N2} MiB/sec\n)*"),
            "fileio" => format!(
                r"(\[ \d+s \] reads: {N2} MiB/s writes: {N2} MiB/s fsyncs: {N2}/s latency \(ms,\d+%\): \d+\.\d{{3}}\n)*"
            ),
            _ => format!(r"(\[ \d+s \] thds: \d+ eps: {N2} lat \(ms,\d+%\): {N2}\n)*"),
        });
    }
    if histogram {
        p.push_str(concat!(
            r"Latency histogram \(values are in milliseconds\)\n",
            r"       value  ------------- distribution ------------- count\n",
            r"( {0,11}\d+\.\d{3} \|[* ]{40} \d+\n)*",
            r" \n"
        ));
    }
    p.push_str(&match test {
        "cpu" => format!(r"CPU speed:\n    events per second: {{0,7}}{N2}\n\n"),
        "memory" => format!(
            r"Total operations: \d+ \( {{0,7}}{N2} per second\)\n\n{N2} MiB transferred \({N2} MiB/sec\)\n\n\n"
        ),
        "fileio" => format!(
            r"\nFile operations:\n    reads/s: {{22}}{N2}\n    writes/s: {{21}}{N2}\n    fsyncs/s: {{21}}{N2}\n\nThroughput:\n    read, MiB/s: {{18}}{N2}\n    written, MiB/s: {{15}}{N2}\n\n"
        ),
        _ => r"\n".to_string(),
    });
    p.push_str(r"General statistics:\n    total time: {26}\d+\.\d{4}s\n    total number of events: {14}\d+\n\n");
    p.push_str(r"Latency \(ms\):\n");
    for k in ["min", "avg", "max"] {
        p.push_str(&format!(r"         {k}: +{N2}\n"));
    }
    match percentile {
        0 => p.push_str(r"         percentile stats: {15}disabled\n"),
        n => p.push_str(&format!(r"         {n:2}th percentile: +{N2}\n")),
    }
    p.push_str(&format!(r"         sum: +{N2}\n\n"));
    p.push_str(&format!(
        r"Threads fairness:\n    events \(avg/stddev\): {{11}}\d+\.\d{{4}}/{N2}\n    execution time \(avg/stddev\): {{3}}\d+\.\d{{4}}/{N2}\n\n$"
    ));
    Regex::new(&p).unwrap()
}

/// Checks `out` against the layout, and that the right-aligned latency values
/// end in sysbench's column (53).
pub fn assert_layout(out: &str, re: &Regex) {
    assert!(re.is_match(out), "not sysbench 1.0's layout ({re}):\n{out}");
    let lat = Regex::new(r"^         (min|avg|max|sum|\d+th percentile):").unwrap();
    for l in out.lines().filter(|l| lat.is_match(l)) {
        assert_eq!(l.len(), 53, "not right-aligned as sysbench's: {l:?}");
    }
}

/// The shape of an output: each line with its numbers masked (`#` and the
/// number of decimals), the spaces before a number made one, the banner's tool
/// masked; runs of interval lines and of histogram rows are one line each.
pub fn shape(out: &str) -> Vec<String> {
    let num = Regex::new(r" *\b\d+(\.(\d+))?").unwrap();
    let row = Regex::new(r"^ *\d+\.\d{3} \|").unwrap();
    let mut lines: Vec<String> = Vec::new();
    for l in out.lines() {
        let s = if l.starts_with("sysbench 1.") {
            "sysbench 1.0.20 (using ...)".to_string()
        } else if l.starts_with("[ ") {
            "[interval]".to_string()
        } else if row.is_match(l) {
            "[histogram row]".to_string()
        } else {
            num.replace_all(l, |c: &regex::Captures| {
                let lead = if c[0].starts_with(' ') { " " } else { "" };
                match c.get(2) {
                    Some(d) => format!("{lead}#.{}", d.as_str().len()),
                    None => format!("{lead}#"),
                }
            })
            .into_owned()
        };
        if lines.last() != Some(&s) || !s.starts_with('[') {
            lines.push(s);
        }
    }
    lines
}
