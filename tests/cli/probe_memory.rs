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
//! The debug build this suite runs maps its 23 MB of code spread out (not laid
//! out by use, not link-time optimised), so most of its resident memory is
//! code pages read from the file: 7-8 MiB while measuring, and how many of
//! them are resident moves with the page cache and with every line of code
//! added anywhere. What the program itself allocates is its anonymous memory
//! (heap, stacks, histograms: RssAnon), the same in a debug and a release
//! build and stable to a page: that is budgeted tightly, while measuring and
//! at every moment of the run (sampled every 2 ms). The process's high-water
//! mark (code included) has a looser ceiling that catches gross growth. The
//! release build's figures against cyclictest are in bench/RESULTS.md
//! (bench/vs-cyclictest.sh).

use crate::common::{measuring, output_and_peak_rss, shown, status_kib, wait_until_measuring};
use std::process::Command;

/// The high-water mark of a run that saves, code pages included: 18.5-22.6
/// MiB on this build (the debug build's peak is at start-up, where it maps its
/// code and reads 1.7 MB of relocations) and room for the page cache's moods.
const PEAK_KIB: u64 = 28 * 1024;

/// Anonymous memory while measuring, one thread: 2.2 MiB today (heap, the
/// thread's stack and its histograms and windows) and a margin of about 0.8
/// MiB, which leaves room for a few more windows of statistics, not for a
/// dependency that allocates at start or a store opened before measuring.
const MEASURING_ANON_KIB: u64 = 3 * 1024;

/// Anonymous memory at any moment of the run, saving included: 2.2-2.3 MiB
/// today, sampled every 2 ms.
const RUN_ANON_KIB: u64 = 4 * 1024;

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
    let (mut while_measuring, mut whole_run) = (0, 0);
    let (out, peak) = output_and_peak_rss(&cmd, |pid| {
        let mut sample = |measuring_now: bool| {
            let anon = status_kib(pid, "RssAnon");
            whole_run = whole_run.max(anon);
            if measuring_now {
                while_measuring = while_measuring.max(anon);
            }
        };
        wait_until_measuring(pid);
        while measuring(pid) {
            sample(true);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        while status_kib(pid, "VmRSS") > 0 {
            sample(false);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    });
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("saved as run 1"),
        "{}",
        shown(&out)
    );
    eprintln!(
        "rtlab latency (debug build): peak {peak} KiB; anonymous {while_measuring} KiB while measuring, {whole_run} KiB at most"
    );
    assert!(
        peak <= PEAK_KIB,
        "peak resident memory {peak} KiB, budget {PEAK_KIB} KiB"
    );
    assert!(
        (1..=MEASURING_ANON_KIB).contains(&while_measuring),
        "anonymous memory while measuring {while_measuring} KiB, budget {MEASURING_ANON_KIB} KiB"
    );
    assert!(
        whole_run <= RUN_ANON_KIB,
        "anonymous memory during the run {whole_run} KiB, budget {RUN_ANON_KIB} KiB"
    );
}
