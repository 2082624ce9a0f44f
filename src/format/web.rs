//! The pages of `rtlab serve` that are not reports: the fleet overview, the
//! list of runs (a GET form of filters, and a form that compares the runs
//! ticked), one host's long-term plots, and the bar of links every page
//! starts with. They use the report's tables, marks, plots and style; a run's
//! page and a comparison are the HTML report itself ([`super::html::render`]).
//! No script: forms are plain GET forms.

use super::html::{document, esc, figure, table, verdict_mark, Cells};
use super::UNKNOWN;
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::verdict::{self, Doubt, Requirement};
use crate::store::{Evidence, HostRow, Level, RunRow, Window};
use crate::units::Human;
use crate::units::TimeUnit;
use anyhow::Result;

/// What the pages add to the report's style: the bar of links and the forms.
const STYLE: &str = "
nav{padding:8px 0;border-bottom:1px solid #ddd;display:flex;gap:16px;flex-wrap:wrap}
form.filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:end;margin:.8em 0}
form.filters label{display:flex;flex-direction:column;font-size:.85em;color:#555}
input,select,button{font:inherit;padding:2px 4px}
.pages{display:flex;gap:16px;margin:.5em 0}
.runs td:nth-child(n+3):nth-child(-n+8),.runs th:nth-child(n+3):nth-child(-n+8),.runs td:last-child,.runs th:last-child{text-align:left}
.fleet td:nth-child(2),.fleet th:nth-child(2),.fleet td:nth-child(8),.fleet th:nth-child(8){text-align:left}
.UNDECIDED{color:#9a6700;font-weight:bold}
";

/// Links carry the access token when the server has one (a browser cannot
/// send an `Authorization` header from a link).
#[derive(Debug, Clone, Copy)]
pub struct Links<'a> {
    pub token: Option<&'a str>,
}

/// `s` percent-encoded for a URL's query or path segment.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Links<'_> {
    /// `path` with the query `pairs` (empty values left out) and the token,
    /// escaped for an attribute.
    pub fn href(&self, path: &str, pairs: &[(&str, &str)]) -> String {
        let mut q: Vec<String> = pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        if let Some(t) = self.token {
            q.push(format!("token={}", encode(t)));
        }
        let url = if q.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{}", q.join("&"))
        };
        esc(&url)
    }

    /// The hidden input that carries the token through a form.
    fn hidden(&self) -> String {
        self.token
            .map(|t| {
                format!(
                    "<input type=\"hidden\" name=\"token\" value=\"{}\"/>",
                    esc(t)
                )
            })
            .unwrap_or_default()
    }

    /// The bar of links at the top of every page.
    pub fn nav(&self) -> String {
        format!(
            "<nav><a href=\"{}\">fleet</a><a href=\"{}\">runs</a><a href=\"{}\">metrics</a></nav>\n",
            self.href("/", &[]),
            self.href("/runs", &[]),
            self.href("/metrics", &[])
        )
    }

    /// A page of `rtlab serve`: the bar, then `body`.
    pub fn page(&self, title: &str, body: &str) -> String {
        document(
            title,
            STYLE,
            &format!("{}<h1>{}</h1>\n{body}", self.nav(), esc(title)),
        )
    }

    /// A report page (a run, a comparison) with the bar of links added.
    pub fn report(&self, report: &str) -> String {
        report
            .replacen("<main>\n", &format!("<main>\n{}", self.nav()), 1)
            .replacen("</style>", &format!("{STYLE}</style>"), 1)
    }
}

/// One host in the fleet overview.
pub struct FleetRow<'a> {
    pub host: &'a HostRow,
    /// Its newest row (any CPU).
    pub last: Option<&'a Window>,
    pub worst_day_ns: Option<i64>,
    /// What its verdicts rest on (none: no latency evidence at all).
    pub evidence: Option<&'a Evidence>,
    /// The time of the page (Unix ns): evidence of the week to it is current.
    pub now_ns: i64,
}

/// What a host's evidence is, in words: `2016 monitor rows, 12 runs`, and the
/// week it is from when that is not the last one.
fn evidence_text(e: Option<&Evidence>, now_ns: i64) -> String {
    let Some(e) = e else {
        return "none".into();
    };
    let many = |n: i64, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    let mut parts = Vec::new();
    if e.rows.n > 0 {
        parts.push(many(e.rows.n, "monitor row"));
    }
    if e.runs.n > 0 {
        parts.push(many(e.runs.n, "run"));
    }
    let mut text = parts.join(", ");
    if e.to_ns != now_ns {
        let day = |ns: i64| super::text::windows::time(ns)[..10].to_string();
        text.push_str(&format!(" of {} to {}", day(e.from_ns), day(e.to_ns)));
    }
    esc(&text)
}

/// The verdict of `req` (the `i`-th) over a host's evidence, its monitor rows
/// and its runs together, by the rule of every verdict.
fn verdict_cell(e: Option<&Evidence>, i: usize, req: &Requirement) -> String {
    let (units, within, worst) = e.map_or((0, 0, None), |e| {
        let within = |c: &crate::store::Count| c.within.get(i).copied().unwrap_or(0);
        (
            e.rows.n + e.runs.n,
            within(&e.rows) + within(&e.runs),
            e.rows.worst_ns.max(e.runs.worst_ns),
        )
    });
    let worst = worst.map_or(0, |w| u64::try_from(w).unwrap_or(0));
    let count = |n: i64| usize::try_from(n).unwrap_or(0);
    let (result, doubt) = verdict::rule(
        count(units),
        count(within),
        worst,
        req.budget_ns,
        DEFAULT_NOISE,
    );
    let why = match doubt {
        Some(Doubt::Disagree) => format!(" {within} of {units} within"),
        Some(Doubt::Close { margin_ns }) => format!(" by {}", Human(margin_ns)),
        None => String::new(),
    };
    verdict_mark(result) + &esc(&why)
}

/// The fleet overview: one row per host; the verdict of each requirement
/// rests on every monitor row and latency run of the host's last week (the
/// week to its newest, when it has nothing newer), judged as every verdict.
pub fn fleet(l: Links, rows: &[FleetRow], reqs: &[Requirement], unit: TimeUnit) -> String {
    let u = unit.symbol();
    let mut header: Vec<String> = [
        "host".to_string(),
        "kernel".into(),
        "runs".into(),
        "last window ends (UTC)".into(),
        format!("last max ({u})"),
        format!("worst 1 d ({u})"),
        format!("worst 7 d ({u})"),
        "verdicts rest on".into(),
    ]
    .into();
    header.extend(
        reqs.iter()
            .map(|r| format!("{} ≤ {}", esc(&r.name), crate::units::Human(r.budget_ns))),
    );
    let time = |ns: Option<i64>| ns.map_or(UNKNOWN.into(), |v| unit.cell(v as f64));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let h = &r.host.host;
            // The last week's rows (a host with nothing newer has none).
            let week = r
                .evidence
                .filter(|e| e.to_ns == r.now_ns)
                .and_then(|e| e.rows.worst_ns);
            let mut c = vec![
                format!(
                    "<a href=\"{}\">{}</a>",
                    l.href(&format!("/host/{}", encode(h)), &[]),
                    esc(h)
                ),
                esc(&r.host.kernel),
                format!(
                    "<a href=\"{}\">{}</a>",
                    l.href("/runs", &[("host", h)]),
                    r.host.runs
                ),
                r.last.map_or(UNKNOWN.into(), |w| {
                    esc(&super::text::windows::time(w.end_ns).replace('T', " "))
                }),
                time(r.last.map(|w| w.max_ns)),
                time(r.worst_day_ns),
                time(week),
                evidence_text(r.evidence, r.now_ns),
            ];
            c.extend(
                reqs.iter()
                    .enumerate()
                    .map(|(i, q)| verdict_cell(r.evidence, i, q)),
            );
            c
        })
        .collect();
    let body = if rows.is_empty() {
        "<p>No hosts yet: the store has no runs and no monitor windows.</p>\n".to_string()
    } else {
        format!(
            "<div class=\"fleet\">{}</div>",
            table(Cells::Numbers, &header, &cells)
        ) + &format!(
            "<p class=\"meta\">Verdicts rest on every monitor row (a window, or an hour or a \
             day of them merged) and every latency run of the host's last 7 days; a host with \
             nothing in them, on the 7 days to its newest. Each is judged as every verdict: \
             PASS when every one stayed within the budget by more than the {:.0}% noise, FAIL \
             when none did, UNDECIDED otherwise (how many stayed within, or by how little). \
             Hosts are the runs' and monitor windows' hostnames.</p>\n",
            DEFAULT_NOISE * 100.0
        )
    };
    l.page("rtlab fleet", &body)
}

/// The filters of the list of runs, as the form gives them.
#[derive(Debug, Clone, Default)]
pub struct RunFilters {
    pub host: String,
    pub kernel: String,
    pub tag: String,
    pub kind: String,
    pub since: String,
    pub until: String,
}

impl RunFilters {
    fn pairs(&self) -> [(&'static str, &str); 6] {
        [
            ("host", &self.host),
            ("kernel", &self.kernel),
            ("tag", &self.tag),
            ("kind", &self.kind),
            ("since", &self.since),
            ("until", &self.until),
        ]
    }
}

/// One page of the runs the filters select (`page` from 1; `more` when there
/// are older runs), each with a box to tick for a comparison.
pub fn runs(
    l: Links,
    f: &RunFilters,
    rows: &[RunRow],
    page: usize,
    more: bool,
    unit: TimeUnit,
) -> String {
    let mut body = format!(
        "<form class=\"filters\" method=\"get\" action=\"/runs\">{}",
        l.hidden()
    );
    for (name, value) in f.pairs() {
        let hint = match name {
            "since" | "until" => " placeholder=\"2d, 2026-05-01\"",
            "kind" => " placeholder=\"latency, bench\"",
            _ => "",
        };
        body.push_str(&format!(
            "<label>{name}<input type=\"text\" name=\"{name}\" value=\"{}\"{hint}/></label>",
            esc(value)
        ));
    }
    body.push_str("<button type=\"submit\">Filter</button></form>\n");
    if rows.is_empty() {
        body.push_str("<p>No runs match.</p>\n");
        return l.page("rtlab runs", &body);
    }
    let u = unit.symbol();
    let header: Vec<String> = [
        "compare".to_string(),
        "id".into(),
        "started (UTC)".into(),
        "host".into(),
        "kernel".into(),
        "kind".into(),
        "label".into(),
        "status".into(),
        "samples".into(),
        format!("p99 ({u})"),
        format!("max ({u})"),
        "tags".into(),
    ]
    .into();
    let opt = |v: Option<i64>| v.map_or(UNKNOWN.into(), |v| unit.cell(v as f64));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                format!("<input type=\"checkbox\" name=\"run\" value=\"{}\" aria-label=\"compare run {}\"/>", r.id, r.id),
                format!("<a href=\"{}\">{}</a>", l.href(&format!("/run/{}", r.id), &[]), r.id),
                esc(&r.started_at.get(..19).unwrap_or(&r.started_at).replace('T', " ")),
                esc(&r.host),
                esc(&r.kernel),
                esc(&r.kind),
                esc(&r.label),
                esc(&r.status),
                r.samples.map_or(UNKNOWN.into(), |s| s.to_string()),
                opt(r.p99_ns),
                opt(r.max_ns),
                esc(&r.tags.join(", ")),
            ]
        })
        .collect();
    body.push_str(&format!(
        "<form method=\"get\" action=\"/compare\">{}",
        l.hidden()
    ));
    body.push_str(&format!(
        "<div class=\"runs\">{}</div>",
        table(Cells::Numbers, &header, &cells)
    ));
    body.push_str("<button type=\"submit\" id=\"compare\">Compare</button></form>\n");
    let mut pages = String::new();
    let mut at = |p: usize, text: &str| {
        let n = p.to_string();
        let mut pairs = f.pairs().to_vec();
        pairs.push(("page", &n));
        pages.push_str(&format!(
            "<a href=\"{}\">{text}</a>",
            l.href("/runs", &pairs)
        ));
    };
    if page > 1 {
        at(page - 1, "newer runs");
    }
    if more {
        at(page + 1, "older runs");
    }
    body.push_str(&format!(
        "<div class=\"pages\"><span>page {page}</span>{pages}</div>\n"
    ));
    l.page("rtlab runs", &body)
}

/// One host's long-term plots (one per level, each the newest rows up to a
/// bound) and the newest row of each of its CPUs.
pub fn host(
    l: Links,
    name: &str,
    latest: &[&Window],
    levels: &[(Level, &str, Vec<Window>)],
    unit: TimeUnit,
) -> Result<String> {
    let u = unit.symbol();
    let header: Vec<String> = [
        "cpu".to_string(),
        "kernel".into(),
        "level".into(),
        "end (UTC)".into(),
        "samples".into(),
        format!("p50 ({u})"),
        format!("p99 ({u})"),
        format!("p99.9 ({u})"),
        format!("max ({u})"),
        "overruns".into(),
        "misses".into(),
    ]
    .into();
    let cells: Vec<Vec<String>> = latest
        .iter()
        .map(|w| {
            vec![
                w.cpu.to_string(),
                esc(&w.kernel),
                w.level.name().into(),
                esc(&super::text::windows::time(w.end_ns).replace('T', " ")),
                w.samples.to_string(),
                unit.cell(w.p50_ns as f64),
                unit.cell(w.p99_ns as f64),
                unit.cell(w.p999_ns as f64),
                unit.cell(w.max_ns as f64),
                w.overruns.to_string(),
                w.misses.to_string(),
            ]
        })
        .collect();
    let mut body = format!(
        "<p><a href=\"{}\">runs of {}</a></p>\n",
        l.href("/runs", &[("host", name)]),
        esc(name)
    );
    if latest.is_empty() {
        body.push_str("<p>No monitor windows from this host.</p>\n");
    } else {
        body.push_str("<h2>Latest window per CPU</h2>\n");
        body.push_str(&table(Cells::Numbers, &header, &cells));
    }
    for (level, what, rows) in levels {
        if rows.is_empty() {
            continue;
        }
        body.push_str(&format!(
            "<h2>{} ({} rows, {what})</h2>\n",
            match level {
                Level::Window => "Windows",
                Level::Hour => "Hourly maxima",
                Level::Day => "Daily maxima",
            },
            rows.len()
        ));
        body.push_str(&figure(super::text::windows::plot(rows)?));
    }
    Ok(l.page(&format!("rtlab host {name}"), &body))
}

/// A page saying what went wrong (404, 400).
pub fn problem(l: Links, title: &str, text: &str) -> String {
    l.page(title, &format!("<p>{}</p>\n", esc(text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Count;

    const NOW: i64 = 1_795_132_800_000_000_000;
    const WEEK: i64 = 7 * 86_400_000_000_000;

    fn count(n: i64, within: i64, worst_us: i64) -> Count {
        Count {
            n,
            within: vec![within],
            worst_ns: Some(worst_us * 1000),
        }
    }

    fn evidence(to_ns: i64, rows: Count, runs: Count) -> Evidence {
        Evidence {
            from_ns: to_ns - WEEK,
            to_ns,
            rows,
            runs,
        }
    }

    #[test]
    fn a_host_is_judged_on_its_monitor_rows_and_runs_and_says_which() {
        let host = |name: &str| HostRow {
            host: name.into(),
            kernel: "6.1-rt".into(),
            runs: 58,
        };
        let hosts = [
            host("h-mon"),
            host("h-runs"),
            host("h-close"),
            host("h-old"),
            host("h-none"),
        ];
        let e = [
            evidence(NOW, count(3, 2, 1_500), Count::default()),
            evidence(NOW, Count::default(), count(58, 58, 455)),
            evidence(NOW, count(2, 2, 300), count(1, 1, 990)),
            evidence(NOW - 3 * WEEK, Count::default(), count(2, 0, 3_000)),
        ];
        let rows: Vec<FleetRow> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| FleetRow {
                host: h,
                last: None,
                worst_day_ns: None,
                evidence: e.get(i),
                now_ns: NOW,
            })
            .collect();
        let reqs = verdict::parse_requirement("gyro=1ms").unwrap();
        let page = fleet(Links { token: None }, &rows, &reqs, TimeUnit::Us);
        let row = |name: &str| -> &str {
            let at = page.find(&format!(">{name}</a>")).unwrap();
            &page[at..at + page[at..].find("</tr>").unwrap()]
        };
        let has = |name: &str, texts: &[&str]| {
            for t in texts {
                assert!(row(name).contains(t), "{name}: {t} in {}", row(name));
            }
        };
        has(
            "h-mon",
            &[
                "3 monitor rows<",
                "class=\"UNDECIDED\">UNDECIDED</span> 2 of 3 within",
            ],
        );
        // The 58 stored runs of a host without monitor are its evidence.
        has("h-runs", &[">58 runs<", "class=\"PASS\">PASS</span><"]);
        has(
            "h-close",
            &["2 monitor rows, 1 run<", "UNDECIDED</span> by 10us"],
        );
        has(
            "h-old",
            &[
                "2 runs of 2026-10-23 to 2026-10-30<",
                "class=\"FAIL\">FAIL</span><",
            ],
        );
        has("h-none", &[">none<", "class=\"NO DATA\">NO DATA</span>"]);
        // Only the last week's rows give the worst of 7 days.
        assert!(row("h-mon").contains("1500.0"), "{}", row("h-mon"));
        assert!(page.contains("Verdicts rest on every monitor row"));
    }
}
