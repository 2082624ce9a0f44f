//! Load generators: the work a machine carries while it is measured.
//!
//! Each kind is a bounded, stop-flag driven loop that counts the work it did in a
//! [`Counters`] block. The loops are meant to run in **worker processes**, never in
//! the measuring process: that one calls `mlockall(MCL_CURRENT|MCL_FUTURE)` and runs
//! SCHED_FIFO threads, so a `vm` load's memory would be locked and forking it would
//! be unsafe. The `rtlab` binary starts one child process of itself per worker
//! (placed, niced and in its own process group, with a parent-death signal), hands
//! it a [`Load`] as JSON and a slot of a [`SharedCounters`] block, and reads the
//! counters back when it stops the worker. Any other embedder can do the same.
//!
//! # Worker contract
//! - [`Load::run`] does its setup (mapping memory, creating sockets, starting a
//!   command), calls `ready()` once, then works until `stop` is raised (a signal
//!   handler sets it; SIGTERM interrupts blocking calls, so a loop ends within
//!   milliseconds of the request).
//! - A setup failure is returned as a [`LoadError`] *before* `ready()`: the
//!   supervisor reports it as the reason the load could not start.
//! - Every loop checks `stop` at least every few milliseconds of work, and no loop
//!   sleeps longer than 100 ms at a time.
//! - Nothing is left behind: `io` unlinks each file it creates (leftovers of a
//!   killed worker are named by [`io::file_prefix`] so the supervisor can remove
//!   them); children a worker forks get `PR_SET_PDEATHSIG`.
//!
//! # What one "op" is, per kind
//! | kind | op | bytes |
//! |------|----|-------|
//! | `cpu` | one call of the method ([`cpu::Method`]; stress-ng's sizes for its methods) | — |
//! | `vm` | one page touched | page size per page |
//! | `memcopy` | one 1 MiB chunk copied | bytes copied |
//! | `io` | one file written and fsynced (or one `sync()` in sync mode) | bytes written |
//! | `fswalk` | one directory entry `lstat`ed | — |
//! | `procfs` | one `/proc` file read | bytes read |
//! | `msg` | one message received | message bytes |
//! | `fork` | one fork + exit + wait | — |
//! | `timer` | one timer expiration | — |
//! | `net` | one UDP datagram received over loopback | datagram bytes |
//! | `exec` | one completed run of the command (`restarts` counts re-launches) | — |

pub mod cpu;
pub mod exec;
pub mod fork;
pub mod fswalk;
pub mod io;
pub mod memcopy;
pub mod msg;
pub mod net;
pub mod procfs;
pub mod shared;
pub mod sys;
pub mod timer;
pub mod vm;

pub use shared::SharedCounters;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The work counters of one worker. Lives in shared memory, so it survives a
/// crash of the worker and is readable by the supervisor at any time.
#[derive(Debug, Default)]
#[repr(C)]
pub struct Counters {
    /// Units of work done (see the module table).
    pub ops: AtomicU64,
    /// Bytes moved (written, copied, sent, touched).
    pub bytes: AtomicU64,
    /// Full rounds completed (walks of the tree, map/unmap cycles, command runs).
    pub rounds: AtomicU64,
    /// Re-launches of an `exec` command that exited.
    pub restarts: AtomicU64,
    /// Errors survived (ENOSPC, unreadable entries, failed re-launches).
    pub errors: AtomicU64,
}

impl Counters {
    /// Adds `ops` units of work and `bytes` bytes.
    #[inline]
    pub fn add(&self, ops: u64, bytes: u64) {
        self.ops.fetch_add(ops, Relaxed);
        if bytes != 0 {
            self.bytes.fetch_add(bytes, Relaxed);
        }
    }

    /// A plain copy of the counters.
    pub fn snapshot(&self) -> CounterValues {
        CounterValues {
            ops: self.ops.load(Relaxed),
            bytes: self.bytes.load(Relaxed),
            rounds: self.rounds.load(Relaxed),
            restarts: self.restarts.load(Relaxed),
            errors: self.errors.load(Relaxed),
        }
    }
}

/// A snapshot of [`Counters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CounterValues {
    /// Units of work done.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Full rounds completed.
    pub rounds: u64,
    /// Re-launches of an exited command.
    pub restarts: u64,
    /// Errors survived.
    pub errors: u64,
}

/// Why a load could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The parameters cannot work here (a command that does not start, a missing
    /// directory): the user must change them.
    Input(String),
    /// The system refused a resource (memory, sockets, timers).
    System(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Input(m) | LoadError::System(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LoadError {}

/// What a worker needs while it runs.
pub struct Ctx<'a> {
    /// Where it counts its work.
    pub counters: &'a Counters,
    /// Raised when it must stop.
    pub stop: &'a AtomicBool,
}

impl Ctx<'_> {
    /// Whether the worker was asked to stop.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

/// One load kind with its parameters: what a worker runs. Serialized (tagged by
/// `kind`) as the load's parameters in records and handed to worker processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Load {
    /// Busy arithmetic.
    Cpu {
        /// Which arithmetic.
        method: cpu::Method,
        /// Percent of the time busy (0-100), as stress-ng's `--cpu-load`.
        load_pct: u32,
        /// The busy slices below 100%, as stress-ng's `--cpu-load-slice`.
        #[serde(default)]
        slice: cpu::Slice,
    },
    /// Map, touch every page, unmap.
    Vm {
        /// Bytes mapped by each worker.
        bytes: u64,
        /// Keep the mapping and re-dirty it instead of unmapping.
        keep: bool,
    },
    /// Streaming copies between two buffers larger than the last-level cache.
    Memcopy {
        /// Size of each of the two buffers.
        bytes: u64,
    },
    /// File writes with fsync, or a storm of `sync()` calls.
    Io {
        /// Directory the files are written in.
        dir: String,
        /// Bytes written per file.
        bytes: u64,
        /// Sync storm: `sync()` after every small write.
        sync: bool,
    },
    /// Recursive `lstat` of every entry under a directory.
    Fswalk {
        /// Where the walk starts.
        root: String,
        /// Cross into other file systems.
        xdev: bool,
        /// Follow symbolic links to directories.
        follow: bool,
    },
    /// Read `/proc/interrupts` and every `/proc/<pid>/stat` and `cmdline`.
    Procfs,
    /// Groups of senders and receivers exchanging small messages.
    Msg {
        /// Senders and receivers per group (each).
        fds: u32,
        /// Message size in bytes.
        size: u32,
        /// Pipes instead of socket pairs.
        pipe: bool,
        /// Threads instead of processes.
        threads: bool,
    },
    /// Fork, exit in the child, wait, repeat.
    Fork,
    /// Many periodic timers.
    Timer {
        /// Timers per worker.
        timers: u32,
        /// Period of each timer (ns).
        period_ns: u64,
    },
    /// UDP datagrams over loopback.
    Net {
        /// Datagram payload size in bytes.
        size: u32,
    },
    /// An external command, restarted whenever it exits.
    Exec {
        /// Shell command line (`sh -c`).
        command: String,
    },
}

/// Every kind: name and what it does, for listings and help.
pub const KINDS: &[(&str, &str)] = &[
    (
        "cpu",
        "busy arithmetic (stress-ng's cpu methods, rtlab's int or a mix), optional duty cycle",
    ),
    (
        "vm",
        "map, touch every page, unmap a block in a loop (page faults, zeroing)",
    ),
    (
        "memcopy",
        "streaming copies over buffers larger than the last-level cache",
    ),
    (
        "io",
        "write + fsync files in a directory, or a sync() storm",
    ),
    (
        "fswalk",
        "recursive lstat of every entry under a root (ls -lR /)",
    ),
    (
        "procfs",
        "read /proc/interrupts and every /proc/<pid>/stat (ps w)",
    ),
    (
        "msg",
        "hackbench-like groups of senders and receivers over sockets or pipes",
    ),
    ("fork", "fork/exit/wait storm"),
    ("timer", "many periodic timers firing at a high rate"),
    ("net", "UDP flood over loopback"),
    (
        "exec",
        "run an external command in a loop, restarting it when it exits",
    ),
];

impl Load {
    /// The kind's name (`cpu`, `vm`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Load::Cpu { .. } => "cpu",
            Load::Vm { .. } => "vm",
            Load::Memcopy { .. } => "memcopy",
            Load::Io { .. } => "io",
            Load::Fswalk { .. } => "fswalk",
            Load::Procfs => "procfs",
            Load::Msg { .. } => "msg",
            Load::Fork => "fork",
            Load::Timer { .. } => "timer",
            Load::Net { .. } => "net",
            Load::Exec { .. } => "exec",
        }
    }

    /// What one op of this load is, as a rate name (`entries_per_s`, ...).
    pub fn op_rate_name(&self) -> &'static str {
        match self {
            Load::Cpu { .. } => "cpu_ops_per_s",
            Load::Vm { .. } => "pages_touched_per_s",
            Load::Memcopy { .. } => "mib_copied_per_s",
            Load::Io { sync: false, .. } => "files_synced_per_s",
            Load::Io { sync: true, .. } => "syncs_per_s",
            Load::Fswalk { .. } => "entries_per_s",
            Load::Procfs => "files_read_per_s",
            Load::Msg { .. } => "messages_per_s",
            Load::Fork => "forks_per_s",
            Load::Timer { .. } => "expirations_per_s",
            Load::Net { .. } => "datagrams_per_s",
            Load::Exec { .. } => "runs_per_s",
        }
    }

    /// The kind named `name` with its default parameters.
    pub fn defaults(name: &str) -> Option<Load> {
        Some(match name {
            "cpu" => Load::Cpu {
                method: cpu::Method::Mix,
                load_pct: 100,
                slice: cpu::Slice::default(),
            },
            "vm" => Load::Vm {
                bytes: 256 << 20,
                keep: false,
            },
            "memcopy" => Load::Memcopy {
                bytes: memcopy::default_bytes(),
            },
            "io" => Load::Io {
                dir: io::default_dir(),
                bytes: 1 << 20,
                sync: false,
            },
            "fswalk" => Load::Fswalk {
                root: "/".into(),
                xdev: false,
                follow: false,
            },
            "procfs" => Load::Procfs,
            "msg" => Load::Msg {
                fds: 20,
                size: 100,
                pipe: false,
                threads: false,
            },
            "fork" => Load::Fork,
            "timer" => Load::Timer {
                timers: 32,
                period_ns: 500_000,
            },
            "net" => Load::Net { size: 64 },
            "exec" => Load::Exec {
                command: String::new(),
            },
            _ => return None,
        })
    }

    /// Bytes of memory one worker of this load maps (for the memory guard).
    pub fn memory_per_worker(&self) -> u64 {
        match self {
            Load::Vm { bytes, .. } => *bytes,
            Load::Memcopy { bytes } => bytes.saturating_mul(2),
            _ => 0,
        }
    }

    /// Runs one worker of this load until `ctx.stop` is raised. Calls `ready`
    /// once its setup is done; a setup failure is returned before that.
    pub fn run(&self, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
        match self {
            Load::Cpu {
                method,
                load_pct,
                slice,
            } => cpu::run(*method, *load_pct, *slice, ctx, ready),
            Load::Vm { bytes, keep } => vm::run(*bytes, *keep, ctx, ready),
            Load::Memcopy { bytes } => memcopy::run(*bytes, ctx, ready),
            Load::Io { dir, bytes, sync } => io::run(dir, *bytes, *sync, ctx, ready),
            Load::Fswalk { root, xdev, follow } => fswalk::run(root, *xdev, *follow, ctx, ready),
            Load::Procfs => procfs::run(ctx, ready),
            Load::Msg {
                fds,
                size,
                pipe,
                threads,
            } => msg::run(
                &msg::Group {
                    fds: *fds,
                    size: *size,
                    pipe: *pipe,
                    threads: *threads,
                },
                ctx,
                ready,
            ),
            Load::Fork => fork::run(ctx, ready),
            Load::Timer { timers, period_ns } => timer::run(*timers, *period_ns, ctx, ready),
            Load::Net { size } => net::run(*size, ctx, ready),
            Load::Exec { command } => exec::run(command, ctx, ready),
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Runs a load in a thread of the test process for a short time.

    use super::*;
    use std::time::Duration;

    /// The longest a test load runs on waiting for its first work: a hang.
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Runs `load` for `ms` milliseconds after it is ready, and on until it has
    /// done some work (`ops > 0`), and returns its counters once it has stopped.
    pub fn run_for(load: &Load, ms: u64) -> CounterValues {
        run_until(load, ms, |c| c.ops > 0)
    }

    /// Runs `load` for `ms` milliseconds after it is ready, and on until
    /// `enough` holds for its counters (a busy machine may give it little time:
    /// the tests judge the load, not the machine), at most [`PATIENCE`] longer;
    /// returns its counters once it has stopped.
    pub fn run_until(
        load: &Load,
        ms: u64,
        enough: impl Fn(&CounterValues) -> bool,
    ) -> CounterValues {
        let counters = Counters::default();
        let stop = AtomicBool::new(false);
        let ready = AtomicBool::new(false);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let ctx = Ctx {
                    counters: &counters,
                    stop: &stop,
                };
                load.run(&ctx, &mut || ready.store(true, Relaxed))
            });
            while !ready.load(Relaxed) && !h.is_finished() {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(ms));
            let waited = std::time::Instant::now();
            while !enough(&counters.snapshot()) && !h.is_finished() && waited.elapsed() < PATIENCE {
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Relaxed);
            h.join().unwrap().unwrap();
        });
        counters.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_defaults_and_round_trips_as_json() {
        for (name, _) in KINDS {
            let load = Load::defaults(name).unwrap();
            assert_eq!(load.kind(), *name);
            let text = serde_json::to_string(&load).unwrap();
            assert!(text.contains(&format!("\"kind\":\"{name}\"")));
            assert_eq!(serde_json::from_str::<Load>(&text).unwrap(), load);
        }
        assert!(Load::defaults("nope").is_none());
    }

    #[test]
    fn memory_guard_counts_vm_and_memcopy() {
        let vm = Load::Vm {
            bytes: 100,
            keep: false,
        };
        assert_eq!(vm.memory_per_worker(), 100);
        assert_eq!(Load::Memcopy { bytes: 10 }.memory_per_worker(), 20);
        assert_eq!(Load::Fork.memory_per_worker(), 0);
    }
}
