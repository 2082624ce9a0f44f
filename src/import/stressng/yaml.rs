//! The `--yaml FILE` document of stress-ng: a `system-info:` mapping (uname
//! fields, CPUs, version) and a `metrics:` list, one item per stressor, ended by
//! `...`. The document has no instance counts: they follow from the CPU time,
//! the wall-clock time and `cpu-usage-per-instance` when these agree on a whole
//! number. Only this layout is read, not YAML in general.

use super::{count, number, to_run, Stressor, Whole};
use crate::format::histfile::ParseError;
use crate::import::{fingerprint_from_uname, Source};
use crate::record::Run;
use rtlab_engine::sysinfo::Uname;
use serde_json::json;
use std::collections::BTreeMap;

/// Whether the text is stress-ng's YAML document.
pub fn is_yaml(text: &str) -> bool {
    text.lines()
        .take(4)
        .any(|l| l.trim_start().starts_with("stress-ng-version:"))
        || text
            .lines()
            .any(|l| l.trim_start().starts_with("- stressor:"))
}

/// `key: value` with the value's quotes removed.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    let v = v.trim();
    let v = v
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
        .unwrap_or(v);
    Some((k.trim(), v))
}

/// One item of `metrics:`: its line and its keys.
type Item<'a> = (usize, BTreeMap<&'a str, &'a str>);

/// The instances that make `usr + sys` CPU seconds over `wall` seconds at
/// `pct` percent each, when that is a whole number (within 5%).
fn instances_from_usage(cpu_s: f64, wall: f64, pct: f64) -> Option<u32> {
    if pct <= 0.0 || wall <= 0.0 {
        return None;
    }
    let n = cpu_s * 100.0 / (wall * pct);
    let whole = n.round();
    (whole >= 1.0 && (n - whole).abs() < 0.05 * whole).then_some(whole as u32)
}

fn stressor(item: &Item<'_>) -> Result<Stressor, ParseError> {
    let (line, keys) = item;
    let line = *line;
    let name = keys.get("stressor").copied().unwrap_or("");
    let get = |k: &str| {
        keys.get(k).copied().ok_or_else(|| ParseError {
            line,
            message: format!("stressor '{name}' has no '{k}': the document is cut or damaged"),
        })
    };
    let num = |k: &str| number(get(k)?, k, line);
    let usr_s = num("user-time")?;
    let sys_s = num("system-time")?;
    let real_s = num("wall-clock-time")?;
    let cpu_pct = keys
        .get("cpu-usage-per-instance")
        .map(|v| number(v, "cpu-usage-per-instance", line))
        .transpose()?;
    Ok(Stressor {
        name: name.to_string(),
        instances: cpu_pct.and_then(|p| instances_from_usage(usr_s + sys_s, real_s, p)),
        bogo_ops: count(get("bogo-ops")?, "bogo-ops", line)?,
        real_s,
        usr_s,
        sys_s,
        per_s: num("bogo-ops-per-second-real-time")?,
        per_cpu_s: num("bogo-ops-per-second-usr-sys-time")?,
        cpu_pct,
        max_rss_kib: keys
            .get("max-rss")
            .map(|v| count(v, "max-rss", line))
            .transpose()?,
        line,
    })
}

/// Parses a stress-ng `--yaml` document.
pub fn parse(text: &str, src: &Source) -> Result<Run, ParseError> {
    let mut section = "";
    let mut system: BTreeMap<&str, &str> = BTreeMap::new();
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut ended = false;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw.trim();
        if trimmed == "..." {
            ended = true;
            continue;
        }
        if trimmed.is_empty() || trimmed == "---" || trimmed.starts_with('#') {
            continue;
        }
        let bad = || ParseError {
            line,
            message: format!("'{trimmed}' is not a line of stress-ng's YAML ('key: value')"),
        };
        if !raw.starts_with(' ') {
            section = trimmed.strip_suffix(':').ok_or_else(bad)?;
            continue;
        }
        match section {
            "system-info" => {
                let (k, v) = key_value(trimmed).ok_or_else(bad)?;
                system.insert(k, v);
            }
            "metrics" => match trimmed.strip_prefix("- ") {
                Some(first) => {
                    let (k, v) = key_value(first).ok_or_else(bad)?;
                    items.push((line, BTreeMap::from([(k, v)])));
                }
                None => {
                    let (k, v) = key_value(trimmed).ok_or_else(bad)?;
                    items.last_mut().ok_or_else(bad)?.1.insert(k, v);
                }
            },
            _ => {}
        }
    }
    if !ended {
        return Err(ParseError {
            line: text.lines().count().max(1),
            message: "the document ends without '...', which stress-ng writes last: it is incomplete (was stress-ng stopped, or is the file cut?)".into(),
        });
    }
    let stressors = items.iter().map(stressor).collect::<Result<Vec<_>, _>>()?;
    let s = |k: &str| system.get(k).copied().unwrap_or("").to_string();
    let mut fingerprint = fingerprint_from_uname(Uname {
        hostname: s("nodename"),
        release: s("release"),
        version: s("version"),
        machine: s("machine"),
    });
    fingerprint.cpu_count = s("cpus-online").parse().unwrap_or(0);
    let mut params = serde_json::Map::new();
    if let Some(v) = system.get("stress-ng-version") {
        params.insert("stress_ng_version".into(), json!(v));
    }
    let whole = Whole {
        source_format: "yaml",
        fingerprint,
        duration_s: None,
        params,
        warnings: Vec::new(),
    };
    to_run(&stressors, whole, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_follow_from_usage_when_they_are_whole() {
        // stress-ng 0.15: 2 cpu instances, 0.72 s of CPU in 1.0014 s at 35.95%.
        assert_eq!(instances_from_usage(0.72009, 1.001398, 35.954246), Some(2));
        assert_eq!(instances_from_usage(0.3, 1.0, 20.0), None);
        assert_eq!(instances_from_usage(0.0, 1.0, 0.0), None);
    }

    #[test]
    fn quoted_values_lose_their_quotes() {
        assert_eq!(
            key_value("version: '#1 SMP PREEMPT_DYNAMIC @0'"),
            Some(("version", "#1 SMP PREEMPT_DYNAMIC @0"))
        );
        assert_eq!(key_value("cpus: 2"), Some(("cpus", "2")));
    }
}
