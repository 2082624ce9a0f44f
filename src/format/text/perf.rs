//! Performance counters as `perf stat` prints them: values, rates per second
//! of task clock, CPU use, and the ratios perf shows (instructions per cycle,
//! branch misses of all branches).

use super::table::printable;
use crate::record::perf::{Counter, PerfRecord};
use crate::record::Run;

/// The note `perf stat` prints after a counter, from the other counters.
fn note(c: &Counter, all: &[Counter], elapsed_ns: u64) -> String {
    let get = |e: &str| all.iter().find(|x| x.event == e).and_then(|x| x.value);
    let Some(v) = c.value else {
        return String::new();
    };
    let task_s = get("task-clock").map(|ns| ns as f64 / 1e9);
    match c.event.as_str() {
        "task-clock" if elapsed_ns > 0 => {
            format!("{:.3} CPUs utilized", v as f64 / elapsed_ns as f64)
        }
        "instructions" => get("cycles")
            .filter(|&c| c > 0)
            .map(|cy| format!("{:.2} insn per cycle", v as f64 / cy as f64))
            .unwrap_or_default(),
        "branch-misses" => get("branches")
            .filter(|&b| b > 0)
            .map(|b| format!("{:.2}% of all branches", 100.0 * v as f64 / b as f64))
            .unwrap_or_default(),
        _ => match task_s.filter(|&s| s > 0.0) {
            Some(s) => rate(v as f64 / s),
            None => String::new(),
        },
    }
}

/// A rate per second in perf's form (`91.439 K/sec`).
fn rate(r: f64) -> String {
    if r >= 1e9 {
        format!("{:.3} G/sec", r / 1e9)
    } else if r >= 1e6 {
        format!("{:.3} M/sec", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.3} K/sec", r / 1e3)
    } else {
        format!("{r:.3} /sec")
    }
}

/// One block of counters.
fn block(counters: &[Counter], elapsed_ns: u64) -> String {
    let mut out = String::new();
    for c in counters {
        let value = match (c.event.as_str(), c.value) {
            ("task-clock", Some(ns)) => format!("{:.2} msec", ns as f64 / 1e6),
            _ => c.text(),
        };
        let n = note(c, counters, elapsed_ns);
        let mut line = format!("{value:>20}      {:<24}", c.event);
        if !n.is_empty() {
            line.push_str(&format!(" #  {n}"));
        }
        if let Some(p) = c.running_pct {
            line.push_str(&format!("  ({p:.2}%)"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The counters of `p` as `perf stat` lays them out, headed by what they
/// counted (`command`, when a command was run), with each thread's after the
/// total.
pub fn render(p: &PerfRecord, command: Option<&str>) -> String {
    let what = match command {
        Some(c) => format!("'{c}'"),
        None if p.scope == "threads" => "the measuring threads".into(),
        None => "rtlab and its workers".into(),
    };
    let mut out = format!(" Performance counter stats for {what}:\n\n");
    out.push_str(&block(&p.total, p.elapsed_ns));
    if p.threads.len() > 1 {
        for t in &p.threads {
            out.push_str(&format!("\n {}:\n", printable(&t.name)));
            out.push_str(&block(&t.counters, p.elapsed_ns));
        }
    }
    out.push_str(&format!(
        "\n{:>20.9} seconds time elapsed\n",
        p.elapsed_ns as f64 / 1e9
    ));
    out
}

/// The counters of a run that has them (`--perf`, `rtlab perf`: headed by its
/// command) after a blank line, "" for one without.
pub fn of_run(run: &Run) -> String {
    let command = run.params.recorded("command").as_array().map(|a| {
        a.iter()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    });
    match &run.perf {
        Some(p) => format!("\n{}", render(p, command.as_deref())),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(event: &str, value: Option<u64>) -> Counter {
        Counter {
            event: event.into(),
            value,
            not: value.is_none().then(|| "not supported".into()),
            running_pct: None,
        }
    }

    #[test]
    fn laid_out_as_perf_stat() {
        let p = PerfRecord {
            elapsed_ns: 2_000_000,
            scope: "command".into(),
            total: vec![
                c("task-clock", Some(1_000_000)),
                c("page-faults", Some(116)),
                c("cycles", None),
            ],
            threads: Vec::new(),
        };
        let t = render(&p, Some("ls"));
        assert!(
            t.starts_with(" Performance counter stats for 'ls':\n\n"),
            "{t}"
        );
        assert!(t.contains("1.00 msec      task-clock"), "{t}");
        assert!(t.contains("#  0.500 CPUs utilized"), "{t}");
        assert!(
            t.contains("116      page-faults              #  116.000 K/sec"),
            "{t}"
        );
        assert!(t.contains("<not supported>      cycles\n"), "{t}");
        assert!(t.ends_with("0.002000000 seconds time elapsed\n"), "{t}");
    }
}
