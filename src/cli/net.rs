//! `rtlab net serve` and `rtlab net ping`: application response time over the
//! network, with a mock server that separates network jitter from application
//! jitter.

use super::common::{self, Context, OutputArgs, SaveArgs};
use crate::error::{bad_flag, SystemError, EXIT_SYSTEM};
use crate::format::text::live::LiveView;
use crate::format::text::series::{self, Col};
use crate::format::text::table::Table;
use crate::record::{self, Counters, LoadRecord, Run, Series, Status, Warning};
use crate::step::loads::LoadArgs;
use crate::system;
use crate::units::{parse_duration, parse_positive_duration, DefaultUnit, Human, TimeUnit};
use anyhow::Result;
use clap::{Args, Subcommand};
use rtlab_engine::probe::net::client::{
    self, PingConfig, PingEnd, PingOutcome, SetupError, ThreadSetup, TimeStats,
};
use rtlab_engine::probe::net::server::{self, Listener, ServeConfig, ServeEnd, ServerCounters};
use rtlab_engine::probe::net::transport::{self, NetError, TcpTransport, Transport, UdpTransport};
use rtlab_engine::proto::{self, MAX_LEGS, MAX_PAYLOAD};
use rtlab_engine::rt::clock::{Clock, ClockId, SystemClock};
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::{errno_text, mem, signals};
use serde_json::{json, Map, Value};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::Duration;

use rtlab_engine::probe::net::{DEFAULT_PORT, MAX_MESSAGES as MAX_COUNT};
/// Most points in the per-message time series (beyond, points keep block maxima).
const MAX_TRACE_POINTS: usize = 1_000_000;
/// Payload room of the settings request: the most the server's answer may carry.
const INFO_ROOM: u16 = 1024;

/// Application response time over the network: a mock echo server and a client
/// that times request/echo round trips on a fixed schedule.
#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    command: NetCommand,
}

#[derive(Debug, Subcommand)]
enum NetCommand {
    Serve(ServeArgs),
    Ping(PingArgs),
}

/// Run the echo server that `rtlab net ping` measures against.
///
/// Answers valid requests with a reply of the same size; counts and drops anything
/// malformed (never answers it, never crashes on it). Over TCP no client can hold
/// it: one that does not read its answers is dropped, idle ones are closed, and
/// connections beyond --max-clients are refused. Prints a summary when it stops
/// (Ctrl-C, SIGTERM or --duration, within a second whatever the clients do);
/// stopping is its normal end (exit 0). Bare numbers are ms for --delay and
/// --idle-timeout, seconds for --duration.
#[derive(Debug, Args)]
struct ServeArgs {
    /// Address and port to listen on. Listening beyond this host needs an explicit
    /// address such as 0.0.0.0:7700.
    #[arg(long, default_value = "127.0.0.1:7700", value_name = "ADDR:PORT")]
    bind: String,
    /// Serve request/response over TCP connections instead of UDP datagrams.
    #[arg(long)]
    tcp: bool,
    /// Serve with SCHED_FIFO at this priority (1-99; default: SCHED_OTHER).
    #[arg(short, long, value_name = "PRIO")]
    priority: Option<i32>,
    /// Pin the serving threads to these CPUs (e.g. 1 or 2-3).
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Ask the kernel to busy-poll the device queue this long before sleeping on a
    /// receive (SO_BUSY_POLL; default 50us when given without a value).
    #[arg(long, value_name = "DUR", num_args = 0..=1, default_missing_value = "50us")]
    busy_poll: Option<String>,
    /// Add this much processing time to every request (for testing the client).
    #[arg(long, default_value = "0", value_name = "DUR")]
    delay: String,
    /// Stop after this long (default: until Ctrl-C or SIGTERM).
    #[arg(short = 'D', long, value_name = "DUR")]
    duration: Option<String>,
    /// Most TCP clients served at once; more are accepted and closed at once
    /// (counted as refused).
    #[arg(
        long,
        alias = "max-connections",
        default_value_t = 256,
        value_name = "N"
    )]
    max_clients: usize,
    /// Close a TCP connection that sends no complete request for this long.
    #[arg(long, default_value = "60s", value_name = "DUR")]
    idle_timeout: String,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Time request/echo round trips to an `rtlab net serve` on a fixed schedule.
///
/// Every --period a message starts (absolute schedule: a slow message does not
/// delay later ones; slots it overran are counted as overruns), made of
/// --round-trips request/echo exchanges. The whole message and each leg are timed;
/// a message not fully answered within --timeout is lost. Bare numbers are ms.
#[derive(Debug, Args)]
struct PingArgs {
    /// The server, HOST:PORT or HOST (port 7700).
    #[arg(value_name = "HOST:PORT")]
    target: String,
    /// Time between message starts.
    #[arg(long, default_value = "30ms", value_name = "DUR")]
    period: String,
    /// Request/echo exchanges per message (1-32).
    #[arg(long, default_value_t = 4, value_name = "N")]
    round_trips: u32,
    /// Messages to send.
    #[arg(short = 'n', long, default_value_t = 1000, value_name = "N")]
    count: u64,
    /// Send for this long instead: --count becomes duration ÷ period (bare
    /// number: s).
    #[arg(short = 'D', long, value_name = "DUR", conflicts_with = "count")]
    duration: Option<String>,
    /// Payload bytes per request, after the 40-byte header (0-16384).
    #[arg(long, default_value = "64", value_name = "BYTES")]
    payload: String,
    /// A message not fully answered this long after it started is lost.
    #[arg(long, default_value = "1s", value_name = "DUR")]
    timeout: String,
    /// A message taking longer than this is a deadline miss (default: the period).
    #[arg(long, value_name = "DUR")]
    deadline: Option<String>,
    /// Exit 1 if a message takes longer than this or is lost (CI gate).
    #[arg(long, value_name = "DUR")]
    max_latency: Option<String>,
    /// Run the client with SCHED_FIFO at this priority (1-99; default SCHED_OTHER).
    #[arg(short, long, value_name = "PRIO")]
    priority: Option<i32>,
    /// Pin the client thread to these CPUs.
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Talk to a server started with --tcp, over one TCP connection.
    #[arg(long)]
    tcp: bool,
    /// Spin on the clock until each message is due instead of sleeping (as
    /// sockperf does): no wake-up cost in the first leg, but a whole CPU is busy.
    #[arg(long)]
    busy_wait: bool,
    /// Lock all memory (mlockall) while measuring; --mlock=false to skip.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    mlock: bool,
    #[command(flatten)]
    load: LoadArgs,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    save: SaveArgs,
}

/// Runs `rtlab net ...`.
pub fn run(ctx: &Context, a: NetArgs) -> Result<i32> {
    match a.command {
        NetCommand::Serve(s) => serve(s),
        NetCommand::Ping(p) => ping(ctx, p),
    }
}

fn ms_or_unit(flag: &str, text: &str) -> Result<u64> {
    parse_positive_duration(text, DefaultUnit::Millis).map_err(|e| bad_flag(flag, e))
}

/// The thread setup from --priority and --cpus.
fn thread_setup(priority: Option<i32>, cpus: Option<&str>) -> Result<ThreadSetup> {
    let (policy, priority) = match priority {
        None => (Policy::Other, 0),
        Some(p) if (1..=99).contains(&p) => (Policy::Fifo, p),
        Some(p) => {
            return Err(bad_flag(
                "--priority",
                format!("{p} is outside 1-99 (SCHED_FIFO); leave it out for SCHED_OTHER"),
            ))
        }
    };
    let cpus = match cpus {
        Some(list) => {
            let l = CpuList::parse(list).map_err(|e| bad_flag("--cpus", e))?;
            if l.is_empty() {
                return Err(bad_flag("--cpus", "the list is empty"));
            }
            l.cpus().to_vec()
        }
        None => Vec::new(),
    };
    Ok(ThreadSetup {
        cpus,
        policy,
        priority,
    })
}

/// Turns a refused thread setup into the error a user can act on.
fn setup_error(e: SetupError, setup: &ThreadSetup) -> anyhow::Error {
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

/// Locks memory when asked, returning a warning when the kernel refuses.
fn lock_memory(want: bool) -> Option<Warning> {
    let errno = mem::lock_all().err().filter(|_| want)?;
    Some(Warning::new(
        "mlock",
        format!(
            "mlockall failed ({}): page faults may add latency (raise 'ulimit -l' or LimitMEMLOCK=)",
            errno_text(errno)
        ),
    ))
}

fn serve(a: ServeArgs) -> Result<i32> {
    let bind: SocketAddr = a.bind.parse().map_err(|_| {
        bad_flag(
            "--bind",
            format!(
                "'{}' is not ADDR:PORT (write e.g. 127.0.0.1:{DEFAULT_PORT}, 0.0.0.0:{DEFAULT_PORT} or [::]:{DEFAULT_PORT})",
                a.bind
            ),
        )
    })?;
    let setup = thread_setup(a.priority, a.cpus.as_deref())?;
    let delay_ns =
        parse_duration(&a.delay, DefaultUnit::Millis).map_err(|e| bad_flag("--delay", e))?;
    let duration_ns = match &a.duration {
        Some(d) => parse_positive_duration(d, DefaultUnit::Seconds)
            .map_err(|e| bad_flag("--duration", e))?,
        None => 0,
    };
    let idle_timeout_ns = ms_or_unit("--idle-timeout", &a.idle_timeout)?;
    let busy_poll_us = a
        .busy_poll
        .as_deref()
        .map(|b| {
            let ns = parse_positive_duration(b, DefaultUnit::Micros)
                .map_err(|e| bad_flag("--busy-poll", e))?;
            u32::try_from(ns / 1000)
                .ok()
                .filter(|&us| us >= 1)
                .ok_or_else(|| bad_flag("--busy-poll", format!("'{b}' must be between 1us and 1h")))
        })
        .transpose()?;
    check_max_clients(a.max_clients, server::open_file_limit())?;
    let transport = if a.tcp { "tcp" } else { "udp" };
    let bind_error = |e: std::io::Error| -> anyhow::Error {
        let hint = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                " (another server uses this port: stop it or pick another port)"
            }
            std::io::ErrorKind::PermissionDenied => " (ports below 1024 need root)",
            std::io::ErrorKind::AddrNotAvailable => " (no interface of this host has that address)",
            _ => "",
        };
        SystemError(format!(
            "--bind {bind}: cannot listen ({transport}): {e}{hint}"
        ))
        .into()
    };
    let listener = if a.tcp {
        Listener::Tcp(TcpListener::bind(bind).map_err(bind_error)?)
    } else {
        Listener::Udp(UdpSocket::bind(bind).map_err(bind_error)?)
    };
    let local = match &listener {
        Listener::Tcp(l) => l.local_addr()?,
        Listener::Udp(s) => s.local_addr()?,
    };
    let mut notes = Vec::new();
    if let Some(us) = busy_poll_us {
        let r = match &listener {
            Listener::Tcp(l) => transport::set_busy_poll(l, us),
            Listener::Udp(s) => transport::set_busy_poll(s, us),
        };
        if let Err(errno) = r {
            notes.push(format!(
                "--busy-poll: SO_BUSY_POLL refused ({}): serving without busy polling",
                errno_text(errno)
            ));
        }
    }
    if setup.policy == Policy::Fifo {
        notes.extend(lock_memory(true).map(|w| w.message));
    }
    let fp = system::fingerprint();
    let mut info = vec![
        ("transport", transport.to_string()),
        ("bind", local.to_string()),
        ("policy", setup.policy.name().to_string()),
        ("priority", setup.priority.to_string()),
        ("cpus", CpuList::from_cpus(setup.cpus.clone()).to_string()),
        ("delay_ns", delay_ns.to_string()),
        ("busy_poll_us", busy_poll_us.unwrap_or(0).to_string()),
        ("hostname", fp.hostname.clone()),
        ("kernel", fp.kernel_release.clone()),
        ("preempt", fp.preempt.name().to_string()),
        ("rtlab_version", env!("CARGO_PKG_VERSION").to_string()),
    ];
    if a.tcp {
        info.push(("max_clients", a.max_clients.to_string()));
        info.push(("idle_timeout_ns", idle_timeout_ns.to_string()));
    }
    let info = info
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect::<String>()
        .into_bytes();
    let cfg = ServeConfig {
        delay_ns,
        duration_ns,
        setup: setup.clone(),
        info,
        max_clients: a.max_clients,
        idle_timeout_ns,
    };
    let stop = signals::install();
    let counters = ServerCounters::default();
    eprintln!(
        "rtlab net serve: listening on {local} ({transport}), {} {}{}; stop with Ctrl-C",
        setup.policy.name(),
        setup.priority,
        if delay_ns > 0 {
            format!(", delay {}", Human(delay_ns))
        } else {
            String::new()
        }
    );
    if !local.ip().is_loopback() {
        eprintln!(
            "rtlab net serve: note: {local} is reachable from other hosts; anyone there may send requests (they are answered, never amplified)"
        );
    }
    for n in &notes {
        eprintln!("rtlab net serve: warning: {n}");
    }
    let started = SystemClock::new(ClockId::Monotonic).now();
    let end =
        server::serve(&listener, &cfg, &counters, stop).map_err(|e| setup_error(e, &setup))?;
    let elapsed = SystemClock::new(ClockId::Monotonic)
        .now()
        .saturating_sub(started);
    let s = counters.summary();
    let how = match end {
        ServeEnd::Stopped => "stopped",
        ServeEnd::DurationDone => "duration done",
    };
    if a.json {
        let doc = json!({
            "format": record::FORMAT,
            "kind": "net.serve",
            "bind": local.to_string(),
            "transport": transport,
            "ended": how,
            "elapsed_ns": elapsed,
            "settings": settings_map(&cfg.info),
            "summary": s,
            "rejected_total": s.rejected_total(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let mut t = Table::new(&["counter", "value"]);
        let mut row = |k: &str, v: u64| t.row(vec![k.to_string(), v.to_string()]);
        row("served", s.served);
        row("info requests", s.info);
        row("rejected", s.rejected_total());
        for (reason, n) in s.rejected.iter().filter(|(_, n)| *n > 0) {
            row(&format!("  {reason}"), *n);
        }
        row("bytes in", s.bytes_in);
        row("bytes out", s.bytes_out);
        if a.tcp {
            row("connections", s.connections);
            row("connections refused", s.connections_refused);
            row("connections peak", s.connections_peak);
            row("idle closed", s.idle_closed);
            row("slow readers dropped", s.slow_readers_dropped);
        }
        row("socket errors", s.io_errors);
        print!(
            "rtlab net serve {local} ({transport}) {how} after {}\n{}",
            Human(elapsed),
            t.render()
        );
    }
    Ok(0)
}

/// Descriptors the server keeps for itself besides its clients' (stdio, the
/// listener, the ones the libraries open).
const SPARE_FDS: u64 = 16;

/// Refuses a --max-clients the process could not hold open.
fn check_max_clients(n: usize, fd_limit: Option<u64>) -> Result<()> {
    if n == 0 {
        return Err(bad_flag("--max-clients", "must be at least 1"));
    }
    if let Some(limit) = fd_limit.filter(|&l| (n as u64).saturating_add(SPARE_FDS) > l) {
        return Err(bad_flag(
            "--max-clients",
            format!(
                "{n} clients need {} open files, above this process's limit of {limit}; raise it (ulimit -n, LimitNOFILE=) or give a smaller --max-clients",
                (n as u64).saturating_add(SPARE_FDS)
            ),
        ));
    }
    Ok(())
}

/// The validated client plan.
struct PingPlan {
    cfg: PingConfig,
    setup: ThreadSetup,
    addr: SocketAddr,
    max_latency_ns: Option<u64>,
}

fn plan(a: &PingArgs) -> Result<PingPlan> {
    let period_ns = ms_or_unit("--period", &a.period)?;
    let count = match &a.duration {
        Some(d) => (parse_positive_duration(d, DefaultUnit::Seconds)
            .map_err(|e| bad_flag("--duration", e))?
            / period_ns)
            .max(1),
        None => a.count,
    };
    if count == 0 {
        return Err(bad_flag(
            "--count",
            "0 messages measures nothing; give 1 or more",
        ));
    }
    if count > MAX_COUNT {
        return Err(bad_flag(
            if a.duration.is_some() {
                "--duration"
            } else {
                "--count"
            },
            format!(
                "{count} messages is above {MAX_COUNT}; split the measurement into several runs"
            ),
        ));
    }
    if a.round_trips == 0 || a.round_trips > MAX_LEGS as u32 {
        return Err(bad_flag(
            "--round-trips",
            format!("{} is outside 1-{MAX_LEGS}", a.round_trips),
        ));
    }
    let payload = crate::units::parse_size(&a.payload)
        .map_err(|e| bad_flag("--payload", e))
        .and_then(|p| {
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
    let timeout_ns = ms_or_unit("--timeout", &a.timeout)?;
    let deadline_ns = match &a.deadline {
        Some(d) => ms_or_unit("--deadline", d)?,
        None => period_ns,
    };
    let max_latency_ns = a
        .max_latency
        .as_deref()
        .map(|m| ms_or_unit("--max-latency", m))
        .transpose()?;
    let setup = thread_setup(a.priority, a.cpus.as_deref())?;
    let addr =
        rtlab_engine::probe::net::resolve(&a.target).map_err(|e| bad_flag("HOST:PORT", e))?;
    let clock = SystemClock::new(ClockId::Monotonic);
    let session = (clock.now() as u32) ^ std::process::id().rotate_left(16);
    Ok(PingPlan {
        cfg: PingConfig {
            period_ns,
            legs: a.round_trips as u8,
            count,
            payload,
            timeout_ns,
            deadline_ns,
            session,
            trace_points: (count as usize).min(MAX_TRACE_POINTS),
            busy_wait: a.busy_wait,
        },
        setup,
        addr,
        max_latency_ns,
    })
}

/// The server's `key=value` settings as a JSON object.
fn settings_map(info: &[u8]) -> Map<String, Value> {
    proto::parse_info(info)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

/// Asks the server for its settings; an error here means nothing answers.
fn server_settings<T: Transport>(
    t: &mut T,
    p: &PingPlan,
    transport: &str,
) -> Result<Map<String, Value>> {
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

fn ping(ctx: &Context, a: PingArgs) -> Result<i32> {
    let p = plan(&a)?;
    let transport = if a.tcp { "tcp" } else { "udp" };
    let fp = system::fingerprint();
    let mut warnings = system::fingerprint_warnings(&fp);
    let stop = signals::install();
    let started_at = record::now_rfc3339();
    let live = a.out.live();
    // Validate the load specs before talking to the server.
    a.load.parse()?;
    let mut loads = Vec::new();
    let (settings, result) = if a.tcp {
        let connect_wait = Duration::from_nanos(p.cfg.timeout_ns.max(1_000_000));
        let mut t = TcpTransport::connect(p.addr, connect_wait)
            .map_err(|e| connect_error(p.addr, transport, e))?;
        let s = server_settings(&mut t, &p, transport)?;
        (s, measure(&p, t, &a, live, &mut warnings, &mut loads))
    } else {
        let mut t =
            UdpTransport::connect(p.addr).map_err(|e| connect_error(p.addr, transport, e))?;
        let s = server_settings(&mut t, &p, transport)?;
        (s, measure(&p, t, &a, live, &mut warnings, &mut loads))
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
    if settings.get("policy").and_then(Value::as_str) == Some("other") {
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
    let mut run = a.save.new_run(
        "net",
        fp,
        started_at,
        json!({
            "target": a.target,
            "address": p.addr.to_string(),
            "transport": transport,
            "period_ns": p.cfg.period_ns,
            "round_trips": p.cfg.legs,
            "count": p.cfg.count,
            "payload_bytes": p.cfg.payload,
            "message_bytes": proto::HEADER_LEN + p.cfg.payload as usize,
            "timeout_ns": p.cfg.timeout_ns,
            "deadline_ns": p.cfg.deadline_ns,
            "max_latency_ns": p.max_latency_ns,
            "policy": p.setup.policy.name(),
            "priority": p.setup.priority,
            "cpus": CpuList::from_cpus(p.setup.cpus.clone()).to_string(),
            "mlock": a.mlock,
            "session": p.cfg.session,
            "trace_points": p.cfg.trace_points,
            "busy_wait": p.cfg.busy_wait,
            "server": settings,
        }),
    );
    run.status = status;
    run.exit_code = exit_code;
    run.duration_ns = outcome.elapsed_ns;
    run.loads = loads;
    run.series = series_of_run(&outcome);
    run.total = Some(total_series(&outcome));
    run.metrics = metrics(&outcome);
    run.warnings = warnings;
    let unit = a.out.unit;
    common::finish(ctx, &a.save, &a.out, &mut run, |r| render(r, unit))
}

/// Runs the client under its loads, with the memory locked and the live view
/// drawn. The loads start once the server has answered, so they never run for a
/// connection that failed.
fn measure<T: Transport + Send>(
    p: &PingPlan,
    t: T,
    a: &PingArgs,
    live: bool,
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
    if a.mlock {
        warnings.extend(lock_memory(true));
    }
    let mut view = live.then(|| LiveView::new(vec!["net".into()], a.out.unit));
    let r = client::run(
        &p.cfg,
        t,
        &p.setup,
        signals::stop_flag(),
        Duration::from_millis(250),
        &mut |snap| {
            if let Some(v) = view.as_mut() {
                v.draw(&[snap]);
            }
        },
    );
    if let Some(v) = view.as_mut() {
        v.clear();
    }
    if a.mlock {
        mem::unlock_all();
    }
    let (records, load_warnings) = running.finish();
    loads.extend(records);
    warnings.extend(load_warnings);
    Ok(r)
}

fn series_from(name: String, t: &TimeStats, counters: Counters) -> Series {
    Series {
        name,
        thread: None,
        cpu: None,
        tid: None,
        interval_ns: None,
        counters,
        summary: t.summary(),
        max_at: (t.moments.count > 0).then_some(t.max_at),
        histogram: t.hist.to_data(),
        us_histogram: None,
        trace: Vec::new(),
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

fn metrics(o: &PingOutcome) -> std::collections::BTreeMap<String, f64> {
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

/// The text report of a net run.
fn render(run: &Run, unit: TimeUnit) -> String {
    let p = &run.params.to_value();
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0) as u64;
    let server = &p["server"];
    let server_setting = |k: &str| server[k].as_str().unwrap_or("?").to_string();
    let mut out = format!(
        "rtlab net ping {} ({})  {}  [{}]\n",
        p["address"].as_str().unwrap_or("?"),
        p["transport"].as_str().unwrap_or("?"),
        run.label,
        run.status.name()
    );
    out.push_str(&format!(
        "{} messages every {}, {} round trip(s) of {} bytes each; client {} {}, server {} {} on {} ({})\n",
        p["count"],
        Human(p["period_ns"].as_u64().unwrap_or(0)),
        p["round_trips"],
        p["message_bytes"],
        p["policy"].as_str().unwrap_or("?"),
        p["priority"],
        server_setting("policy"),
        server_setting("priority"),
        server_setting("hostname"),
        server_setting("kernel"),
    ));
    out.push_str(&format!(
        "sent {}, answered {}, lost {}, overruns {}, deadline misses {} (deadline {}), duplicates {}, reordered {}, late {}\n\n",
        m("messages_sent"),
        m("messages_completed"),
        m("messages_lost"),
        m("overruns"),
        m("deadline_misses"),
        Human(p["deadline_ns"].as_u64().unwrap_or(0)),
        m("duplicates"),
        m("reordered"),
        m("late_replies"),
    ));
    let cols = [
        Col::Count("samples"),
        Col::Min,
        Col::Mean,
        Col::P50,
        Col::P90,
        Col::P99,
        Col::P999,
        Col::Max,
        Col::Stddev,
        Col::Misses,
    ];
    out.push_str(&series::table(
        run.series.iter().chain(&run.total),
        "series",
        &cols,
        unit,
    ));
    out.push_str(&format!(
        "(times in {}; legN: one round trip; server: time inside the server per message; message: all round trips)\n",
        unit.symbol()
    ));
    out.push_str(&format!(
        "client CPU per message {}, start lag max {}\n",
        Human(m("client_cpu_ns_per_message")),
        Human(m("start_lag_max_ns"))
    ));
    if let Some(limit) = p["max_latency_ns"].as_u64() {
        let max = run.total.as_ref().map(|t| t.summary.max_ns).unwrap_or(0);
        let lost = m("messages_lost");
        let verdict = if max > limit || lost > 0 {
            "FAIL"
        } else {
            "PASS"
        };
        out.push_str(&format!(
            "\nmax-latency {}: {verdict} (observed max {}, {lost} lost)\n",
            Human(limit),
            Human(max)
        ));
    }
    if !run.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &run.warnings {
            out.push_str(&format!("  ! {}: {}\n", w.code, w.message));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_clients_must_fit_the_open_file_limit() {
        assert!(check_max_clients(256, Some(1024)).is_ok());
        assert!(check_max_clients(256, None).is_ok());
        assert!(check_max_clients(0, None).is_err());
        let e = check_max_clients(1020, Some(1024)).unwrap_err().to_string();
        assert!(e.contains("ulimit -n"), "{e}");
    }

    #[test]
    fn priority_and_cpus_are_checked() {
        assert_eq!(thread_setup(None, None).unwrap().policy, Policy::Other);
        let s = thread_setup(Some(80), Some("0")).unwrap();
        assert_eq!((s.policy, s.priority, s.cpus), (Policy::Fifo, 80, vec![0]));
        assert!(thread_setup(Some(0), None).is_err());
        assert!(thread_setup(Some(100), None).is_err());
        assert!(thread_setup(None, Some("x")).is_err());
    }
}
