//! SCHED_DEADLINE: `sched_setattr(2)` with a runtime, a deadline and a period,
//! and the count of runtime overruns the kernel signals (`SCHED_FLAG_DL_OVERRUN`
//! makes it send SIGXCPU to a thread that ran past its runtime).
//!
//! What the kernel exposes per task in `/proc/PID/sched` for a deadline task is
//! the remaining runtime (`dl.runtime`) and the current absolute deadline
//! (`dl.deadline`): no count of overruns or throttling. The SIGXCPU count is the
//! kernel's own count of overruns; involuntary switches
//! ([`involuntary_switches`]) show the throttling that follows them.

use super::SchedError;
use std::sync::atomic::{AtomicU64, Ordering};

/// `SCHED_FLAG_DL_OVERRUN`: signal SIGXCPU when the runtime is exceeded.
const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;
/// `SCHED_DEADLINE`.
const SCHED_DEADLINE: u32 = 6;

/// The kernel's `struct sched_attr` (`sched_setattr(2)`), size 56 (VER1).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

/// A deadline reservation (ns): runtime ≤ deadline ≤ period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlParams {
    /// CPU time the thread may use each period.
    pub runtime_ns: u64,
    /// Relative deadline by which that runtime is given.
    pub deadline_ns: u64,
    /// Period of the reservation.
    pub period_ns: u64,
}

/// Why deadline parameters cannot be used, before asking the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlParamError {
    /// The kernel refuses runtimes under 1024 ns (its resolution).
    RuntimeTooSmall,
    /// runtime > deadline.
    RuntimeAboveDeadline,
    /// deadline > period.
    DeadlineAbovePeriod,
}

impl DlParams {
    /// Checks the order the kernel requires (runtime ≥ 1024 ns, runtime ≤
    /// deadline ≤ period).
    pub fn check(&self) -> Result<(), DlParamError> {
        if self.runtime_ns < 1024 {
            Err(DlParamError::RuntimeTooSmall)
        } else if self.runtime_ns > self.deadline_ns {
            Err(DlParamError::RuntimeAboveDeadline)
        } else if self.deadline_ns > self.period_ns {
            Err(DlParamError::DeadlineAbovePeriod)
        } else {
            Ok(())
        }
    }

    /// The share of one CPU it reserves.
    pub fn bandwidth(&self) -> f64 {
        self.runtime_ns as f64 / self.period_ns as f64
    }
}

static OVERRUNS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_sigxcpu(_sig: libc::c_int) {
    OVERRUNS.fetch_add(1, Ordering::Relaxed);
}

/// Installs the SIGXCPU handler that counts overruns (idempotent).
fn install_overrun_handler() {
    // SAFETY: sigaction(2) with a zeroed struct, an `extern "C"` handler that
    // only increments an atomic, an empty mask and SA_RESTART (so that a
    // sleeping thread is not woken early by the count).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigxcpu as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGXCPU, &sa, std::ptr::null_mut());
    }
}

/// Runtime overruns signalled so far, by every deadline thread of this process.
pub fn overruns() -> u64 {
    OVERRUNS.load(Ordering::Relaxed)
}

/// Makes thread `tid` (0: the caller) SCHED_DEADLINE with `p`, asking the
/// kernel to signal overruns (counted by [`overruns`]). EBUSY: admission control
/// refused the bandwidth; EPERM: no privilege, or an affinity narrower than the
/// thread's root domain; EINVAL: parameters the kernel does not take.
pub fn set_thread_deadline(tid: i32, p: &DlParams) -> Result<(), SchedError> {
    install_overrun_handler();
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_DEADLINE,
        sched_flags: SCHED_FLAG_DL_OVERRUN,
        sched_runtime: p.runtime_ns,
        sched_deadline: p.deadline_ns,
        sched_period: p.period_ns,
        ..SchedAttr::default()
    };
    // SAFETY: sched_setattr(2) reads one `struct sched_attr` whose size field
    // gives its length; the pointer is valid for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            tid as libc::c_long,
            &attr as *const SchedAttr,
            0 as libc::c_long,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(SchedError {
            errno: crate::rt::errno(),
        })
    }
}

/// `nr_involuntary_switches` of thread `tid` of this process, from
/// `/proc/self/task/TID/sched` (None when the kernel does not show it).
pub fn involuntary_switches(tid: i32) -> Option<u64> {
    let text = crate::sysinfo::read_text(format!("/proc/self/task/{tid}/sched")).ok()?;
    text.lines()
        .find(|l| l.starts_with("nr_involuntary_switches"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dl(r: u64, d: u64, p: u64) -> DlParams {
        DlParams {
            runtime_ns: r,
            deadline_ns: d,
            period_ns: p,
        }
    }

    #[test]
    fn parameters_in_the_kernels_order() {
        assert_eq!(dl(100_000, 1_000_000, 1_000_000).check(), Ok(()));
        assert_eq!(
            dl(1000, 1_000_000, 1_000_000).check(),
            Err(DlParamError::RuntimeTooSmall)
        );
        assert_eq!(
            dl(2_000_000, 1_000_000, 1_000_000).check(),
            Err(DlParamError::RuntimeAboveDeadline)
        );
        assert_eq!(
            dl(100_000, 2_000_000, 1_000_000).check(),
            Err(DlParamError::DeadlineAbovePeriod)
        );
        assert!((dl(100_000, 1_000_000, 1_000_000).bandwidth() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_attr_struct_has_the_kernels_size() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 56);
    }

    #[test]
    fn this_thread_shows_its_switches() {
        assert!(involuntary_switches(crate::rt::gettid()).is_some());
    }
}
