//! cyclictest's histogram layout (`cyclictest -h N`), written by
//! `rtlab latency --histfile` and read back by the importer. A script or gnuplot
//! file that reads one reads the other:
//!
//! ```text
//! # Histogram
//! 000000 000000<TAB>000000
//! 000001 000012<TAB>000009
//! ...
//! # Total: 000001993 000001990
//! # Min Latencies: 00004 00004
//! # Avg Latencies: 00004 00005
//! # Max Latencies: 00040 00038
//! # Histogram Overflows: 00007 00010
//! # Histogram Overflow at cycle number:
//! # Thread 0: 00248 00459
//! # Thread 1: 00012 # 00009 others
//! ```
//!
//! As in cyclictest 2.x, every bucket from 0 to max−1 µs is a line (the reader also
//! takes the sparse form some versions print), counts are per
//! thread separated by tabs, `Total` counts only values inside the histogram, and
//! latencies are whole microseconds (averages truncated).

use super::{one, Exporter, Format, Options};
use crate::error::UsageError;
use crate::record::Run;
use crate::units::parse_count;
use anyhow::{bail, Result};
use rtlab_engine::stats::hist::{UsBucketsData, MAX_US_BUCKETS};
use std::io;

/// The per-thread 1-µs histograms of one run in cyclictest's layout.
pub struct Hist;

impl Exporter for Hist {
    fn serialize(&self, runs: &[Run], _: &Options) -> Result<String> {
        let run = one(runs, Format::Hist)?;
        Ok(render(&columns(run)?, Layout::PerThread))
    }
}

/// Which columns cyclictest prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `-h`: one column per thread.
    PerThread,
    /// `-H`: with more than one thread, also a column of all threads together
    /// in the buckets and the Total, Max Latencies and Histogram Overflows
    /// lines.
    WithTotal,
}

/// The columns of a run's threads; refused when a thread has no 1-µs histogram.
pub fn columns(run: &Run) -> Result<Vec<HistColumn>> {
    let cols: Vec<HistColumn> = run
        .series
        .iter()
        .filter_map(|s| {
            let us = s.us_histogram.as_ref()?;
            Some(HistColumn::from_series(
                us,
                s.summary.min_ns,
                s.summary.mean_ns,
                s.summary.max_ns,
            ))
        })
        .collect();
    if cols.is_empty() || cols.len() != run.series.len() {
        bail!(UsageError(format!(
            "--format hist: run {} ({}) has no 1-µs histogram per thread; export it with --format json or csv",
            run.id.map(|i| i.to_string()).unwrap_or_default(),
            run.kind
        )));
    }
    Ok(cols)
}

/// One thread's column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistColumn {
    /// Non-overflow buckets, dense, one per µs.
    pub buckets: Vec<u64>,
    /// Minimum latency in µs.
    pub min_us: u64,
    /// Average latency in µs (truncated).
    pub avg_us: u64,
    /// Maximum latency in µs.
    pub max_us: u64,
    /// Values at or above the histogram's range.
    pub overflows: u64,
    /// Wake-up numbers of the first overflows.
    pub overflow_cycles: Vec<u64>,
    /// How many overflows are not listed.
    pub overflow_others: u64,
}

impl HistColumn {
    /// A column from a series' 1-µs buckets and its exact min/mean/max (ns).
    pub fn from_series(us: &UsBucketsData, min_ns: u64, mean_ns: f64, max_ns: u64) -> Self {
        let mut buckets = vec![0; us.max_us as usize];
        for &(i, c) in &us.buckets {
            if let Some(b) = buckets.get_mut(i as usize) {
                *b += c;
            }
        }
        HistColumn {
            buckets,
            min_us: min_ns / 1000,
            avg_us: (mean_ns / 1000.0) as u64,
            max_us: max_ns / 1000,
            overflows: us.overflow,
            overflow_cycles: us.overflow_cycles.clone(),
            overflow_others: us.overflow.saturating_sub(us.overflow_cycles.len() as u64),
        }
    }
}

/// The columns in cyclictest's layout.
pub fn render(cols: &[HistColumn], layout: Layout) -> String {
    let mut out = Vec::new();
    write(cols, layout, &mut out).expect("a Vec takes every write");
    String::from_utf8(out).expect("the layout is ASCII")
}

/// Writes the columns in cyclictest's layout to `out` as it goes: a 10 ms
/// histogram is 10 000 lines, which need not be held whole.
pub fn write(cols: &[HistColumn], layout: Layout, out: &mut dyn io::Write) -> io::Result<()> {
    let all = layout == Layout::WithTotal && cols.len() > 1;
    let rows = cols.iter().map(|c| c.buckets.len()).max().unwrap_or(0);
    let bucket = |c: &HistColumn, i: usize| c.buckets.get(i).copied().unwrap_or(0);
    writeln!(out, "# Histogram")?;
    // By hand, in chunks: `write!` through the formatter costs more than a
    // thousand instructions a line, and these lines are most of what a run
    // with a long histogram does after measuring. Most cells are empty, and
    // each line's bucket number is the last one's plus one.
    let mut chunk = Vec::with_capacity(CHUNK + 8 * (cols.len() + 2));
    let mut index = Counter::new(6);
    for i in 0..rows {
        chunk.extend_from_slice(index.text());
        for (n, c) in cols.iter().enumerate() {
            chunk.push(if n == 0 { b' ' } else { b'\t' });
            push_cell(&mut chunk, bucket(c, i));
        }
        if all {
            chunk.push(b'\t');
            push_cell(&mut chunk, cols.iter().map(|c| bucket(c, i)).sum());
        }
        chunk.push(b'\n');
        index.increment();
        if chunk.len() >= CHUNK {
            out.write_all(&chunk)?;
            chunk.clear();
        }
    }
    out.write_all(&chunk)?;
    let line = |out: &mut dyn io::Write,
                name: &str,
                width: usize,
                f: &dyn Fn(&HistColumn) -> u64,
                total: Option<u64>| {
        let mut cells: Vec<String> = cols.iter().map(|c| format!("{:0width$}", f(c))).collect();
        if let Some(t) = total.filter(|_| all) {
            cells.push(format!("{t:0width$}"));
        }
        writeln!(out, "# {name}: {}", cells.join(" "))
    };
    let total = |c: &HistColumn| c.buckets.iter().sum::<u64>();
    line(out, "Total", 9, &total, Some(cols.iter().map(total).sum()))?;
    line(out, "Min Latencies", 5, &|c| c.min_us, None)?;
    line(out, "Avg Latencies", 5, &|c| c.avg_us, None)?;
    let max = cols.iter().map(|c| c.max_us).max().unwrap_or(0);
    line(out, "Max Latencies", 5, &|c| c.max_us, Some(max))?;
    let overflows = cols.iter().map(|c| c.overflows).sum();
    line(
        out,
        "Histogram Overflows",
        5,
        &|c| c.overflows,
        Some(overflows),
    )?;
    writeln!(out, "# Histogram Overflow at cycle number:")?;
    for (i, c) in cols.iter().enumerate() {
        write!(out, "# Thread {i}:")?;
        for cyc in &c.overflow_cycles {
            write!(out, " {cyc:05}")?;
        }
        let others = c.overflows.saturating_sub(c.overflow_cycles.len() as u64);
        if others > 0 {
            write!(out, " # {others:05} others")?;
        }
        writeln!(out)?;
    }
    writeln!(out)
}

/// How many bytes of histogram lines are gathered before each write.
const CHUNK: usize = 32 * 1024;

/// Appends a bucket's count as `{v:06}` prints it; most are 0.
fn push_cell(line: &mut Vec<u8>, v: u64) {
    if v == 0 {
        line.extend_from_slice(b"000000");
    } else {
        push_padded(line, v, 6);
    }
}

/// A number in decimal, zero-padded to a width, that counts up one at a time
/// without dividing: the histogram's bucket numbers, line after line.
struct Counter {
    /// Its digits, most significant first; never fewer than the width.
    digits: Vec<u8>,
}

impl Counter {
    /// Zero, `width` digits wide.
    fn new(width: usize) -> Counter {
        Counter {
            digits: vec![b'0'; width.max(1)],
        }
    }

    /// The digits as `{n:0width$}` prints them.
    fn text(&self) -> &[u8] {
        &self.digits
    }

    /// Adds one, carrying into a new leading digit past the width.
    fn increment(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == b'9' {
                *d = b'0';
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, b'1');
    }
}

/// Appends `v` in decimal, zero-padded to `width` digits, as `{v:0width$}`
/// prints it (a wider value is written whole). By hand: the file has a line
/// per bucket, mostly zeros, and going through a formatter cost more than
/// the rest of a short run's start-up.
fn push_padded(line: &mut Vec<u8>, v: u64, width: usize) {
    let (digits, at) = rtlab_engine::decimal::digits(v);
    if width > digits.len() {
        line.resize(line.len() + width - digits.len(), b'0');
    }
    line.extend_from_slice(&digits[at.min(digits.len().saturating_sub(width))..]);
}

/// A parse failure, with the 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Line number (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses cyclictest `-h`/`-H` output (or an rtlab histfile). With `-H` the last
/// column is cyclictest's total over all threads and `histofall` must be true so
/// that it is dropped. Lines that are neither histogram lines nor known `#`
/// summaries (cyclictest's own status lines, `T: 0 (...)`) are ignored.
///
/// The columns are dense, one count per µs, and the sparse form can name a
/// bucket far beyond the last line: a bucket at or above [`MAX_US_BUCKETS`], or
/// one that would make the columns hold more than `max_cells` counts in all, is
/// refused before anything is allocated for it.
pub fn parse(text: &str, histofall: bool, max_cells: usize) -> Result<Vec<HistColumn>, ParseError> {
    let mut cols: Vec<HistColumn> = Vec::new();
    let mut rows = 0usize;
    let mut in_cycles = false;
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |m: String| ParseError {
            line: line_no,
            message: m,
        };
        let line = raw.trim_end_matches('\r');
        let nums = |s: &str| -> Result<Vec<u64>, ParseError> {
            s.split_whitespace()
                .map(|w| parse_count(w).map_err(&err))
                .collect()
        };
        if let Some(rest) = line.strip_prefix('#') {
            let rest = rest.trim();
            let (key, value) = match rest.split_once(':') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (rest, ""),
            };
            let mut per_thread = |set: fn(&mut HistColumn, u64)| -> Result<(), ParseError> {
                let mut v = nums(value)?;
                if histofall && v.len() > cols.len() {
                    v.truncate(cols.len());
                }
                if v.len() != cols.len() {
                    return Err(err(format!(
                        "'{key}' has {} values for {} threads",
                        v.len(),
                        cols.len()
                    )));
                }
                for (c, x) in cols.iter_mut().zip(v) {
                    set(c, x);
                }
                Ok(())
            };
            match key {
                "Min Latencies" => per_thread(|c, v| c.min_us = v)?,
                "Avg Latencies" => per_thread(|c, v| c.avg_us = v)?,
                "Max Latencies" => per_thread(|c, v| c.max_us = v)?,
                "Histogram Overflows" => per_thread(|c, v| c.overflows = v)?,
                "Histogram Overflow at cycle number" => in_cycles = true,
                k if in_cycles && k.starts_with("Thread ") => {
                    let t: usize = k["Thread ".len()..]
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("'{k}' is not 'Thread N'")))?;
                    let col = cols
                        .get_mut(t)
                        .ok_or_else(|| err(format!("thread {t} has no histogram column")))?;
                    let (listed, others) = match value.split_once('#') {
                        Some((l, o)) => (l, o.trim().trim_end_matches("others").trim()),
                        None => (value, ""),
                    };
                    col.overflow_cycles = nums(listed)?;
                    if !others.is_empty() {
                        col.overflow_others = others
                            .parse()
                            .map_err(|_| err(format!("'{others}' is not a count of others")))?;
                    }
                }
                _ => {}
            }
            continue;
        }
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if !first.chars().all(|c| c.is_ascii_digit()) {
            // cyclictest's status lines ("T: 0 ( 123) P:90 ...") and others.
            continue;
        }
        let bucket = first
            .parse::<usize>()
            .ok()
            .filter(|&b| b < MAX_US_BUCKETS as usize)
            .ok_or_else(|| {
                err(format!(
                    "bucket {first} µs is beyond the largest histogram rtlab reads ({MAX_US_BUCKETS} buckets of 1 µs, 10 s, as --histogram-max)"
                ))
            })?;
        let mut counts = nums(&words.collect::<Vec<_>>().join(" "))?;
        if histofall {
            counts.pop();
        }
        if bucket < rows {
            return Err(err(format!(
                "bucket {bucket} out of order (the previous line was bucket {})",
                rows - 1
            )));
        }
        if cols.is_empty() {
            cols = vec![HistColumn::default(); counts.len()];
            if cols.is_empty() {
                return Err(err("a histogram line without counts".into()));
            }
        }
        if counts.len() != cols.len() {
            return Err(err(format!(
                "{} counts where earlier lines had {}",
                counts.len(),
                cols.len()
            )));
        }
        // Below MAX_US_BUCKETS and a line's length of columns: no overflow.
        let cells = (bucket + 1) * cols.len();
        if cells > max_cells {
            return Err(err(format!(
                "bucket {bucket} in {} columns makes {cells} 1-µs buckets, more than rtlab holds for one file on this machine ({max_cells}, from 90% of MemAvailable)",
                cols.len()
            )));
        }
        for (c, v) in cols.iter_mut().zip(counts) {
            // Sparse output leaves out empty buckets.
            c.buckets.resize(bucket, 0);
            c.buckets.push(v);
        }
        rows = bucket + 1;
    }
    if cols.is_empty() {
        return Err(ParseError {
            line: text.lines().count().max(1),
            message: "no histogram lines found (expected cyclictest -h output)".into(),
        });
    }
    for c in &mut cols {
        if c.overflow_others == 0 {
            c.overflow_others = c.overflows.saturating_sub(c.overflow_cycles.len() as u64);
        }
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget no test reaches.
    const CELLS: usize = 1 << 24;

    /// Output of `cyclictest -l2000 -m -a0 -t1 -p90 -i200 -h20 -q` (rt-tests 2.40).
    const CYCLICTEST_H20: &str = "# /dev/cpu_dma_latency set to 0us
# Histogram
000000 000000
000001 000000
000002 000000
000003 000000
000004 001662
000005 000237
000006 000057
000007 000012
000008 000005
000009 000006
000010 000006
000011 000001
000012 000003
000013 000000
000014 000001
000015 000001
000016 000000
000017 000001
000018 000001
000019 000000
# Total: 000001993
# Min Latencies: 00004
# Avg Latencies: 00004
# Max Latencies: 00040
# Histogram Overflows: 00007
# Histogram Overflow at cycle number:
# Thread 0: 00248 00459 00959 01213 01459 01633 01938
";

    proptest::proptest! {
        #[test]
        fn padded_numbers_are_what_the_formatter_prints(
            v in proptest::prop_oneof![0u64..1_000_000, proptest::num::u64::ANY],
            width in 0usize..24,
        ) {
            let mut line = b"x".to_vec();
            push_padded(&mut line, v, width);
            proptest::prop_assert_eq!(String::from_utf8(line).unwrap(), format!("x{v:0width$}"));
        }
    }

    #[test]
    fn the_bucket_counter_counts_as_the_formatter_prints() {
        let mut c = Counter::new(6);
        for n in 0..1_000_123u64 {
            if n < 12 || n % 9_973 == 0 || (999_990..).contains(&n) {
                assert_eq!(c.text(), format!("{n:06}").as_bytes(), "at {n}");
            }
            c.increment();
        }
        assert_eq!(c.text(), b"1000123");
        let mut narrow = Counter::new(1);
        for _ in 0..10 {
            narrow.increment();
        }
        assert_eq!(narrow.text(), b"10");
    }

    #[test]
    fn a_long_histogram_is_every_line_the_formatter_would_print() {
        // Past one write's chunk, with cells empty, small and wide, two
        // threads and their total: line for line what `format!` makes.
        let a: Vec<u64> = (0..5_000u64)
            .map(|i| if i % 7 == 0 { i * 1_001 } else { 0 })
            .collect();
        let b: Vec<u64> = (0..4_000u64).map(|i| (i % 3) * 123_456_789).collect();
        let cols = [a, b].map(|buckets| HistColumn {
            buckets,
            ..HistColumn::default()
        });
        let text = render(&cols, Layout::WithTotal);
        let lines: Vec<&str> = text.lines().skip(1).take(5_000).collect();
        assert_eq!(lines.len(), 5_000);
        for (i, line) in lines.iter().enumerate() {
            let get = |c: &HistColumn| c.buckets.get(i).copied().unwrap_or(0);
            let (x, y) = (get(&cols[0]), get(&cols[1]));
            assert_eq!(*line, format!("{i:06} {x:06}\t{y:06}\t{:06}", x + y));
        }
        assert!(text[text.find("# Total").unwrap()..].starts_with("# Total: "));
    }

    #[test]
    fn parses_real_cyclictest_output_and_writes_it_back_identically() {
        let cols = parse(CYCLICTEST_H20, false, CELLS).unwrap();
        assert_eq!(cols.len(), 1);
        let c = &cols[0];
        assert_eq!(c.buckets.len(), 20);
        assert_eq!(c.buckets.iter().sum::<u64>(), 1993);
        assert_eq!((c.min_us, c.avg_us, c.max_us, c.overflows), (4, 4, 40, 7));
        assert_eq!(c.overflow_cycles.len(), 7);
        let again = render(&cols, Layout::PerThread);
        let expected = CYCLICTEST_H20.split_once('\n').unwrap().1.to_string() + "\n";
        assert_eq!(again, expected);
    }

    #[test]
    fn with_total_adds_cyclictests_column_of_all_threads_and_parses_back() {
        let col = |b: Vec<u64>, max_us, overflows| HistColumn {
            buckets: b,
            min_us: 0,
            avg_us: 1,
            max_us,
            overflows,
            overflow_cycles: (0..overflows).collect(),
            overflow_others: 0,
        };
        let cols = [col(vec![1, 2], 1, 0), col(vec![0, 3], 7, 2)];
        let text = render(&cols, Layout::WithTotal);
        assert_eq!(
            text,
            "# Histogram\n000000 000001\t000000\t000001\n000001 000002\t000003\t000005\n# Total: 000000003 000000003 000000006\n# Min Latencies: 00000 00000\n# Avg Latencies: 00001 00001\n# Max Latencies: 00001 00007 00007\n# Histogram Overflows: 00000 00002 00002\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1: 00000 00001\n\n"
        );
        assert_eq!(parse(&text, true, CELLS).unwrap(), cols);
        // One thread: no column of all threads, as cyclictest -H.
        assert_eq!(
            render(&cols[..1], Layout::WithTotal),
            render(&cols[..1], Layout::PerThread)
        );
    }

    #[test]
    fn histofall_drops_the_total_column() {
        let text = "# Histogram\n000000 000001\t000002\t000003\n000001 000000\t000001\t000001\n# Total: 000000001 000000003 000000004\n# Min Latencies: 00000 00000\n# Avg Latencies: 00000 00000\n# Max Latencies: 00000 00001 00001\n# Histogram Overflows: 00000 00000 00000\n";
        let cols = parse(text, true, CELLS).unwrap();
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[1].buckets, vec![2, 1]);
        assert_eq!(cols[1].max_us, 1);
    }

    #[test]
    fn sparse_output_is_filled_with_empty_buckets() {
        let cols = parse(
            "# Histogram\n000000 000001\n000005 000007\n# Max Latencies: 00005\n",
            false,
            CELLS,
        )
        .unwrap();
        assert_eq!(cols[0].buckets, vec![1, 0, 0, 0, 0, 7]);
        assert_eq!(cols[0].max_us, 5);
    }

    #[test]
    fn huge_bucket_is_refused_not_allocated() {
        // Sparse output may jump: one line must not make rtlab allocate 8 TB.
        let e = parse(
            "# Histogram\n000000 000001\n999999999999 000001\n",
            false,
            CELLS,
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.message.contains("bucket 999999999999 µs is beyond"),
            "{}",
            e.message
        );
        // Within the 10 s limit, but more than this file's budget of buckets.
        let e = parse("# Histogram\n9999999 1\t1\n", false, 1000).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("2 columns makes 20000000"),
            "{}",
            e.message
        );
    }

    #[test]
    fn negative_and_oversized_counts_are_refused() {
        let e = parse("# Histogram\n000000 -5\n", false, CELLS).unwrap_err();
        assert!(e.message.contains("negative"), "{}", e.message);
        let e = parse("# Histogram\n000000 99999999999999999999\n", false, CELLS).unwrap_err();
        assert!(e.message.contains("64 bits"), "{}", e.message);
    }

    #[test]
    fn malformed_input_names_the_line() {
        let e = parse("# Histogram\n000003 000001\n000002 000001\n", false, CELLS).unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("# Histogram\n000000 000001\n000001 00x001\n", false, CELLS).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(parse("hello\n", false, CELLS).is_err());
    }
}
