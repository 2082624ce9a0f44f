//! What `sysbench TEST run` prints, in sysbench 1.0's layout, section by
//! section: the banner, the options, "Threads started!", the
//! `--report-interval` lines, the histogram, the test's own section, "General
//! statistics:", "Latency (ms):" and "Threads fairness:". Every figure comes
//! from rtlab's run record.

use super::args::Test;
use super::histogram;
use super::params::Plan;
use crate::record::{Run, Series};
use crate::step::value::Size;
use crate::step::Params;
use rtlab_engine::bench::Snapshot;

/// The sysbench release whose output this reproduces.
pub const VERSION: &str = "1.0.20";

const MIB: f64 = 1024.0 * 1024.0;

/// The first line of everything sysbench prints.
pub fn banner() -> String {
    format!(
        "sysbench {VERSION} (using rtlab {})\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `bytes` as sysbench shows a size: in the largest binary unit that leaves
/// at least 1, with up to five significant digits (`16KiB`, `3.3333MiB`).
pub fn human(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    let digits = format!("{v:.0}").len();
    let text = format!("{v:.*}", 5usize.saturating_sub(digits));
    let text = match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.'),
        false => &text,
    };
    format!("{text}{}", units[u])
}

/// The fileio files: (number, bytes each, bytes per request).
pub fn file_set(p: &crate::step::bench::fileio::Params) -> (u64, u64, u64) {
    let size = |s: &Size| s.get().unwrap_or(0);
    let (total, block, files) = (size(&p.total_size), size(&p.block_size), p.files);
    let each = match (block, files) {
        (0, _) | (_, 0) => 0,
        (b, n) => total / u64::from(n) / b * b,
    };
    (u64::from(files), each, block)
}

/// Everything before the measuring: from the banner to "Threads started!".
pub fn header(plan: &Plan) -> String {
    let mut s = banner();
    s.push_str("\nRunning the test with following options:\n");
    s.push_str(&format!("Number of threads: {}\n", plan.threads));
    if plan.report_every > 0 {
        s.push_str(&format!(
            "Report intermediate results every {} second(s)\n",
            plan.report_every
        ));
    }
    match plan.seed {
        0 => s.push_str("Initializing random number generator from current time\n"),
        n => s.push_str(&format!(
            "Initializing random number generator from seed ({n}).\n"
        )),
    }
    s.push_str("\n\n");
    match &plan.step {
        Params::BenchCpu(p) => s.push_str(&format!("Prime numbers limit: {}\n\n", p.max_prime)),
        Params::BenchMemory(p) => {
            let size = |s: &Size| s.get().unwrap_or(0);
            s.push_str("Running memory speed test with the following options:\n");
            s.push_str(&format!("  block size: {}KiB\n", size(&p.block_size) >> 10));
            s.push_str(&format!("  total size: {}MiB\n", size(&p.total_size) >> 20));
            s.push_str(&format!("  operation: {}\n", word(&p.oper)));
            s.push_str(&format!("  scope: {}\n\n", word(&p.scope)));
        }
        Params::BenchFileio(p) => {
            let (files, each, block) = file_set(p);
            let flags = if p.direct { "directio" } else { "(none)" };
            s.push_str(&format!("Extra file open flags: {flags}\n"));
            s.push_str(&format!("{files} files, {} each\n", human(each as f64)));
            s.push_str(&format!(
                "{} total file size\n",
                human((each * files) as f64)
            ));
            s.push_str(&format!("Block size {}\n", human(block as f64)));
            let mode = word(&p.mode);
            if mode.starts_with("rnd") {
                s.push_str(&format!(
                    "Number of IO requests: {}\n",
                    p.common.events.unwrap_or(0)
                ));
                s.push_str(&format!(
                    "Read/Write ratio for combined random IO test: {:.2}\n",
                    p.rw_ratio
                ));
            }
            if p.fsync_freq > 0 {
                s.push_str(&format!(
                    "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
                    p.fsync_freq
                ));
            }
            if p.fsync_end {
                s.push_str("Calling fsync() at the end of test, Enabled.\n");
            }
            s.push_str("Using synchronous I/O mode\n");
            s.push_str(&format!("Doing {} test\n", mode_words(&mode)));
        }
        _ => {}
    }
    s.push_str("Initializing worker threads...\n\nThreads started!\n\n");
    s
}

/// A parameter's word as the step serialises it (`write`, `global`, `rndrw`).
fn word<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// What sysbench says it is doing in fileio mode `mode`.
pub fn mode_words(mode: &str) -> &'static str {
    match mode {
        "seqwr" => "sequential write (creation)",
        "seqrewr" => "sequential rewrite",
        "seqrd" => "sequential read",
        "rndrd" => "random read",
        "rndwr" => "random write",
        _ => "random r/w",
    }
}

/// One `--report-interval` line: the rates since `prev` and the interval's
/// percentile of the event times.
pub fn interval(plan: &Plan, prev: &Snapshot, now: &Snapshot) -> String {
    let dt = now.elapsed_ns.saturating_sub(prev.elapsed_ns).max(1) as f64 / 1e9;
    let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / dt;
    let at = (now.elapsed_ns as f64 / 1e9).round();
    let (t, p) = (&now.tally, &prev.tally);
    let lat = now.pct_ns as f64 / 1e6;
    let pct = plan.percentile;
    match plan.test {
        Test::Memory => format!(
            "[ {at}s ] {:.2} MiB/sec",
            rate(t.bytes_read + t.bytes_written, p.bytes_read + p.bytes_written) / MIB
        ),
        Test::Fileio => format!(
            "[ {at}s ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{pct}%): {lat:.3}",
            rate(t.bytes_read, p.bytes_read) / MIB,
            rate(t.bytes_written, p.bytes_written) / MIB,
            rate(t.fsyncs, p.fsyncs),
        ),
        _ => format!(
            "[ {at}s ] thds: {} eps: {:.2} lat (ms,{pct}%): {lat:.2}",
            now.running,
            rate(now.events, prev.events)
        ),
    }
}

/// Mean and population standard deviation.
fn avg_stddev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The sum of a series' event times (ns).
fn sum_ns(s: &Series) -> f64 {
    s.summary.mean_ns * s.summary.samples as f64
}

/// Everything after the measuring: the histogram (with `--histogram`), the
/// test's section, the statistics, the latencies and the threads' fairness.
pub fn report(run: &Run, plan: &Plan) -> String {
    let metric = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0);
    let buckets = run
        .total
        .as_ref()
        .map(|t| histogram::buckets(&t.histogram))
        .unwrap_or_default();
    let mut s = String::new();
    if plan.histogram {
        s.push_str(&histogram::render(&buckets));
    }
    let events = metric("total_events") as u64;
    match plan.test {
        Test::Cpu => s.push_str(&format!(
            "CPU speed:\n    events per second: {:8.2}\n\n",
            metric("events_per_s")
        )),
        Test::Memory => {
            s.push_str(&format!(
                "Total operations: {events} ({:8.2} per second)\n\n",
                metric("events_per_s"),
            ));
            // `--memory-oper=none` moves nothing, and sysbench says nothing of it.
            if run.metrics.contains_key("mib_per_s") {
                s.push_str(&format!(
                    "{:4.2} MiB transferred ({:4.2} MiB/sec)\n\n",
                    metric("total_mib"),
                    metric("mib_per_s"),
                ));
            }
            s.push('\n');
        }
        Test::Fileio => {
            let line = |k: &str, v: f64| format!("    {:<30}{v:.2}\n", format!("{k}:"));
            s.push_str("\nFile operations:\n");
            s.push_str(&line("reads/s", metric("reads_per_s")));
            s.push_str(&line("writes/s", metric("writes_per_s")));
            s.push_str(&line("fsyncs/s", metric("fsyncs_per_s")));
            s.push_str("\nThroughput:\n");
            s.push_str(&line("read, MiB/s", metric("read_mib_per_s")));
            s.push_str(&line("written, MiB/s", metric("written_mib_per_s")));
            s.push('\n');
        }
        Test::Threads | Test::Mutex => s.push('\n'),
    }
    s.push_str("General statistics:\n");
    s.push_str(&format!(
        "    total time:                          {:.4}s\n",
        metric("total_time_s")
    ));
    s.push_str(&format!(
        "    total number of events:              {events}\n\n"
    ));
    let (min, avg, max, sum) = match &run.total {
        Some(t) if t.summary.samples > 0 => (
            t.summary.min_ns as f64,
            t.summary.mean_ns,
            t.summary.max_ns as f64,
            sum_ns(t),
        ),
        _ => (0.0, 0.0, 0.0, 0.0),
    };
    s.push_str("Latency (ms):\n");
    s.push_str(&format!("         min: {:39.2}\n", min / 1e6));
    s.push_str(&format!("         avg: {:39.2}\n", avg / 1e6));
    s.push_str(&format!("         max: {:39.2}\n", max / 1e6));
    match plan.percentile {
        0 => s.push_str("         percentile stats:               disabled\n"),
        p => s.push_str(&format!(
            "         {p:2}th percentile: {:27.2}\n",
            histogram::percentile(&buckets, p)
        )),
    }
    s.push_str(&format!("         sum: {:39.2}\n\n", sum / 1e6));
    let per_thread: Vec<f64> = run
        .series
        .iter()
        .map(|t| t.summary.samples as f64)
        .collect();
    let busy: Vec<f64> = run.series.iter().map(|t| sum_ns(t) / 1e9).collect();
    let (ev, ev_sd) = avg_stddev(&per_thread);
    let (ex, ex_sd) = avg_stddev(&busy);
    s.push_str("Threads fairness:\n");
    s.push_str(&format!(
        "    events (avg/stddev):           {ev:.4}/{ev_sd:3.2}\n"
    ));
    s.push_str(&format!(
        "    execution time (avg/stddev):   {ex:.4}/{ex_sd:3.2}\n\n"
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysbench_prints_them() {
        assert_eq!(human(16384.0), "16KiB");
        assert_eq!(human(1000.0), "1000B");
        assert_eq!(human(4.0 * MIB), "4MiB");
        assert_eq!(human(10.0 * MIB / 3.0), "3.3333MiB");
        assert_eq!(human(2.0 * 1024.0 * MIB), "2GiB");
        assert_eq!(human(1536.0 * 1024.0), "1.5MiB");
        assert_eq!(human(1023.5 * 1024.0), "1023.5KiB");
    }

    #[test]
    fn fairness_is_the_population_spread() {
        assert_eq!(avg_stddev(&[2076.0, 1872.0]), (1974.0, 102.0));
        assert_eq!(avg_stddev(&[]), (0.0, 0.0));
    }
}
