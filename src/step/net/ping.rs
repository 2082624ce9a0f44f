//! The client side of a net run: asks the server for its settings, then times
//! request/echo round trips on a fixed schedule under the step's loads.

use super::{lock_memory, settings_map, setup_error, Params, Plan, Reached};
use crate::error::{SystemError, EXIT_SYSTEM};
use crate::record::{self, Counters, LoadRecord, Run, Series, Status, Warning};
use crate::step::{Machine, Observer};
use crate::system;
use crate::units::Human;
use anyhow::Result;
use rtlab_engine::probe::net::client::{self, PingEnd, PingOutcome, SetupError, TimeStats};
use rtlab_engine::probe::net::transport::{NetError, TcpTransport, Transport, UdpTransport};
use rtlab_engine::rt::clock::{ClockId, SystemClock};
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::{mem, signals};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Payload room of the settings request: the most the server's answer may carry.
const INFO_ROOM: u16 = 1024;

/// Asks the server for its settings; an error here means nothing answers.
fn server_settings<T: Transport>(
    t: &mut T,
    p: &Plan,
    transport: &str,
) -> Result<BTreeMap<String, String>> {
    let clock = SystemClock::new(ClockId::Monotonic);
    let wait = p.cfg.timeout_ns.min(1_000_000_000);
    let mut out = vec![0u8; INFO_ROOM as usize];
    let start = if transport == "tcp" {
        "rtlab net serve --tcp"
    } else {
        "rtlab net serve"
    };
    match client::fetch_info(&clock, t, p.cfg.session, INFO_ROOM, 3, wait, &mut out) {
        Ok(n) => Ok(settings_map(&out[..n])),
        Err(NetError::Refused) => Err(SystemError(format!(
            "{}: nothing listens there ({transport} port unreachable); start the server with '{start} --bind {}'",
            p.addr, p.addr
        ))
        .into()),
        Err(NetError::Timeout) => Err(SystemError(format!(
            "{}: no answer within 3 × {} ({transport}); check the host and port, a firewall, that the server runs, and that both sides use --tcp or neither",
            p.addr,
            Human(wait)
        ))
        .into()),
        Err(e) => Err(SystemError(format!("{}: cannot talk to the server: {e:?}", p.addr)).into()),
    }
}

fn connect_error(addr: SocketAddr, transport: &str, e: std::io::Error) -> anyhow::Error {
    SystemError(format!("{addr}: cannot connect ({transport}): {e}")).into()
}

/// Measures: asks the server for its settings, then sends the messages under
/// the loads, and returns the run. The loads start once the server has
/// answered, so they never run for a connection that failed.
pub fn measure(a: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let p = a.plan(&Machine::this())?;
    let transport = a.transport();
    let fp = system::fingerprint();
    let mut warnings = system::fingerprint_warnings(&fp);
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    // Validate the load specs before talking to the server.
    a.load.parse()?;
    let mut loads = Vec::new();
    let (settings, result) = if a.tcp {
        let connect_wait = Duration::from_nanos(p.cfg.timeout_ns.max(1_000_000));
        let mut t = TcpTransport::connect(p.addr, connect_wait)
            .map_err(|e| connect_error(p.addr, transport, e))?;
        let s = server_settings(&mut t, &p, transport)?;
        (s, send(&p, t, a, obs, &mut warnings, &mut loads))
    } else {
        let mut t =
            UdpTransport::connect(p.addr).map_err(|e| connect_error(p.addr, transport, e))?;
        let s = server_settings(&mut t, &p, transport)?;
        (s, send(&p, t, a, obs, &mut warnings, &mut loads))
    };
    let outcome = result?.map_err(|e| setup_error(e, &p.setup))?;
    if p.setup.policy != Policy::Fifo {
        warnings.push(Warning::new(
            "not_realtime",
            "the client runs SCHED_OTHER: its own scheduling delays are part of the times (use --priority)",
        ));
    }
    if p.cfg.busy_wait && p.setup.policy == Policy::Fifo {
        warnings.push(Warning::new(
            "busy_wait_rt",
            "--busy-wait at SCHED_FIFO kept the client's CPU fully busy: other work there ran only in the RT throttling reserve",
        ));
    }
    if settings.get("policy").map(String::as_str) == Some("other") {
        warnings.push(Warning::new(
            "server_not_realtime",
            "the server runs SCHED_OTHER (start it with --priority to measure an RT server)",
        ));
    }
    let by_signal = signals::received().is_some() || stop.load(Ordering::Relaxed);
    let status = match outcome.end {
        PingEnd::Done => Status::Complete,
        PingEnd::Stopped => Status::Interrupted,
        PingEnd::Closed => {
            warnings.push(Warning::new(
                "connection_closed",
                "the server closed the TCP connection: the remaining messages were not sent",
            ));
            Status::Failed
        }
        PingEnd::ClockError(e) => {
            warnings.push(Warning::new(
                "clock",
                format!("the kernel refused to sleep on the monotonic clock: {e:?}"),
            ));
            Status::Failed
        }
    };
    let st = &outcome.stats;
    if st.lost > 0 {
        warnings.push(Warning::new(
            "losses",
            format!(
                "{} of {} messages lost (no full answer within {}): they count as deadline misses",
                st.lost,
                st.sent,
                Human(p.cfg.timeout_ns)
            ),
        ));
    }
    let threshold_failed = p
        .max_latency_ns
        .is_some_and(|l| st.total.moments.count > 0 && st.total.moments.max > l || st.lost > 0);
    let mut exit_code = status.exit_code(by_signal, threshold_failed);
    if status == Status::Failed {
        exit_code = EXIT_SYSTEM;
    }
    let mut recorded = a.clone();
    recorded.reached = Reached {
        address: Some(p.addr.to_string()),
        session: Some(p.cfg.session),
        server: Some(settings),
    };
    let mut run = crate::step::new_run(fp, started_at, recorded);
    run.status = status;
    run.exit_code = exit_code;
    run.duration_ns = outcome.elapsed_ns;
    run.loads = loads;
    run.series = series_of_run(&outcome);
    run.total = Some(total_series(&outcome));
    run.metrics = metrics(&outcome);
    run.warnings = warnings;
    Ok(run)
}

/// Runs the client under its loads, with the memory locked and `obs` watching.
fn send<T: Transport + Send>(
    p: &Plan,
    t: T,
    a: &Params,
    obs: &mut dyn Observer,
    warnings: &mut Vec<Warning>,
    loads: &mut Vec<LoadRecord>,
) -> Result<Result<PingOutcome, SetupError>> {
    let probe_cpus: Vec<Option<usize>> = if p.setup.cpus.is_empty() {
        vec![None]
    } else {
        p.setup.cpus.iter().map(|&c| Some(c)).collect()
    };
    let running = a.load.start(&probe_cpus)?;
    warnings.extend(running.warnings.iter().cloned());
    if a.lock.mlock {
        warnings.extend(lock_memory());
    }
    obs.start(&["net".into()]);
    let r = client::run(
        &p.cfg,
        t,
        &p.setup,
        signals::stop_flag(),
        Duration::from_millis(250),
        &mut |snap| obs.latency(&[snap]),
    );
    obs.end();
    if a.lock.mlock {
        mem::unlock_all();
    }
    let (records, load_warnings) = running.finish();
    loads.extend(records);
    warnings.extend(load_warnings);
    Ok(r)
}

/// A series of the values in `t` with `counters`; nothing else known of it.
pub(crate) fn series_from(name: String, t: &TimeStats, counters: Counters) -> Series {
    Series {
        max_at: (t.moments.count > 0).then_some(t.max_at),
        windows: t.windows.to_data(),
        ..Series::new(name, counters, t.summary(), t.hist.to_data())
    }
}

fn plain_counters(t: &TimeStats) -> Counters {
    Counters {
        samples: t.moments.count,
        deadline_misses: t.misses,
        ..Counters::default()
    }
}

/// One series per leg, then the time spent inside the server.
fn series_of_run(o: &PingOutcome) -> Vec<Series> {
    let st = &o.stats;
    let mut v: Vec<Series> = st
        .legs
        .iter()
        .enumerate()
        .map(|(i, l)| series_from(format!("leg{}", i + 1), l, plain_counters(l)))
        .collect();
    v.push(series_from(
        "server".into(),
        &st.server,
        plain_counters(&st.server),
    ));
    v
}

/// The whole-message series, with one trace point per message.
fn total_series(o: &PingOutcome) -> Series {
    let st = &o.stats;
    let mut s = series_from(
        "message".into(),
        &st.total,
        Counters {
            samples: st.total.moments.count,
            overruns: st.overruns,
            deadline_misses: st.misses,
            overflows: 0,
        },
    );
    s.trace = st.trace.points().to_vec();
    s
}

fn metrics(o: &PingOutcome) -> BTreeMap<String, f64> {
    let st = &o.stats;
    let per_msg = |v: u64| {
        if st.sent > 0 {
            v as f64 / st.sent as f64
        } else {
            0.0
        }
    };
    [
        ("messages_sent", st.sent as f64),
        ("messages_completed", st.completed as f64),
        ("messages_lost", st.lost as f64),
        ("loss_ratio", per_msg(st.lost)),
        ("overruns", st.overruns as f64),
        ("deadline_misses", st.misses as f64),
        ("duplicates", st.duplicates as f64),
        ("reordered", st.reordered as f64),
        ("late_replies", st.late as f64),
        ("foreign_datagrams", st.foreign as f64),
        ("port_unreachable", st.refused as f64),
        ("socket_errors", st.errors as f64),
        ("client_cpu_ns_per_message", per_msg(st.cpu_ns)),
        (
            "start_lag_max_ns",
            if st.start_lag.count > 0 {
                st.start_lag.max as f64
            } else {
                0.0
            },
        ),
        ("start_lag_mean_ns", st.start_lag.mean()),
        (
            "messages_per_s",
            if o.elapsed_ns > 0 {
                st.sent as f64 * 1e9 / o.elapsed_ns as f64
            } else {
                0.0
            },
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}
