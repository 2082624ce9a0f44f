//! `exec`: an external command as load (a kernel build, stress-ng, the user's own
//! application), run with `sh -c` in its own process group with a parent-death
//! signal, its output discarded, and restarted whenever it exits. A command that
//! cannot start (the shell reports 126/127 on the first run) is a start error.

use super::{Ctx, LoadError};
use crate::rt::process::{send_signal, set_parent_death_signal, SIGKILL, SIGTERM};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// How long the first run is watched for "command not found" before `ready`.
const START_CHECK: Duration = Duration::from_millis(60);

fn spawn(command: &str) -> std::io::Result<Child> {
    let mut c = Command::new("/bin/sh");
    c.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // SAFETY: the closure only makes the async-signal-safe prctl(2) call.
    unsafe {
        c.pre_exec(|| set_parent_death_signal(SIGKILL).map_err(std::io::Error::from_raw_os_error));
    }
    c.spawn()
}

/// Whether an exit status means the shell could not start the command.
fn not_started(status: std::process::ExitStatus) -> bool {
    matches!(status.code(), Some(126 | 127))
}

/// The error of a command the shell could not start.
fn start_error(command: &str, status: std::process::ExitStatus) -> LoadError {
    LoadError::Input(format!(
        "command '{command}' failed to start (shell exit {}: not found or not executable)",
        status.code().unwrap_or(-1)
    ))
}

/// Ends the command's whole process group: SIGTERM, then SIGKILL after 300 ms.
fn end(child: &mut Child) {
    let pgid = child.id() as i32;
    send_signal(-pgid, SIGTERM);
    let deadline = Instant::now() + Duration::from_millis(300);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Whatever is left of the group (the command's own children) goes too.
    send_signal(-pgid, SIGKILL);
    let _ = child.wait();
}

/// Runs `command` over and over until stopped.
pub fn run(command: &str, ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    if command.trim().is_empty() {
        return Err(LoadError::Input(
            "exec needs a command (exec:COMMAND)".into(),
        ));
    }
    let mut child = spawn(command)
        .map_err(|e| LoadError::System(format!("cannot start /bin/sh for '{command}': {e}")))?;
    let t0 = Instant::now();
    while t0.elapsed() < START_CHECK {
        if let Ok(Some(status)) = child.try_wait() {
            if not_started(status) {
                return Err(start_error(command, status));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    ready();
    // A busy machine may take longer than START_CHECK to tell: the first run's
    // "cannot start" is a start error whenever it comes, never a restart loop.
    let mut first = true;
    while !ctx.stopped() {
        match child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Ok(Some(status)) if first && not_started(status) => {
                return Err(start_error(command, status));
            }
            Ok(Some(status)) => {
                first = false;
                ctx.counters.rounds.fetch_add(1, Relaxed);
                if not_started(status) || status.signal().is_some() {
                    ctx.counters.errors.fetch_add(1, Relaxed);
                } else {
                    ctx.counters.add(1, 0);
                }
                loop {
                    if ctx.stopped() {
                        return Ok(());
                    }
                    match spawn(command) {
                        Ok(c) => {
                            child = c;
                            ctx.counters.restarts.fetch_add(1, Relaxed);
                            break;
                        }
                        Err(_) => {
                            ctx.counters.errors.fetch_add(1, Relaxed);
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            }
            Err(_) => {
                ctx.counters.errors.fetch_add(1, Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    end(&mut child);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_until, Counters, Load};
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn an_exiting_command_is_restarted_and_counted() {
        let c = run_until(
            &Load::Exec {
                command: "true".into(),
            },
            200,
            |c| c.restarts > 0,
        );
        assert!(c.ops > 0 && c.restarts > 0, "{c:?}");
        assert_eq!(c.errors, 0);
    }

    #[test]
    fn a_command_that_cannot_start_is_an_error() {
        let counters = Counters::default();
        let stop = AtomicBool::new(false);
        let ctx = Ctx {
            counters: &counters,
            stop: &stop,
        };
        let e = run("/nonexistent/rtlab-cmd --x", &ctx, &mut || {}).unwrap_err();
        assert!(matches!(e, LoadError::Input(_)));
        assert!(e.to_string().contains("/nonexistent/rtlab-cmd"));
    }

    /// On a busy machine the shell may report "not found" only after the start
    /// check: that is still a start error, never an endless restart loop.
    #[test]
    fn a_late_cannot_start_is_an_error_not_a_restart_loop() {
        let counters = Counters::default();
        let stop = AtomicBool::new(false);
        let ctx = Ctx {
            counters: &counters,
            stop: &stop,
        };
        let result = std::thread::scope(|s| {
            let h = s.spawn(|| run("sleep 0.2; exit 127", &ctx, &mut || {}));
            // A regression fails here instead of hanging the suite.
            let t0 = std::time::Instant::now();
            while !h.is_finished() && t0.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Relaxed);
            h.join().unwrap()
        });
        let e = result.unwrap_err();
        assert!(matches!(e, LoadError::Input(_)), "{e}");
        assert_eq!(counters.snapshot().restarts, 0);
    }
}
