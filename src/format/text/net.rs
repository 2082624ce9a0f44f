//! The text of a net run and of a finished `net serve`.

use super::series::{self, Col};
use super::table::{printable, Table};
use crate::record::Run;
use crate::step::net::{self, serve};
use crate::units::{Human, TimeUnit};

/// The text summary of a server that stopped.
pub fn served_text(done: &serve::Served, tcp: bool) -> String {
    let s = &done.summary;
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
    if tcp {
        row("connections", s.connections);
        row("connections refused", s.connections_refused);
        row("connections peak", s.connections_peak);
        row("idle closed", s.idle_closed);
        row("slow readers dropped", s.slow_readers_dropped);
    }
    row("socket errors", s.io_errors);
    format!(
        "rtlab net serve {} ({}) {} after {}\n{}",
        done.local,
        done.transport,
        done.ended,
        Human(done.elapsed_ns),
        t.render()
    )
}

/// The text report of a net run.
pub fn render(run: &Run, unit: TimeUnit) -> String {
    let a = net::asked(&run.params);
    let m = |k: &str| run.metrics.get(k).copied().unwrap_or(0.0) as u64;
    let server_setting = |k: &str| a.server.get(k).and_then(|v| v.as_str()).unwrap_or("?");
    let mut out = format!(
        "rtlab net ping {} ({})  {}  [{}]\n",
        printable(&a.address),
        a.transport,
        printable(&run.label),
        run.status.name()
    );
    out.push_str(&format!(
        "{} messages every {}, {} round trip(s) of {} bytes each; client {} {}, server {} {} on {} ({})\n",
        a.count,
        Human(a.period_ns),
        a.round_trips,
        a.message_bytes,
        a.policy,
        a.priority,
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
        Human(a.deadline_ns),
        m("duplicates"),
        m("reordered"),
        m("late_replies"),
    ));
    let cols = Col::latencies("samples", &[Col::Max, Col::Stddev, Col::Misses]);
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
    if let Some(limit) = a.max_latency_ns {
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
    out.push_str(&super::run::own_warnings(run));
    out
}
