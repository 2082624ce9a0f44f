//! Performance counters through `perf_event_open(2)`: one safe wrapper for the
//! software counters (task clock, context switches, migrations, page faults)
//! and the hardware ones where the machine has them (cycles, instructions,
//! branches, branch misses, cache misses).
//!
//! A [`Counters`] set is opened once, outside any measuring loop, either on the
//! calling thread ([`Counters::this_thread`]) or on a process and every thread
//! and process it starts afterwards ([`Counters::process`]). Each counter that
//! the kernel refuses keeps its reason ([`Reading::Unsupported`]): a counter the
//! machine lacks is never read as 0.

use crate::rt::errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// One counter rtlab opens: its name as `perf stat` prints it, and the kernel's
/// type and config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Name (`task-clock`, `context-switches`, `cycles`).
    pub name: &'static str,
    /// `PERF_TYPE_SOFTWARE` (1) or `PERF_TYPE_HARDWARE` (0).
    kind: u32,
    /// `PERF_COUNT_SW_*` or `PERF_COUNT_HW_*`.
    config: u64,
}

const HW: u32 = 0;
const SW: u32 = 1;

/// Every counter rtlab opens, in the order `perf stat` lists them.
pub const EVENTS: [Event; 11] = [
    Event {
        name: "task-clock",
        kind: SW,
        config: 1,
    },
    Event {
        name: "context-switches",
        kind: SW,
        config: 3,
    },
    Event {
        name: "cpu-migrations",
        kind: SW,
        config: 4,
    },
    Event {
        name: "page-faults",
        kind: SW,
        config: 2,
    },
    Event {
        name: "minor-faults",
        kind: SW,
        config: 5,
    },
    Event {
        name: "major-faults",
        kind: SW,
        config: 6,
    },
    Event {
        name: "cycles",
        kind: HW,
        config: 0,
    },
    Event {
        name: "instructions",
        kind: HW,
        config: 1,
    },
    Event {
        name: "branches",
        kind: HW,
        config: 4,
    },
    Event {
        name: "branch-misses",
        kind: HW,
        config: 5,
    },
    Event {
        name: "cache-misses",
        kind: HW,
        config: 3,
    },
];

/// What one counter gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Its count (task-clock: ns), scaled up from `running_ns` to `enabled_ns`
    /// when the kernel multiplexed it.
    Counted {
        value: u64,
        enabled_ns: u64,
        running_ns: u64,
    },
    /// Opened, but never scheduled on the PMU (`perf stat`'s "not counted").
    NotCounted,
    /// The kernel refused to open it: `ENOENT`, `EOPNOTSUPP`, `ENODEV` (the
    /// machine lacks it) or another errno (`EACCES`: not permitted).
    Unsupported(i32),
}

impl Reading {
    /// The count, when there is one.
    pub fn value(self) -> Option<u64> {
        match self {
            Reading::Counted { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Why there is no count: "not supported", "not permitted" or "not counted".
    pub fn why_not(self) -> Option<&'static str> {
        match self {
            Reading::Counted { .. } => None,
            Reading::NotCounted => Some("not counted"),
            Reading::Unsupported(e) if e == libc::EACCES || e == libc::EPERM => {
                Some("not permitted")
            }
            Reading::Unsupported(_) => Some("not supported"),
        }
    }
}

/// `struct perf_event_attr` up to `config1` (`PERF_ATTR_SIZE_VER0`, 64 bytes),
/// which every kernel since 2.6.31 takes.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const DISABLED: u64 = 1 << 0;
const INHERIT: u64 = 1 << 1;
const EXCLUDE_HV: u64 = 1 << 6;
const ENABLE_ON_EXEC: u64 = 1 << 12;
const FORMAT_TIMES: u64 = 1 | 2; // TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
/// `PERF_FLAG_FD_CLOEXEC`.
const FD_CLOEXEC_FLAG: libc::c_ulong = 8;
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;

/// Whose context switches `getrusage(2)` splits into voluntary and not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// The calling thread.
    Thread,
    /// This process and its ended children.
    Process,
    /// This process's ended children only (a command started under counters).
    Children,
}

/// Voluntary and involuntary context switches of `who` so far.
fn switches(who: Who) -> (u64, u64) {
    let one = |w: i32| {
        // SAFETY: a zeroed rusage is a valid value to be overwritten.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage(2) writes one rusage through a valid pointer.
        unsafe { libc::getrusage(w, &mut u) };
        (u.ru_nvcsw as u64, u.ru_nivcsw as u64)
    };
    match who {
        Who::Thread => one(libc::RUSAGE_THREAD),
        Who::Children => one(libc::RUSAGE_CHILDREN),
        Who::Process => {
            let (a, b) = (one(libc::RUSAGE_SELF), one(libc::RUSAGE_CHILDREN));
            (a.0 + b.0, a.1 + b.1)
        }
    }
}

/// One open set of [`EVENTS`], in that order, with the context switches
/// `getrusage(2)` splits.
#[derive(Debug)]
pub struct Counters {
    fds: Vec<Result<OwnedFd, i32>>,
    who: Who,
    base: (u64, u64),
}

impl Counters {
    /// Counters of the calling thread only, stopped: [`Counters::enable`]
    /// starts them.
    pub fn this_thread() -> Counters {
        Counters::open(0, DISABLED, Who::Thread)
    }

    /// Counters of process `pid` (0: this one) and of every thread and child
    /// process it starts after this call; a child's counts join the total when
    /// it ends. With `on_exec`, they start counting when `pid` calls `exec`
    /// (the way `perf stat` counts a command), else at once.
    pub fn process(pid: i32, on_exec: bool) -> Counters {
        let (flags, who) = if on_exec {
            (INHERIT | DISABLED | ENABLE_ON_EXEC, Who::Children)
        } else {
            (INHERIT, Who::Process)
        };
        Counters::open(pid, flags, who)
    }

    fn open(pid: i32, flags: u64, who: Who) -> Counters {
        let fds = EVENTS
            .iter()
            .map(|e| {
                let attr = Attr {
                    kind: e.kind,
                    size: std::mem::size_of::<Attr>() as u32,
                    config: e.config,
                    read_format: FORMAT_TIMES,
                    flags: flags | EXCLUDE_HV,
                    ..Attr::default()
                };
                // SAFETY: perf_event_open(2) reads one attr of the size it
                // states; the fd it returns is owned by no one else.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_perf_event_open,
                        &attr as *const Attr,
                        pid,
                        -1,
                        -1,
                        FD_CLOEXEC_FLAG,
                    )
                };
                if fd < 0 {
                    Err(errno())
                } else {
                    // SAFETY: a new descriptor nobody else owns.
                    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
                }
            })
            .collect();
        Counters {
            fds,
            who,
            base: switches(who),
        }
    }

    /// Whether any counter could be opened.
    pub fn any_open(&self) -> bool {
        self.fds.iter().any(Result::is_ok)
    }

    /// The errno of the first counter the kernel refused for a reason other
    /// than lacking it (`EACCES` under `perf_event_paranoid`), if any.
    pub fn refusal(&self) -> Option<i32> {
        self.fds.iter().find_map(|f| match f {
            Err(e) if ![libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV].contains(e) => Some(*e),
            _ => None,
        })
    }

    fn ioctl(&self, request: libc::c_ulong) {
        for fd in self.fds.iter().flatten() {
            // SAFETY: PERF_EVENT_IOC_ENABLE/DISABLE take the fd and no argument.
            unsafe { libc::ioctl(fd.as_raw_fd(), request as _, 0) };
        }
    }

    /// Stops counting (the values stay readable).
    pub fn disable(&self) {
        self.ioctl(IOC_DISABLE);
    }

    /// Starts counting (again); the context switches count from here.
    pub fn enable(&mut self) {
        self.base = switches(self.who);
        self.ioctl(IOC_ENABLE);
    }

    /// Voluntary and involuntary context switches since the counters were
    /// opened or last enabled (of the children that have ended, for a command).
    pub fn switches(&self) -> (u64, u64) {
        let (v, i) = switches(self.who);
        (v.saturating_sub(self.base.0), i.saturating_sub(self.base.1))
    }

    /// Every counter's value now, in [`EVENTS`] order.
    pub fn read(&self) -> [Reading; EVENTS.len()] {
        let mut out = [Reading::NotCounted; EVENTS.len()];
        for (slot, fd) in out.iter_mut().zip(&self.fds) {
            *slot = match fd {
                Err(e) => Reading::Unsupported(*e),
                Ok(fd) => read_one(fd),
            };
        }
        out
    }
}

fn read_one(fd: &OwnedFd) -> Reading {
    let mut buf = [0u64; 3];
    // SAFETY: read(2) writes at most the 24 bytes of `buf`.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), 24) };
    let [value, enabled_ns, running_ns] = buf;
    if n != 24 || (running_ns == 0 && enabled_ns > 0) {
        return Reading::NotCounted;
    }
    let value = if running_ns < enabled_ns {
        (u128::from(value) * u128::from(enabled_ns) / u128::from(running_ns)) as u64
    } else {
        value
    };
    Reading::Counted {
        value,
        enabled_ns,
        running_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_name(r: &[Reading; EVENTS.len()], name: &str) -> Reading {
        r[EVENTS.iter().position(|e| e.name == name).unwrap()]
    }

    #[test]
    fn attr_is_the_kernels_first_layout() {
        assert_eq!(std::mem::size_of::<Attr>(), 64);
    }

    #[test]
    fn reasons_are_never_zero_counts() {
        assert_eq!(Reading::Unsupported(libc::ENOENT).value(), None);
        assert_eq!(
            Reading::Unsupported(libc::ENOENT).why_not(),
            Some("not supported")
        );
        assert_eq!(
            Reading::Unsupported(libc::EACCES).why_not(),
            Some("not permitted")
        );
        assert_eq!(Reading::NotCounted.why_not(), Some("not counted"));
    }

    /// Touching fresh pages faults them in: the thread's minor faults count
    /// at least as many pages (where the kernel lets rtlab count at all).
    #[test]
    fn this_threads_faults_are_counted() {
        let mut c = Counters::this_thread();
        c.enable();
        if !c.any_open() {
            eprintln!("perf_event_open refused here: nothing to check");
            return;
        }
        const PAGES: usize = 256;
        // A fresh anonymous mapping: none of its pages is there until written
        // (malloc could hand back memory another test already touched).
        // SAFETY: a new private mapping, written within its length, unmapped
        // below.
        unsafe {
            let len = PAGES * 4096;
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            for i in 0..PAGES {
                std::ptr::write_volatile(p.cast::<u8>().add(i * 4096), 1);
            }
            libc::munmap(p, len);
        }
        c.disable();
        let r = c.read();
        let minor = by_name(&r, "minor-faults").value().unwrap();
        assert!(minor >= PAGES as u64, "{minor} minor faults");
        let clock = by_name(&r, "task-clock").value().unwrap();
        assert!(clock > 0);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(c.switches().0 >= 1, "a sleep is a voluntary switch");
    }
}
