//! The memory a latency probe holds, guarded so that the next dependency or
//! start-up step cannot grow it unseen: the peak resident memory of a short
//! `rtlab latency` run that saves its run (the kernel's high-water mark of the
//! process), and its resident memory while it measures, each within a budget.
//!
//! Not a timing test: resident memory is counted in pages. It moves a little
//! from run to run (address randomisation shifts the 64 KiB blocks the kernel
//! maps around each page fault; a file not in the page cache maps fewer), well
//! within the margins below.
//!
//! The budgets are for the binary this suite runs, the debug build: its code
//! is not laid out by use, not link-time optimised and its relocations are not
//! packed, so its figures are two to five times the release build's, which
//! bench/vs-cyclictest.sh compares with cyclictest (bench/RESULTS.md). The
//! same growth shows in both: a dependency that allocates or initialises at
//! start, a table read at start-up, a store opened before measuring, memory a
//! phase holds on to.

use crate::common::{measuring, output_and_peak_rss, resident_kib, shown, wait_until_measuring};
use std::process::Command;

/// The peak of a run that saves: today's figure (18.5-19.2 MiB over ten runs;
/// the debug build's is at start-up, where it maps its 23 MB of code spread
/// out and reads 1.7 MB of relocations) and about 1.5 MiB of margin.
const PEAK_KIB: u64 = 21 * 1024;

/// Resident memory while measuring, one thread: today's figure (7.3-7.9 MiB
/// over ten runs) and about 1 MiB of margin, which leaves room for the
/// statistics a latency thread may yet keep (a few windows of histograms, tens
/// of KiB each).
const MEASURING_KIB: u64 = 9 * 1024;

#[test]
fn a_latency_run_stays_within_its_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("rtlab"));
    cmd.env_remove("RTLAB_DB")
        .arg("--db")
        .arg(dir.path().join("runs.db"))
        // The same run as root or not: time-sharing, one thread, 1 s.
        .args([
            "latency", "--policy", "other", "-t", "1", "-i", "1ms", "-l", "1000",
        ])
        .arg("-q");
    let mut while_measuring = 0;
    let (out, peak) = output_and_peak_rss(&cmd, |pid| {
        wait_until_measuring(pid);
        while measuring(pid) {
            while_measuring = while_measuring.max(resident_kib(pid));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("saved as run 1"),
        "{}",
        shown(&out)
    );
    eprintln!(
        "rtlab latency (debug build): peak {peak} KiB, {while_measuring} KiB while measuring"
    );
    assert!(
        peak <= PEAK_KIB,
        "peak resident memory {peak} KiB, budget {PEAK_KIB} KiB"
    );
    assert!(
        (1..=MEASURING_KIB).contains(&while_measuring),
        "resident memory while measuring {while_measuring} KiB, budget {MEASURING_KIB} KiB"
    );
}
