//! The store in the Prometheus text exposition format (version 0.0.4), for
//! `rtlab serve`'s `/metrics`: the latest monitor window of every host and CPU,
//! and the verdict and runs of the newest campaigns. Times are in seconds, as
//! Prometheus names base units (`_seconds`), written exactly from the stored
//! nanoseconds (nine decimals, no rounding).

use crate::store::Window;

/// A campaign as `/metrics` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignFigures {
    pub id: i64,
    pub name: String,
    pub host: String,
    pub kernel: String,
    /// Whether every verdict passed; None when it has no requirements or has
    /// not ended.
    pub passed: Option<bool>,
    /// Runs by kind.
    pub kinds: Vec<(String, i64)>,
}

/// A label value escaped as the format asks (backslash, quote, newline).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Nanoseconds as seconds, exactly.
pub fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// One metric family: its HELP and TYPE lines, then one sample per item.
fn family<T>(
    out: &mut String,
    name: &str,
    help: &str,
    items: &[T],
    sample: impl Fn(&T) -> Option<(String, String)>,
) {
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n"));
    for item in items {
        if let Some((labels, value)) = sample(item) {
            out.push_str(&format!("{name}{{{labels}}} {value}\n"));
        }
    }
}

fn window_labels(w: &Window) -> String {
    format!(
        "host=\"{}\",cpu=\"{}\",kernel=\"{}\"",
        label(&w.host),
        w.cpu,
        label(&w.kernel)
    )
}

/// The families of the latest windows; each metric's name.
pub const WINDOW_METRICS: &[(&str, &str)] = &[
    (
        "rtlab_window_max_seconds",
        "Largest wake-up latency in the latest monitor window of a host and CPU.",
    ),
    (
        "rtlab_window_p50_seconds",
        "Median wake-up latency in the latest monitor window.",
    ),
    (
        "rtlab_window_p99_seconds",
        "99th percentile of wake-up latency in the latest monitor window.",
    ),
    (
        "rtlab_window_p999_seconds",
        "99.9th percentile of wake-up latency in the latest monitor window.",
    ),
    (
        "rtlab_window_samples",
        "Wake-ups measured in the latest monitor window.",
    ),
    (
        "rtlab_window_overruns",
        "Periods that expired unserved in the latest monitor window.",
    ),
    (
        "rtlab_window_misses",
        "Deadline misses in the latest monitor window.",
    ),
    (
        "rtlab_window_end_timestamp_seconds",
        "End of the latest monitor window (Unix time).",
    ),
];

fn window_value(name: &str, w: &Window) -> String {
    match name {
        "rtlab_window_max_seconds" => seconds(w.max_ns),
        "rtlab_window_p50_seconds" => seconds(w.p50_ns),
        "rtlab_window_p99_seconds" => seconds(w.p99_ns),
        "rtlab_window_p999_seconds" => seconds(w.p999_ns),
        "rtlab_window_samples" => w.samples.to_string(),
        "rtlab_window_overruns" => w.overruns.to_string(),
        "rtlab_window_misses" => w.misses.to_string(),
        _ => seconds(w.end_ns),
    }
}

/// The whole exposition.
pub fn render(latest: &[Window], campaigns: &[CampaignFigures]) -> String {
    let mut out = String::new();
    for (name, help) in WINDOW_METRICS {
        family(&mut out, name, help, latest, |w| {
            Some((window_labels(w), window_value(name, w)))
        });
    }
    let campaign_labels = |c: &CampaignFigures| {
        format!(
            "campaign=\"{}\",name=\"{}\",host=\"{}\",kernel=\"{}\"",
            c.id,
            label(&c.name),
            label(&c.host),
            label(&c.kernel)
        )
    };
    family(
        &mut out,
        "rtlab_campaign_verdict",
        "1 when every verdict of an ended campaign passed its requirements, 0 when one failed.",
        campaigns,
        |c| {
            c.passed
                .map(|p| (campaign_labels(c), u8::from(p).to_string()))
        },
    );
    let kinds: Vec<(&CampaignFigures, &(String, i64))> = campaigns
        .iter()
        .flat_map(|c| c.kinds.iter().map(move |k| (c, k)))
        .collect();
    family(
        &mut out,
        "rtlab_campaign_runs",
        "Runs a campaign stored, by kind.",
        &kinds,
        |(c, (kind, n))| {
            Some((
                format!("{},kind=\"{}\"", campaign_labels(c), label(kind)),
                n.to_string(),
            ))
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(484_610), "0.000484610");
        assert_eq!(seconds(1_763_917_310_026_000_000), "1763917310.026000000");
        assert_eq!(seconds(-5), "-0.000000005");
    }

    #[test]
    fn labels_are_escaped_and_families_typed() {
        let c = CampaignFigures {
            id: 3,
            name: "a \"b\"\\c\nd".into(),
            host: "h".into(),
            kernel: "k".into(),
            passed: Some(false),
            kinds: vec![("latency".into(), 2)],
        };
        let text = render(&[], &[c]);
        assert!(text.contains(
            "rtlab_campaign_verdict{campaign=\"3\",name=\"a \\\"b\\\"\\\\c\\nd\",host=\"h\",kernel=\"k\"} 0\n"
        ));
        assert!(text.contains("kind=\"latency\"} 2\n"));
        assert!(text.contains("# TYPE rtlab_window_max_seconds gauge\n"));
    }
}
