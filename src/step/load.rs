//! Load generators on their own (`rtlab load`, scenario probe `load`): run them
//! for a while and record what each achieved.

use super::loads::PlacementArgs;
use super::rt::Options;
use super::value::{opt_positive, Dur, Sec, Size};
use super::{de, Kind, Machine, Observer, View};
use crate::error::{bad_flag, UsageError, EXIT_SYSTEM};
use crate::loads::guard;
use crate::loads::placement::Placement;
use crate::loads::set::LoadSet;
use crate::loads::spec::{self, LoadSpec};
use crate::record::{self, Better, Run, Status};
use crate::system;
use anyhow::Result;
use clap::Args;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::signals;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The parameters of a load step: `rtlab load` flags and the keys of a `load`
/// scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The loads, each a whole spec (`rtlab load` makes one of its SPEC words).
    #[arg(skip)]
    #[serde(deserialize_with = "de::loads", serialize_with = "de::ser_loads")]
    pub load: Vec<String>,
    /// Worker processes (the spec's workers=N) [default: the spec's, else 1].
    #[arg(short, long, value_name = "N")]
    pub workers: Option<u32>,
    /// Run this long, then stop (a bare number is seconds) [default: until
    /// Ctrl-C].
    #[arg(short = 'D', long, value_name = "DUR")]
    pub duration: Option<Dur<Sec>>,
    /// cpu: the arithmetic: mix, int, or one of stress-ng's methods by its name
    /// (matrixprod, fft, int64, ...; rtlab load --list) [default: mix].
    #[arg(long, value_name = "METHOD")]
    pub method: Option<String>,
    /// cpu: the share of CPU time busy, 0-100%, as stress-ng's --cpu-load
    /// (e.g. 60%) [default: 100%].
    #[arg(long, value_name = "PCT")]
    pub cpu_load: Option<String>,
    /// cpu: the busy slices below 100%, as stress-ng's --cpu-load-slice: Nops,
    /// a duration (a bare number is ms) or random [default: 64ops].
    #[arg(long, value_name = "SLICE")]
    pub cpu_load_slice: Option<String>,
    /// vm: bytes mapped per worker; memcopy: size of each buffer; io: bytes per
    /// file (e.g. 4096, 64K, 256M, 1G) [default: vm 256M, memcopy larger than the
    /// last-level cache, io 1M].
    #[arg(long, value_name = "SIZE")]
    pub bytes: Option<Size>,
    /// vm: keep the mapping and re-dirty it instead of unmapping it.
    #[arg(long)]
    pub keep: bool,
    /// io: the directory written in [default: /var/tmp].
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,
    /// fswalk: where the walk starts [default: /].
    #[arg(long, value_name = "PATH")]
    pub root: Option<String>,
    /// Run vm/memcopy loads even above 90% of MemAvailable.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub perf: super::perf::PerfArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub place: PlacementArgs,
}

impl Default for Params {
    fn default() -> Self {
        super::defaults()
    }
}

/// How a scenario reads `load` steps.
pub const KIND: Kind = Kind::probe::<Params>("load", "duration")
    .requiring(&["load"])
    .periods(false, false)
    .view(View::Load)
    .metrics(&[("*ops_per_s*", Better::Higher)]);

/// The loads to start, where, and for how long, validated.
pub struct Plan {
    specs: Vec<LoadSpec>,
    placement: Placement,
    duration: Option<Duration>,
}

impl Params {
    /// The loads and their placement, every value checked; a
    /// [`BadValue`](crate::error::BadValue) names the flag of the first value
    /// that cannot be used (`--load` for a spec).
    pub fn plan(&self) -> Result<Plan> {
        if self.load.is_empty() {
            return Err(bad_flag(
                "--load",
                "no load given; name one, e.g. \"cpu:4\" (every kind: rtlab load --list)",
            ));
        }
        let mut specs = Vec::new();
        for spec in &self.load {
            let text = self.spec_text(spec)?;
            specs.extend(spec::parse(&text).map_err(|e| bad_flag("--load", e))?);
        }
        let placement = self.place.placement()?;
        let duration = opt_positive("--duration", &self.duration)?.map(Duration::from_nanos);
        Ok(Plan {
            specs,
            placement,
            duration,
        })
    }

    /// The text of `spec` with the keys the flags give added.
    fn spec_text(&self, spec: &str) -> Result<String> {
        let mut text = spec.to_string();
        if text.trim_start().starts_with("exec") {
            let keyed = [
                self.method.is_some(),
                self.cpu_load.is_some(),
                self.cpu_load_slice.is_some(),
                self.bytes.is_some(),
                self.keep,
                self.dir.is_some(),
                self.root.is_some(),
                self.force,
            ];
            if keyed.iter().any(|&k| k) {
                return Err(UsageError(
                    "exec takes only --workers; its spec is exec:COMMAND".into(),
                )
                .into());
            }
            if let Some(n) = self.workers {
                let cmd = text.trim_start()["exec".len()..].trim_start_matches(':');
                text = format!("exec:{n}:{cmd}");
            }
            return Ok(text);
        }
        let flags = [
            ("--workers", "workers", self.workers.map(|n| n.to_string())),
            ("--method", "method", self.method.clone()),
            ("--cpu-load", "load", self.cpu_load.clone()),
            ("--cpu-load-slice", "slice", self.cpu_load_slice.clone()),
            ("--bytes", "bytes", self.bytes.as_ref().map(Size::to_string)),
            ("--dir", "dir", self.dir.clone()),
            ("--root", "root", self.root.clone()),
        ];
        for (flag, key, value) in flags {
            if let Some(v) = value {
                if v.contains(char::is_whitespace) {
                    return Err(bad_flag(flag, "cannot contain spaces"));
                }
                text.push_str(&format!(" {key}={v}"));
            }
        }
        for (key, on) in [("keep", self.keep), ("force", self.force)] {
            if on {
                text.push_str(&format!(" {key}"));
            }
        }
        Ok(text)
    }
}

/// How often the observer hears the loads' rates.
const LIVE_EVERY: Duration = Duration::from_millis(500);

/// Measures: starts the loads, lets them work until the duration, a signal or
/// the end of every worker, stops them and returns the run with what each
/// achieved.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let Plan {
        specs,
        placement,
        duration,
    } = p.plan()?;
    let fp = system::fingerprint();
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    let counters = p.perf.start_process()?;
    let mut set = LoadSet::start(&specs, &placement)?;
    let mut warnings = set.start_warnings().to_vec();
    let t0 = Instant::now();
    let mut all_ended = false;
    let mut last_seen = t0;
    let mut last_ops: Vec<u64> = set.progress().iter().map(|p| p.1).collect();
    loop {
        if stop.load(Ordering::Relaxed) || duration.is_some_and(|d| t0.elapsed() >= d) {
            break;
        }
        if set.alive() == 0 {
            all_ended = true;
            break;
        }
        if last_seen.elapsed() >= LIVE_EVERY {
            let now = set.progress();
            let secs = last_seen.elapsed().as_secs_f64();
            let rates: Vec<(&str, f64)> = now
                .iter()
                .zip(&last_ops)
                .map(|((kind, ops), before)| (*kind, (ops - before) as f64 / secs))
                .collect();
            obs.loads(t0.elapsed(), &rates);
            last_ops = now.iter().map(|p| p.1).collect();
            last_seen = Instant::now();
        }
        let step = duration
            .map(|d| d.saturating_sub(t0.elapsed()))
            .unwrap_or(Duration::MAX)
            .min(Duration::from_millis(20));
        std::thread::sleep(step);
    }
    obs.end();
    let elapsed = t0.elapsed();
    let done = set.stop();
    let perf = counters.map(super::perf::ProcessCounters::finish);
    warnings.extend(done.warnings);
    let by_signal = signals::received().is_some();
    let status = if all_ended {
        Status::Failed
    } else if duration.is_some() && !by_signal {
        Status::Complete
    } else {
        Status::Interrupted
    };
    let mut metrics = BTreeMap::new();
    for r in &done.records {
        for key in [
            "ops_per_s",
            "mb_per_s",
            "cpu_pct_per_worker",
            "minor_faults_per_s",
        ] {
            if let Some(v) = r.achieved.get(key).and_then(|v| v.as_f64()) {
                *metrics.entry(format!("{}.{key}", r.kind)).or_insert(0.0) += v;
            }
        }
    }
    let mut run = super::new_run(fp, started_at, p.clone());
    run.status = status;
    run.exit_code = if all_ended {
        EXIT_SYSTEM
    } else {
        status.exit_code(by_signal, false)
    };
    run.duration_ns = elapsed.as_nanos() as u64;
    run.loads = done.records;
    run.metrics = metrics;
    run.perf = perf;
    run.warnings = warnings;
    Ok(run)
}

impl super::Step for Params {
    fn kind(&self) -> &'static Kind {
        &KIND
    }

    /// [`Params::plan`], and whether this machine can carry the loads
    /// (memory, free space for io).
    fn check_plan(&self, _m: &Machine) -> Result<()> {
        let plan = self.plan()?;
        guard::check(&plan.specs).map_err(|e| bad_flag("--load", format!("{e:#}")))?;
        Ok(())
    }

    fn options(&self) -> Options<'_> {
        Options {
            perf: Some(&self.perf),
            ..Options::default()
        }
    }

    fn planned_ns(&self) -> Option<u64> {
        self.duration.as_ref()?.get()
    }

    fn measure(&self, obs: &mut dyn Observer) -> Result<Run> {
        measure(self, obs)
    }

    /// The real-time scheduling its workers need, and the key that asks for it.
    fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        let p = self.place.placement().ok()?;
        (p.policy.is_realtime() && p.priority > 0).then_some((p.policy, p.priority, "load_policy"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BadValue;
    use crate::step::Step as _;
    use serde_json::json;

    fn params(v: serde_json::Value) -> Params {
        match KIND
            .probe
            .unwrap()
            .params(v.as_object().unwrap().clone())
            .unwrap()
        {
            super::super::Params::Load(p) => p,
            other => panic!("not a load step: {other:?}"),
        }
    }

    #[test]
    fn params_survive_a_round_trip() {
        let all = params(json!({
            "load": ["cpu:2", "vm"], "workers": 3, "duration": "10s", "method": "int",
            "cpu_load": "60%", "bytes": 1048576, "keep": true, "dir": "/tmp",
            "root": "/usr", "force": true, "load_cpus": [0], "load_nice": 5,
            "load_policy": "batch",
        }));
        assert_eq!(all.bytes.as_ref().map(|v| v.text()), Some("1048576"));
        assert_eq!(all.place.load_cpus.as_ref().map(|v| v.text()), Some("0"));
        for p in [all, Params::default(), params(json!({"load": "dohell"}))] {
            let tagged = super::super::Params::Load(p);
            let text = serde_json::to_string(&tagged).unwrap();
            let back: super::super::Params = serde_json::from_str(&text).unwrap();
            assert_eq!(back, tagged, "{text}");
        }
    }

    #[test]
    fn its_keys_are_its_flags_and_the_loads() {
        let mut keys = KIND.probe.unwrap().keys();
        keys.sort();
        let mut want = [
            "load",
            "workers",
            "duration",
            "method",
            "cpu_load",
            "cpu_load_slice",
            "bytes",
            "keep",
            "dir",
            "root",
            "force",
            "load_cpus",
            "load_nice",
            "load_policy",
            "perf",
        ];
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(super::super::probe("load"), KIND.probe.as_ref());
        assert_eq!(KIND.probe.unwrap().required, ["load"]);
    }

    #[test]
    fn flags_become_keys_of_each_spec() {
        let p = params(json!({"load": ["cpu", "msg"], "workers": 2, "keep": true}));
        assert_eq!(p.spec_text("cpu").unwrap(), "cpu workers=2 keep");
        let p = params(json!({
            "load": "cpu", "method": "matrixprod", "cpu_load": "50%", "cpu_load_slice": "20ms"
        }));
        assert_eq!(
            p.spec_text("cpu").unwrap(),
            "cpu method=matrixprod load=50% slice=20ms"
        );
        assert!(p.plan().is_ok());
        let p = params(json!({"load": "exec:sleep 1", "workers": 2}));
        assert_eq!(p.spec_text("exec:sleep 1").unwrap(), "exec:2:sleep 1");
        let p = params(json!({"load": "exec:sleep 1", "method": "int"}));
        let e = p.plan().err().unwrap().to_string();
        assert!(e.starts_with("exec takes only --workers"), "{e}");
        let p = params(json!({"load": ["cpu:2", "fswalk"], "duration": "2s"}));
        let plan = p.plan().unwrap();
        assert_eq!(plan.specs.len(), 2);
        assert_eq!(plan.duration, Some(Duration::from_secs(2)));
        assert_eq!(p.planned_ns(), Some(2_000_000_000));
    }

    #[test]
    fn refusals_name_the_flag() {
        for (v, flag) in [
            (json!({}), "--load"),
            (json!({"load": "none"}), "--load"),
            (json!({"load": "cpux"}), "--load"),
            (json!({"load": "cpu", "method": "fast"}), "--load"),
            (json!({"load": "cpu", "method": "a b"}), "--method"),
            (json!({"load": "cpu", "cpu_load": "6 0%"}), "--cpu-load"),
            (json!({"load": "cpu", "duration": "soon"}), "--duration"),
            (json!({"load": "cpu", "load_nice": 40}), "--load-nice"),
            (
                json!({"load": "cpu", "load_policy": "fifo"}),
                "--load-policy",
            ),
        ] {
            let e = params(v.clone()).check(&Machine::this()).unwrap_err();
            let bad = e
                .downcast_ref::<BadValue>()
                .unwrap_or_else(|| panic!("{v}: {e}"));
            assert_eq!(bad.flag, flag, "{v}: {e}");
        }
    }

    #[test]
    fn realtime_workers_are_a_need() {
        let p = params(json!({"load": "cpu", "load_policy": "fifo:10"}));
        assert_eq!(p.rt_need(), Some((Policy::Fifo, 10, "load_policy")));
        assert_eq!(params(json!({"load": "cpu"})).rt_need(), None);
    }
}
