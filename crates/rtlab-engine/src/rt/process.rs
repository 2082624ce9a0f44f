//! Other processes: signalling them, tying a child's life to its parent's, and
//! waiting for a child to end (with its resource usage) or for its pipe to speak.

use super::errno;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The signals callers send.
pub use libc::{SIGINT, SIGKILL, SIGTERM};

/// Sends `sig` to process `pid`, or to process group `-pid` (`kill(2)`). Errors
/// (the process is already gone) are ignored.
pub fn send_signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) takes integers only.
    unsafe { libc::kill(pid, sig) };
}

/// Asks the kernel to send `sig` to the calling process when its parent thread
/// exits (`prctl(2)` `PR_SET_PDEATHSIG`). Async-signal-safe: usable between fork
/// and exec.
pub fn set_parent_death_signal(sig: i32) -> Result<(), i32> {
    // SAFETY: prctl(2) PR_SET_PDEATHSIG takes a signal number only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// The parent's pid (`getppid(2)`).
pub fn parent_pid() -> i32 {
    // SAFETY: getppid(2) takes no arguments and cannot fail.
    unsafe { libc::getppid() }
}

/// The effective user id (`geteuid(2)`).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes the calling process (a child of `parent`) get `sig` when its parent
/// thread exits, and fails with `ESRCH` if `parent` has already gone (it may
/// have died before the request took effect). Async-signal-safe: usable between
/// fork and exec.
pub fn end_with_parent(sig: i32, parent: i32) -> Result<(), i32> {
    set_parent_death_signal(sig)?;
    if parent_pid() != parent {
        return Err(libc::ESRCH);
    }
    Ok(())
}

/// How a child ended, decoded from its `wait(2)` status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// Neither (the raw status).
    Other(i32),
}

impl Exit {
    /// Decodes a raw status (`WIFEXITED`, `WEXITSTATUS`, `WIFSIGNALED`, `WTERMSIG`).
    pub fn from_status(status: i32) -> Exit {
        if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else if libc::WIFEXITED(status) {
            Exit::Code(libc::WEXITSTATUS(status))
        } else {
            Exit::Other(status)
        }
    }
}

/// What an ended child used (`getrusage(2)` fields, as `wait4(2)` reports them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// User plus system CPU time (ns).
    pub cpu_ns: u64,
    /// CPU time in user mode (ns).
    pub user_ns: u64,
    /// CPU time in the kernel on its behalf (ns).
    pub sys_ns: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Voluntary plus involuntary context switches.
    pub ctx_switches: u64,
    /// Peak resident set size (KiB).
    pub max_rss_kib: u64,
}

impl Usage {
    fn from_rusage(u: &libc::rusage) -> Usage {
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
        Usage {
            cpu_ns: ns(u.ru_utime) + ns(u.ru_stime),
            user_ns: ns(u.ru_utime),
            sys_ns: ns(u.ru_stime),
            minor_faults: u.ru_minflt as u64,
            major_faults: u.ru_majflt as u64,
            ctx_switches: (u.ru_nvcsw + u.ru_nivcsw) as u64,
            max_rss_kib: u.ru_maxrss as u64,
        }
    }
}

/// CPU time (ns) this process and its ended children have used so far
/// (`getrusage(2)`, `RUSAGE_SELF` plus `RUSAGE_CHILDREN`): children count once
/// they have been waited for.
pub fn own_cpu_ns() -> u64 {
    let used = |who| {
        // SAFETY: a zeroed rusage is a valid value to be overwritten.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage(2) writes one rusage through a valid pointer; on
        // error the zeroed value stays.
        unsafe { libc::getrusage(who, &mut u) };
        Usage::from_rusage(&u).cpu_ns
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

/// Clock ticks per second of the times in `/proc` (`sysconf(_SC_CLK_TCK)`,
/// `USER_HZ`); 100 when it cannot be read.
pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf(3) takes an integer name only.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// Waits for child `pid` to end (`wait4(2)`, retried on `EINTR`); with `nohang`,
/// `None` at once while it still runs. Returns how it ended and what it used;
/// `None` also when `pid` is no child of this process (any more).
pub fn wait_ended(pid: i32, nohang: bool) -> Option<(Exit, Usage)> {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: wait4(2) writes one int and one rusage through valid pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if rc == pid {
            return Some((Exit::from_status(status), Usage::from_rusage(&usage)));
        }
        if rc == -1 && errno() == libc::EINTR {
            continue;
        }
        return None;
    }
}

/// Whether `fd` (a child's pipe) becomes readable within `timeout_ms` (`poll(2)`);
/// false on timeout or error.
pub fn readable_within(fd: BorrowedFd<'_>, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one valid pollfd.
    (unsafe { libc::poll(&mut p, 1, timeout_ms) }) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    // The children are reaped by wait_ended (wait4), which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn exit_codes_and_signals_are_told_apart() {
        let ended = |script: &str| {
            let child = Command::new("/bin/sh")
                .args(["-c", script])
                .spawn()
                .unwrap();
            wait_ended(child.id() as i32, false).unwrap()
        };
        assert_eq!(ended("exit 0").0, Exit::Code(0));
        assert_eq!(ended("exit 3").0, Exit::Code(3));
        assert_eq!(ended("kill -9 $$").0, Exit::Signal(9));
        let (_, usage) = ended("exit 0");
        assert!(usage.max_rss_kib > 0, "{usage:?}");
    }

    #[test]
    // The children are reaped by wait_ended (wait4), which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn nohang_returns_at_once_and_others_children_are_none() {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "read x"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert_eq!(wait_ended(pid, true), None);
        drop(child.stdin.take());
        assert!(matches!(wait_ended(pid, false), Some((Exit::Code(_), _))));
        assert_eq!(wait_ended(1, true), None);
    }

    #[test]
    fn a_pipe_is_readable_once_written() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let (r, mut w) = std::io::pipe().unwrap();
        assert!(!readable_within(r.as_fd(), 10));
        w.write_all(b"ready\n").unwrap();
        assert!(readable_within(r.as_fd(), 10));
    }
}
