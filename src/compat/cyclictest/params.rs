//! cyclictest's options as rtlab's latency parameters, with cyclictest's
//! defaults (one SCHED_OTHER thread pinned to the first CPU, 1000 µs, threads
//! 500 µs apart, no mlockall, /dev/cpu_dma_latency held at 0), what it prints
//! on stderr about them, and what it prints on stdout.

use super::observer::Output;
use super::options::{Count, Options, PolicyName};
use crate::error::UsageError;
use crate::format::histfile::Layout;
use crate::step::latency::{Params, TimerArg};
use crate::step::rt::{CpusArgs, IntervalArgs, MlockArgs, PolicyArg, SchedArgs};
use crate::step::value::{Cpus, Dur};
use crate::step::Machine;
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;

/// cyclictest's distance between the threads' intervals without -d (µs).
const DEFAULT_DISTANCE_US: u64 = 500;
/// cyclictest's largest histogram (µs).
const HIST_MAX_US: u64 = 1_000_000;

/// Everything a run through the personality needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub params: Params,
    /// Lines cyclictest prints on stderr before it measures.
    pub notes: Vec<String>,
    pub output: Output,
}

/// The CPUs of a cyclictest CPU set (`2`, `0-3,6`, `!1`: all but 1) among the
/// usable ones.
fn cpu_set(text: &str, usable: &[usize]) -> Result<Vec<usize>> {
    let bad = |e: String| UsageError(format!("-a: '{text}': {e}"));
    let (negate, list) = match text.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let set = CpuList::parse(list).map_err(|e| bad(e.to_string()))?;
    let cpus: Vec<usize> = if negate {
        usable
            .iter()
            .copied()
            .filter(|c| !set.contains(*c))
            .collect()
    } else {
        set.cpus().to_vec()
    };
    if cpus.is_empty() {
        return Err(bad("no CPU left".into()).into());
    }
    Ok(cpus)
}

/// The rtlab parameters of `o` on machine `m`.
pub fn setup(o: &Options, m: &Machine) -> Result<Setup> {
    let mut notes = Vec::new();
    let affinity = match (&o.affinity, o.smp) {
        (Some(_), true) => {
            notes.push("WARN: -a ignored due to smp mode".into());
            None
        }
        (Some(Some(set)), false) => Some(cpu_set(set, &m.cpus)?),
        _ => None,
    };
    let cpus = affinity.clone().unwrap_or_else(|| m.cpus.clone());
    if o.smp && o.threads.is_some() {
        notes.push("WARN: -t ignored due to smp mode".into());
    }
    let threads = match (o.smp, o.threads) {
        (true, _) | (false, Some(Count::PerCpu)) => cpus.len(),
        (false, Some(Count::Exactly(n))) => n,
        (false, None) => 1,
    };
    if threads == 0 {
        return Err(UsageError("-t: 0 threads measures nothing; give 1 or more".into()).into());
    }
    let (policy, priority, forced_other) = sched(o, threads, &mut notes)?;
    if o.histogram > 0 && o.distance.is_some() {
        notes.push("WARN: distance is ignored and set to 0, if histogram enabled".into());
    }
    if o.histogram > 0 && o.nsecs {
        return Err(UsageError(
            "-N with -h/-H: cyclictest would count 1-ns buckets; rtlab's histogram has 1-µs buckets (leave out -N, or -h)".into(),
        )
        .into());
    }
    if o.oscope < 1 || (o.oscope > 1 && !o.verbose) {
        return Err(
            UsageError("-o: only meaningful with -v, and 1 or more samples a line".into()).into(),
        );
    }
    if o.aligned.is_some() && o.secaligned.is_some() {
        return Err(UsageError("-A and --secaligned exclude each other".into()).into());
    }
    let clock = match o.clock {
        0 => crate::step::latency::ClockArg::Monotonic,
        1 => crate::step::latency::ClockArg::Realtime,
        n => {
            return Err(UsageError(format!(
                "-c: {n} is not a clock (0 = CLOCK_MONOTONIC, 1 = CLOCK_REALTIME)"
            ))
            .into())
        }
    };
    let timer = if o.system {
        if o.posix_timers {
            notes.push("WARN: The system option requires clock_nanosleep".into());
            notes.push("WARN: and is not compatible with posix_timers".into());
            notes.push("WARN: Using clock_nanosleep".into());
        }
        TimerArg::Nanosleep
    } else if o.posix_timers {
        TimerArg::Posix
    } else if o.relative {
        TimerArg::Relative
    } else {
        TimerArg::Absolute
    };
    let dma_latency = if o.laptop {
        notes.push("WARN: not setting cpu_dma_latency to save battery power".into());
        "off".to_string()
    } else if o.default_system {
        notes.push("WARN: not setting cpu_dma_latency (--default-system)".into());
        "off".to_string()
    } else {
        o.latency.max(0).to_string()
    };
    let histogram = o.histogram.min(HIST_MAX_US);
    let defaults = Params::default();
    let params = Params {
        period: IntervalArgs {
            interval: Dur::new(o.interval.to_string()),
        },
        loops: (o.loops > 0).then_some(o.loops),
        duration: o.duration.as_deref().map(Dur::new),
        measured: CpusArgs {
            cpus: Some(Cpus::of(cpus)),
        },
        threads: Some(Some(threads)),
        sched: SchedArgs {
            priority: Some(priority),
            policy,
        },
        priospread: o.priospread,
        distance: if histogram > 0 {
            Dur::new("0")
        } else {
            Dur::new(o.distance.unwrap_or(DEFAULT_DISTANCE_US).to_string())
        },
        clock,
        timer,
        offset: Dur::new(o.aligned.unwrap_or(0).to_string()),
        second_aligned: o.secaligned.map(|s| Dur::new(s.to_string())),
        lock: MlockArgs { mlock: o.mlockall },
        dma_latency,
        deepest_idle_state: o
            .deepest_idle_state
            .filter(|&n| n >= 0)
            .map(|n| n.try_into().unwrap_or(u32::MAX)),
        main_cpus: o.mainaffinity.as_deref().map(Cpus::new),
        histogram_max: if histogram > 0 {
            Dur::new(histogram.to_string())
        } else {
            defaults.histogram_max.clone()
        },
        overflow_cycles: if histogram > 0 {
            histogram as usize
        } else {
            defaults.overflow_cycles
        },
        // cyclictest compares whole µs: -b 30 stops at 31 µs, not at 30.4.
        breaktrace: (o.breaktrace > 0)
            .then(|| Dur::new(format!("{}ns", o.breaktrace * 1000 + 999))),
        tracemark: o.tracemark,
        ..defaults
    };
    let output = Output {
        quiet: o.quiet,
        verbose: o.verbose,
        nsecs: o.nsecs,
        refresh_on_max: o.refresh_on_max,
        oscope: o.oscope,
        histogram: (histogram > 0).then_some((
            histogram,
            if o.histofall {
                Layout::WithTotal
            } else {
                Layout::PerThread
            },
        )),
        histfile: o.histfile.clone(),
        json: o.json.clone(),
        fifo: o.fifo.clone(),
        spike: (o.spike > 0).then_some((o.spike, o.spike_nodes)),
        breaktrace: o.breaktrace > 0,
        resolution: o.resolution,
        verbose_before_affinity: o
            .order
            .iter()
            .position(|n| *n == "verbose")
            .is_some_and(|v| o.order.iter().position(|n| *n == "affinity") > Some(v)),
        affinity_cpus: affinity.map(|a| a.len()),
        policy: (o.policy, forced_other),
    };
    Ok(Setup {
        params,
        notes,
        output,
    })
}

/// The threads' policy and priority as cyclictest settles them, and whether
/// they run SCHED_OTHER whatever the policy named: a priority makes the
/// policy real-time, a real-time policy without one gets `threads + 1`, and a
/// time-sharing policy runs as SCHED_OTHER.
fn sched(o: &Options, threads: usize, notes: &mut Vec<String>) -> Result<(PolicyArg, i32, bool)> {
    let mut policy = o.policy;
    let mut priority = o.priority.unwrap_or(0);
    if !(0..=99).contains(&priority) {
        return Err(UsageError(format!("-p: {priority} is outside 0-99")).into());
    }
    if o.priospread && priority == 0 {
        priority = threads as i64 + 1;
        notes.push(format!("defaulting realtime priority to {priority}"));
    }
    if priority > 0 && !policy.is_realtime() {
        notes.push("policy and priority don't match: setting policy to SCHED_FIFO".into());
        policy = PolicyName::Fifo;
    }
    if policy.is_realtime() && priority == 0 {
        priority = threads as i64 + 1;
        notes.push(format!("defaulting realtime priority to {priority}"));
    }
    let arg = match policy {
        PolicyName::Fifo => PolicyArg::Fifo,
        PolicyName::Rr => PolicyArg::Rr,
        _ => PolicyArg::Other,
    };
    let forced_other = !policy.is_realtime();
    if forced_other {
        notes.push(format!(
            "rtlab: note: {} the threads run SCHED_OTHER, as in cyclictest: these are time-sharing latencies, not a real-time thread's; add -p 90 to measure those",
            match o.policy {
                PolicyName::Batch | PolicyName::Idle => format!("--policy={} runs as SCHED_OTHER in cyclictest, so", o.policy.name()),
                _ => "without -p".to_string(),
            }
        ));
    }
    Ok((arg, priority as i32, forced_other))
}

#[cfg(test)]
mod tests {
    use super::super::{args, options};
    use super::*;

    fn machine() -> Machine {
        Machine {
            cpus: vec![0, 1, 2, 3],
            mem_available: 0,
        }
    }

    fn s(line: &str) -> Setup {
        try_s(line).unwrap()
    }

    fn try_s(line: &str) -> Result<Setup> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        setup(&options::read(&args::parse(&args)?)?, &machine())
    }

    #[test]
    fn cyclictests_defaults() {
        let d = s("");
        let p = &d.params;
        assert_eq!(
            (p.period.interval.text(), p.distance.text()),
            ("1000", "500")
        );
        assert_eq!(
            (p.measured.cpus.as_ref().map(|v| v.text()), p.threads),
            (Some("0-3"), Some(Some(1)))
        );
        assert_eq!(
            (p.sched.policy, p.sched.priority),
            (PolicyArg::Other, Some(0))
        );
        assert!(!p.lock.mlock);
        assert_eq!(p.dma_latency, "0");
        assert_eq!(
            (p.loops, p.duration.as_ref().map(|v| v.text())),
            (None, None)
        );
        assert_eq!(p.timer, TimerArg::Absolute);
        assert_eq!(d.output.histogram, None);
        assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
        assert!(d.notes[0].contains("SCHED_OTHER"), "{:?}", d.notes);
        let checked = p.plan(&machine()).unwrap();
        drop(checked);
    }

    #[test]
    fn the_field_reports_lines_map_as_cyclictest_runs_them() {
        let a = s("-l100000 -m -n -a0 -t1 -p99 -i400 -h1000 -q");
        let p = &a.params;
        assert_eq!(
            (
                p.loops,
                p.lock.mlock,
                p.measured.cpus.as_ref().map(|v| v.text())
            ),
            (Some(100_000), true, Some("0"))
        );
        assert_eq!(
            (p.threads, p.sched.priority, p.sched.policy),
            (Some(Some(1)), Some(99), PolicyArg::Fifo)
        );
        assert_eq!(
            (p.period.interval.text(), p.histogram_max.text()),
            ("400", "1000")
        );
        assert_eq!((p.overflow_cycles, p.distance.text()), (1000, "0"));
        assert_eq!(a.output.histogram, Some((1000, Layout::PerThread)));
        assert!(a.output.quiet && a.notes.is_empty());
        let b = s("-p 30 -t -n -l 100000 -H 1000 --histfile hist");
        let p = &b.params;
        assert_eq!(
            (
                p.threads,
                p.measured.cpus.as_ref().map(|v| v.text()),
                p.sched.priority
            ),
            (Some(Some(4)), Some("0-3"), Some(30))
        );
        assert_eq!(b.output.histogram, Some((1000, Layout::WithTotal)));
        assert_eq!(b.output.histfile, Some(std::path::PathBuf::from("hist")));
    }

    #[test]
    fn threads_and_cpus() {
        assert_eq!(s("-t").params.threads, Some(Some(4)));
        assert_eq!(s("-t 3").params.threads, Some(Some(3)));
        let a = s("-a 1-2 -t");
        assert_eq!(
            (
                a.params.measured.cpus.as_ref().map(|v| v.text()),
                a.params.threads
            ),
            (Some("1-2"), Some(Some(2)))
        );
        assert_eq!(a.output.affinity_cpus, Some(2));
        assert_eq!(
            s("-a !0 -t")
                .params
                .measured
                .cpus
                .as_ref()
                .map(|v| v.text()),
            Some("1-3")
        );
        assert_eq!(
            s("-a").params.measured.cpus.as_ref().map(|v| v.text()),
            Some("0-3")
        );
        let smp = s("-S -t 1 -a 2 -p 80");
        assert_eq!(
            (
                smp.params.threads,
                smp.params.measured.cpus.as_ref().map(|v| v.text())
            ),
            (Some(Some(4)), Some("0-3"))
        );
        assert!(smp
            .notes
            .iter()
            .any(|n| n == "WARN: -t ignored due to smp mode"));
        assert!(smp
            .notes
            .iter()
            .any(|n| n == "WARN: -a ignored due to smp mode"));
        assert!(try_s("-ax").unwrap_err().to_string().starts_with("-a: 'x'"));
        assert!(try_s("-t 5 -t0").is_err());
    }

    #[test]
    fn priority_and_policy_settle_as_cyclictest_settles_them() {
        let f = s("--policy=fifo -t 2");
        assert_eq!(
            (f.params.sched.policy, f.params.sched.priority),
            (PolicyArg::Fifo, Some(3))
        );
        assert!(f
            .notes
            .contains(&"defaulting realtime priority to 3".to_string()));
        let b = s("--policy=batch");
        assert_eq!(
            (b.params.sched.policy, b.output.policy),
            (PolicyArg::Other, (PolicyName::Batch, true))
        );
        assert!(b.notes[0].contains("--policy=batch runs as SCHED_OTHER"));
        let m = s("-p 5 --policy=idle");
        assert_eq!(
            (m.params.sched.policy, m.params.sched.priority),
            (PolicyArg::Fifo, Some(5))
        );
        assert!(m
            .notes
            .iter()
            .any(|n| n.starts_with("policy and priority don't match")));
        let sp = s("--priospread -t 3");
        assert_eq!(
            (sp.params.sched.priority, sp.params.priospread),
            (Some(4), true)
        );
        assert_eq!(s("--policy=rr -p 9").params.sched.policy, PolicyArg::Rr);
        assert!(try_s("-p 100")
            .unwrap_err()
            .to_string()
            .starts_with("-p: 100"));
    }

    #[test]
    fn the_rest_of_the_options() {
        let x = s("-d 100 -D 10m -b 50 --tracemark -c 1 -A 10 -m -x --laptop -e 7 --mainaffinity 1 --deepest-idle-state=0");
        let p = &x.params;
        assert_eq!(
            (p.distance.text(), p.duration.as_ref().map(|v| v.text())),
            ("100", Some("10m"))
        );
        assert_eq!(
            (p.breaktrace.as_ref().map(|v| v.text()), p.tracemark),
            (Some("50999ns"), true)
        );
        assert_eq!((p.offset.text(), p.timer), ("10", TimerArg::Posix));
        assert_eq!(
            (
                p.dma_latency.as_str(),
                p.main_cpus.as_ref().map(|v| v.text())
            ),
            ("off", Some("1"))
        );
        assert_eq!(p.deepest_idle_state, Some(0));
        assert_eq!(s("--deepest-idle-state=-1").params.deepest_idle_state, None);
        assert_eq!(s("-e 7").params.dma_latency, "7");
        assert_eq!(s("--latency=-4").params.dma_latency, "0");
        assert_eq!(s("--default-system").params.dma_latency, "off");
        assert_eq!(s("-r").params.timer, TimerArg::Relative);
        assert_eq!(s("-s").params.timer, TimerArg::Nanosleep);
        assert_eq!(s("-s -x").notes[..3].len(), 3);
        assert_eq!(
            s("--secaligned 20")
                .params
                .second_aligned
                .as_ref()
                .map(|v| v.text()),
            Some("20")
        );
        assert_eq!(s("-h 2000000").params.histogram_max, "1000000");
        let v = s("-v -a 1 -o 5 --spike 20 --spike-nodes 3 -N");
        assert!(v.output.verbose_before_affinity && v.output.nsecs);
        assert_eq!((v.output.oscope, v.output.spike), (5, Some((20, 3))));
        assert!(!s("-a 1 -v").output.verbose_before_affinity);
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_with_the_reason() {
        let e = |l: &str| try_s(l).unwrap_err().to_string();
        assert!(e("-N -h 100").starts_with("-N with -h/-H"));
        assert!(e("-o 3").starts_with("-o: only meaningful with -v"));
        assert!(e("-A 5 --secaligned").contains("exclude each other"));
        assert!(e("-c 2").starts_with("-c: 2 is not a clock"));
        assert!(e("-t 0").contains("unexpected argument"));
        assert!(e("--threads=0").starts_with("-t: 0 threads"));
    }
}
