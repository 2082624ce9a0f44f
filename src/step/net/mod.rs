//! Application response time over the network (`rtlab net ping`, scenario
//! probe `net`) and the mock echo server it measures against (`rtlab net serve`,
//! [`serve`]), which separates network jitter from application jitter.

mod ping;
pub mod serve;

pub use ping::measure;
pub(crate) use ping::series_from;

use super::loads::LoadArgs;
use super::rt::{check_priority, MlockArgs, Options};
use super::value::{opt_positive, Cpus, Dur, Ms, Sec, Size};
use super::{Kind, Machine, View};
use crate::error::{bad_flag, SystemError};
use crate::record::{Better, RunParams, Warning};
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::net::client::{PingConfig, SetupError, ThreadSetup};
use rtlab_engine::probe::net::MAX_MESSAGES;
use rtlab_engine::proto::{self, MAX_LEGS, MAX_PAYLOAD};
use rtlab_engine::rt::clock::{Clock, ClockId, SystemClock};
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::{errno_text, mem};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The parameters of the network round-trip probe: `rtlab net ping` flags and
/// the keys of a `net` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(mut_arg("mlock", |a| a.short(None).help(
        "Lock all memory (mlockall) while measuring; --mlock=false to skip"
    )))]
pub struct Params {
    /// The server, HOST:PORT or HOST (port 7700).
    #[arg(value_name = "HOST:PORT")]
    pub target: Option<String>,
    /// Time between message starts (a bare number is ms).
    #[arg(long, default_value = "30ms", value_name = "DUR")]
    pub period: Dur<Ms>,
    /// Request/echo exchanges per message (1-32).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub round_trips: u32,
    /// Messages to send.
    #[arg(short = 'n', long, default_value_t = 1000, value_name = "N")]
    pub count: u64,
    /// Send for this long instead: --count becomes duration ÷ period (a bare
    /// number is seconds) [default: --count messages].
    #[arg(short = 'D', long, value_name = "DUR", conflicts_with = "count")]
    pub duration: Option<Dur<Sec>>,
    /// Payload bytes per request, after the 40-byte header (0-16384; e.g. 64, 1K).
    #[arg(long, default_value = "64", value_name = "BYTES")]
    pub payload: Size,
    /// A message not fully answered this long after it started is lost (a bare
    /// number is ms).
    #[arg(long, default_value = "1s", value_name = "DUR")]
    pub timeout: Dur<Ms>,
    /// A message taking longer than this is a deadline miss (a bare number is ms)
    /// [default: the period].
    #[arg(long, value_name = "DUR")]
    pub deadline: Option<Dur<Ms>>,
    /// Exit 1 if a message takes longer than this or is lost (CI gate; a bare
    /// number is ms) [default: no gate].
    #[arg(long, value_name = "DUR")]
    pub max_latency: Option<Dur<Ms>>,
    /// Run the client with SCHED_FIFO at this priority (1-99) [default:
    /// SCHED_OTHER].
    #[arg(short, long, value_name = "PRIO")]
    pub priority: Option<i32>,
    /// Pin the client thread to these CPUs (e.g. 1 or 2-3) [default: not pinned].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<Cpus>,
    /// Talk to a server started with --tcp, over one TCP connection.
    #[arg(long)]
    pub tcp: bool,
    /// Spin on the clock until each message is due instead of sleeping (as
    /// sockperf does): no wake-up cost in the first leg, but a whole CPU is busy.
    #[arg(long)]
    pub busy_wait: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub lock: MlockArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
    /// Start an `rtlab net serve` on the target for the step (campaign runner).
    #[arg(skip)]
    pub local_server: bool,
    /// SCHED_FIFO priority of that server (1-99; none: SCHED_OTHER).
    #[arg(skip)]
    pub server_priority: Option<i32>,
    /// What the run found at the target; recorded with the parameters, never given.
    #[arg(skip)]
    #[serde(flatten)]
    pub reached: Reached,
}

/// The server a run talked to, recorded with its parameters (as rtlab has
/// always recorded it), so that runs compare on both ends' settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    /// The target resolved: the address the requests went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The session id the requests carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    /// The server's settings as it reported them (`transport`, `bind`,
    /// `policy`, `priority`, `cpus`, `hostname`, `kernel`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<BTreeMap<String, String>>,
}

/// Net runs: the round trips of messages to a server.
pub const KIND: Kind = Kind::probe::<Params>("net", "duration")
    .requiring(&["target"])
    .with_shorthand(priority_zero_is_none)
    .command("net ping")
    .view(View::Net)
    .metrics(&[
        ("messages_per_s", Better::Higher),
        ("messages_lost", Better::Lower),
        ("*cpu_ns_per*", Better::Lower),
    ]);

/// In a scenario, `priority = 0` (and `server_priority = 0`) means no RT
/// priority: the thread runs SCHED_OTHER, as without the key.
fn priority_zero_is_none(values: &mut Map<String, Value>) {
    for key in ["priority", "server_priority"] {
        if values.get(key) == Some(&Value::from(0)) {
            values.remove(key);
        }
    }
}

/// When and how the messages go: everything a run asks that needs neither the
/// network nor this machine.
struct Schedule {
    period_ns: u64,
    count: u64,
    legs: u8,
    payload: u16,
    timeout_ns: u64,
    deadline_ns: u64,
    max_latency_ns: Option<u64>,
}

/// The client's configuration and everything else a run needs, validated.
pub struct Plan {
    cfg: PingConfig,
    setup: ThreadSetup,
    addr: SocketAddr,
    max_latency_ns: Option<u64>,
}

/// Most points in the per-message time series (beyond, points keep block maxima).
const MAX_TRACE_POINTS: usize = 1_000_000;

impl Params {
    /// The client's configuration, with every value checked on machine `m` and
    /// the target resolved; a [`BadValue`](crate::error::BadValue) names the
    /// flag of the first value that cannot be used (`HOST:PORT` for the target).
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let s = self.schedule()?;
        let setup = thread_setup(self.priority, self.cpus.as_ref())?;
        if !setup.cpus.is_empty() {
            m.check_cpus("--cpus", &CpuList::from_cpus(setup.cpus.clone()))?;
        }
        if self.local_server {
            if let Some(p) = self.server_priority {
                check_priority("--server-priority", Policy::Fifo, p)?;
            }
        }
        let target = self.target.as_deref().ok_or_else(|| {
            bad_flag(
                "HOST:PORT",
                "no server given; name the host running 'rtlab net serve'",
            )
        })?;
        let addr =
            rtlab_engine::probe::net::resolve(target).map_err(|e| bad_flag("HOST:PORT", e))?;
        let clock = SystemClock::new(ClockId::Monotonic);
        let session = (clock.now() as u32) ^ std::process::id().rotate_left(16);
        Ok(Plan {
            cfg: PingConfig {
                period_ns: s.period_ns,
                legs: s.legs,
                count: s.count,
                payload: s.payload,
                timeout_ns: s.timeout_ns,
                deadline_ns: s.deadline_ns,
                session,
                trace_points: (s.count as usize).min(MAX_TRACE_POINTS),
                busy_wait: self.busy_wait,
            },
            setup,
            addr,
            max_latency_ns: s.max_latency_ns,
        })
    }

    fn schedule(&self) -> Result<Schedule> {
        let period_ns = self.period.positive("--period")?;
        let count = match &self.duration {
            Some(d) => (d.positive("--duration")? / period_ns).max(1),
            None => self.count,
        };
        if count == 0 {
            return Err(bad_flag(
                "--count",
                "0 messages measures nothing; give 1 or more",
            ));
        }
        if count > MAX_MESSAGES {
            return Err(bad_flag(
                if self.duration.is_some() {
                    "--duration"
                } else {
                    "--count"
                },
                format!(
                    "{count} messages is above {MAX_MESSAGES}; split the measurement into several runs"
                ),
            ));
        }
        if self.round_trips == 0 || self.round_trips > u32::from(MAX_LEGS) {
            return Err(bad_flag(
                "--round-trips",
                format!("{} is outside 1-{MAX_LEGS}", self.round_trips),
            ));
        }
        let payload = self.payload.bytes("--payload").and_then(|p| {
            u16::try_from(p)
                .ok()
                .filter(|&p| p as usize <= MAX_PAYLOAD)
                .ok_or_else(|| {
                    bad_flag(
                        "--payload",
                        format!("{p} bytes is above the {MAX_PAYLOAD}-byte limit"),
                    )
                })
        })?;
        let timeout_ns = self.timeout.positive("--timeout")?;
        let deadline_ns = opt_positive("--deadline", &self.deadline)?.unwrap_or(period_ns);
        let max_latency_ns = opt_positive("--max-latency", &self.max_latency)?;
        Ok(Schedule {
            period_ns,
            count,
            legs: self.round_trips as u8,
            payload,
            timeout_ns,
            deadline_ns,
            max_latency_ns,
        })
    }

    fn transport(&self) -> &'static str {
        if self.tcp {
            "tcp"
        } else {
            "udp"
        }
    }
}

/// What a net run was asked, for its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The address it talked to (the target when not recorded, `?` without either).
    pub address: String,
    /// `udp` or `tcp` (`?` when not recorded).
    pub transport: String,
    /// Messages to send.
    pub count: u64,
    /// Time between message starts (ns).
    pub period_ns: u64,
    /// Request/echo exchanges per message.
    pub round_trips: u64,
    /// Bytes of each request, header included.
    pub message_bytes: u64,
    /// The client's policy name (`other`, `fifo`).
    pub policy: String,
    /// The client's priority.
    pub priority: i64,
    /// A message taking longer than this was a deadline miss (ns).
    pub deadline_ns: u64,
    /// The --max-latency gate (ns).
    pub max_latency_ns: Option<u64>,
    /// The server's settings as it reported them.
    pub server: Map<String, Value>,
}

/// What a net run was asked: from its step's parameters, or as recorded by an
/// rtlab from before runs recorded their step's parameters.
pub fn asked(params: &RunParams) -> Asked {
    match params.step() {
        Some(super::Params::Net(p)) => {
            let s = p.schedule().ok();
            let (policy, priority) = thread_setup(p.priority, None)
                .map(|t| (t.policy, t.priority))
                .unwrap_or((Policy::Other, 0));
            let reached = &p.reached;
            Asked {
                address: (reached.address.as_ref().or(p.target.as_ref()))
                    .map_or_else(|| "?".into(), String::clone),
                transport: p.transport().into(),
                count: s.as_ref().map_or(0, |s| s.count),
                period_ns: s.as_ref().map_or(0, |s| s.period_ns),
                round_trips: u64::from(p.round_trips),
                message_bytes: s.as_ref().map_or(0, |s| u64::from(s.payload))
                    + proto::HEADER_LEN as u64,
                policy: policy.name().into(),
                priority: i64::from(priority),
                deadline_ns: s.as_ref().map_or(0, |s| s.deadline_ns),
                max_latency_ns: s.and_then(|s| s.max_latency_ns),
                server: reached
                    .server
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            }
        }
        _ => {
            let other = params;
            let text = |k: &str| other.recorded(k).as_str().unwrap_or("?").to_string();
            let num = |k: &str| other.recorded(k).as_u64().unwrap_or(0);
            Asked {
                address: text("address"),
                transport: text("transport"),
                count: num("count"),
                period_ns: num("period_ns"),
                round_trips: num("round_trips"),
                message_bytes: num("message_bytes"),
                policy: text("policy"),
                priority: other.recorded("priority").as_i64().unwrap_or(0),
                deadline_ns: num("deadline_ns"),
                max_latency_ns: other.recorded("max_latency_ns").as_u64(),
                server: other
                    .recorded("server")
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            }
        }
    }
}

/// The thread setup from --priority and --cpus.
fn thread_setup(priority: Option<i32>, cpus: Option<&Cpus>) -> Result<ThreadSetup> {
    let (policy, priority) = match priority {
        None => (Policy::Other, 0),
        Some(p) => (Policy::Fifo, p),
    };
    check_priority("--priority", policy, priority)?;
    let cpus = match cpus {
        Some(list) => list.list("--cpus")?.cpus().to_vec(),
        None => Vec::new(),
    };
    Ok(ThreadSetup {
        cpus,
        policy,
        priority,
    })
}

/// Turns a refused thread setup into the error a user can act on.
pub(crate) fn setup_error(e: SetupError, setup: &ThreadSetup) -> anyhow::Error {
    match e {
        SetupError::Affinity(err) => bad_flag(
            "--cpus",
            format!(
                "cannot pin to CPUs {} ({err}): a CPU is offline or outside this process's cpuset",
                CpuList::from_cpus(setup.cpus.clone())
            ),
        ),
        SetupError::Policy(err) if err.is_permission() => SystemError(format!(
            "--priority {}: SCHED_FIFO refused ({err}). Run as root, give the binary \
             CAP_SYS_NICE (setcap cap_sys_nice,cap_ipc_lock+ep), or raise the RT limit \
             (ulimit -r, LimitRTPRIO= in a systemd unit); or leave out --priority",
            setup.priority
        ))
        .into(),
        SetupError::Policy(err) => SystemError(format!(
            "--priority {}: SCHED_FIFO refused ({err}); is RT group scheduling limiting this cgroup?",
            setup.priority
        ))
        .into(),
    }
}

/// Locks all memory, returning a warning when the kernel refuses.
pub(crate) fn lock_memory() -> Option<Warning> {
    let errno = mem::lock_all().err()?;
    Some(Warning::new(
        "mlock",
        format!(
            "mlockall failed ({}): page faults may add latency (raise 'ulimit -l' or LimitMEMLOCK=)",
            errno_text(errno)
        ),
    ))
}

/// The server's `key=value` settings.
fn settings_map(info: &[u8]) -> BTreeMap<String, String> {
    proto::parse_info(info).into_iter().collect()
}

step! {
    fn options(&self) -> Options<'_> {
        Options {
            load: Some(&self.load),
            ..Options::default()
        }
    }

    fn planned_ns(&self) -> Option<u64> {
        self.duration.as_ref()?.get()
    }

    /// The real-time scheduling it needs, and the key that asks for it: the
    /// client's priority, or its local server's when that is higher.
    fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        let server = self.server_priority.filter(|_| self.local_server);
        [(self.priority, "priority"), (server, "server_priority")]
            .into_iter()
            .filter_map(|(p, key)| Some((Policy::Fifo, p.filter(|&p| p > 0)?, key)))
            .max_by_key(|&(_, p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BadValue;
    use crate::step::Step as _;
    use serde_json::json;

    fn machine() -> Machine {
        Machine {
            cpus: vec![0, 1],
            mem_available: 0,
        }
    }

    fn with(values: Value) -> Params {
        match KIND
            .probe
            .unwrap()
            .params(values.as_object().unwrap().clone())
            .unwrap()
        {
            super::super::Params::Net(p) => p,
            other => panic!("{other:?}"),
        }
    }

    fn refused_flag(p: &Params) -> String {
        let e = p.plan(&machine()).err().expect("refused");
        e.downcast_ref::<BadValue>()
            .expect("a BadValue")
            .flag
            .clone()
    }

    #[test]
    fn params_survive_a_round_trip_and_keep_what_was_reached() {
        let mut p = with(json!({
            "target": "127.0.0.1:7700", "period": "2ms", "count": 40, "payload": 100,
            "cpus": [0, 1], "priority": 70, "tcp": true, "load": "cpu:1",
            "local_server": true, "server_priority": 80,
        }));
        assert_eq!(p.payload, "100");
        assert_eq!(p.cpus.as_ref().map(|v| v.text()), Some("0,1"));
        p.reached = Reached {
            address: Some("127.0.0.1:7700".into()),
            session: Some(7),
            server: Some(BTreeMap::from([("policy".into(), "fifo".into())])),
        };
        let tagged = super::super::Params::Net(p);
        let text = serde_json::to_string(&tagged).unwrap();
        assert_eq!(
            serde_json::from_str::<super::super::Params>(&text).unwrap(),
            tagged
        );
        // A stored run reads back as the step's parameters, not as recorded JSON.
        assert_eq!(
            serde_json::from_str::<RunParams>(&text).unwrap(),
            RunParams::Step(Box::new(tagged.clone()))
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (&v["probe"], &v["server"]["policy"]),
            (&json!("net"), &json!("fifo"))
        );
    }

    #[test]
    fn every_scenario_key_is_a_parameter() {
        let keys = KIND.probe.unwrap().keys();
        for k in [
            "target",
            "local_server",
            "server_priority",
            "duration",
            "count",
            "period",
            "round_trips",
            "payload",
            "timeout",
            "deadline",
            "max_latency",
            "priority",
            "cpus",
            "tcp",
            "busy_wait",
            "mlock",
            "load",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
        for recorded in ["address", "session", "server"] {
            assert!(
                !KIND.probe.unwrap().takes(recorded),
                "{recorded} is not given"
            );
        }
        assert_eq!(KIND.probe.unwrap().required, ["target"]);
    }

    #[test]
    fn priority_zero_means_no_rt_priority() {
        let p = with(json!({"target": "h", "priority": 0, "server_priority": 0}));
        assert_eq!((p.priority, p.server_priority), (None, None));
        assert_eq!(p.rt_need(), None);
        let p = with(json!({"target": "h", "priority": 70, "local_server": true,
                            "server_priority": 80}));
        assert_eq!(p.rt_need(), Some((Policy::Fifo, 80, "server_priority")));
        let p = with(json!({"target": "h", "priority": 70, "server_priority": 80}));
        assert_eq!(p.rt_need(), Some((Policy::Fifo, 70, "priority")));
    }

    #[test]
    fn refusals_name_the_flag() {
        let base = json!({"target": "127.0.0.1:9"});
        assert!(with(base.clone()).plan(&machine()).is_ok());
        for (key, value, flag) in [
            ("period", json!("abc"), "--period"),
            ("period", json!("0"), "--period"),
            ("count", json!(0), "--count"),
            ("duration", json!("1000000s"), "--duration"),
            ("round_trips", json!(33), "--round-trips"),
            ("payload", json!("1M"), "--payload"),
            ("timeout", json!("-1s"), "--timeout"),
            ("deadline", json!("0"), "--deadline"),
            ("max_latency", json!("x"), "--max-latency"),
            ("priority", json!(100), "--priority"),
            ("cpus", json!("x"), "--cpus"),
            ("cpus", json!(9), "--cpus"),
            ("target", json!("no-such-host.invalid:7700"), "HOST:PORT"),
        ] {
            let mut v = base.clone();
            v[key] = value;
            assert_eq!(refused_flag(&with(v)), flag, "{key}");
        }
        let mut p = with(json!({"local_server": true, "server_priority": 100}));
        p.target = Some("127.0.0.1:9".into());
        assert_eq!(refused_flag(&p), "--server-priority");
        assert_eq!(refused_flag(&Params::default()), "HOST:PORT");
    }

    #[test]
    fn asked_reads_typed_params_and_older_records() {
        let p = with(json!({"target": "h:1", "period": "2ms", "payload": 100,
                            "priority": 70, "max_latency": "5ms"}));
        let a = asked(&RunParams::Step(Box::new(super::super::Params::Net(p))));
        assert_eq!(
            (
                a.address.as_str(),
                a.transport.as_str(),
                a.count,
                a.period_ns
            ),
            ("h:1", "udp", 1000, 2_000_000)
        );
        assert_eq!((a.message_bytes, a.deadline_ns), (140, 2_000_000));
        assert_eq!((a.policy.as_str(), a.priority), ("fifo", 70));
        assert_eq!(a.max_latency_ns, Some(5_000_000));
        let old = RunParams::Recorded(json!({
            "address": "10.0.0.1:7700", "transport": "tcp", "count": 5, "period_ns": 1000,
            "round_trips": 2, "message_bytes": 104, "policy": "other", "priority": 0,
            "deadline_ns": 1000, "max_latency_ns": null, "server": {"policy": "fifo"},
        }));
        let a = asked(&old);
        assert_eq!(
            (a.address.as_str(), a.transport.as_str()),
            ("10.0.0.1:7700", "tcp")
        );
        assert_eq!((a.count, a.round_trips, a.message_bytes), (5, 2, 104));
        assert_eq!(
            (a.max_latency_ns, &a.server["policy"]),
            (None, &json!("fifo"))
        );
    }

    #[test]
    fn priority_and_cpus_are_checked() {
        assert_eq!(thread_setup(None, None).unwrap().policy, Policy::Other);
        let s = thread_setup(Some(80), Some(&"0".into())).unwrap();
        assert_eq!((s.policy, s.priority, s.cpus), (Policy::Fifo, 80, vec![0]));
        assert!(thread_setup(Some(0), None).is_err());
        assert!(thread_setup(Some(100), None).is_err());
        assert!(thread_setup(None, Some(&"x".into())).is_err());
    }
}
