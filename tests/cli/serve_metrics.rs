//! `rtlab serve`'s `/metrics`: a strict reading of the exposition, values
//! equal to the scripted windows, the campaign verdict, promtool's check, and
//! the Grafana dashboard that queries only what is served.

use crate::serve_common::{store, t0_of, Server, WINDOWS};
use std::io::Write;

/// The value of the sample `name{labels}` in a metrics text.
fn sample(text: &str, name: &str, labels: &str) -> Option<String> {
    let prefix = format!("{name}{{{labels}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(str::to_string)
}

fn secs(ns: i64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// Checks the exposition strictly: every line a HELP, a TYPE (gauge) before
/// its family's samples, or a sample `name{k="v",...} number` of a declared
/// family; names and label names of the allowed characters.
fn check_exposition(text: &str) -> Vec<String> {
    let mut families: Vec<String> = Vec::new();
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(name_ok(name), "{line}");
            assert!(
                !families.contains(&name.to_string()),
                "family twice: {line}"
            );
            families.push(name.to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            assert_eq!(
                rest,
                format!("{} gauge", families.last().unwrap()),
                "{line}"
            );
        } else {
            let (name, rest) = line.split_once('{').unwrap_or_else(|| panic!("{line}"));
            assert_eq!(Some(&name.to_string()), families.last(), "{line}");
            let (labels, value) = rest.rsplit_once("} ").unwrap_or_else(|| panic!("{line}"));
            for pair in labels.split("\",") {
                let (k, v) = pair.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
                assert!(name_ok(k), "{line}");
                assert!(!v.trim_end_matches('"').contains('\n'), "{line}");
            }
            value.parse::<f64>().unwrap_or_else(|_| panic!("{line}"));
        }
    }
    families
}

#[test]
fn metrics_give_the_latest_window_of_every_series_exactly_and_the_campaign_verdict() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let r = s.get("/metrics");
    assert_eq!(r.status, 200);
    assert!(r.head.contains("text/plain; version=0.0.4"), "{}", r.head);
    let families = check_exposition(&r.body);
    assert!(families.contains(&"rtlab_campaign_runs".to_string()));
    let t0 = t0_of(&db);
    // The latest row of each series: board-a cpu 0 at 60 s, cpu 1, board-b.
    for &(host, kernel, cpu, start, samples, overruns, misses, p50, p99, p999, max) in &WINDOWS[1..]
    {
        let labels = format!("host=\"{host}\",cpu=\"{cpu}\",kernel=\"{kernel}\"");
        let got = |name: &str| {
            sample(&r.body, name, &labels).unwrap_or_else(|| panic!("{name}{labels}\n{}", r.body))
        };
        assert_eq!(got("rtlab_window_max_seconds"), secs(max));
        assert_eq!(got("rtlab_window_p50_seconds"), secs(p50));
        assert_eq!(got("rtlab_window_p99_seconds"), secs(p99));
        assert_eq!(got("rtlab_window_p999_seconds"), secs(p999));
        assert_eq!(got("rtlab_window_samples"), samples.to_string());
        assert_eq!(got("rtlab_window_overruns"), overruns.to_string());
        assert_eq!(got("rtlab_window_misses"), misses.to_string());
        assert_eq!(
            got("rtlab_window_end_timestamp_seconds"),
            secs(t0 + (start + 60) * 1_000_000_000)
        );
    }
    assert!(
        !r.body.contains("0.000080000"),
        "an older window is not the latest"
    );
    // The campaign `rtlab run` made (id 3: the imports made 1 and 2) met its
    // 10 s requirement; imported campaigns have none, so no verdict.
    let verdicts: Vec<&str> = r
        .body
        .lines()
        .filter(|l| l.starts_with("rtlab_campaign_verdict{"))
        .collect();
    assert_eq!(verdicts.len(), 1, "{}", r.body);
    assert!(verdicts[0].starts_with("rtlab_campaign_verdict{campaign=\"3\",name=\"one step\""));
    assert!(verdicts[0].ends_with("} 1"), "{}", verdicts[0]);
    assert!(r.body.contains("kind=\"latency\"} 1\n"), "{}", r.body);
}

#[test]
fn the_grafana_dashboard_is_json_and_queries_only_served_metrics() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let served = check_exposition(&s.get("/metrics").body);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/rtlab.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut exprs = Vec::new();
    collect_exprs(&dash, &mut exprs);
    assert!(exprs.len() >= 5, "{exprs:?}");
    let mut used = 0;
    for e in &exprs {
        for word in e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with("rtlab_") {
                assert!(
                    served.iter().any(|f| f == word),
                    "{word} (in {e}) is not served: {served:?}"
                );
                used += 1;
            }
        }
    }
    assert!(used >= exprs.len());
    let vars: Vec<&str> = dash["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(vars.contains(&"host") && vars.contains(&"cpu"), "{vars:?}");
}

/// Every `expr` and variable `query` of a dashboard.
fn collect_exprs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                    ("query", serde_json::Value::String(s)) if s.contains("rtlab_") => {
                        out.push(s.clone())
                    }
                    ("query", serde_json::Value::Object(q)) => {
                        if let Some(s) = q.get("query").and_then(|s| s.as_str()) {
                            out.push(s.to_string());
                        }
                    }
                    _ => collect_exprs(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_exprs(x, out)),
        _ => {}
    }
}

#[test]
#[ignore = "needs promtool: apt-get install prometheus"]
fn promtool_accepts_the_metrics() {
    let (_dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let body = s.get("/metrics").body;
    let mut c = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool");
    c.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "{said}\n{body}"
    );
}
