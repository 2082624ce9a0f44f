//! `rtlab monitor`: the latency probe around the clock, in windows.

use super::common::{self, Context, OutputArgs};
use super::windows;
use crate::error::{bad_flag, UsageError};
use crate::files;
use crate::monitor::alert::Alerts;
use crate::monitor::cut::Period;
use crate::monitor::{self, unit, Monitor, Setup};
use crate::step::latency::{self, Params};
use crate::step::Machine;
use crate::store::{self, Retention};
use crate::units::{parse_positive_duration, DefaultUnit};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Measure timer latency around the clock, one stored record per window.
///
/// The probe of `rtlab latency` (same options: -i, -a, -p, --policy, --load,
/// ...) runs until stopped; every --window it stores each CPU's histogram,
/// percentiles, maximum and its time, overruns and misses as one record, committed
/// before the next window starts. SIGTERM or Ctrl-C stores the window under way
/// as partial. Old windows are merged into hourly then daily rows (maxima and
/// merged histograms). `--show` prints the series, `--plot` draws it,
/// `--install-unit` writes a systemd service running the same options.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab monitor -a 1 -i 1ms --window 5m --alert-max 100us
  rtlab monitor -a 1 --window 1m --alert-max 50us --alert-cmd 'notify-send rt \"$RTLAB_MAX_NS\"'
  rtlab monitor -a 1 --install-unit --unit-dir /tmp/units
  rtlab monitor --show --since 1d --cpu 1 --plot week.svg")]
#[command(
    mut_arg("loops", |a| a.hide(true)),
    mut_arg("breaktrace", |a| a.hide(true)),
    mut_arg("tracemark", |a| a.hide(true)),
    mut_arg("max_latency", |a| a.hide(true)),
    mut_arg("trace", |a| a.hide(true)),
    mut_arg("trace_threshold", |a| a.hide(true)),
    mut_arg("timerlat", |a| a.hide(true)),
    mut_arg("trace_points", |a| a.hide(true)),
    mut_arg("perf", |a| a.hide(true))
)]
pub struct MonitorArgs {
    #[command(flatten)]
    params: Params,
    /// Length of a window (a bare number is seconds; at least 1s).
    #[arg(
        long,
        default_value = "5m",
        value_name = "DUR",
        allow_hyphen_values = true
    )]
    window: String,
    /// Keep every window this long, then merge it into its hour (e.g. 1d, 12h).
    #[arg(long, default_value = "1d", value_name = "AGE")]
    keep_windows: String,
    /// Keep hourly rows this long, then merge them into their day.
    #[arg(long, default_value = "30d", value_name = "AGE")]
    keep_hourly: String,
    /// Keep daily rows this long, then delete them.
    #[arg(long, default_value = "365d", value_name = "AGE")]
    keep_daily: String,
    /// Alert when a window's maximum exceeds this (a bare number is µs)
    /// [default: no alerts].
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    alert_max: Option<String>,
    /// Run this shell command on an alert, the window in RTLAB_* variables
    /// (RTLAB_MAX_NS, RTLAB_CPU, ...) [default: a warning to the system log
    /// through logger].
    #[arg(long, value_name = "CMD", requires = "alert_max")]
    alert_cmd: Option<String>,
    /// At most one alert per this long (a bare number is seconds).
    #[arg(long, default_value = "15m", value_name = "DUR")]
    alert_quiet: String,
    /// Write a systemd service running the monitor with these options, and
    /// say how to enable it (it is not started).
    #[arg(long, conflicts_with = "show")]
    install_unit: bool,
    /// Where --install-unit writes rtlab-monitor.service.
    #[arg(long, default_value = "/etc/systemd/system", value_name = "DIR")]
    unit_dir: PathBuf,
    /// Print the stored series instead of measuring.
    #[arg(long)]
    show: bool,
    #[command(flatten)]
    select: windows::WindowsArgs,
    #[command(flatten)]
    out: OutputArgs,
    /// Print help (-h is the histogram range, as in latency).
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// An age for retention: days or weeks (`30d`, `1w`) or a duration (`12h`).
fn age_ns(flag: &str, text: &str) -> Result<i64> {
    let t = text.trim();
    let per_day = 86_400_000_000_000u64;
    let days = |suffix: char, n: u64| {
        t.strip_suffix(suffix)?
            .parse::<u64>()
            .ok()
            .map(|d| d.saturating_mul(n * per_day))
    };
    let ns = match days('d', 1).or_else(|| days('w', 7)) {
        Some(0) => return Err(bad_flag(flag, "an age of 0 keeps nothing; give e.g. 1d")),
        Some(ns) => ns,
        None => parse_positive_duration(t, DefaultUnit::Seconds)
            .map_err(|e| bad_flag(flag, format!("{e}; or give days/weeks (30d, 1w)")))?,
    };
    Ok(i64::try_from(ns).unwrap_or(i64::MAX))
}

fn duration_ns(flag: &str, text: &str, unit: DefaultUnit) -> Result<i64> {
    let ns = parse_positive_duration(text, unit).map_err(|e| bad_flag(flag, e))?;
    Ok(i64::try_from(ns).unwrap_or(i64::MAX))
}

/// The latency options a monitor has no use for.
fn refuse_run_options(p: &Params) -> Result<()> {
    let refused = [
        (
            "--loops",
            p.loops.is_some(),
            "give --duration to stop, or none to run until stopped",
        ),
        (
            "--breaktrace",
            p.breaktrace.is_some(),
            "use --alert-max to be told of spikes",
        ),
        ("--max-latency", p.max_latency.is_some(), "use --alert-max"),
        (
            "--trace",
            p.tracing.trace,
            "rtlab latency --trace explains spikes in a bounded run",
        ),
        (
            "--perf",
            p.shared.perf.perf,
            "counters over days would overflow; use rtlab latency --perf",
        ),
    ];
    match refused.iter().find(|r| r.1) {
        Some((flag, _, fix)) => Err(bad_flag(flag, format!("not an option of monitor: {fix}"))),
        None => Ok(()),
    }
}

/// Runs `rtlab monitor`.
pub fn run(ctx: &Context, a: MonitorArgs) -> Result<i32> {
    if a.show {
        let store = ctx.open_read()?;
        return windows::show(&store, &a.select, a.out.json, a.out.unit);
    }
    if let Some(flag) = a.select.given() {
        return Err(bad_flag(flag, "selects rows to show: give it with --show"));
    }
    refuse_run_options(&a.params)?;
    let window_ns = duration_ns("--window", &a.window, DefaultUnit::Seconds)?;
    if window_ns < 1_000_000_000 {
        return Err(bad_flag(
            "--window",
            format!("'{}' is under 1s; give e.g. 1s, 5m", a.window),
        ));
    }
    let retention = Retention {
        windows_ns: age_ns("--keep-windows", &a.keep_windows)?,
        hourly_ns: age_ns("--keep-hourly", &a.keep_hourly)?,
        daily_ns: age_ns("--keep-daily", &a.keep_daily)?,
    };
    let alert_max = a
        .alert_max
        .as_deref()
        .map(|t| duration_ns("--alert-max", t, DefaultUnit::Micros))
        .transpose()?;
    let quiet_ns = duration_ns("--alert-quiet", &a.alert_quiet, DefaultUnit::Seconds)?;
    let machine = Machine::this();
    let plan = a.params.plan(&machine)?;
    let cfg = plan.config();
    let threads = &cfg.threads;
    if a.install_unit {
        let measured: Vec<usize> = threads.iter().flatten().copied().collect();
        let housekeeping: Vec<usize> = machine
            .cpus
            .iter()
            .copied()
            .filter(|c| !measured.contains(c))
            .collect();
        return install_unit(ctx, &a, &housekeeping);
    }
    let fp = rtlab_engine::sysinfo::collect(None);
    let mut store = ctx.open_store()?;
    let setup = Setup {
        window_ns,
        retention,
        session: session_id(),
        host: fp.hostname,
        kernel: fp.kernel_release,
        cpus: threads.iter().map(|c| c.map_or(-1, |c| c as i64)).collect(),
        periods: Period::of(cfg),
        verbose: !a.out.quiet && !a.out.json,
    };
    if setup.verbose {
        println!(
            "monitoring {} thread(s) every {}, windows of {} into {} (session {})",
            threads.len(),
            a.params.period.interval,
            a.window,
            store.path().display(),
            setup.session
        );
    }
    let session = setup.session.clone();
    let mut mon = Monitor::new(
        &mut store,
        setup,
        Alerts::new(alert_max, a.alert_cmd.clone(), quiet_ns),
        monitor::clocks(cfg.clock),
    );
    let run = latency::measure(&a.params, &mut mon)?;
    if let Some(e) = mon.error.take() {
        return Err(e);
    }
    let (rows, stored) = mon.stored;
    let measured: u64 = run
        .series
        .iter()
        .filter(|s| s.thread.is_some())
        .map(|s| s.counters.samples)
        .sum();
    if a.out.json {
        let doc = serde_json::json!({"session": session, "rows": rows, "samples": stored, "probe_samples": measured});
        common::print(&format!("{doc}\n"));
    } else {
        println!(
            "{rows} window rows stored, {stored} wake-ups in them; the probe counted {measured}"
        );
    }
    Ok(0)
}

/// A new monitor session's id: the kernel's random UUID.
fn session_id() -> String {
    rtlab_engine::sysinfo::read_text("/proc/sys/kernel/random/uuid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| format!("{}-{}", std::process::id(), monitor::now_ns()))
}

/// The options after `monitor` on this command line, without the unit's own
/// and without `--db` (the unit names the store itself, without its password).
fn monitor_args() -> Vec<String> {
    let all: Vec<String> = std::env::args().collect();
    let from = all
        .iter()
        .position(|w| w == "monitor")
        .map_or(all.len(), |i| i + 1);
    let mut out = Vec::new();
    let mut skip = false;
    for w in &all[from..] {
        if std::mem::take(&mut skip)
            || w == "--install-unit"
            || w.starts_with("--unit-dir=")
            || w.starts_with("--db=")
        {
            continue;
        }
        skip = w == "--unit-dir" || w == "--db";
        if !skip {
            out.push(w.clone());
        }
    }
    out
}

/// The environment variable libpq and rtlab read a PostgreSQL password from.
const PASSWORD_ENV: &str = "PGPASSWORD";

fn install_unit(ctx: &Context, a: &MonitorArgs, housekeeping: &[usize]) -> Result<i32> {
    let exe = std::env::current_exe()?;
    let db = store::default_path(ctx.db.as_deref())?;
    // A URL's password (or PGPASSWORD's) goes into a file only root reads,
    // never into the unit (mode 0644) nor the monitor's command line.
    let (db, password) = if store::is_url(&db) {
        let (url, pw) = crate::store::split_password(&db.to_string_lossy());
        let pw = pw.or_else(|| std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty()));
        (url, pw)
    } else {
        (
            std::path::absolute(db)?.to_string_lossy().into_owned(),
            None,
        )
    };
    if !a.unit_dir.is_dir() {
        return Err(bad_flag(
            "--unit-dir",
            format!(
                "{} is not a directory; create it or give another",
                a.unit_dir.display()
            ),
        ));
    }
    let unit_dir = std::path::absolute(&a.unit_dir)?;
    let env_path = unit_dir.join("rtlab-monitor.env");
    let env_shown = env_path.to_string_lossy().into_owned();
    if password.is_some() && !unit::nameable(&env_shown) {
        return Err(bad_flag(
            "--unit-dir",
            format!(
                "{} holds control characters: a unit cannot name a file in it",
                a.unit_dir.display()
            ),
        ));
    }
    let env_text = match &password {
        Some(pw) => Some(unit::env_file_text(pw).ok_or_else(|| {
            bad_flag(
                "--db",
                "the password holds control characters, which a unit's environment file cannot hold; change it",
            )
        })?),
        None => None,
    };
    let args = monitor_args();
    let text = unit::text(&unit::UnitSpec {
        exe: &exe.to_string_lossy(),
        args: &args,
        db: &db,
        env_file: env_text.as_ref().map(|_| env_shown.as_str()),
        housekeeping,
    });
    let path = unit_dir.join("rtlab-monitor.service");
    let cannot = |p: &std::path::Path, e: std::io::Error| {
        UsageError(format!("cannot write {}: {e}", p.display()))
    };
    if let Some(env) = &env_text {
        files::NewFile::at(&env_path)
            .mode(files::SECRET)
            .write(env.as_bytes())
            .map_err(|e| cannot(&env_path, e))?;
        println!(
            "wrote {} (mode 0600): the store's password",
            env_path.display()
        );
    }
    files::NewFile::at(&path)
        .mode(0o644)
        .write(text.as_bytes())
        .map_err(|e| cannot(&path, e))?;
    println!(
        "wrote {}\nto start it now and at every boot:\n  systemctl daemon-reload && systemctl enable --now rtlab-monitor.service\nits series: rtlab --db {} monitor --show",
        path.display(),
        store::shown(std::path::Path::new(&db))
    );
    Ok(0)
}
