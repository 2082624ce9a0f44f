//! The client side: messages on a fixed, absolute schedule, each made of
//! `legs` request/echo round trips, timed as a whole and per leg.
//!
//! Message `i` is due at `first + i·period` on the clock, whatever happened to the
//! previous one; a message that ends after later slots have passed makes those
//! slots **overruns** (counted, never silently absorbed: coordinated omission is
//! visible). A message whose replies do not all arrive within the timeout is
//! **lost** and counts as a deadline miss. Replies are matched by session, message
//! number and leg, so duplicates, reordered and late replies are all counted.
//!
//! The loop ([`run_loop`]) is generic over [`Clock`] and [`Transport`] so tests can
//! drive it with scripted time and a scripted network. It never allocates.

use super::transport::{NetError, Transport};
use crate::probe::ended::Ended;
use crate::probe::latency::LiveSnapshot;
use crate::proto::{self, Header, Kind, HEADER_LEN, MAX_MESSAGE};
use crate::rt::clock::{Clock, SleepError, SystemClock};
use crate::rt::mem;
use crate::rt::sched::{self, Policy, SchedError};
use crate::stats::hist::LatencyHistogram;
use crate::stats::trace::MaxTrace;
use crate::stats::windows::Windows;
use crate::stats::{Moments, Summary};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// What the client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingConfig {
    /// Time between message starts (ns, > 0).
    pub period_ns: u64,
    /// Round trips per message (1..=[`proto::MAX_LEGS`]).
    pub legs: u8,
    /// Messages to send (> 0).
    pub count: u64,
    /// Payload bytes per request (≤ [`proto::MAX_PAYLOAD`]).
    pub payload: u16,
    /// A message whose replies are not all back this long after it started is lost (ns).
    pub timeout_ns: u64,
    /// A message taking longer than this is a deadline miss (ns).
    pub deadline_ns: u64,
    /// This run's session number, carried in every request.
    pub session: u32,
    /// Points kept in the per-message time series (one per message up to this).
    pub trace_points: usize,
    /// Spin on the clock until each slot instead of sleeping: the CPU stays awake
    /// (no idle-exit or wake-up cost in the first leg) at the price of a whole CPU.
    pub busy_wait: bool,
}

/// The order statistics of one kind of time (a leg, the whole message, ...).
#[derive(Debug, Clone)]
pub struct TimeStats {
    /// Exact count, min, max, mean, stddev.
    pub moments: Moments,
    /// HdrHistogram, 1 ns to 100 s.
    pub hist: LatencyHistogram,
    /// The values in time windows, for the intervals of their figures.
    pub windows: Windows,
    /// Values above the deadline.
    pub misses: u64,
    /// Message number of the maximum.
    pub max_at: u64,
}

impl TimeStats {
    /// Nothing recorded yet.
    pub fn new() -> Self {
        TimeStats {
            moments: Moments::default(),
            hist: LatencyHistogram::new(),
            windows: Windows::new(),
            misses: 0,
            max_at: 0,
        }
    }

    /// Adds value `ns` of event `seq`; above `deadline_ns` it is a miss.
    #[inline]
    pub fn record(&mut self, ns: u64, seq: u64, deadline_ns: u64) {
        if self.moments.count == 0 || ns > self.moments.max {
            self.max_at = seq;
        }
        self.moments.record(ns);
        self.hist.record(ns);
        self.windows.record(ns);
        if ns > deadline_ns {
            self.misses += 1;
        }
    }

    /// The summary of what was recorded.
    pub fn summary(&self) -> Summary {
        Summary::new(&self.moments, &self.hist)
    }
}

impl Default for TimeStats {
    fn default() -> Self {
        TimeStats::new()
    }
}

/// Everything the client gathers. Allocated before the first message.
#[derive(Debug, Clone)]
pub struct PingStats {
    /// Whole-message response time: first request sent to last reply received.
    pub total: TimeStats,
    /// Per-leg round-trip time, `legs[i]` for leg `i`.
    pub legs: Vec<TimeStats>,
    /// Time the requests of a message spent inside the server (sum over legs), as
    /// the server measured it: the rest of the total is network and client.
    pub server: TimeStats,
    /// How late the client started each message after its slot (client wake-up
    /// latency).
    pub start_lag: Moments,
    /// Whole-message response time per message, for the scatter plot.
    pub trace: MaxTrace,
    /// Messages started.
    pub sent: u64,
    /// Messages whose every leg was answered in time.
    pub completed: u64,
    /// Messages lost (a leg unanswered within the timeout, or a send refused).
    pub lost: u64,
    /// Slots that passed while an earlier message was still running (skipped).
    pub overruns: u64,
    /// Deadline misses: completed messages over the deadline plus lost ones.
    pub misses: u64,
    /// Replies received twice.
    pub duplicates: u64,
    /// Replies that arrived after a reply to a later request.
    pub reordered: u64,
    /// Replies that arrived after their message was given up as lost.
    pub late: u64,
    /// Datagrams that were not a reply of this run (malformed, other session).
    pub foreign: u64,
    /// "Port unreachable" answers (nothing listening at the server's address).
    pub refused: u64,
    /// Other send/receive errors.
    pub errors: u64,
    /// CPU time of the client thread while measuring (ns).
    pub cpu_ns: u64,
    /// Which legs of each message were answered (bit `leg` of `seen[seq]`).
    seen: Vec<u32>,
    /// The largest (seq, leg) key answered so far, +1 (0: none yet).
    highest: u64,
}

impl PingStats {
    /// Allocates all storage for `cfg`.
    pub fn new(cfg: &PingConfig) -> Self {
        PingStats {
            total: TimeStats::new(),
            legs: (0..cfg.legs).map(|_| TimeStats::new()).collect(),
            server: TimeStats::new(),
            start_lag: Moments::default(),
            trace: MaxTrace::new(cfg.trace_points),
            sent: 0,
            completed: 0,
            lost: 0,
            overruns: 0,
            misses: 0,
            duplicates: 0,
            reordered: 0,
            late: 0,
            foreign: 0,
            refused: 0,
            errors: 0,
            cpu_ns: 0,
            seen: vec![0; cfg.count as usize],
            highest: 0,
        }
    }
}

/// Why the client stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingEnd {
    /// Every message was sent.
    Done,
    /// The stop flag was raised.
    Stopped,
    /// The TCP connection closed: the remaining messages cannot be sent.
    Closed,
    /// The kernel refused to sleep on the clock.
    ClockError(SleepError),
}

/// Live values for the progress view. Single writer, relaxed stores.
#[derive(Debug, Default)]
pub struct PingLive {
    sent: AtomicU64,
    last: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    sum: AtomicU64,
    done: AtomicU64,
    overruns: AtomicU64,
    misses: AtomicU64,
}

impl PingLive {
    /// A copy in the latency probe's shape: cycles = messages sent, misses include
    /// losses.
    pub fn snapshot(&self) -> LiveSnapshot {
        let done = self.done.load(Relaxed);
        LiveSnapshot {
            tid: 0,
            cycles: self.sent.load(Relaxed),
            last_ns: self.last.load(Relaxed),
            min_ns: self.min.load(Relaxed),
            max_ns: self.max.load(Relaxed),
            avg_ns: self.sum.load(Relaxed).checked_div(done).unwrap_or(0),
            overruns: self.overruns.load(Relaxed),
            misses: self.misses.load(Relaxed),
        }
    }
}

/// Where a reply belongs, relative to the exchange being waited for.
enum Match {
    /// The reply being waited for.
    Ours,
    /// Not ours; already counted.
    Other,
}

/// Classifies a received datagram and updates the duplicate/reorder/late counts.
fn classify(stats: &mut PingStats, cfg: &PingConfig, msg: &[u8], seq: u64, leg: u8) -> Match {
    let h = match proto::parse(msg) {
        Ok(h)
            if h.kind == Kind::Reply
                && h.session == cfg.session
                && h.legs == cfg.legs
                && h.seq < cfg.count =>
        {
            h
        }
        _ => {
            stats.foreign += 1;
            return Match::Other;
        }
    };
    let key = h.seq * cfg.legs as u64 + h.leg as u64;
    let current = seq * cfg.legs as u64 + leg as u64;
    if key > current {
        // A reply to a request not sent yet: forged or from another run.
        stats.foreign += 1;
        return Match::Other;
    }
    let bit = 1u32 << h.leg;
    let slot = &mut stats.seen[h.seq as usize];
    if *slot & bit != 0 {
        stats.duplicates += 1;
        return Match::Other;
    }
    *slot |= bit;
    if key + 1 < stats.highest {
        stats.reordered += 1;
    }
    stats.highest = stats.highest.max(key + 1);
    if key == current {
        Match::Ours
    } else {
        stats.late += 1;
        Match::Other
    }
}

/// The client's message buffers, on the client thread's stack.
struct Buffers {
    send: [u8; MAX_MESSAGE],
    recv: [u8; MAX_MESSAGE + 1],
    /// Time each leg of the current message took (ns).
    leg_ns: [u64; proto::MAX_LEGS as usize],
}

/// Runs one message: `legs` exchanges, all within `cfg.timeout_ns` of the start.
/// Fills `b.leg_ns` and returns the start, the end and the server time summed, or
/// why the message is lost.
fn exchange<C: Clock, T: Transport>(
    clock: &C,
    t: &mut T,
    cfg: &PingConfig,
    seq: u64,
    b: &mut Buffers,
    stats: &mut PingStats,
) -> Result<(u64, u64, u64), NetError> {
    let start = clock.now();
    let deadline = start.saturating_add(cfg.timeout_ns);
    let mut server_ns = 0u64;
    let mut end = start;
    for leg in 0..cfg.legs {
        let sent_at = clock.now();
        proto::write_header(
            &mut b.send,
            &Header {
                kind: Kind::Request,
                leg,
                legs: cfg.legs,
                session: cfg.session,
                payload_len: cfg.payload,
                seq,
                client_ns: sent_at,
                server_ns: 0,
            },
        );
        t.send(&b.send[..HEADER_LEN + cfg.payload as usize])?;
        loop {
            let now = clock.now();
            if now >= deadline {
                return Err(NetError::Timeout);
            }
            match t.recv(&mut b.recv, deadline - now) {
                Ok(n) => {
                    let at = clock.now();
                    if let Match::Ours = classify(stats, cfg, &b.recv[..n], seq, leg) {
                        if at > deadline {
                            stats.late += 1;
                            return Err(NetError::Timeout);
                        }
                        // The reply's header is valid: classify parsed it.
                        server_ns +=
                            u64::from_be_bytes(b.recv[32..40].try_into().unwrap_or([0; 8]));
                        b.leg_ns[leg as usize] = at.saturating_sub(sent_at);
                        end = at;
                        break;
                    }
                }
                Err(NetError::Timeout | NetError::Interrupted) => {}
                Err(NetError::Garbled) => stats.foreign += 1,
                Err(e) => return Err(e),
            }
        }
    }
    Ok((start, end, server_ns))
}

/// The client loop: sends `cfg.count` messages, the first at `first` and then on
/// the absolute schedule `first + k·period`, until done or `stop`.
pub fn run_loop<C: Clock, T: Transport>(
    clock: &C,
    t: &mut T,
    cfg: &PingConfig,
    first: u64,
    stats: &mut PingStats,
    live: &PingLive,
    stop: &AtomicBool,
) -> PingEnd {
    let period = cfg.period_ns.max(1);
    let mut b = Buffers {
        send: [0u8; MAX_MESSAGE],
        recv: [0u8; MAX_MESSAGE + 1],
        leg_ns: [0u64; proto::MAX_LEGS as usize],
    };
    // Fill the payload with a pattern once; headers are rewritten per request.
    for (i, byte) in b.send.iter_mut().enumerate().skip(HEADER_LEN) {
        *byte = (i % 251) as u8;
    }
    let mut next = first;
    let mut live_sum = 0u64;
    live.min.store(u64::MAX, Relaxed);
    while stats.sent < cfg.count {
        if stop.load(Relaxed) {
            return PingEnd::Stopped;
        }
        if cfg.busy_wait {
            // Bounded by one period; the stop flag is checked on the way.
            while clock.now() < next {
                if stop.load(Relaxed) {
                    return PingEnd::Stopped;
                }
                std::hint::spin_loop();
            }
        } else {
            match clock.sleep_until(next) {
                Ok(()) => {}
                Err(SleepError::Interrupted) => continue,
                Err(e) => return PingEnd::ClockError(e),
            }
        }
        let seq = stats.sent;
        stats.sent += 1;
        let outcome = exchange(clock, t, cfg, seq, &mut b, stats);
        match outcome {
            Ok((start, end, server_ns)) => {
                let total = end.saturating_sub(start);
                stats.start_lag.record(start.saturating_sub(next));
                stats.total.record(total, seq, cfg.deadline_ns);
                stats.server.record(server_ns, seq, cfg.deadline_ns);
                for (s, &ns) in stats.legs.iter_mut().zip(&b.leg_ns) {
                    s.record(ns, seq, cfg.deadline_ns);
                }
                stats.trace.record(next.saturating_sub(first), total);
                stats.completed += 1;
                if total > cfg.deadline_ns {
                    stats.misses += 1;
                }
                live_sum = live_sum.wrapping_add(total);
                live.last.store(total, Relaxed);
                live.min.store(stats.total.moments.min, Relaxed);
                live.max.store(stats.total.moments.max, Relaxed);
                live.sum.store(live_sum, Relaxed);
                live.done.store(stats.completed, Relaxed);
            }
            Err(e) => {
                stats.lost += 1;
                stats.misses += 1;
                match e {
                    NetError::Refused => stats.refused += 1,
                    NetError::Timeout => {}
                    NetError::Closed => {
                        live.sent.store(stats.sent, Relaxed);
                        return PingEnd::Closed;
                    }
                    _ => stats.errors += 1,
                }
            }
        }
        live.sent.store(stats.sent, Relaxed);
        live.misses.store(stats.misses, Relaxed);
        // Slots whose time passed while this message ran are overruns, as in the
        // latency probe: they are counted and skipped, and the next message goes
        // out at the first slot still in the future.
        next = next.saturating_add(period);
        let now = clock.now();
        if now > next {
            let expired = (now - next) / period + 1;
            stats.overruns += expired;
            next = next.saturating_add(expired.saturating_mul(period));
        }
        live.overruns.store(stats.overruns, Relaxed);
    }
    PingEnd::Done
}

/// Asks the server for its settings (an info request with `room` payload bytes,
/// the most the answer may carry), trying `tries` times, each waiting `wait_ns`.
/// Returns the answer's payload length copied into `out`.
pub fn fetch_info<C: Clock, T: Transport>(
    clock: &C,
    t: &mut T,
    session: u32,
    room: u16,
    tries: u32,
    wait_ns: u64,
    out: &mut [u8],
) -> Result<usize, NetError> {
    let mut req = vec![0u8; HEADER_LEN + room as usize];
    let mut buf = vec![0u8; MAX_MESSAGE + 1];
    let mut last = NetError::Timeout;
    for attempt in 0..tries {
        proto::write_header(
            &mut req,
            &Header {
                kind: Kind::InfoRequest,
                leg: 0,
                legs: 1,
                session,
                payload_len: room,
                seq: attempt as u64,
                client_ns: clock.now(),
                server_ns: 0,
            },
        );
        t.send(&req)?;
        let deadline = clock.now().saturating_add(wait_ns);
        loop {
            let now = clock.now();
            if now >= deadline {
                break;
            }
            match t.recv(&mut buf, deadline - now) {
                Ok(n) => match proto::parse(&buf[..n]) {
                    Ok(h) if h.kind == Kind::InfoReply && h.session == session => {
                        let len = (h.payload_len as usize).min(out.len());
                        out[..len].copy_from_slice(&buf[HEADER_LEN..HEADER_LEN + len]);
                        return Ok(len);
                    }
                    _ => {}
                },
                Err(NetError::Timeout | NetError::Interrupted) => {}
                Err(e @ (NetError::Refused | NetError::Closed)) => {
                    last = e;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    Err(last)
}

/// Where and how the client thread runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSetup {
    /// CPUs to pin the thread to (empty: no pinning).
    pub cpus: Vec<usize>,
    /// Scheduling policy.
    pub policy: Policy,
    /// Priority (1..=99 for RT policies, 0 otherwise).
    pub priority: i32,
}

impl ThreadSetup {
    /// Applies the pinning and the policy to the calling thread.
    pub fn apply(&self) -> Result<(), SetupError> {
        if !self.cpus.is_empty() {
            sched::set_thread_affinity(0, &self.cpus).map_err(SetupError::Affinity)?;
        }
        sched::set_thread_policy(0, self.policy, self.priority).map_err(SetupError::Policy)
    }
}

/// A thread could not be set up as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupError {
    /// `sched_setaffinity` refused the CPUs.
    Affinity(SchedError),
    /// `sched_setscheduler` refused the policy/priority.
    Policy(SchedError),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Affinity(e) => write!(f, "cannot pin the thread to its CPUs: {e}"),
            SetupError::Policy(e) => write!(f, "cannot set the scheduling policy: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

/// What the client run hands back.
#[derive(Debug, Clone)]
pub struct PingOutcome {
    /// What was gathered.
    pub stats: PingStats,
    /// Why it stopped.
    pub end: PingEnd,
    /// From the first slot to the end of the last message (ns).
    pub elapsed_ns: u64,
}

/// Runs the client on its own thread (pinned, with the given policy, stack
/// prefaulted), starting one period from now. `observe` gets the live values about
/// every `tick` while it runs.
pub fn run<T: Transport + Send>(
    cfg: &PingConfig,
    mut transport: T,
    setup: &ThreadSetup,
    stop: &AtomicBool,
    tick: Duration,
    observe: &mut dyn FnMut(LiveSnapshot),
) -> Result<PingOutcome, SetupError> {
    let live = PingLive::default();
    let ended = Ended::default();
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("rtlab-ping".into())
            .stack_size(512 * 1024)
            .spawn_scoped(s, || {
                let _end = ended.guard();
                setup.apply()?;
                let clock = SystemClock::new(crate::rt::clock::ClockId::Monotonic);
                let mut stats = PingStats::new(cfg);
                mem::prefault_stack();
                let cpu0 = super::thread_cpu_ns();
                let first = clock.now() + cfg.period_ns.min(100_000_000);
                let end = run_loop(&clock, &mut transport, cfg, first, &mut stats, &live, stop);
                stats.cpu_ns = super::thread_cpu_ns().saturating_sub(cpu0);
                Ok(PingOutcome {
                    stats,
                    end,
                    elapsed_ns: clock.now().saturating_sub(first),
                })
            })
            .expect("spawning the client thread");
        ended.wait_ticking(1, tick, tick, |due| {
            if due {
                observe(live.snapshot());
            }
        });
        handle.join().expect("the client thread panicked")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// Time that moves only when something waits.
    #[derive(Clone, Default)]
    struct FakeClock(Rc<Cell<u64>>);

    impl Clock for FakeClock {
        fn now(&self) -> u64 {
            self.0.get()
        }
        fn sleep_until(&self, deadline: u64) -> Result<(), SleepError> {
            self.0.set(self.0.get().max(deadline));
            Ok(())
        }
    }

    /// What the scripted server does with request number `n` (counted over all
    /// requests): answer after some ns, answer twice, or stay silent.
    #[derive(Clone, Copy)]
    enum Act {
        Echo(u64),
        Twice(u64),
        Silent,
    }

    /// An echo server in the same process, on the fake clock.
    struct FakeNet {
        clock: FakeClock,
        script: RefCell<Vec<Act>>,
        requests: Cell<usize>,
        queue: VecDeque<(u64, Vec<u8>)>,
    }

    impl FakeNet {
        fn new(clock: FakeClock, script: Vec<Act>) -> Self {
            FakeNet {
                clock,
                script: RefCell::new(script),
                requests: Cell::new(0),
                queue: VecDeque::new(),
            }
        }
    }

    impl Transport for FakeNet {
        fn send(&mut self, msg: &[u8]) -> Result<(), NetError> {
            let n = self.requests.get();
            self.requests.set(n + 1);
            let act = self
                .script
                .borrow()
                .get(n)
                .copied()
                .unwrap_or(Act::Echo(1_000));
            let mut reply = msg.to_vec();
            let h = proto::parse(msg).unwrap();
            let len = proto::make_answer(&mut reply, &h, 500, b"");
            reply.truncate(len);
            let now = self.clock.now();
            match act {
                Act::Echo(d) => self.queue.push_back((now + d, reply)),
                Act::Twice(d) => {
                    self.queue.push_back((now + d, reply.clone()));
                    self.queue.push_back((now + d, reply));
                }
                Act::Silent => {}
            }
            self.queue.make_contiguous().sort_by_key(|(at, _)| *at);
            Ok(())
        }

        fn recv(&mut self, buf: &mut [u8], wait_ns: u64) -> Result<usize, NetError> {
            let now = self.clock.now();
            match self.queue.front() {
                Some((at, _)) if *at <= now + wait_ns => {
                    let (at, m) = self.queue.pop_front().unwrap();
                    self.clock.0.set(now.max(at));
                    buf[..m.len()].copy_from_slice(&m);
                    Ok(m.len())
                }
                _ => {
                    self.clock.0.set(now + wait_ns);
                    Err(NetError::Timeout)
                }
            }
        }
    }

    fn cfg(count: u64, legs: u8) -> PingConfig {
        PingConfig {
            period_ns: 1_000_000,
            legs,
            count,
            payload: 16,
            timeout_ns: 5_000_000,
            deadline_ns: 3_000_000,
            session: 42,
            trace_points: count as usize,
            busy_wait: false,
        }
    }

    fn drive(c: &PingConfig, script: Vec<Act>) -> (PingStats, PingEnd) {
        let clock = FakeClock::default();
        let mut net = FakeNet::new(clock.clone(), script);
        let mut stats = PingStats::new(c);
        let end = run_loop(
            &clock,
            &mut net,
            c,
            1_000_000,
            &mut stats,
            &PingLive::default(),
            &AtomicBool::new(false),
        );
        (stats, end)
    }

    #[test]
    fn times_every_leg_and_the_whole_message() {
        let c = cfg(5, 3);
        let (s, end) = drive(&c, vec![Act::Echo(10_000); 15]);
        assert_eq!(end, PingEnd::Done);
        assert_eq!((s.sent, s.completed, s.lost, s.overruns), (5, 5, 0, 0));
        assert_eq!(s.total.moments.min, 30_000);
        assert_eq!(s.total.moments.max, 30_000);
        assert_eq!(s.server.moments.max, 1_500);
        for l in &s.legs {
            assert_eq!((l.moments.count, l.moments.max), (5, 10_000));
        }
        assert_eq!(s.trace.points().len(), 5);
        // One point per message at its slot.
        let offsets: Vec<u64> = s.trace.points().iter().map(|p| p.offset_ns).collect();
        assert_eq!(offsets, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn a_slow_reply_makes_overruns_not_a_hidden_gap() {
        // Message 1 takes 3.5 periods: the slots of 1 ms, 2 ms and 3 ms after it
        // pass while it runs (overruns); message 2 goes out at the next slot.
        let c = cfg(4, 1);
        let (s, _) = drive(&c, vec![Act::Echo(1_000), Act::Echo(3_500_000)]);
        assert_eq!(s.overruns, 3);
        assert_eq!(s.sent, 4);
        assert_eq!(s.misses, 1, "3.5 ms is over the 3 ms deadline");
        assert_eq!(s.trace.points()[2].offset_ns, 5_000_000);
        assert_eq!(s.start_lag.max, 0, "every message started on its slot");
    }

    #[test]
    fn counts_losses_duplicates_and_late_replies() {
        // Request 1 is never answered (lost); request 2 is answered twice; request
        // 3's reply comes after the timeout (lost), and arrives while message 5
        // waits, after message 4's reply (late and reordered).
        let c = cfg(6, 1);
        let script = vec![
            Act::Echo(1_000),
            Act::Silent,
            Act::Twice(1_000),
            Act::Echo(6_500_000),
            Act::Echo(1_000),
        ];
        let (s, end) = drive(&c, script);
        assert_eq!(end, PingEnd::Done);
        assert_eq!((s.sent, s.completed, s.lost), (6, 4, 2));
        assert_eq!(s.duplicates, 1);
        assert_eq!(s.late, 1);
        assert_eq!(s.reordered, 1, "message 3's reply came after message 4's");
        assert_eq!(
            s.overruns, 10,
            "5 slots pass during each of the two timeouts"
        );
        assert_eq!(s.misses, 2);
        assert_eq!(s.total.moments.count + s.lost, s.sent);
    }

    #[test]
    fn a_foreign_session_is_ignored() {
        let c = cfg(1, 1);
        let clock = FakeClock::default();
        let mut net = FakeNet::new(clock.clone(), vec![Act::Echo(100)]);
        let mut other = vec![0u8; HEADER_LEN];
        let h = Header {
            kind: Kind::Reply,
            leg: 0,
            legs: 1,
            session: 7,
            payload_len: 0,
            seq: 0,
            client_ns: 0,
            server_ns: 0,
        };
        proto::write_header(&mut other, &h);
        net.queue.push_back((0, other));
        net.queue.push_back((0, b"garbage".to_vec()));
        let mut stats = PingStats::new(&c);
        let live = PingLive::default();
        run_loop(
            &clock,
            &mut net,
            &c,
            10,
            &mut stats,
            &live,
            &AtomicBool::new(false),
        );
        assert_eq!((stats.foreign, stats.completed), (2, 1));
        assert_eq!(live.snapshot().cycles, 1);
    }
}
