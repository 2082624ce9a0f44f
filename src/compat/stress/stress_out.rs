//! stress 1.0's layout: `stress: info: [PID] …` lines on stdout, and with `-v`
//! its `dbug` lines for the back-off, the timeout and each worker.

use super::{Hog, Outcome};

fn info(pid: u32, text: &str) -> String {
    format!("stress: info: [{pid}] {text}\n")
}

fn dbug(pid: u32, text: &str) -> String {
    format!("stress: dbug: [{pid}] {text}\n")
}

/// `dispatching hogs: 4 cpu, 0 io, 2 vm, 0 hdd`: every kind, in stress's order.
pub fn dispatch(pid: u32, hogs: &[Hog]) -> String {
    let parts: Vec<String> = hogs
        .iter()
        .map(|h| format!("{} {}", h.workers, h.name))
        .collect();
    info(pid, &format!("dispatching hogs: {}", parts.join(", ")))
}

/// `-v` before the workers start: the back-off (with the coefficient when
/// `--backoff` gave it) and the timeout.
pub fn setup(pid: u32, coefficient: Option<u64>, sleep_us: u64, timeout_s: Option<u64>) -> String {
    let mut s = String::new();
    if let Some(c) = coefficient {
        // stress spells it so.
        s.push_str(&dbug(pid, &format!("setting backoff coeffient to {c}us")));
    }
    s.push_str(&dbug(pid, &format!("using backoff sleep of {sleep_us}us")));
    if let Some(t) = timeout_s {
        s.push_str(&dbug(pid, &format!("setting timeout to {t}s")));
    }
    s
}

/// `-v` for the workers: each fork (one of each kind in turn, numbered down
/// as stress numbers them), then each worker stopped at the end.
pub fn workers(pid: u32, out: &Outcome) -> String {
    let kinds: Vec<(&Hog, Vec<i32>)> = out
        .records()
        .map(|(hog, rec)| {
            let pids = rec
                .map(|r| r.per_worker.iter().map(|w| w.pid).collect())
                .unwrap_or_default();
            (hog, pids)
        })
        .collect();
    let mut s = String::new();
    let mut order = Vec::new();
    let most = kinds.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
    for round in 0..most {
        for (hog, pids) in &kinds {
            if let Some(&wpid) = pids.get(round) {
                let left = pids.len() - round;
                s.push_str(&dbug(
                    pid,
                    &format!("--> hog{} worker {left} [{wpid}] forked", hog.name),
                ));
                order.push(wpid);
            }
        }
    }
    let stopped: Vec<i32> = out
        .run
        .loads
        .iter()
        .flat_map(|r| r.per_worker.iter())
        .filter(|w| w.end == "stopped")
        .map(|w| w.pid)
        .collect();
    for wpid in order.into_iter().filter(|p| stopped.contains(p)) {
        s.push_str(&dbug(pid, &format!("<-- worker {wpid} signalled normally")));
    }
    s
}

/// The last line: `successful run completed in 10s`, or stress's FAIL line.
pub fn completed(pid: u32, secs: u64, ok: bool) -> String {
    if ok {
        info(pid, &format!("successful run completed in {secs}s"))
    } else {
        // The number in parentheses is where stress's source says it; parsers
        // of its log expect one there.
        format!("stress: FAIL: [{pid}] (461) failed run completed in {secs}s\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hog(name: &'static str, workers: u32) -> Hog {
        Hog {
            name,
            workers,
            spec: String::new(),
        }
    }

    #[test]
    fn lines_are_stress_s() {
        let hogs = [hog("cpu", 4), hog("io", 0), hog("vm", 2), hog("hdd", 0)];
        assert_eq!(
            dispatch(12, &hogs),
            "stress: info: [12] dispatching hogs: 4 cpu, 0 io, 2 vm, 0 hdd\n"
        );
        assert_eq!(
            setup(12, None, 18000, Some(10)),
            "stress: dbug: [12] using backoff sleep of 18000us\nstress: dbug: [12] setting timeout to 10s\n"
        );
        assert!(setup(12, Some(5), 30, None)
            .starts_with("stress: dbug: [12] setting backoff coeffient to 5us\n"));
        assert_eq!(
            completed(12, 10, true),
            "stress: info: [12] successful run completed in 10s\n"
        );
        assert_eq!(
            completed(12, 0, false),
            "stress: FAIL: [12] (461) failed run completed in 0s\n"
        );
    }
}
