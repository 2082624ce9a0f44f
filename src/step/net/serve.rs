//! The echo server that `rtlab net ping` measures against (`rtlab net serve`):
//! its options, checked and bound before it serves, and what it counted.

use super::{lock_memory, settings_map, setup_error, thread_setup};
use crate::error::{bad_flag, SystemError};
use crate::record;
use crate::step::value::{opt_positive, Cpus, Dur, Ms, Sec, Us};
use crate::system;
use crate::units::Human;
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::net::client::ThreadSetup;
use rtlab_engine::probe::net::server::{
    self, Listener, ServeConfig, ServeEnd, ServerCounters, ServerSummary,
};
use rtlab_engine::probe::net::transport;
use rtlab_engine::probe::net::DEFAULT_PORT;
use rtlab_engine::rt::clock::{Clock, ClockId, SystemClock};
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::errno_text;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::rt::signals;
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::AtomicBool;

/// The options of `rtlab net serve`.
#[derive(Debug, Clone, Args)]
pub struct Params {
    /// Address and port to listen on. Listening beyond this host needs an explicit
    /// address such as 0.0.0.0:7700.
    #[arg(long, default_value = "127.0.0.1:7700", value_name = "ADDR:PORT")]
    pub bind: String,
    /// Serve request/response over TCP connections instead of UDP datagrams.
    #[arg(long)]
    pub tcp: bool,
    /// Serve with SCHED_FIFO at this priority (1-99) [default: SCHED_OTHER].
    #[arg(short, long, value_name = "PRIO")]
    pub priority: Option<i32>,
    /// Pin the serving threads to these CPUs (e.g. 1 or 2-3) [default: not
    /// pinned].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<Cpus>,
    /// Ask the kernel to busy-poll the device queue this long before sleeping on a
    /// receive (SO_BUSY_POLL; a bare number is µs) [default: off; given alone:
    /// 50us].
    #[arg(long, value_name = "DUR", num_args = 0..=1, default_missing_value = "50us")]
    pub busy_poll: Option<Dur<Us>>,
    /// Add this much processing time to every request, for testing the client (a
    /// bare number is ms).
    #[arg(long, default_value = "0", value_name = "DUR")]
    pub delay: Dur<Ms>,
    /// Stop after this long (a bare number is seconds) [default: until Ctrl-C or
    /// SIGTERM].
    #[arg(short = 'D', long, value_name = "DUR")]
    pub duration: Option<Dur<Sec>>,
    /// Most TCP clients served at once; more are accepted and closed at once
    /// (counted as refused).
    #[arg(
        long,
        alias = "max-connections",
        default_value_t = 256,
        value_name = "N"
    )]
    pub max_clients: usize,
    /// Close a TCP connection that sends no complete request for this long (a
    /// bare number is ms).
    #[arg(long, default_value = "60s", value_name = "DUR")]
    pub idle_timeout: Dur<Ms>,
}

/// A server bound to its address, with its settings, ready to serve.
pub struct Server {
    listener: Listener,
    /// The address it listens on.
    pub local: SocketAddr,
    transport: &'static str,
    cfg: ServeConfig,
    notes: Vec<String>,
    stop: &'static AtomicBool,
}

/// What a server did, once stopped.
pub struct Served {
    /// The address it listened on.
    pub local: SocketAddr,
    /// `udp` or `tcp`.
    pub transport: &'static str,
    /// Why it ended: `stopped` or `duration done`.
    pub ended: &'static str,
    /// How long it served (ns).
    pub elapsed_ns: u64,
    /// The settings it gave its clients, as `key=value` lines.
    info: Vec<u8>,
    /// Its counters.
    pub summary: ServerSummary,
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

impl Params {
    /// The address to bind, checked.
    fn bind_addr(&self) -> Result<SocketAddr> {
        self.bind.parse().map_err(|_| {
            bad_flag(
                "--bind",
                format!(
                    "'{}' is not ADDR:PORT (write e.g. 127.0.0.1:{DEFAULT_PORT}, 0.0.0.0:{DEFAULT_PORT} or [::]:{DEFAULT_PORT})",
                    self.bind
                ),
            )
        })
    }

    /// --busy-poll in whole µs, checked.
    fn busy_poll_us(&self) -> Result<Option<u32>> {
        self.busy_poll
            .as_ref()
            .map(|b| {
                let ns = b.positive("--busy-poll")?;
                u32::try_from(ns / 1000)
                    .ok()
                    .filter(|&us| us >= 1)
                    .ok_or_else(|| {
                        bad_flag("--busy-poll", format!("'{b}' must be between 1us and 1h"))
                    })
            })
            .transpose()
    }
}

/// The settings a server gives its clients, as `key=value` lines.
fn info(
    a: &Params,
    local: SocketAddr,
    setup: &ThreadSetup,
    delay_ns: u64,
    busy_poll_us: u32,
    idle_timeout_ns: u64,
) -> Vec<u8> {
    let fp = system::fingerprint();
    let mut info = vec![
        ("transport", transport_name(a.tcp).to_string()),
        ("bind", local.to_string()),
        ("policy", setup.policy.name().to_string()),
        ("priority", setup.priority.to_string()),
        ("cpus", CpuList::from_cpus(setup.cpus.clone()).to_string()),
        ("delay_ns", delay_ns.to_string()),
        ("busy_poll_us", busy_poll_us.to_string()),
        ("hostname", fp.hostname.clone()),
        ("kernel", fp.kernel_release.clone()),
        ("preempt", fp.preempt.name().to_string()),
        ("rtlab_version", env!("CARGO_PKG_VERSION").to_string()),
    ];
    if a.tcp {
        info.push(("max_clients", a.max_clients.to_string()));
        info.push(("idle_timeout_ns", idle_timeout_ns.to_string()));
    }
    info.iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect::<String>()
        .into_bytes()
}

fn transport_name(tcp: bool) -> &'static str {
    if tcp {
        "tcp"
    } else {
        "udp"
    }
}

impl Server {
    /// Checks the options, binds the address, sets busy polling, locks memory
    /// for an RT server and catches Ctrl-C and SIGTERM, which stop it.
    pub fn open(a: &Params) -> Result<Server> {
        let bind = a.bind_addr()?;
        let setup = thread_setup(a.priority, a.cpus.as_ref())?;
        let delay_ns = a.delay.ns("--delay")?;
        let duration_ns = opt_positive("--duration", &a.duration)?.unwrap_or(0);
        let idle_timeout_ns = a.idle_timeout.positive("--idle-timeout")?;
        let busy_poll_us = a.busy_poll_us()?;
        check_max_clients(a.max_clients, server::open_file_limit())?;
        let transport = transport_name(a.tcp);
        let bind_error = |e: std::io::Error| -> anyhow::Error {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => {
                    " (another server uses this port: stop it or pick another port)"
                }
                std::io::ErrorKind::PermissionDenied => " (ports below 1024 need root)",
                std::io::ErrorKind::AddrNotAvailable => {
                    " (no interface of this host has that address)"
                }
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
            notes.extend(lock_memory().map(|w| w.message));
        }
        let info = info(
            a,
            local,
            &setup,
            delay_ns,
            busy_poll_us.unwrap_or(0),
            idle_timeout_ns,
        );
        Ok(Server {
            listener,
            local,
            transport,
            cfg: ServeConfig {
                delay_ns,
                duration_ns,
                setup,
                info,
                max_clients: a.max_clients,
                idle_timeout_ns,
            },
            notes,
            stop: signals::install(),
        })
    }

    /// What to say before serving: where it listens, then notes and warnings.
    pub fn banner(&self) -> Vec<String> {
        let local = self.local;
        let setup = &self.cfg.setup;
        let mut lines = vec![format!(
            "listening on {local} ({}), {} {}{}; stop with Ctrl-C",
            self.transport,
            setup.policy.name(),
            setup.priority,
            if self.cfg.delay_ns > 0 {
                format!(", delay {}", Human(self.cfg.delay_ns))
            } else {
                String::new()
            }
        )];
        if !local.ip().is_loopback() {
            lines.push(format!(
                "note: {local} is reachable from other hosts; anyone there may send requests (they are answered, never amplified)"
            ));
        }
        lines.extend(self.notes.iter().map(|n| format!("warning: {n}")));
        lines
    }

    /// Serves until stopped or its --duration is over.
    pub fn run(self) -> Result<Served> {
        let counters = ServerCounters::default();
        let clock = SystemClock::new(ClockId::Monotonic);
        let started = clock.now();
        let end = server::serve(&self.listener, &self.cfg, &counters, self.stop)
            .map_err(|e| setup_error(e, &self.cfg.setup))?;
        Ok(Served {
            local: self.local,
            transport: self.transport,
            ended: match end {
                ServeEnd::Stopped => "stopped",
                ServeEnd::DurationDone => "duration done",
            },
            elapsed_ns: clock.now().saturating_sub(started),
            info: self.cfg.info,
            summary: counters.summary(),
        })
    }
}

impl Served {
    /// The summary as one JSON document.
    pub fn to_json(&self) -> Value {
        let s = &self.summary;
        json!({
            "format": record::FORMAT,
            "kind": "net.serve",
            "bind": self.local.to_string(),
            "transport": self.transport,
            "ended": self.ended,
            "elapsed_ns": self.elapsed_ns,
            "settings": settings_map(&self.info),
            "summary": s,
            "rejected_total": s.rejected_total(),
        })
    }
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
}
