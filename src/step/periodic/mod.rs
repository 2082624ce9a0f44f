//! The periodic output probe (`rtlab periodic`, scenario probe `periodic`): a
//! thread toggles an output once a period and measures every period from its
//! own timestamps; `--sweep` searches the highest frequency each timing method
//! holds, idle and under the loads.

mod measure;
mod output;
pub mod sweep;

pub use measure::measure;

use super::deadline::DeadlineArgs;
use super::rt::{MlockArgs, Options, SchedArgs, SharedArgs};
use super::value::{Dur, Ms, Sec, Us};
use super::{de, Kind, Machine, View};
use crate::error::bad_flag;
use crate::record::Better;
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::periodic::{Method, Sched};
use rtlab_engine::rt::sched::Policy;
use serde::{Deserialize, Serialize};

/// The parameters of the periodic probe: `rtlab periodic` flags and the keys
/// of a `periodic` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(
    mut_arg("priority", |a| a.help("Real-time priority of the thread (1-99) [default: 90]")),
    mut_arg("policy", |a| a.help("Scheduling policy of the thread")),
    mut_arg("mlock", |a| a.short(None).help(
        "Lock all memory (mlockall) while measuring; --mlock=false to skip"
    ))
)]
pub struct Params {
    /// Toggles per second (Hz, kHz, MHz; bare number: Hz). The output toggles
    /// once a period, so a scope sees a square wave of half this frequency.
    #[arg(short, long, default_value = "1kHz", value_name = "FREQ")]
    #[serde(deserialize_with = "de::word")]
    pub frequency: String,
    /// Run this long at --frequency; with --sweep, the whole sweep stops after
    /// this long with what it found (a bare number is seconds) [default: 1s;
    /// 120s with --sweep].
    #[arg(short = 'D', long, value_name = "DUR")]
    pub duration: Option<Dur<Sec>>,
    /// How the thread waits for each period (all: each in turn, with --sweep).
    #[arg(long, value_enum, default_value_t = MethodArg::Sleep)]
    pub method: MethodArg,
    /// With --method hybrid: busy-wait this long before each period (a bare
    /// number is µs).
    #[arg(long, default_value = "50us", value_name = "DUR")]
    pub spin: Dur<Us>,
    /// A period (and the achieved frequency) further than this from nominal
    /// fails: a percentage above 0% and below 100%.
    #[arg(long, default_value = "10%", value_name = "PCT")]
    #[serde(deserialize_with = "de::word")]
    pub tolerance: String,
    /// Search the highest frequency held between LO and HI (e.g. 1kHz..10MHz),
    /// per method and per load (idle, then --load if given) [default: no
    /// sweep: one run at --frequency].
    #[arg(long, value_name = "LO..HI")]
    pub sweep: Option<String>,
    /// How long each sweep point runs, 10ms-2s (a bare number is ms).
    #[arg(long, default_value = "200ms", value_name = "DUR")]
    pub point_duration: Dur<Ms>,
    /// Sweep points per decade while stepping up (1-20).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub steps_per_decade: u32,
    /// Bisections after the first frequency that fails (0-20).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub refine: u32,
    /// Measure each sweep frequency until a majority of N measurements
    /// agrees whether it held (1-9; 1: once each).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub point_repeats: u32,
    /// CPU to pin the thread to [default: the last usable CPU, leaving the
    /// others to the system].
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,
    #[command(flatten)]
    #[serde(flatten)]
    pub sched: SchedArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub dl: DeadlineArgs,
    /// Write "1"/"0" to this file or sysfs attribute at each toggle [default:
    /// no output, pure timing].
    #[arg(long, value_name = "PATH", conflicts_with = "gpio")]
    pub output: Option<String>,
    /// Toggle a GPIO line (GPIO character device v2): CHIP:LINE, e.g.
    /// /dev/gpiochip0:17 [default: no GPIO line].
    #[arg(long, value_name = "CHIP:LINE")]
    pub gpio: Option<String>,
    /// Time the real edges of a line wired back from --gpio, from the kernel's
    /// edge-event timestamps: CHIP:LINE [default: no line wired back].
    #[arg(long, value_name = "CHIP:LINE", requires = "gpio")]
    pub gpio_in: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub lock: MlockArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub shared: SharedArgs,
}

/// Periodic runs: period jitter, or a sweep's highest frequencies.
pub const KIND: Kind = Kind::probe::<Params>("periodic", "duration")
    .quantity("period jitter")
    .view(View::Periodic)
    .metrics(&[
        ("best_hz.*", Better::Higher),
        ("missed_periods", Better::Lower),
        ("late_periods", Better::Lower),
        ("dl_overruns", Better::Lower),
    ]);

/// `--method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MethodArg {
    /// clock_nanosleep until each period's absolute time.
    Sleep,
    /// Busy-wait on the clock (the CPU stays busy).
    Busy,
    /// A timerfd armed at each period's absolute time.
    Timerfd,
    /// Sleep, then busy-wait the last --spin.
    Hybrid,
    /// Every method in turn (with --sweep).
    All,
}

impl MethodArg {
    fn methods(self) -> Vec<Method> {
        match self {
            MethodArg::Sleep => vec![Method::Sleep],
            MethodArg::Busy => vec![Method::Busy],
            MethodArg::Timerfd => vec![Method::Timerfd],
            MethodArg::Hybrid => vec![Method::Hybrid],
            MethodArg::All => vec![Method::Sleep, Method::Busy, Method::Timerfd, Method::Hybrid],
        }
    }
}

/// The name of a method, as `--method` spells it.
pub fn method_name(m: Method) -> &'static str {
    match m {
        Method::Sleep => "sleep",
        Method::Busy => "busy",
        Method::Timerfd => "timerfd",
        Method::Hybrid => "hybrid",
    }
}

/// A frequency: a number with an optional unit (Hz, kHz, MHz), in Hz.
pub fn parse_hz(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (num, mult) = [("mhz", 1e6), ("khz", 1e3), ("hz", 1.0)]
        .iter()
        .find_map(|(u, m)| lower.strip_suffix(u).map(|n| (n.trim().to_string(), *m)))
        .unwrap_or((lower.clone(), 1.0));
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{t}' is not a frequency (e.g. 1kHz, 500Hz, 2MHz)"))?;
    let hz = v * mult;
    if !hz.is_finite() || hz <= 0.0 {
        return Err(format!("'{t}' must be above 0 Hz"));
    }
    if hz > 1e9 {
        return Err(format!("'{t}' is above 1 GHz: a period under 1 ns"));
    }
    Ok(hz)
}

/// Everything a run needs, checked.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Hz of a single run, or the range of a sweep.
    pub(crate) frequency_hz: f64,
    pub(crate) sweep: Option<sweep::Search>,
    pub(crate) methods: Vec<Method>,
    pub(crate) duration_ns: u64,
    pub(crate) point_ns: u64,
    pub(crate) spin_ns: u64,
    pub(crate) tolerance: f64,
    pub(crate) cpu: Option<usize>,
    pub(crate) policy: Policy,
    pub(crate) priority: i32,
    pub(crate) dl: DeadlineArgs,
    /// Count the thread's performance counters (`--perf`).
    pub(crate) perf: bool,
}

impl Plan {
    /// The scheduling of the thread at period `period_ns`: the policy, or the
    /// deadline reservation for that period.
    pub(crate) fn sched(&self, period_ns: u64) -> Result<Sched> {
        Ok(match self.dl.params(self.policy, period_ns)? {
            Some(dl) => Sched::Deadline(dl),
            None => Sched::Fixed(self.policy, self.priority),
        })
    }
}

/// The longest a busy or hybrid run may keep a CPU at SCHED_FIFO.
const MAX_BUSY_NS: u64 = 2_000_000_000;

impl Params {
    /// Every value checked on machine `m`.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let frequency_hz = parse_hz(&self.frequency).map_err(|e| bad_flag("--frequency", e))?;
        let duration_ns = self.duration_ns()?;
        let point_ns = self.point_duration.positive("--point-duration")?;
        if !(10_000_000..=MAX_BUSY_NS).contains(&point_ns) {
            return Err(bad_flag("--point-duration", "must be between 10ms and 2s"));
        }
        let spin_ns = self.spin.positive("--spin")?;
        let pct = self.tolerance.trim().trim_end_matches('%').trim();
        let tolerance = pct
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p < 100.0)
            .ok_or_else(|| {
                bad_flag(
                    "--tolerance",
                    format!(
                        "'{}' must be a percentage above 0 and below 100 (e.g. 10%)",
                        self.tolerance
                    ),
                )
            })?
            / 100.0;
        let sweep = self.sweep.as_deref().map(|s| self.search(s)).transpose()?;
        if sweep.is_none() && self.method == MethodArg::All {
            return Err(bad_flag(
                "--method",
                "'all' compares the methods in a --sweep; give one method for a single run",
            ));
        }
        let methods = self.method.methods();
        let (policy, priority) = self.sched.checked()?;
        // The reservation is checked now at the highest frequency asked.
        self.dl.params(policy, (1e9 / frequency_hz) as u64)?;
        let cpu = match (self.cpu, policy) {
            (Some(_), Policy::Deadline) => return Err(super::deadline::refuse_pinning("--cpu")),
            (_, Policy::Deadline) => None,
            (Some(c), _) => {
                m.check_cpus(
                    "--cpu",
                    &rtlab_engine::rt::cpuset::CpuList::from_cpus(vec![c]),
                )?;
                Some(c)
            }
            (None, _) => m.cpus.last().copied(),
        };
        let spins = methods
            .iter()
            .any(|m| matches!(m, Method::Busy | Method::Hybrid));
        if spins && policy.is_realtime() && sweep.is_none() && duration_ns > MAX_BUSY_NS {
            return Err(bad_flag(
                "--duration",
                "a busy or hybrid thread at SCHED_FIFO holds its CPU: at most 2s (RT throttling would cut it and the period with it)",
            ));
        }
        if self.gpio_in.is_some() && sweep.is_some() {
            return Err(bad_flag(
                "--gpio-in",
                "times the edges of a single run: leave out --sweep",
            ));
        }
        output::check(self)?;
        Ok(Plan {
            frequency_hz,
            sweep,
            methods,
            duration_ns,
            point_ns,
            spin_ns,
            tolerance,
            cpu,
            policy,
            priority,
            dl: self.dl.clone(),
            perf: self.shared.perf.perf,
        })
    }

    /// --duration (ns) as given, or its default: 1s, 120s for a sweep.
    fn duration_ns(&self) -> Result<u64> {
        match (&self.duration, &self.sweep) {
            (Some(d), _) => d.positive("--duration"),
            (None, Some(_)) => Ok(120_000_000_000),
            (None, None) => Ok(1_000_000_000),
        }
    }

    fn search(&self, range: &str) -> Result<sweep::Search> {
        let (lo, hi) = range.split_once("..").ok_or_else(|| {
            bad_flag(
                "--sweep",
                format!("'{range}' is not LO..HI (e.g. 1kHz..10MHz)"),
            )
        })?;
        let lo_hz = parse_hz(lo).map_err(|e| bad_flag("--sweep", e))?;
        let hi_hz = parse_hz(hi).map_err(|e| bad_flag("--sweep", e))?;
        if lo_hz >= hi_hz {
            return Err(bad_flag(
                "--sweep",
                format!("'{range}': LO must be below HI"),
            ));
        }
        if !(1..=20).contains(&self.steps_per_decade) {
            return Err(bad_flag("--steps-per-decade", "must be 1-20"));
        }
        if self.refine > 20 {
            return Err(bad_flag("--refine", "must be 0-20"));
        }
        if !(1..=9).contains(&self.point_repeats) {
            return Err(bad_flag("--point-repeats", "must be 1-9"));
        }
        Ok(sweep::Search {
            lo_hz,
            hi_hz,
            steps_per_decade: self.steps_per_decade,
            refine: self.refine,
            repeats: self.point_repeats,
        })
    }
}

step! {
    fn options(&self) -> Options<'_> {
        Options::of(&self.shared, Some(&self.sched))
    }

    fn planned_ns(&self) -> Option<u64> {
        self.duration_ns().ok()
    }
}

#[cfg(test)]
mod tests;
