//! Threshold alerts: a window whose maximum exceeds `--alert-max` runs
//! `--alert-cmd` (through `sh -c`, the window's figures in `RTLAB_*` variables)
//! or writes a warning to the system log with logger(1). At most one alert per
//! `--alert-quiet`; the next one says how many were held back.

use crate::store::Window;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long [`Alerts::finish`] waits for alert commands still running.
const FINISH_WAIT: Duration = Duration::from_secs(5);

/// Where alerts go and how often.
pub struct Alerts {
    max_ns: Option<i64>,
    cmd: Option<String>,
    quiet_ns: i64,
    last_ns: Option<i64>,
    held_back: u64,
    running: Vec<Child>,
}

impl Alerts {
    /// Alerts above `max_ns` (none when `None`), at most one per `quiet_ns`.
    pub fn new(max_ns: Option<i64>, cmd: Option<String>, quiet_ns: i64) -> Alerts {
        Alerts {
            max_ns,
            cmd,
            quiet_ns,
            last_ns: None,
            held_back: 0,
            running: Vec::new(),
        }
    }

    /// Alerts if `w` crossed the threshold and the last alert is old enough.
    pub fn check(&mut self, w: &Window) {
        self.running
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        let Some(max) = self.max_ns.filter(|&m| w.max_ns > m) else {
            return;
        };
        if self.last_ns.is_some_and(|t| w.end_ns - t < self.quiet_ns) {
            self.held_back += 1;
            return;
        }
        self.last_ns = Some(w.end_ns);
        let env = env(w, max, self.held_back);
        self.held_back = 0;
        let child = match &self.cmd {
            Some(cmd) => Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .envs(env)
                .stdin(Stdio::null())
                .spawn(),
            None => Command::new("logger")
                .args(["-t", "rtlab-monitor", "-p", "user.warning", "--"])
                .arg(message(w, max))
                .stdin(Stdio::null())
                .spawn(),
        };
        match child {
            Ok(c) => self.running.push(c),
            Err(e) => eprintln!("rtlab monitor: cannot run the alert: {e}"),
        }
    }

    /// Waits a little for the alert commands still running.
    pub fn finish(&mut self) {
        let t0 = Instant::now();
        while !self.running.is_empty() && t0.elapsed() < FINISH_WAIT {
            self.running
                .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The alert's line in the system log.
fn message(w: &Window, max: i64) -> String {
    format!(
        "latency alert on {}: {} over the threshold {}",
        w.host,
        super::line(w),
        crate::units::Human(max as u64)
    )
}

/// The variables an alert command sees.
fn env(w: &Window, max: i64, held_back: u64) -> Vec<(String, String)> {
    let fmt = crate::format::text::windows::time;
    [
        ("HOST", w.host.clone()),
        ("KERNEL", w.kernel.clone()),
        ("CPU", w.cpu.to_string()),
        ("SESSION", w.session.clone()),
        ("WINDOW_START", fmt(w.start_ns)),
        ("WINDOW_END", fmt(w.end_ns)),
        ("SAMPLES", w.samples.to_string()),
        ("MAX_NS", w.max_ns.to_string()),
        ("MAX_AT", fmt(w.max_at_ns)),
        ("P99_NS", w.p99_ns.to_string()),
        ("P999_NS", w.p999_ns.to_string()),
        ("OVERRUNS", w.overruns.to_string()),
        ("MISSES", w.misses.to_string()),
        ("THRESHOLD_NS", max.to_string()),
        ("HELD_BACK", held_back.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("RTLAB_{k}"), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Level;

    fn window(end_ns: i64, max_ns: i64) -> Window {
        Window {
            level: Level::Window,
            session: "sess".into(),
            host: "board".into(),
            kernel: "6.1".into(),
            cpu: 3,
            start_ns: end_ns - 1_000_000_000,
            end_ns,
            partial: false,
            windows: 1,
            samples: 1000,
            overruns: 2,
            misses: 1,
            min_ns: 1_000,
            p50_ns: 2_000,
            p99_ns: 5_000,
            p999_ns: 7_000,
            max_ns,
            max_at_ns: end_ns - 10,
            hist: Default::default(),
        }
    }

    #[test]
    fn the_command_sees_the_crossing_window_and_alerts_are_rate_limited() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("alerts");
        let cmd = format!(
            "env | grep ^RTLAB_ | sort >> {}; echo -- >> {0}",
            out.display()
        );
        let mut a = Alerts::new(Some(50_000), Some(cmd), 60_000_000_000);
        let s = 1_000_000_000;
        a.check(&window(s, 40_000)); // under the threshold
        a.check(&window(2 * s, 80_000)); // alert
        a.finish();
        a.check(&window(3 * s, 90_000)); // held back
        a.check(&window(70 * s, 60_000)); // alert, one held back
        a.finish();
        let text = std::fs::read_to_string(&out).unwrap();
        let alerts: Vec<&str> = text.split("--\n").filter(|t| !t.is_empty()).collect();
        assert_eq!(alerts.len(), 2, "{text}");
        for want in [
            "RTLAB_MAX_NS=80000",
            "RTLAB_CPU=3",
            "RTLAB_HOST=board",
            "RTLAB_P99_NS=5000",
            "RTLAB_SAMPLES=1000",
            "RTLAB_OVERRUNS=2",
            "RTLAB_MISSES=1",
            "RTLAB_THRESHOLD_NS=50000",
            "RTLAB_HELD_BACK=0",
            "RTLAB_WINDOW_END=1970-01-01T00:00:02",
        ] {
            assert!(alerts[0].contains(want), "{want} in {}", alerts[0]);
        }
        assert!(alerts[1].contains("RTLAB_MAX_NS=60000"));
        assert!(alerts[1].contains("RTLAB_HELD_BACK=1"));
    }
}
