//! cyclictest's summary lines, one per thread,
//!
//! ```text
//! # /dev/cpu_dma_latency set to 0us
//! T: 0 (20047) P:80 I:1000 C:   1000 Min:     11 Act:   33 Avg:   23 Max:     796
//! ```
//!
//! as `-q` prints them at the end, and as the live view prints them again and
//! again: frames of a `policy: fifo: loadavg: ...` line (a bare loadavg line in
//! older versions), an empty line and the thread lines, each frame after the
//! first starting by moving the cursor up (`ESC[4A`); a capture from a terminal
//! ends its lines in `\r\n`. The last complete frame is the result. Fields are
//! read by name: `I:` (older versions have none), `Act:` and `SMI:` may be
//! missing. With `-N` cyclictest prints ns, its `Act:` and `Avg:` fields 8 wide
//! instead of 5: that width tells the unit. The average is cyclictest's,
//! truncated to a whole unit.

use super::{check, fill, Column};
use crate::format::histfile::ParseError;
use crate::import::{unknown_system, Skeleton, Source};
use crate::record::{Run, Warning};
use regex::Regex;
use serde_json::json;
use std::sync::OnceLock;

/// One thread's summary line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ThreadLine {
    pub index: usize,
    pub tid: i32,
    pub priority: i64,
    pub interval_us: Option<u64>,
    pub cycles: u64,
    pub min: u64,
    pub avg: f64,
    pub max: u64,
    /// Whether the values are ns (`-N`).
    pub nanos: bool,
}

fn pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        Regex::new(concat!(
            r"^T:\s*(\d+)\s+\(\s*(\d+)\)\s+P:\s*(-?\d+)(?:\s+I:\s*(\d+))?\s+C:\s*(\d+)",
            r"\s+Min:\s*(\d+)(?:\s+Act:(\s*\d+))?\s+Avg:(\s*\d+(?:\.\d+)?)\s+Max:\s*(\d+)",
            r"(?:\s+SMI:\s*\d+)?$"
        ))
        .expect("a valid pattern")
    })
}

/// Parses one `T:` line (`line` is where it is, for the error).
pub(super) fn parse_line(text: &str, line: usize) -> Result<ThreadLine, ParseError> {
    let err = |m: String| ParseError { line, message: m };
    let c = pattern().captures(text.trim()).ok_or_else(|| {
        err(format!(
            "'{}' is not a cyclictest thread line ('T: 0 (tid) P:.. I:.. C:.. Min:.. Act:.. Avg:.. Max:..')",
            text.trim()
        ))
    })?;
    let field = |i: usize| c.get(i).map_or("", |m| m.as_str()).trim();
    let whole = |i: usize, name: &str| -> Result<u64, ParseError> {
        field(i)
            .parse()
            .map_err(|_| err(format!("{name} {} does not fit in 64 bits", field(i))))
    };
    let width = |i: usize| c.get(i).map(|m| m.as_str().len());
    // -N widens Act: and Avg: from 5 to 8 characters.
    let nanos = width(8) >= Some(8) && width(7).is_none_or(|w| w >= 8);
    Ok(ThreadLine {
        index: whole(1, "the thread number")? as usize,
        tid: field(2).parse().unwrap_or(0),
        priority: field(3).parse().unwrap_or(0),
        interval_us: c.get(4).map(|_| whole(4, "I:")).transpose()?,
        cycles: whole(5, "C:")?,
        min: whole(6, "Min:")?,
        avg: field(8)
            .parse()
            .map_err(|_| err("Avg: is not a number".into()))?,
        max: whole(9, "Max:")?,
        nanos,
    })
}

/// The text's lines as a terminal shows them: escape sequences removed, each
/// `\r`-separated piece a line of its own, with the file's line number.
pub(super) fn shown_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, raw) in text.split('\n').enumerate() {
        let mut clean = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(ch) = chars.next() {
            if ch != '\x1b' {
                clean.push(ch);
            } else if chars.next() == Some('[') {
                // A control sequence ends with a byte in '@'..='~'.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        }
        for piece in clean.split('\r').map(str::trim_end) {
            if !piece.trim().is_empty() {
                out.push((n + 1, piece.trim_start().to_string()));
            }
        }
    }
    out
}

/// Whether the text holds cyclictest's thread lines.
pub fn is_summary(text: &str) -> bool {
    shown_lines(text).iter().any(|(_, l)| l.starts_with("T:"))
}

/// Lines cyclictest prints besides its thread lines (or a terminal shows).
fn is_other_output(line: &str) -> bool {
    static LOADAVG: OnceLock<Regex> = OnceLock::new();
    let loadavg = LOADAVG.get_or_init(|| {
        Regex::new(r"^\d+\.\d+ \d+\.\d+ \d+\.\d+ \d+/\d+ \d+$").expect("a valid pattern")
    });
    line.starts_with('#')
        || line.starts_with("policy:")
        || line.starts_with("WARN")
        || line.starts_with("Warning")
        || line == "^C"
        || loadavg.is_match(line)
}

/// A frame: the thread lines of one screen, with their line numbers.
type Frame = Vec<(ThreadLine, usize)>;

/// Parses cyclictest's summary or live view.
pub fn from_summary(text: &str, src: &Source) -> Result<Run, ParseError> {
    let lines = shown_lines(text);
    let mut frames: Vec<Frame> = Vec::new();
    let mut cmdline: Option<String> = None;
    let last_line = lines.last().map_or(0, |l| l.0);
    for (line, l) in &lines {
        if !l.starts_with("T:") {
            if let Some(at) = l.find("cyclictest").filter(|_| frames.is_empty()) {
                // The command, as a captured terminal shows it.
                cmdline.get_or_insert_with(|| l[at..].to_string());
            } else if !is_other_output(l) {
                return Err(ParseError {
                    line: *line,
                    message: format!("'{l}' is not a line of cyclictest's summary or live view"),
                });
            }
            continue;
        }
        let t = match parse_line(l, *line) {
            Ok(t) => t,
            // A capture cut in the middle of its last line.
            Err(_) if *line == last_line && frames.len() > 1 => break,
            Err(e) => return Err(e),
        };
        match frames.last_mut() {
            Some(f) if t.index > 0 => {
                let before = f.last().map_or(0, |p| p.0.index);
                if t.index != before + 1 {
                    return Err(ParseError {
                        line: *line,
                        message: format!(
                            "thread {} follows thread {before}: a line is missing or the file was edited",
                            t.index
                        ),
                    });
                }
                f.push((t, *line));
            }
            _ if t.index == 0 => frames.push(vec![(t, *line)]),
            _ => {
                return Err(ParseError {
                    line: *line,
                    message: format!("thread {} comes before thread 0", t.index),
                })
            }
        }
    }
    let threads = frames.iter().map(Vec::len).max().unwrap_or(0);
    let Some((at, frame)) = frames
        .iter()
        .enumerate()
        .rev()
        .find(|(_, f)| f.len() == threads)
    else {
        return Err(ParseError {
            line: text.lines().count().max(1),
            message: "no thread line of cyclictest: the file is empty or cut".into(),
        });
    };
    let cols: Vec<Column> = frame
        .iter()
        .map(|(t, _)| {
            let ran = t.cycles > 0;
            Column {
                thread: Some(t.index),
                cycles: t.cycles,
                // A thread without a cycle prints its unset minimum (1000000).
                min: if ran { t.min } else { 0 },
                avg: if ran { t.avg } else { 0.0 },
                max: if ran { t.max } else { 0 },
                nanos: t.nanos,
                tid: (t.tid > 0).then_some(t.tid),
                interval_us: t.interval_us,
                ..Column::default()
            }
        })
        .collect();
    check(&cols, |i| frame[i].1)?;
    let first = &frame[0].0;
    let duration_ns = frame
        .iter()
        .filter_map(|(t, _)| Some(t.interval_us?.saturating_mul(t.cycles)))
        .max()
        .map_or(0, |us| us.saturating_mul(1000));
    let live = frames.len() > 1;
    let unit = if first.nanos { "ns" } else { "µs" };
    let mut warnings = vec![
        unknown_system(),
        Warning::new(
            "average_truncated",
            format!("cyclictest prints each thread's average truncated to a whole {unit}"),
        ),
    ];
    if live {
        warnings.push(Warning::new(
            "live_view",
            format!(
                "the file is cyclictest's live view: its last complete frame ({} of {}) is imported, the values cyclictest showed then",
                at + 1,
                frames.len()
            ),
        ));
    }
    warnings.push(if duration_ns > 0 {
        Warning::new(
            "duration_estimated",
            "cyclictest's summary does not say how long it ran: the duration is the longest thread's cycles × interval",
        )
    } else {
        Warning::new(
            "duration_unknown",
            "cyclictest's summary does not say how long it ran (and gives no interval): the duration is 0",
        )
    });
    let params = super::known(json!({
        "source": "cyclictest",
        "source_format": if live { "live view" } else { "summary" },
        "file": src.name,
        "cmdline": cmdline,
        "unit": if first.nanos { "ns" } else { "us" },
        "priority": first.priority,
        "interval_ns": first.interval_us.map(|us| us.saturating_mul(1000)),
    }));
    let skel = Skeleton::of_file("latency", src, duration_ns, params, warnings);
    fill(skel, &cols, frame[0].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lines_of_every_version_and_unit() {
        let t = parse_line(
            "T: 0 (20047) P:80 I:1000 C:   1000 Min:     11 Act:   33 Avg:   23 Max:     796",
            1,
        )
        .unwrap();
        assert_eq!(
            (t.index, t.tid, t.priority, t.interval_us, t.cycles),
            (0, 20047, 80, Some(1000), 1000)
        );
        assert_eq!((t.min, t.avg, t.max, t.nanos), (11, 23.0, 796, false));
        let ns = parse_line(
            "T: 0 (20074) P:80 I:500 C:   1000 Min:  12496 Act:   28396 Avg:   20887 Max:  628496",
            1,
        )
        .unwrap();
        assert!(ns.nanos);
        // Before I: existed; with SMI:.
        let old = parse_line(
            "T: 1 ( 1234) P:99 C:  10000 Min:   2 Act:   3 Avg:   3 Max:  12 SMI:       0",
            1,
        )
        .unwrap();
        assert_eq!((old.index, old.interval_us, old.max), (1, None, 12));
        let e = parse_line("T: 0 (20047) P:80 I:1000 C:   1000 Min:", 7).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(
            e.message.contains("not a cyclictest thread line"),
            "{}",
            e.message
        );
    }

    #[test]
    fn escape_sequences_and_carriage_returns_are_what_a_terminal_shows() {
        let lines = shown_lines("a\r\n\x1b[4Apolicy: fifo\r\n\rT: 0\n");
        let texts: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(texts, ["a", "policy: fifo", "T: 0"]);
        assert_eq!(lines[2].0, 3);
    }
}
