//! cyclictest's `--json=FILE` document, written line for line as cyclictest
//! 2.x writes it (including its keys `"cmdline:"` and `"rt_test_version:"`
//! with their colon, the empty `"histogram": {      }` without `-h`, and
//! `-nan` as the average of a thread without a wake-up), so that what reads
//! cyclictest's file reads this one, `rtlab results import` among them.

use crate::record::{Run, Series};

/// What the document says besides the run.
#[derive(Debug, Clone)]
pub struct Document<'a> {
    /// The command line, as given.
    pub cmdline: &'a str,
    /// Start and end, as cyclictest writes them (`Mon, 23 Nov 2026 13:17:09 +0000`).
    pub start: &'a str,
    pub end: &'a str,
    pub return_code: i32,
    /// `-h`/`-H` buckets (0: none).
    pub histogram: u64,
    /// `-N`: values in ns.
    pub nsecs: bool,
}

/// A JSON string literal.
fn text(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The NUMA node of `cpu` (0 when the system has none).
fn node_of(cpu: usize) -> usize {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()
        .and_then(|d| {
            d.flatten()
                .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        })
        .unwrap_or(0)
}

fn thread(out: &mut String, i: usize, s: &Series, doc: &Document, last: bool) {
    let v = |ns: u64| if doc.nsecs { ns } else { ns / 1000 };
    out.push_str(&format!("    \"{i}\": {{\n      \"histogram\": {{"));
    let entries: Vec<String> = s
        .us_histogram
        .iter()
        .flat_map(|h| &h.buckets)
        .filter(|(us, c)| u64::from(*us) < doc.histogram && *c > 0)
        .map(|(us, c)| format!("        \"{us}\": {c}"))
        .collect();
    if entries.is_empty() {
        out.push_str("      },\n");
    } else {
        out.push('\n');
        out.push_str(&entries.join(",\n"));
        out.push_str("\n      },\n");
    }
    let cycles = s.counters.samples;
    let avg = if cycles == 0 {
        "-nan".to_string()
    } else if doc.nsecs {
        format!("{:.2}", s.summary.mean_ns)
    } else {
        format!("{:.2}", s.summary.mean_ns / 1000.0)
    };
    let cpu = s.cpu.map_or(-1, |c| c as i64);
    out.push_str(&format!(
        "      \"cycles\": {cycles},\n      \"min\": {},\n      \"max\": {},\n      \"avg\": {avg},\n      \"cpu\": {cpu},\n      \"node\": {}\n    }}{}\n",
        v(s.summary.min_ns),
        v(s.summary.max_ns),
        s.cpu.map_or(0, node_of),
        if last { "" } else { "," }
    ));
}

/// The document of `run`.
pub fn render(run: &Run, doc: &Document) -> String {
    let fp = &run.fingerprint;
    let realtime = rtlab_engine::sysinfo::read_text("/sys/kernel/realtime")
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    let mut out = format!(
        "{{\n  \"file_version\": 1,\n  \"cmdline:\": {},\n  \"rt_test_version:\": {},\n  \"start_time\": {},\n  \"end_time\": {},\n  \"return_code\": {},\n",
        text(doc.cmdline),
        text(&format!("rtlab {}", env!("CARGO_PKG_VERSION"))),
        text(doc.start),
        text(doc.end),
        doc.return_code
    );
    out.push_str(&format!(
        "  \"sysinfo\": {{\n    \"sysname\": \"Linux\",\n    \"nodename\": {},\n    \"release\": {},\n    \"version\": {},\n    \"machine\": {},\n    \"realtime\": {}\n  }},\n",
        text(&fp.hostname),
        text(&fp.kernel_release),
        text(&fp.kernel_version),
        text(&fp.arch),
        u8::from(realtime)
    ));
    out.push_str(&format!(
        "  \"num_threads\": {},\n  \"resolution_in_ns\": {},\n  \"thread\": {{\n",
        run.series.len(),
        u8::from(doc.nsecs)
    ));
    for (i, s) in run.series.iter().enumerate() {
        thread(&mut out, i, s, doc, i + 1 == run.series.len());
    }
    out.push_str("  }\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{run_from_samples, series_from_samples};
    use rtlab_engine::stats::hist::UsBuckets;

    fn series(samples: &[u64]) -> Series {
        let mut s = series_from_samples("t", samples);
        let mut b = UsBuckets::new(20);
        for (i, &v) in samples.iter().enumerate() {
            b.record(v, i as u64);
        }
        s.us_histogram = Some(b.to_data());
        s
    }

    #[test]
    fn the_document_is_json_with_cyclictests_keys_and_layout() {
        let mut run = run_from_samples("r", &[1]);
        run.series = vec![series(&[4_200, 5_900, 5_100, 31_000]), series(&[7_000])];
        run.series[0].cpu = Some(0);
        let doc = Document {
            cmdline: "cyclictest -h 20 \"x\"",
            start: "Mon, 23 Nov 2026 13:17:09 +0000",
            end: "Mon, 23 Nov 2026 13:17:10 +0000",
            return_code: 0,
            histogram: 20,
            nsecs: false,
        };
        let text = render(&run, &doc);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["cmdline:"], "cyclictest -h 20 \"x\"");
        assert_eq!(v["num_threads"], 2);
        let t0 = &v["thread"]["0"];
        assert_eq!(t0["histogram"], serde_json::json!({"4": 1, "5": 2}));
        assert_eq!(
            (
                t0["cycles"].as_u64(),
                t0["min"].as_u64(),
                t0["max"].as_u64()
            ),
            (Some(4), Some(4), Some(31))
        );
        assert_eq!(v["thread"]["1"]["cpu"], -1);
        assert!(text
            .contains("\n      \"histogram\": {\n        \"4\": 1,\n        \"5\": 2\n      },\n"));
        assert!(text.contains("\"avg\": 11.55,\n"), "{text}");
        let none = Document {
            histogram: 0,
            ..doc
        };
        assert!(render(&run, &none).contains("\"histogram\": {      },\n"));
    }
}
