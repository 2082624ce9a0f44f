//! The performance counters of a run (`--perf`, `rtlab perf`): per measuring
//! thread and in total, each counter with its value or the reason it has none.

use rtlab_engine::perf::{Reading, EVENTS};
use serde::{Deserialize, Serialize};

/// Counters of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfRecord {
    /// Wall-clock time the counters ran (ns).
    pub elapsed_ns: u64,
    /// What they counted over: `threads` (each measuring thread), `process`
    /// (rtlab, its threads and the processes it started) or `command`.
    pub scope: String,
    /// All threads together.
    pub total: Vec<Counter>,
    /// Each measuring thread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<PerfThread>,
}

/// The counters of one measuring thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfThread {
    /// Its series' name (`cpu0`).
    pub name: String,
    /// Kernel thread id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<i32>,
    /// Its counters.
    pub counters: Vec<Counter>,
}

/// One counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    /// `perf stat`'s name (`task-clock` in ns, `context-switches`, `cycles`),
    /// or `voluntary-switches` / `involuntary-switches` (from getrusage).
    pub event: String,
    /// The count; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
    /// Why there is no count: `not supported`, `not permitted`, `not counted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<String>,
    /// Percent of the time it was on the PMU, when the kernel multiplexed it
    /// (its value is scaled up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_pct: Option<f64>,
}

impl Counter {
    fn counted(event: &str, value: u64) -> Counter {
        Counter {
            event: event.into(),
            value: Some(value),
            not: None,
            running_pct: None,
        }
    }

    /// The value as text, or why there is none (`<not supported>`).
    pub fn text(&self) -> String {
        match (self.value, &self.not) {
            (Some(v), _) => v.to_string(),
            (None, Some(why)) => format!("<{why}>"),
            (None, None) => "<not counted>".into(),
        }
    }
}

/// Counters from the engine's readings and getrusage's voluntary and
/// involuntary context switches, in `perf stat`'s order.
pub fn counters(readings: &[Reading; EVENTS.len()], switches: (u64, u64)) -> Vec<Counter> {
    let mut out = Vec::with_capacity(EVENTS.len() + 2);
    for (e, r) in EVENTS.iter().zip(readings) {
        out.push(Counter {
            event: e.name.into(),
            value: r.value(),
            not: r.why_not().map(str::to_string),
            running_pct: match *r {
                Reading::Counted {
                    enabled_ns,
                    running_ns,
                    ..
                } if running_ns < enabled_ns => Some(100.0 * running_ns as f64 / enabled_ns as f64),
                _ => None,
            },
        });
        if e.name == "context-switches" {
            out.push(Counter::counted("voluntary-switches", switches.0));
            out.push(Counter::counted("involuntary-switches", switches.1));
        }
    }
    out
}

/// The sum of several threads' counters, counter by counter: a counter none
/// of them has keeps the first one's reason.
pub fn sum(many: &[&[Counter]]) -> Vec<Counter> {
    let Some(first) = many.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|c| {
            let same = many
                .iter()
                .filter_map(|t| t.iter().find(|x| x.event == c.event));
            let values: Vec<u64> = same.clone().filter_map(|x| x.value).collect();
            if values.is_empty() {
                c.clone()
            } else {
                Counter {
                    running_pct: same.filter_map(|x| x.running_pct).reduce(f64::min),
                    ..Counter::counted(&c.event, values.iter().sum())
                }
            }
        })
        .collect()
}

impl PerfRecord {
    /// Per-thread counters and their sum.
    pub fn of_threads(elapsed_ns: u64, threads: Vec<PerfThread>) -> PerfRecord {
        let all: Vec<&[Counter]> = threads.iter().map(|t| t.counters.as_slice()).collect();
        PerfRecord {
            elapsed_ns,
            scope: "threads".into(),
            total: sum(&all),
            threads,
        }
    }

    /// The total's counter `event`, when it has a value.
    pub fn value(&self, event: &str) -> Option<u64> {
        self.total
            .iter()
            .find(|c| c.event == event)
            .and_then(|c| c.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings() -> [Reading; EVENTS.len()] {
        let mut r = [Reading::Unsupported(libc_enoent()); EVENTS.len()];
        r[0] = Reading::Counted {
            value: 2_000_000,
            enabled_ns: 10,
            running_ns: 10,
        };
        r[1] = Reading::Counted {
            value: 7,
            enabled_ns: 10,
            running_ns: 5,
        };
        r
    }

    /// ENOENT, the errno of a counter the machine lacks.
    fn libc_enoent() -> i32 {
        2
    }

    #[test]
    fn unsupported_counters_have_a_reason_and_no_value() {
        let c = counters(&readings(), (3, 4));
        let names: Vec<&str> = c.iter().map(|c| c.event.as_str()).collect();
        assert_eq!(
            names[..5],
            [
                "task-clock",
                "context-switches",
                "voluntary-switches",
                "involuntary-switches",
                "cpu-migrations"
            ]
        );
        assert_eq!(c[1].running_pct, Some(50.0));
        assert_eq!(c[2].value, Some(3));
        let cycles = c.iter().find(|c| c.event == "cycles").unwrap();
        assert_eq!(cycles.value, None);
        assert_eq!(cycles.text(), "<not supported>");
        let json = serde_json::to_string(cycles).unwrap();
        assert_eq!(json, r#"{"event":"cycles","not":"not supported"}"#);
    }

    #[test]
    fn totals_add_what_was_counted() {
        let a = counters(&readings(), (3, 4));
        let b = counters(&readings(), (1, 0));
        let r = PerfRecord::of_threads(
            5,
            vec![
                PerfThread {
                    name: "cpu0".into(),
                    tid: None,
                    counters: a,
                },
                PerfThread {
                    name: "cpu1".into(),
                    tid: None,
                    counters: b,
                },
            ],
        );
        assert_eq!(r.value("task-clock"), Some(4_000_000));
        assert_eq!(r.value("voluntary-switches"), Some(4));
        assert_eq!(r.value("cycles"), None);
        let cycles = r.total.iter().find(|c| c.event == "cycles").unwrap();
        assert_eq!(cycles.not.as_deref(), Some("not supported"));
    }
}
