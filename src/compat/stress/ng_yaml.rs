//! stress-ng's `--yaml FILE` layout: a `system-info` mapping and, with
//! `--metrics` or `--metrics-brief`, a `metrics` list of one mapping per
//! stressor, with stress-ng's keys. The system keys are those rtlab's
//! fingerprint knows; stress-ng's own (its version, compiler) are left out.

use super::ng_out::Row;
use crate::record::Run;

/// A scalar as stress-ng writes it: quoted when YAML would read it otherwise.
fn scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+/".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// The YAML document of `run`, with `rows` when metrics were asked for.
pub fn document(run: &Run, rows: Option<&[Row]>) -> String {
    let fp = &run.fingerprint;
    let started = chrono::DateTime::parse_from_rfc3339(&run.started_at)
        .map(|t| t.with_timezone(&chrono::Local))
        .ok();
    let mut info: Vec<(&str, String)> = Vec::new();
    if let Some(t) = started {
        info.push(("date-yyyy-mm-dd", t.format("%Y:%m:%d").to_string()));
        info.push(("time-hh-mm-ss", t.format("%H:%M:%S").to_string()));
        info.push(("epoch-secs", t.timestamp().to_string()));
    }
    let online = rtlab_engine::rt::cpuset::CpuList::parse(&fp.cpus_online)
        .map(|l| l.cpus().len())
        .unwrap_or(fp.cpu_count);
    info.extend([
        ("hostname", scalar(&fp.hostname)),
        ("sysname", "Linux".into()),
        ("nodename", scalar(&fp.hostname)),
        ("release", scalar(&fp.kernel_release)),
        ("version", scalar(&fp.kernel_version)),
        ("machine", scalar(&fp.arch)),
        ("totalram", (fp.mem_total_kib * 1024).to_string()),
        ("pagesize", rtlab_engine::load::sys::page_size().to_string()),
        ("cpus", fp.cpu_count.to_string()),
        ("cpus-online", online.to_string()),
    ]);
    let mut s = String::from("---\nsystem-info:\n");
    for (k, v) in info {
        s.push_str(&format!("      {k}: {v}\n"));
    }
    if let Some(rows) = rows {
        s.push_str("\nmetrics:\n");
        for r in rows {
            s.push_str(&format!("    - stressor: {}\n", r.name));
            for (k, v) in [
                ("bogo-ops", r.ops.to_string()),
                (
                    "bogo-ops-per-second-usr-sys-time",
                    format!("{:.6}", r.per_cpu_s()),
                ),
                (
                    "bogo-ops-per-second-real-time",
                    format!("{:.6}", r.per_real_s()),
                ),
                ("wall-clock-time", format!("{:.6}", r.real_s)),
                ("user-time", format!("{:.6}", r.usr_s)),
                ("system-time", format!("{:.6}", r.sys_s)),
                ("cpu-usage-per-instance", format!("{:.6}", r.cpu_pct)),
                ("max-rss", r.rss_kib.to_string()),
            ] {
                s.push_str(&format!("      {k}: {v}\n"));
            }
            s.push('\n');
        }
    }
    s.push_str("...\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_quoted_when_yaml_needs_it() {
        assert_eq!(scalar("vm"), "vm");
        assert_eq!(scalar("6.1.0-rt-amd64"), "6.1.0-rt-amd64");
        assert_eq!(scalar("#1 SMP PREEMPT_RT"), "'#1 SMP PREEMPT_RT'");
        assert_eq!(scalar("it's"), "'it''s'");
        assert_eq!(scalar(""), "''");
    }

    #[test]
    fn the_document_has_stress_ng_s_keys() {
        let run = crate::analysis::fixture::run_from_samples("x", &[1000, 2000]);
        let row = Row {
            name: "cpu",
            ops: 10,
            real_s: 2.0,
            usr_s: 1.0,
            sys_s: 1.0,
            cpu_pct: 100.0,
            rss_kib: 64,
        };
        let doc = document(&run, Some(&[row]));
        assert!(doc.starts_with("---\nsystem-info:\n"), "{doc}");
        assert!(doc.ends_with("\n...\n"), "{doc}");
        for want in [
            "\n      hostname: ",
            "\n      release: ",
            "\n      cpus: ",
            "\nmetrics:\n    - stressor: cpu\n      bogo-ops: 10\n",
            "\n      bogo-ops-per-second-usr-sys-time: 5.000000\n",
            "\n      bogo-ops-per-second-real-time: 5.000000\n",
            "\n      wall-clock-time: 2.000000\n",
            "\n      max-rss: 64\n",
        ] {
            assert!(doc.contains(want), "{want:?} in\n{doc}");
        }
        assert!(!document(&run, None).contains("metrics:"));
    }
}
