//! What `rtlab serve` answers: each path read from the store (opened read-only
//! per request) and rendered by `format` (the HTML report, `format::web`,
//! `format::metrics`).

use super::http::{same_token, Request, Response, HTML, METRICS};
use crate::analysis::interval::DEFAULT_NOISE;
use crate::analysis::outcome::{analyse, of_runs};
use crate::analysis::verdict::{failures, judge, Requirement};
use crate::error::UsageError;
use crate::format::metrics::{self, CampaignFigures};
use crate::format::web::{self, FleetRow, Links, RunFilters};
use crate::format::{html, run_name};
use crate::record::Run;
use crate::scenario::campaign::Stored;
use crate::scenario::runner::{campaign_steps, step_view};
use crate::store::{CampaignStatus, Level, ListFilter, Store};
use crate::units::{parse_since, TimeUnit};
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Runs listed per page of `/runs`.
pub const RUNS_PER_PAGE: usize = 50;
/// Runs one `/compare` may load.
pub const MAX_COMPARED: usize = 12;
/// Campaigns `/metrics` shows (the newest).
pub const MAX_CAMPAIGNS: usize = 50;
/// Rows per level of a host's plots: (level, how far back, at most).
const HOST_LEVELS: [(Level, &str, i64, usize); 3] = [
    (Level::Window, "last day", 1, 5000),
    (Level::Hour, "last 30 days", 30, 2000),
    (Level::Day, "last 365 days", 365, 400),
];
const DAY_NS: i64 = 86_400_000_000_000;

/// What every request shares.
pub struct Site {
    pub db: PathBuf,
    pub token: Option<String>,
    pub reqs: Vec<Requirement>,
    pub unit: TimeUnit,
    /// The verdicts of ended campaigns: they do not change.
    pub verdicts: Mutex<HashMap<i64, Option<bool>>>,
}

/// Why a page cannot be given: its status and what to say.
struct Refused(u16, String);

impl From<anyhow::Error> for Refused {
    fn from(e: anyhow::Error) -> Refused {
        if let Some(u) = e.downcast_ref::<UsageError>() {
            return Refused(404, u.0.clone());
        }
        Refused(500, format!("{e:#}"))
    }
}

impl Site {
    fn links(&self) -> Links<'_> {
        Links {
            token: self.token.as_deref(),
        }
    }

    /// Whether `req` carries the token (as a bearer or `?token=`), when one is set.
    fn allowed(&self, req: &Request) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let bearer = req
            .header("authorization")
            .and_then(|h| h.strip_prefix("Bearer "));
        [bearer, req.param("token")]
            .into_iter()
            .flatten()
            .any(|t| same_token(t, token))
    }

    /// The answer to `req`.
    pub fn answer(&self, req: &Request) -> Response {
        if req.path == "/favicon.ico" {
            return Response::new(204, HTML, "");
        }
        if !self.allowed(req) {
            return Response::text(
                401,
                "a token is needed: Authorization: Bearer TOKEN, or ?token=TOKEN",
            )
            .with("WWW-Authenticate", "Bearer realm=\"rtlab\"");
        }
        let page = match self.page(req) {
            Ok(r) => return r,
            Err(Refused(status, text)) => (status, text),
        };
        let title = match page.0 {
            400 => "Bad request",
            404 => "Not found",
            _ => "Error",
        };
        Response::new(page.0, HTML, web::problem(self.links(), title, &page.1))
    }

    fn page(&self, req: &Request) -> Result<Response, Refused> {
        let store = Store::open_read_only(&self.db)?;
        let path = req.path.as_str();
        let html = |s: String| Ok(Response::new(200, HTML, s));
        match path {
            "/" => html(self.fleet(&store)?),
            "/runs" => html(self.runs(&store, req)?),
            "/compare" => html(self.compare(&store, req)?),
            "/metrics" => Ok(Response::new(200, METRICS, self.metrics(&store)?)),
            _ => {
                if let Some(id) = path.strip_prefix("/run/") {
                    let id: i64 = id.parse().map_err(|_| {
                        Refused(404, format!("no run '{id}': runs are named by id"))
                    })?;
                    let run = store.load(id)?;
                    let title = format!("rtlab report: {} #{id}", run.label);
                    let page = self.report(&title, vec![run])?;
                    return html(self.links().report(&page));
                }
                if let Some(host) = path.strip_prefix("/host/") {
                    return html(self.host(&store, host)?);
                }
                Err(Refused(404, format!("nothing at {path}")))
            }
        }
    }

    fn fleet(&self, store: &Store) -> Result<String> {
        let latest = store.latest_windows()?;
        let now = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX);
        let day = store.worst_since(now - DAY_NS)?;
        let hosts = store.hosts(&latest)?;
        let budgets: Vec<u64> = self.reqs.iter().map(|r| r.budget_ns).collect();
        let kind = crate::step::latency::KIND.name;
        let evidence = store.evidence(now, &budgets, kind, &latest, &hosts)?;
        let rows: Vec<FleetRow> = hosts
            .iter()
            .map(|h| FleetRow {
                host: h,
                last: latest
                    .iter()
                    .filter(|w| w.host == h.host)
                    .max_by_key(|w| (w.end_ns, w.max_ns)),
                worst_day_ns: day.get(&h.host).copied(),
                evidence: evidence.get(&h.host),
                now_ns: now,
            })
            .collect();
        Ok(web::fleet(self.links(), &rows, &self.reqs, self.unit))
    }

    fn runs(&self, store: &Store, req: &Request) -> Result<String, Refused> {
        let text = |k: &str| req.param(k).unwrap_or_default().trim().to_string();
        let f = RunFilters {
            host: text("host"),
            kernel: text("kernel"),
            tag: text("tag"),
            kind: text("kind"),
            since: text("since"),
            until: text("until"),
        };
        let time = |name: &str, v: &str| -> Result<Option<String>, Refused> {
            if v.is_empty() {
                return Ok(None);
            }
            parse_since(v, chrono::Utc::now())
                .map(Some)
                .map_err(|e| Refused(400, format!("{name}: {e}")))
        };
        let page: usize = match req.param("page") {
            None | Some("") => 1,
            Some(p) => p
                .parse()
                .ok()
                .filter(|p| (1..=1_000_000).contains(p))
                .ok_or_else(|| Refused(400, format!("page '{p}': a page number from 1")))?,
        };
        let some = |s: &String| (!s.is_empty()).then(|| s.clone());
        let filter = ListFilter {
            kind: some(&f.kind),
            since: time("since", &f.since)?,
            until: time("until", &f.until)?,
            tag: some(&f.tag),
            hosts: some(&f.host).into_iter().collect(),
            kernels: some(&f.kernel).into_iter().collect(),
            limit: Some(RUNS_PER_PAGE + 1),
            offset: (page - 1) * RUNS_PER_PAGE,
            ..ListFilter::default()
        };
        let mut rows = store.list_where(&filter)?;
        let more = rows.len() > RUNS_PER_PAGE;
        rows.truncate(RUNS_PER_PAGE);
        Ok(web::runs(self.links(), &f, &rows, page, more, self.unit))
    }

    fn compare(&self, store: &Store, req: &Request) -> Result<String, Refused> {
        let mut ids: Vec<i64> = Vec::new();
        for (_, sel) in req.query.iter().filter(|(k, _)| k == "run") {
            let id = store.resolve(sel)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.is_empty() {
            return Err(Refused(
                400,
                "nothing to compare: tick runs in the list of runs (or give ?run=ID&run=ID)".into(),
            ));
        }
        if ids.len() > MAX_COMPARED {
            return Err(Refused(
                400,
                format!("{} runs: compare at most {MAX_COMPARED} at once", ids.len()),
            ));
        }
        let runs = ids
            .iter()
            .map(|&id| store.load(id))
            .collect::<Result<Vec<Run>>>()?;
        let names: Vec<String> = runs.iter().map(run_name).collect();
        let title = format!("rtlab compare: {}", names.join(" vs "));
        Ok(self.links().report(&self.report(&title, runs)?))
    }

    /// The HTML report of `runs` (the first the baseline of its kind), from
    /// the one analysis every format renders.
    fn report(&self, title: &str, runs: Vec<Run>) -> Result<String> {
        let o = analyse(of_runs(runs.clone(), 0), &self.reqs, DEFAULT_NOISE);
        html::render(title, &o, &runs, self.unit)
    }

    fn host(&self, store: &Store, name: &str) -> Result<String, Refused> {
        let latest = store.latest_windows()?;
        let mine: Vec<_> = latest.iter().filter(|w| w.host == name).collect();
        let now = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(i64::MAX);
        let mut levels = Vec::new();
        for (level, what, days, limit) in HOST_LEVELS {
            levels.push((
                level,
                what,
                store.series_tail(name, level, now - days * DAY_NS, limit)?,
            ));
        }
        let known = !mine.is_empty() || store.hosts(&latest)?.iter().any(|h| h.host == name);
        if !known {
            return Err(Refused(
                404,
                format!("no host '{name}' in this store (see the fleet page)"),
            ));
        }
        Ok(web::host(self.links(), name, &mine, &levels, self.unit)?)
    }

    fn metrics(&self, store: &Store) -> Result<String> {
        let latest = store.latest_windows()?;
        let mut kinds: HashMap<i64, Vec<(String, i64)>> = HashMap::new();
        for (c, kind, n) in store.campaign_kinds(MAX_CAMPAIGNS)? {
            kinds.entry(c).or_default().push((kind, n));
        }
        let mut campaigns = Vec::new();
        for row in store.list_campaigns()?.into_iter().take(MAX_CAMPAIGNS) {
            let c = store.load_campaign(row.id)?;
            let ended = !matches!(c.status, CampaignStatus::Running);
            let passed = if ended {
                self.verdict(store, row.id)?
            } else {
                None
            };
            campaigns.push(CampaignFigures {
                id: c.id,
                name: c.name,
                host: c.fingerprint.hostname,
                kernel: c.fingerprint.kernel_release,
                passed,
                kinds: kinds.remove(&row.id).unwrap_or_default(),
            });
        }
        Ok(metrics::render(&latest, &campaigns))
    }

    /// Whether ended campaign `id` met the requirements it ran with (None: it
    /// has none), judged as `rtlab report --campaign` judges it; remembered.
    fn verdict(&self, store: &Store, id: i64) -> Result<Option<bool>> {
        if let Some(v) = self
            .verdicts
            .lock()
            .map_err(|_| anyhow::anyhow!("poisoned"))?
            .get(&id)
        {
            return Ok(*v);
        }
        let c = store.load_campaign(id)?;
        let steps = campaign_steps(store, id)?;
        let reqs = match Stored::of(&c) {
            Some(stored) => super::super::report::judged_as_run(id, &stored, &steps, Vec::new())?.0,
            None => Vec::new(),
        };
        let v = (!reqs.is_empty()).then(|| failures(&judge(&step_view(&steps), &reqs)) == 0);
        if let Ok(mut cache) = self.verdicts.lock() {
            cache.insert(id, v);
        }
        Ok(v)
    }
}
