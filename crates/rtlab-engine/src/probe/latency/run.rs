//! The probe's threads: their set-up, the common start, and what the main
//! thread sees while they run ([`Watch`]).

use super::config::{
    BreakInfo, LatencyConfig, LatencyOutcome, SetupError, ThreadResult, TimerMode,
};
use super::{
    run_loop, warm_up_loop, LiveSnapshot, LiveStats, LoopEnd, LoopSpec, SpikeMarker, ThreadStats,
};
use crate::probe::ended::Ended;
use crate::probe::samples::Sample;
use crate::rt::clock::{Clock, NanosleepClock, SleepError, SystemClock, NS_PER_SEC};
use crate::rt::sched;
use crate::rt::timer::PosixTimer;
use crate::rt::{gettid, mem};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

/// What the main thread sees while the probe runs. Called on the thread that
/// called [`run`], never from a measuring thread.
pub trait Watch {
    /// Every thread's live values, about every tick, and once more when all
    /// have ended.
    fn live(&mut self, snaps: &[LiveSnapshot]);
    /// Wake-ups of thread `thread` since the last call, oldest first (only
    /// with a sample ring).
    fn samples(&mut self, _thread: usize, _samples: &[Sample]) {}
}

/// Where ftrace markers go when tracefs is mounted.
const TRACEFS_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The ftrace files a breaktrace writes to, opened before measuring.
struct Ftrace {
    marker: File,
    tracing_on: Option<File>,
}

impl Ftrace {
    fn open() -> Option<Ftrace> {
        TRACEFS_DIRS.iter().find_map(|dir| {
            let marker = OpenOptions::new()
                .write(true)
                .open(format!("{dir}/trace_marker"))
                .ok()?;
            let tracing_on = OpenOptions::new()
                .write(true)
                .open(format!("{dir}/tracing_on"))
                .ok();
            Some(Ftrace { marker, tracing_on })
        })
    }

    /// Writes the marker line and stops tracing so the buffer keeps the event.
    fn hit(&self, b: &BreakInfo) -> bool {
        let line = format!(
            "rtlab breaktrace: thread {} tid {} cycle {} latency {} ns\n",
            b.thread, b.tid, b.cycle, b.latency_ns
        );
        let ok = (&self.marker).write_all(line.as_bytes()).is_ok();
        if let Some(on) = &self.tracing_on {
            let _ = (&*on).write_all(b"0");
        }
        ok
    }
}

/// The common start: now, or the next full second of the clock (two when less
/// than 100 ms remain) plus an offset.
fn start_time(now: u64, second_aligned: Option<u64>) -> u64 {
    match second_aligned {
        None => now,
        Some(offset) => {
            let whole = now - now % NS_PER_SEC;
            let ahead = if now % NS_PER_SEC > 900_000_000 { 2 } else { 1 };
            whole + ahead * NS_PER_SEC + offset
        }
    }
}

/// Hands every thread's new samples to `watch`.
fn drain(lives: &[LiveStats], batch: &mut Vec<Sample>, watch: &mut dyn Watch) {
    for (i, live) in lives.iter().enumerate() {
        if let Some(ring) = live.samples() {
            batch.clear();
            if ring.drain_into(batch) > 0 {
                watch.samples(i, batch);
            }
        }
    }
}

/// One thread: set up as `cfg` says, wait for the common start, measure.
struct ThreadEnv<'a> {
    cfg: &'a LatencyConfig,
    setup: &'a Barrier,
    go: &'a Barrier,
    abort: &'a AtomicBool,
    start_at: &'a AtomicU64,
    stop: &'a AtomicBool,
    clock: SystemClock,
}

impl ThreadEnv<'_> {
    fn run(
        &self,
        i: usize,
        cpu: Option<usize>,
        err_slot: &Mutex<Option<SetupError>>,
        live: &LiveStats,
    ) -> ThreadResult {
        let cfg = self.cfg;
        let tid = gettid();
        live.tid.store(tid, Relaxed);
        let interval_ns = cfg.interval_of(i);
        let priority = cfg.priority_of(i);
        let mut stats =
            ThreadStats::keeping(cfg.hist_max_us, cfg.trace_points, cfg.overflow_cycles);
        stats.warm_up();
        let mut failure = None;
        if let Some(cpu) = cpu {
            if let Err(err) = sched::set_thread_affinity(0, &[cpu]) {
                failure = Some(SetupError::Affinity {
                    thread: i,
                    cpu,
                    err,
                });
            }
        }
        if failure.is_none() {
            let set = match &cfg.dl {
                Some(dl) => sched::deadline::set_thread_deadline(0, dl),
                None => sched::set_thread_policy(0, cfg.policy, priority),
            };
            if let Err(err) = set {
                failure = Some(SetupError::Policy { thread: i, err });
            }
        }
        let timer = match cfg.timer {
            TimerMode::Posix if failure.is_none() => match PosixTimer::for_this_thread(cfg.clock) {
                Ok(t) => Some(t),
                Err(errno) => {
                    failure = Some(SetupError::Timer { thread: i, errno });
                    None
                }
            },
            _ => None,
        };
        mem::prefault_stack();
        if failure.is_none() {
            match cfg.timer {
                TimerMode::Nanosleep => warm_up_loop(&NanosleepClock(self.clock), &mut stats),
                _ => warm_up_loop(&self.clock, &mut stats),
            }
        }
        *err_slot.lock().unwrap_or_else(|e| e.into_inner()) = failure;
        let mut counters = cfg.perf.then(crate::perf::Counters::this_thread);
        self.setup.wait();
        self.go.wait();
        let before = mem::thread_faults();
        if let Some(c) = counters.as_mut() {
            c.enable();
        }
        let end = if self.abort.load(Relaxed) {
            LoopEnd::Stopped
        } else {
            let start = self.start_at.load(Relaxed);
            let spec = LoopSpec {
                interval_ns,
                loops: cfg.loops,
                end_ns: (cfg.duration_ns > 0).then(|| start + cfg.duration_ns),
                deadline_ns: cfg.deadline_ns.unwrap_or(interval_ns),
                breaktrace_ns: cfg.breaktrace_ns,
                relative: matches!(cfg.timer, TimerMode::Relative | TimerMode::Nanosleep),
                histograms: cfg.thread_histograms,
            };
            let first = start + interval_ns + i as u64 * cfg.offset_ns;
            match (&timer, cfg.timer) {
                (Some(t), _) => match t.arm(first, interval_ns) {
                    Ok(()) => run_loop(t, &spec, first, &mut stats, live, self.stop),
                    Err(e) => LoopEnd::ClockError(SleepError::Unsupported(e)),
                },
                (None, TimerMode::Nanosleep) => run_loop(
                    &NanosleepClock(self.clock),
                    &spec,
                    first,
                    &mut stats,
                    live,
                    self.stop,
                ),
                _ => run_loop(&self.clock, &spec, first, &mut stats, live, self.stop),
            }
        };
        let faults = mem::thread_faults().since(before);
        ThreadResult {
            index: i,
            cpu,
            tid,
            interval_ns,
            priority,
            stats,
            end,
            dropped_samples: live.samples().map_or(0, |r| r.dropped()),
            faults,
            perf: counters.map(|c| {
                c.disable();
                (c.read(), c.switches())
            }),
        }
    }
}

/// Runs the probe: spawns one thread per entry of `cfg.threads`, pins it, sets its
/// policy, allocates and prefaults, then starts all threads together. While they
/// run, `watch` sees every thread's live values about every `tick`, and their
/// samples when `cfg.sample_ring` asks for them. `stop` ends the run early (the
/// results gathered so far are returned).
///
/// Memory locking and the `cpu_dma_latency` request are the caller's business, as
/// they concern the whole process.
pub fn run(
    cfg: &LatencyConfig,
    stop: &AtomicBool,
    tick: Duration,
    watch: &mut dyn Watch,
) -> Result<LatencyOutcome, SetupError> {
    let n = cfg.threads.len();
    let setup = Barrier::new(n + 1);
    let go = Barrier::new(n + 1);
    let abort = AtomicBool::new(false);
    let start_at = AtomicU64::new(0);
    let errors: Vec<Mutex<Option<SetupError>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let mut lives: Vec<LiveStats> = Vec::with_capacity(n);
    for i in 0..n {
        let marker = match &cfg.spike_marks {
            Some(marks) => Some(SpikeMarker::open(marks, i).map_err(|e| SetupError::Marker {
                errno: e.raw_os_error().unwrap_or(0),
            })?),
            None => None,
        };
        lives.push(LiveStats::with_samples(cfg.sample_ring).with_marker(marker));
    }
    let ftrace = cfg
        .breaktrace_ns
        .filter(|_| cfg.trace_marker)
        .and_then(|_| Ftrace::open());
    let clock = SystemClock::new(cfg.clock);
    let env = ThreadEnv {
        cfg,
        setup: &setup,
        go: &go,
        abort: &abort,
        start_at: &start_at,
        stop,
        clock,
    };

    let ended = Ended::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = cfg
            .threads
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let (env, err_slot, live, ended) = (&env, &errors[i], &lives[i], &ended);
                std::thread::Builder::new()
                    .name(format!("rtlab-lat{i}"))
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || {
                        let _end = ended.guard();
                        env.run(i, cpu, err_slot, live)
                    })
                    .expect("spawning a probe thread")
            })
            .collect();

        setup.wait();
        let first_error = errors
            .iter()
            .find_map(|e| *e.lock().unwrap_or_else(|e| e.into_inner()));
        if first_error.is_some() {
            abort.store(true, Relaxed);
        }
        let t0 = start_time(clock.now(), cfg.second_aligned);
        start_at.store(t0, Relaxed);
        go.wait();

        let mut snaps = vec![LiveSnapshot::default(); n];
        let mut batch = Vec::with_capacity(cfg.sample_ring);
        if first_error.is_none() {
            // Samples to take out of the rings: as often as asked; else only
            // the live values, once a tick.
            let step = if cfg.sample_ring > 0 {
                Duration::from_nanos(cfg.poll_ns.max(1)).min(tick)
            } else {
                tick
            };
            ended.wait_ticking(n, step, tick, |due| {
                drain(&lives, &mut batch, watch);
                if due {
                    for (snap, live) in snaps.iter_mut().zip(&lives) {
                        *snap = live.snapshot();
                    }
                    watch.live(&snaps);
                }
            });
        }
        let threads: Vec<ThreadResult> = handles
            .into_iter()
            .map(|h| h.join().expect("a probe thread panicked"))
            .collect();
        let elapsed_ns = clock.now().saturating_sub(t0);
        if let Some(e) = first_error {
            return Err(e);
        }
        drain(&lives, &mut batch, watch);
        for (snap, live) in snaps.iter_mut().zip(&lives) {
            *snap = live.snapshot();
        }
        watch.live(&snaps);
        let breaktrace = threads.iter().find_map(|t| match t.end {
            LoopEnd::Break { cycle, latency_ns } => Some(BreakInfo {
                thread: t.index,
                tid: t.tid,
                cycle,
                latency_ns,
            }),
            _ => None,
        });
        let trace_marker_written = match (&breaktrace, &ftrace) {
            (Some(b), Some(f)) => f.hit(b),
            _ => false,
        };
        Ok(LatencyOutcome {
            threads,
            breaktrace,
            trace_marker_written,
            elapsed_ns,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rt::clock::ClockId;
    use crate::rt::sched::Policy;

    #[test]
    fn the_common_start_is_now_or_the_next_whole_second_plus_the_offset() {
        assert_eq!(start_time(5_300_000_000, None), 5_300_000_000);
        assert_eq!(start_time(5_300_000_000, Some(0)), 6_000_000_000);
        assert_eq!(start_time(5_950_000_000, Some(7)), 7_000_000_007);
    }

    struct Collect {
        samples: Vec<Vec<Sample>>,
        last: Vec<LiveSnapshot>,
    }

    impl Watch for Collect {
        fn live(&mut self, snaps: &[LiveSnapshot]) {
            self.last = snaps.to_vec();
        }
        fn samples(&mut self, thread: usize, s: &[Sample]) {
            self.samples[thread].extend_from_slice(s);
        }
    }

    fn config(timer: TimerMode) -> LatencyConfig {
        LatencyConfig {
            threads: vec![None, None],
            interval_ns: 200_000,
            distance_ns: 100_000,
            policy: Policy::Other,
            priority: 0,
            dl: None,
            priospread: false,
            clock: ClockId::Monotonic,
            timer,
            offset_ns: 0,
            second_aligned: None,
            loops: 40,
            duration_ns: 0,
            deadline_ns: None,
            breaktrace_ns: None,
            trace_marker: false,
            spike_marks: None,
            hist_max_us: 1000,
            overflow_cycles: 16,
            trace_points: 64,
            sample_ring: 1024,
            poll_ns: 20_000_000,
            thread_histograms: true,
            perf: false,
        }
    }

    /// Runs `cfg` to its end with a live tick every `tick_ms`.
    fn run_ticking(cfg: &LatencyConfig, tick_ms: u64, watch: &mut dyn Watch) -> LatencyOutcome {
        run(
            cfg,
            &AtomicBool::new(false),
            Duration::from_millis(tick_ms),
            watch,
        )
        .unwrap()
    }

    /// Without sample rings the thread that runs the probe sleeps a tick at a
    /// time and wakes when the threads end, not every `poll_ns`: its voluntary
    /// switches are about its live ticks (20 ms polls would be five a tick).
    #[test]
    fn without_rings_the_waiting_thread_wakes_once_a_tick() {
        struct Ticks(usize);
        impl Watch for Ticks {
            fn live(&mut self, _: &[LiveSnapshot]) {
                self.0 += 1;
            }
            fn samples(&mut self, _: usize, _: &[Sample]) {
                unreachable!("no ring, no samples");
            }
        }
        let switches = || {
            std::fs::read_to_string("/proc/thread-self/status")
                .unwrap()
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap()
        };
        let cfg = LatencyConfig {
            interval_ns: 1_000_000,
            loops: 500,
            sample_ring: 0,
            ..config(TimerMode::Absolute)
        };
        let mut ticks = Ticks(0);
        let before = switches();
        let out = run_ticking(&cfg, 100, &mut ticks);
        let woke = switches() - before;
        assert!(out.threads.iter().all(|t| t.end == LoopEnd::LoopsDone));
        // The run takes 0.5 s at least: ticks, and the final values.
        assert!(ticks.0 >= 5, "{} ticks", ticks.0);
        // Setting up and ending (barriers, joins) take a few more.
        assert!(
            woke <= ticks.0 as u64 + 8,
            "{woke} wake-ups for {} ticks",
            ticks.0
        );
    }

    #[test]
    fn every_timer_mode_hands_out_every_sample_and_the_final_values() {
        for timer in [
            TimerMode::Absolute,
            TimerMode::Relative,
            TimerMode::Nanosleep,
            TimerMode::Posix,
        ] {
            let cfg = config(timer);
            let mut w = Collect {
                samples: vec![Vec::new(); 2],
                last: Vec::new(),
            };
            let out = run_ticking(&cfg, 5, &mut w);
            for (t, r) in out.threads.iter().enumerate() {
                assert_eq!(r.end, LoopEnd::LoopsDone, "{timer:?}");
                assert_eq!(r.interval_ns, cfg.interval_of(t));
                assert_eq!(r.dropped_samples, 0);
                let s = &w.samples[t];
                assert_eq!(s.len(), 40, "{timer:?}");
                assert!(s.iter().enumerate().all(|(c, x)| x.cycle == c as u64));
                assert_eq!(
                    s.iter().map(|x| x.latency_ns).max(),
                    Some(r.stats.moments.max)
                );
                assert_eq!(w.last[t].cycles, 40);
                assert_eq!(w.last[t].tid, r.tid);
                assert_eq!(w.last[t].last_ns, s[39].latency_ns);
            }
        }
    }
}
