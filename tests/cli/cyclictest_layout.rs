//! cyclictest 2.x's output, line by line: what each kind of line looks like
//! (its printf layout as a pattern), so that a test can say that every line
//! rtlab prints is one of cyclictest's, and the shape of an output (the kinds
//! of its lines in order) to set beside cyclictest's own.

use regex::Regex;

/// Each kind of line cyclictest prints, with its layout.
const KINDS: &[(&str, &str)] = &[
    ("dma", r"^# /dev/cpu_dma_latency set to \d+us$"),
    (
        "policy",
        r"^policy: (other|fifo|rr|batch|idle)(/other)?: loadavg: \S+ \S+ \S+ \d+/\d+ \d+          $",
    ),
    ("empty", r"^$"),
    (
        "status",
        r"^T:[ \d]\d \([ \d]{4}\d\) P:[ \d]\d I:\d+ C:[ \d]{6}\d Min:[ \d]{6}\d Act:[ \d]{4}\d Avg:[ \d]{4}\d Max:[ \d]{7}\d$",
    ),
    (
        "status-ns",
        r"^T:[ \d]\d \([ \d]{4}\d\) P:[ \d]\d I:\d+ C:[ \d]{6}\d Min:[ \d]{6}\d Act:[ \d]{7}\d Avg:[ \d]{7}\d Max:[ \d]{7}\d$",
    ),
    ("histogram", r"^# Histogram$"),
    ("bucket", r"^\d{6} \d{6}(\t\d{6})*$"),
    ("total", r"^# Total:( \d{9})+$"),
    // A thread that took no sample before the first one finished shows its
    // initial minimum, 1000000.
    ("min", r"^# Min Latencies:( \d{5,})+$"),
    ("avg", r"^# Avg Latencies:( \d{5})+$"),
    ("max", r"^# Max Latencies:( \d{5})+$"),
    ("overflows", r"^# Histogram Overflows:( \d{5})+$"),
    ("overflow-at", r"^# Histogram Overflow at cycle number:$"),
    (
        "overflow-cycles",
        r"^# Thread \d+:( \d{5,})*( # \d{5,} others)?$",
    ),
    ("sample", r"^[ \d]{7}\d:[ \d]{7}\d:[ \d]{7}\d$"),
    ("spike", r"^T:[ \d]\d Spike:[ \d]{7}\d: TS: [ \d]{11}\d$"),
    ("spikes", r"^spikes = \d+$"),
    ("thread-ids", r"^# Thread Ids:( \d{5,})+$"),
    ("break-thread", r"^# Break thread: \d+$"),
    ("break-value", r"^# Break value: \d+$"),
    ("max-cpus", r"^Max CPUs = \d+$"),
    ("online-cpus", r"^Online CPUs = \d+$"),
    ("using", r"^Using \d+ cpus\.$"),
    ("thread-cpu", r"^Thread \d+ using cpu \d+\.$"),
    ("thread-interval", r"^Thread \d+ Interval: \d+$"),
];

fn patterns() -> &'static [(&'static str, Regex)] {
    static P: std::sync::OnceLock<Vec<(&'static str, Regex)>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        KINDS
            .iter()
            .map(|(name, p)| (*name, Regex::new(p).unwrap()))
            .collect()
    })
}

/// The kind of one line, or `None` when cyclictest prints no such line.
pub fn kind(line: &str) -> Option<String> {
    for (name, pattern) in patterns() {
        if pattern.is_match(line) {
            let columns = match *name {
                "bucket" => line.split('\t').count(),
                "total" | "min" | "avg" | "max" | "overflows" => line.split(' ').count() - 3,
                _ => 0,
            };
            return Some(if columns > 0 {
                format!("{name}×{columns}")
            } else {
                name.to_string()
            });
        }
    }
    None
}

/// Panics, naming the line, unless every line of `text` is one of cyclictest's.
pub fn check_layout(text: &str) {
    for (n, line) in text.lines().enumerate() {
        assert!(
            kind(line).is_some(),
            "line {} is not in cyclictest's layout: {line:?}\n--- output\n{text}",
            n + 1
        );
    }
}

/// The kinds of the lines in order; runs of samples and spikes count once
/// (how many there are depends on timing).
pub fn shape(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let k = kind(line).unwrap_or_else(|| format!("?{line}"));
        let repeats = matches!(k.as_str(), "sample" | "spike");
        if !(repeats && out.last() == Some(&k)) {
            out.push(k);
        }
    }
    out
}

/// What a terminal shows of cyclictest's output: its frames drawn over each
/// other (each ends with a cursor movement up) leave the last one.
pub fn as_shown(text: &str) -> String {
    let up = Regex::new(r"\x1b\[\d+A").unwrap();
    let parts: Vec<&str> = up.split(text).collect();
    if parts.len() == 1 {
        return text.to_string();
    }
    // The lines before the first frame, then the last frame.
    let first = parts[0];
    let head_end = first.find("policy: ").unwrap_or(first.len());
    format!("{}{}", &first[..head_end], parts[parts.len() - 1])
}

#[test]
fn the_layouts_take_cyclictests_own_lines() {
    // Lines printed by cyclictest 2.40.
    for line in [
        "# /dev/cpu_dma_latency set to 0us",
        "policy: fifo: loadavg: 0.55 1.94 2.75 3/90 26818          ",
        "policy: other/other: loadavg: 0.55 1.90 2.73 3/98 26995          ",
        "T: 0 (26817) P:30 I:1000 C:    100 Min:     12 Act:   13 Avg:   13 Max:      22",
        "T: 0 (    0) P:30 I:1000 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0",
        "T: 0 (26991) P:80 I:200 C:     50 Min:  12846 Act:   15430 Avg:   14219 Max:   21961",
        "000009 000000\t000000\t000000",
        "# Total: 000000000 000000000 000000000",
        "# Max Latencies: 00022 00019 00022",
        "# Min Latencies: 00013 1000000",
        "# Thread 0: 00000 00001 00002 # 00017 others",
        "# Thread 1:",
        "       0:       0:      71",
        "T: 1 Spike:      19: TS:   3619347074",
        "spikes = 85",
        "# Thread Ids: 27692 27693",
        "Thread 0 using cpu 0.",
    ] {
        assert!(kind(line).is_some(), "{line:?}");
    }
    assert_eq!(kind("T: 0 (1) P:30"), None);
    let live = "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: a\n\nT: 0\n\x1b[3Apolicy: fifo: b\n\nT: 0 last\n";
    assert_eq!(
        as_shown(live),
        "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: b\n\nT: 0 last\n"
    );
}
