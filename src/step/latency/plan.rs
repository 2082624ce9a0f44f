//! The checks of a latency step: every value turned into the engine's
//! configuration, or refused naming its flag.

use super::{ClockArg, Params, TimerArg};
use crate::error::bad_flag;
use crate::limits;
use crate::record::Warning;
use crate::step::value::opt_positive;
use crate::step::Machine;
use anyhow::Result;
use rtlab_engine::probe::latency::{LatencyConfig, TimerMode};
use rtlab_engine::rt::clock::ClockId;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use rtlab_engine::stats::hist::MAX_US_BUCKETS;

/// The probe configuration and everything else a run needs, validated.
#[derive(Debug)]
pub struct Plan {
    pub(super) cfg: LatencyConfig,
    pub(super) dma_latency_us: Option<i32>,
    pub(super) max_latency_ns: Option<u64>,
    /// CPUs whose idle states deeper than this are disabled for the run.
    pub(super) idle_limit: Option<(Vec<usize>, u32)>,
    /// CPUs the main thread is pinned to for the run.
    pub(super) main_cpus: Option<Vec<usize>>,
    /// With --trace: the wake-ups this late or later are explained (ns).
    pub(super) trace_threshold_ns: Option<u64>,
    pub(super) warnings: Vec<Warning>,
}

impl Plan {
    /// What the probe will run: threads, their CPUs, periods and priorities.
    pub fn config(&self) -> &LatencyConfig {
        &self.cfg
    }
}

/// The most points per thread in the latency-over-time series: 24 MB a thread.
const MAX_TRACE_POINTS: usize = 1_000_000;

impl Params {
    /// The probe configuration and everything else a run needs, with every
    /// value checked on machine `m`; a [`BadValue`](crate::error::BadValue)
    /// names the flag of the first value that cannot be used.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let a = self;
        let mut warnings = Vec::new();
        let interval_ns = a.period.interval.positive("--interval")?;
        let distance_ns = a.distance.ns("--distance")?;
        let offset_ns = a.offset.ns("--offset")?;
        let second_aligned = a
            .second_aligned
            .as_ref()
            .map(|o| o.ns("--second-aligned"))
            .transpose()?;
        let duration_ns = opt_positive("--duration", &a.duration)?.unwrap_or(0);
        if a.loops == Some(0) {
            return Err(bad_flag(
            "--loops",
            "0 loops measures nothing; give a count above 0 or leave it out to run until Ctrl-C",
        ));
        }
        let hist_max = a.histogram_max.positive("--histogram-max")?;
        let hist_max_us = u32::try_from(hist_max / 1000)
            .ok()
            .filter(|&us| (1..=MAX_US_BUCKETS).contains(&us))
            .ok_or_else(|| {
                bad_flag(
                    "--histogram-max",
                    format!("'{}' must be between 1us and 10s", a.histogram_max),
                )
            })?;
        if a.overflow_cycles > MAX_US_BUCKETS as usize {
            return Err(bad_flag(
                "--overflow-cycles",
                format!("{} is more than {MAX_US_BUCKETS}", a.overflow_cycles),
            ));
        }
        let breaktrace_ns = opt_positive("--breaktrace", &a.breaktrace)?;
        let deadline_ns = opt_positive("--deadline", &a.deadline)?;
        let max_latency_ns = opt_positive("--max-latency", &a.max_latency)?;
        if !(2..=MAX_TRACE_POINTS).contains(&a.trace_points) {
            return Err(bad_flag(
            "--trace-points",
            format!(
                "{} is outside 2-{MAX_TRACE_POINTS}; beyond, points keep block maxima and no peak is lost (the store keeps at most {})",
                a.trace_points,
                crate::record::MAX_STORED_TRACE_POINTS
            ),
        ));
        }
        let trace_threshold_ns = a.trace_threshold_ns(interval_ns, deadline_ns)?;
        let (policy, priority) = a.sched.get();
        let dl = a.dl.params(policy, interval_ns)?;
        // Deadline threads run unpinned: one per CPU unless -t says.
        let pins = [
            ("--cpus", a.measured.cpus.is_some()),
            ("--main-cpus", a.main_cpus.is_some()),
        ];
        let threads = crate::step::deadline::unpinned(a.thread_cpus(m)?, dl.is_some(), &pins)?;
        a.check_priorities(threads.len(), &mut warnings)?;
        if let Some(w) = smt_sharing(&threads) {
            warnings.push(w);
        }
        let (bytes, what) = memory_need(
            threads.len(),
            u64::from(hist_max_us) + a.overflow_cycles as u64,
            a.trace_points,
        );
        let need = limits::Need {
            bytes,
            what: &what,
            fix: "give a smaller --histogram-max, fewer --trace-points or fewer threads",
        };
        limits::check_memory("--histogram-max", &need, limits::memory_budget())?;

        let dma_latency_us = match a.dma_latency.trim() {
            "off" | "none" => None,
            v => Some(v.parse::<i32>().ok().filter(|v| *v >= 0).ok_or_else(|| {
                bad_flag(
                    "--dma-latency",
                    format!("'{v}' is not a whole number of µs ≥ 0 or 'off'"),
                )
            })?),
        };
        let idle_limit = match a.deepest_idle_state {
            Some(n) => {
                let cpus: Vec<usize> = match threads.iter().flatten().next() {
                    Some(_) => threads.iter().flatten().copied().collect(),
                    None => m.cpus.clone(),
                };
                super::idle::check(&cpus, n)?;
                Some((cpus, n))
            }
            None => None,
        };
        let main_cpus = a
            .main_cpus
            .as_ref()
            .map(|l| m.usable("--main-cpus", l))
            .transpose()?;
        Ok(Plan {
            cfg: LatencyConfig {
                threads,
                interval_ns,
                distance_ns,
                policy,
                priority,
                dl,
                priospread: a.priospread,
                clock: match a.clock {
                    ClockArg::Monotonic => ClockId::Monotonic,
                    ClockArg::Realtime => ClockId::Realtime,
                },
                timer: match a.timer {
                    TimerArg::Absolute => TimerMode::Absolute,
                    TimerArg::Relative => TimerMode::Relative,
                    TimerArg::Nanosleep => TimerMode::Nanosleep,
                    TimerArg::Posix => TimerMode::Posix,
                },
                offset_ns,
                second_aligned,
                loops: a.loops.unwrap_or(0),
                duration_ns,
                deadline_ns,
                breaktrace_ns,
                trace_marker: a.tracemark,
                spike_marks: None,
                hist_max_us,
                overflow_cycles: a.overflow_cycles,
                trace_points: a.trace_points,
                sample_ring: 0,
                poll_ns: 20_000_000,
                thread_histograms: true,
                perf: a.shared.perf.perf,
            },
            dma_latency_us,
            max_latency_ns,
            idle_limit,
            main_cpus,
            trace_threshold_ns,
            warnings,
        })
    }

    /// One entry per measuring thread: the CPU it is pinned to, if any.
    fn thread_cpus(&self, m: &Machine) -> Result<Vec<Option<usize>>> {
        let list = match &self.measured.cpus {
            Some(l) if l.is_all() => Some(m.cpus.clone()),
            Some(l) => Some(m.usable("--cpus", l)?),
            None => None,
        };
        let threads: Vec<Option<usize>> = match (list, self.threads.flatten()) {
            (Some(cpus), n) => {
                let n = n.unwrap_or(cpus.len());
                (0..n).map(|i| Some(cpus[i % cpus.len()])).collect()
            }
            (None, Some(n)) => vec![None; n],
            (None, None) => m.cpus.iter().map(|&c| Some(c)).collect(),
        };
        if threads.is_empty() {
            return Err(bad_flag(
                "--threads",
                "0 threads measures nothing; give 1 or more",
            ));
        }
        if threads.len() > 1024 {
            return Err(bad_flag(
                "--threads",
                format!("{} threads is more than 1024", threads.len()),
            ));
        }
        Ok(threads)
    }

    /// Refuses a priority outside the policy's range (for every thread, with
    /// --priospread); warns of priority 99 and of a time-sharing policy.
    fn check_priorities(&self, threads: usize, warnings: &mut Vec<Warning>) -> Result<()> {
        let (policy, priority) = self.sched.checked()?;
        let (lo, _) = policy.priority_range();
        if self.priospread {
            if !policy.is_realtime() {
                return Err(bad_flag(
                    "--priospread",
                    format!(
                        "it spreads real-time priorities; SCHED_{} has none (use --policy fifo or rr)",
                        policy.name().to_uppercase()
                    ),
                ));
            }
            let last = priority - (threads as i32 - 1);
            if last < lo {
                return Err(bad_flag(
                    "--priospread",
                    format!("priority {priority} for {threads} threads leaves thread {} at {last}; give --priority {} or more", threads - 1, threads as i32 - 1 + lo),
                ));
            }
        }
        if priority == 99 {
            warnings.push(Warning::new(
            "priority99",
            "priority 99 is above the kernel's own RT threads (migration, watchdogs) and can starve them; 90-98 measures the same",
        ));
        }
        if !policy.is_realtime() && policy != Policy::Deadline {
            warnings.push(Warning::new(
                "not_realtime",
                format!("the measuring threads run SCHED_{}: the numbers show time-sharing wake-up latency, not what an RT thread gets", policy.name().to_uppercase()),
            ));
        }
        Ok(())
    }
}

/// What the probe allocates (and locks) before it starts, and how to say it:
/// per thread `words` counters (the 1-µs histogram's buckets and the wake-up
/// numbers of its first overflows), a trace of `trace_points` points and an
/// HdrHistogram (under 256 KiB), plus one more of each for the merged total.
fn memory_need(threads: usize, words: u64, trace_points: usize) -> (u64, String) {
    const HDR_BYTES: u64 = 256 << 10;
    let point = std::mem::size_of::<rtlab_engine::stats::trace::TracePoint>() as u64;
    let per_thread = words * 8 + trace_points as u64 * point + HDR_BYTES;
    (
        per_thread.saturating_mul(threads as u64 + 1),
        format!(
            "{} thread(s) (and their total) × ({words} histogram buckets + {trace_points} trace points)",
            threads
        ),
    )
}

/// A warning when two measuring threads sit on SMT siblings of one core.
fn smt_sharing(threads: &[Option<usize>]) -> Option<Warning> {
    let cpus: Vec<usize> = threads.iter().flatten().copied().collect();
    for &c in &cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        let Some(sib) = rtlab_engine::sysinfo::read_text(path)
            .ok()
            .and_then(|s| CpuList::parse(&s).ok())
        else {
            continue;
        };
        if let Some(&other) = cpus.iter().find(|&&o| o != c && sib.contains(o)) {
            return Some(Warning::new(
                "smt_shared",
                format!("CPUs {c} and {other} are SMT siblings of one core: their threads disturb each other"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_and_traces_of_every_thread_are_counted_against_memory() {
        // 1024 threads of 10 s histograms: 80 MB each, 82 GB with the total.
        let (bytes, what) = memory_need(1024, MAX_US_BUCKETS.into(), 2048);
        assert!(bytes > 1025 * 80_000_000, "{bytes}");
        assert!(what.starts_with("1024 thread(s)"), "{what}");
        let need = limits::Need {
            bytes,
            what: &what,
            fix: "fewer",
        };
        let e = limits::check_memory("--histogram-max", &need, Some(8 << 30)).unwrap_err();
        assert!(
            e.to_string().starts_with("--histogram-max: 1024 thread(s)"),
            "{e}"
        );
        // The defaults on a few CPUs take a few MB.
        assert!(memory_need(4, 10_000, 2048).0 < 8 << 20);
    }

    fn machine() -> Machine {
        Machine {
            cpus: vec![0, 1, 2, 3],
            mem_available: 0,
        }
    }

    fn plan(args: &[&str]) -> Result<Plan> {
        use clap::Parser;
        #[derive(Parser)]
        #[command(disable_help_flag = true)]
        struct P {
            #[command(flatten)]
            p: Params,
        }
        let p = P::try_parse_from(std::iter::once("x").chain(args.iter().copied()))?;
        p.p.plan(&machine())
    }

    #[test]
    fn bare_threads_and_cpus_mean_one_pinned_thread_per_cpu() {
        for args in [&[][..], &["-t"], &["-a"], &["-t", "-a"], &["--cpus", "all"]] {
            let p = plan(args).unwrap();
            assert_eq!(
                p.cfg.threads,
                vec![Some(0), Some(1), Some(2), Some(3)],
                "{args:?}"
            );
        }
        assert_eq!(plan(&["-t3"]).unwrap().cfg.threads, vec![None; 3]);
        assert_eq!(
            plan(&["-a0", "-t2"]).unwrap().cfg.threads,
            vec![Some(0), Some(0)]
        );
        assert_eq!(
            plan(&["-a", "1-2"]).unwrap().cfg.threads,
            vec![Some(1), Some(2)]
        );
    }

    #[test]
    fn priospread_needs_room_below_the_priority_and_an_rt_policy() {
        let p = plan(&["-t4", "-p", "80", "--priospread"]).unwrap();
        assert_eq!(
            (0..4).map(|i| p.cfg.priority_of(i)).collect::<Vec<_>>(),
            [80, 79, 78, 77]
        );
        let e = plan(&["-t4", "-p", "2", "--priospread"]).unwrap_err();
        assert!(e.to_string().starts_with("--priospread: "), "{e}");
        assert!(e.to_string().contains("--priority 4"), "{e}");
        let e = plan(&["--policy", "batch", "--priospread"]).unwrap_err();
        assert!(e.to_string().contains("SCHED_BATCH"), "{e}");
        let e = plan(&["--policy", "idle", "-p", "3"]).unwrap_err();
        assert!(e.to_string().starts_with("--priority: SCHED_IDLE"), "{e}");
    }

    #[test]
    fn timers_offsets_and_the_aligned_start_reach_the_engine() {
        let p = plan(&["--timer", "relative", "--offset", "20", "--second-aligned"]).unwrap();
        assert_eq!(p.cfg.timer, TimerMode::Relative);
        assert_eq!(p.cfg.offset_ns, 20_000);
        assert_eq!(p.cfg.second_aligned, Some(0));
        let p = plan(&["--second-aligned", "1ms", "--overflow-cycles", "1000"]).unwrap();
        assert_eq!(p.cfg.second_aligned, Some(1_000_000));
        assert_eq!(p.cfg.overflow_cycles, 1000);
        assert!(plan(&["--offset", "soon"])
            .unwrap_err()
            .to_string()
            .starts_with("--offset: "));
        let e = plan(&["--main-cpus", "9"]).unwrap_err();
        assert!(e.to_string().starts_with("--main-cpus: "), "{e}");
    }
}
