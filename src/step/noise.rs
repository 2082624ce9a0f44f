//! The OS-noise probe (`rtlab noise`, scenario probe `noise`): per CPU, a
//! pinned thread reads the clock in a tight loop and records every gap above a
//! threshold, as oslat and rtla osnoise do.

mod gates;
mod measure;
mod trace;

pub use gates::{gates, metric};
pub use measure::measure;

use super::rt::{CpusArgs, Options, SchedArgs, SharedArgs, TraceArgs};
use super::value::{Dur, Read, Sec, Us, Word};
use super::{Kind, Machine, View};
use crate::error::bad_flag;
use crate::record::{Better, RunParams};
use crate::units::{parse_positive_duration, DefaultUnit};
use anyhow::Result;
use clap::Args;
use rtlab_engine::probe::noise::{NoiseClock, NoiseConfig};
use serde::{Deserialize, Serialize};

/// The parameters of the noise probe: `rtlab noise` flags and the keys of a
/// `noise` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
#[command(
    mut_arg("cpus", |a| a.help(
        "CPUs to measure, one pinned spinning thread each [default: every usable CPU but the \
         first, which stays with the system; -a alone: all]"
    )),
    mut_arg("priority", |a| a.help(
        "Real-time priority of the spinning threads (1-99; 0 with --policy other, batch or \
         idle) [default: 90; 0 with other, batch or idle]"
    )),
    mut_arg("policy", |a| a.help(
        "Scheduling policy of the spinning threads (other: housekeeping CPUs)"
    )),
    mut_arg("trace", |a| a.help(
        "Trace the kernel's scheduler, IRQ, softirq, NMI and timer events in a tracefs \
         instance of rtlab's own and explain every gap at or above --trace-threshold: which \
         IRQs, softirqs, NMIs and threads took it (needs root)"
    )),
    mut_arg("trace_threshold", |a| a.help(
        "With --trace: the gaps this long or longer are explained (a bare number is µs) \
         [default: 10 × --threshold]"
    ))
)]
pub struct Params {
    /// Run this long on every CPU (a bare number is seconds).
    #[arg(
        short = 'D',
        long,
        default_value = "10s",
        value_name = "DUR",
        allow_negative_numbers = true
    )]
    pub duration: Dur<Sec>,
    #[command(flatten)]
    #[serde(flatten)]
    pub measured: CpusArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub sched: SchedArgs,
    /// A gap between two clock reads above this is noise (a bare number is µs).
    #[arg(
        short = 'T',
        long,
        default_value = "1us",
        value_name = "DUR",
        allow_negative_numbers = true
    )]
    pub threshold: Dur<Us>,
    /// Clock the loop reads: the TSC (as oslat; auto picks it where it is
    /// constant and non-stop) or clock_gettime(CLOCK_MONOTONIC) via the vDSO.
    #[arg(long, value_enum, default_value_t = ClockArg::Auto)]
    pub clock: ClockArg,
    /// Exit 1 if any CPU's noise exceeds this: ppm of its time (a bare
    /// number: 100ppm), a percentage (0.01%) or time per second (100us/s)
    /// [default: no gate].
    #[arg(long, value_name = "PPM|%|RATE")]
    pub max_noise: Option<Word<Ppm>>,
    /// Exit 1 if any single gap exceeds this (a bare number is µs) [default: no
    /// gate].
    #[arg(long, value_name = "DUR", allow_negative_numbers = true)]
    pub max_gap: Option<Dur<Us>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub tracing: TraceArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub shared: SharedArgs,
}

/// The clock of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockArg {
    /// The TSC where it is constant and non-stop, else monotonic.
    Auto,
    /// The CPU's time-stamp counter, calibrated against CLOCK_MONOTONIC.
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC).
    Monotonic,
}

/// Noise runs: gaps, per CPU, with no period to overrun or deadline to miss.
pub const KIND: Kind = Kind::probe::<Params>("noise", "duration")
    .quantity("gap")
    .periods(false, false)
    .view(View::Noise)
    .metrics(&[
        ("noise_*", Better::Lower),
        ("loop_*", Better::Lower),
        ("max_gap_at_ns", Better::Neither),
        ("clock_ticks_per_us", Better::Neither),
    ])
    .why("measure again with 'rtlab noise --trace' (as root, with tracefs)")
    .total_figure("gaps between clock reads");

/// A run's configuration and gates, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What the engine runs.
    pub cfg: NoiseConfig,
    /// `--max-noise` in ppm.
    pub max_noise_ppm: Option<f64>,
    /// `--max-gap` (ns).
    pub max_gap_ns: Option<u64>,
    /// With `--trace`: the gaps explained, this long or longer (ns).
    pub trace_threshold_ns: Option<u64>,
}

/// A noise budget (`--max-noise`), read in ppm.
#[derive(Debug, Clone, PartialEq)]
pub struct Ppm;

impl Read for Ppm {
    type Value = f64;
    fn read(text: &str) -> Result<f64, String> {
        parse_noise(text)
    }
}

/// Reads `--max-noise`: `N` or `Nppm`, `N%`, or a duration per second
/// (`100us/s`), in ppm.
pub fn parse_noise(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let ppm = if let Some(per) = t.strip_suffix("/s") {
        parse_positive_duration(per, DefaultUnit::Micros)? as f64 / 1000.0
    } else {
        let (num, scale) = match t.strip_suffix('%') {
            Some(n) => (n, 10_000.0),
            None => (t.strip_suffix("ppm").unwrap_or(t), 1.0),
        };
        num.trim().parse::<f64>().map_err(|_| {
            format!("'{t}' is not a noise budget: write ppm (100ppm), a percentage (0.01%) or time per second (100us/s)")
        })? * scale
    };
    if !(ppm.is_finite() && ppm > 0.0 && ppm <= 1e6) {
        return Err(format!(
            "'{t}' is outside (0, 1000000] ppm: noise is a share of the CPU's time"
        ));
    }
    Ok(ppm)
}

impl Params {
    /// Every value checked on machine `m`, turned into the engine's
    /// configuration; a bad value names its flag.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let duration_ns = self.duration.positive("--duration")?;
        let threshold_ns = self.threshold.positive("--threshold")?;
        if threshold_ns > 1_000_000_000 {
            return Err(bad_flag(
                "--threshold",
                format!(
                    "'{}' is above 1s: every gap would pass unseen",
                    self.threshold
                ),
            ));
        }
        let cpus = match &self.measured.cpus {
            Some(l) if l.is_all() => m.cpus.clone(),
            Some(l) => m.usable("--cpus", l)?,
            None if m.cpus.len() > 1 => m.cpus[1..].to_vec(),
            None => m.cpus.clone(),
        };
        let (policy, priority) = self.sched.checked()?;
        let clock = match self.clock {
            ClockArg::Monotonic => NoiseClock::Monotonic,
            ClockArg::Tsc if !cfg!(target_arch = "x86_64") => {
                return Err(bad_flag(
                    "--clock",
                    "tsc: only x86_64 has one; use monotonic",
                ))
            }
            ClockArg::Tsc => NoiseClock::Tsc,
            ClockArg::Auto if rtlab_engine::probe::noise::tsc_usable() => NoiseClock::Tsc,
            ClockArg::Auto => NoiseClock::Monotonic,
        };
        let max_noise_ppm = self
            .max_noise
            .as_ref()
            .map(|w| w.value("--max-noise"))
            .transpose()?;
        let max_gap_ns = super::value::opt_positive("--max-gap", &self.max_gap)?;
        let trace_threshold_ns = self.trace_threshold_ns(threshold_ns)?;
        Ok(Plan {
            cfg: NoiseConfig {
                cpus,
                policy,
                priority,
                duration_ns,
                threshold_ns,
                clock,
                perf: self.shared.perf.perf,
                gap_marks: None,
            },
            max_noise_ppm,
            max_gap_ns,
            trace_threshold_ns,
        })
    }
}

step! {
    fn options(&self) -> Options<'_> {
        Options::of(&self.shared, Some(&self.sched))
    }

    fn planned_ns(&self) -> Option<u64> {
        self.duration.get()
    }

    fn trace(&mut self) -> Option<&mut bool> {
        Some(&mut self.tracing.trace)
    }
}

/// What a noise run was asked: its threshold (ns) and clock, for its headline.
pub fn asked(params: &RunParams) -> Option<(u64, String, String)> {
    match params.step() {
        Some(super::Params::Noise(p)) => {
            let (policy, priority) = p.sched.get();
            Some((
                p.threshold.get().unwrap_or(0),
                format!("{} {priority}", policy.name()),
                serde_json::to_value(p.clock)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

    fn plan(args: &[&str]) -> Result<Plan> {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            p: Params,
        }
        let p = P::try_parse_from(std::iter::once("x").chain(args.iter().copied()))?;
        p.p.plan(&Machine {
            cpus: vec![0, 1, 2, 3],
            mem_available: 0,
        })
    }

    #[test]
    fn noise_budgets_read_as_ppm() {
        assert_eq!(parse_noise("100").unwrap(), 100.0);
        assert_eq!(parse_noise("100ppm").unwrap(), 100.0);
        assert_eq!(parse_noise("0.01%").unwrap(), 100.0);
        assert_eq!(parse_noise("100us/s").unwrap(), 100.0);
        assert_eq!(parse_noise("1ms/s").unwrap(), 1000.0);
        for bad in ["", "lots", "0", "-3", "2000000", "0us/s"] {
            assert!(parse_noise(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_first_cpu_stays_with_the_system_unless_asked() {
        assert_eq!(plan(&[]).unwrap().cfg.cpus, [1, 2, 3]);
        assert_eq!(plan(&["-a"]).unwrap().cfg.cpus, [0, 1, 2, 3]);
        assert_eq!(plan(&["-a", "2"]).unwrap().cfg.cpus, [2]);
        let e = plan(&["-a", "7"]).unwrap_err().to_string();
        assert!(e.starts_with("--cpus: CPU 7"), "{e}");
    }

    #[test]
    fn bad_values_name_their_flag() {
        let p = plan(&["-T", "2us", "--max-gap", "50", "--max-noise", "1%"]).unwrap();
        assert_eq!(p.cfg.threshold_ns, 2_000);
        assert_eq!(p.max_gap_ns, Some(50_000));
        assert_eq!(p.max_noise_ppm, Some(10_000.0));
        assert_eq!((p.cfg.policy, p.cfg.priority), (Policy::Fifo, 90));
        for (args, flag) in [
            (&["-T", "0"][..], "--threshold"),
            (&["-T", "2s"], "--threshold"),
            (&["--max-noise", "x"], "--max-noise"),
            (&["--max-gap", "-1"], "--max-gap"),
            (&["-D", "0"], "--duration"),
            (&["--policy", "other", "-p", "5"], "--priority"),
        ] {
            let e = plan(args).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{flag}: ")), "{args:?}: {e}");
        }
    }
}
