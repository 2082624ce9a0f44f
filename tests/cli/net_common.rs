//! Helpers shared by the `net_*` tests: a server child process that is always
//! stopped, and client runs parsed from their JSON.
#![allow(dead_code)] // each test file uses a different part

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn rtlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rtlab"))
}

/// A running `rtlab net serve`, killed when dropped.
pub struct Server {
    child: Child,
    stderr: BufReader<ChildStderr>,
    /// The command line, for failure messages.
    cmd: String,
    /// The address it listens on, as it printed it.
    pub addr: String,
}

/// How a server ended: its summary, exit code, output and the time it took to end.
pub struct Ended {
    /// The JSON summary it printed.
    pub doc: Value,
    /// Its exit code.
    pub code: Option<i32>,
    /// From the signal (or from the call when none was sent) to its exit.
    pub took: Duration,
}

impl Server {
    /// Starts `rtlab net serve --json` with `args` (give `--bind`), prefixed by
    /// `prefix` (e.g. `ip netns exec NS`), and waits until it listens. Without a
    /// `--duration` in `args` it stops on its own after 60 s.
    pub fn start_in(prefix: &[&str], args: &[&str]) -> Server {
        let mut cmd = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(env!("CARGO_BIN_EXE_rtlab"));
                c
            }
            None => rtlab(),
        };
        cmd.args(["net", "serve", "--json"]);
        if !args.iter().any(|a| *a == "--duration" || *a == "-D") {
            cmd.args(["--duration", "60s"]);
        }
        cmd.args(args);
        let line = command_line(&cmd);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting rtlab net serve");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        // From here on, dropping `server` (also when a check below panics) kills
        // and reaps the child.
        let mut server = Server {
            child,
            stderr,
            cmd: line,
            addr: String::new(),
        };
        let mut line = String::new();
        loop {
            line.clear();
            let n = server.stderr.read_line(&mut line).unwrap();
            assert!(n > 0, "the server exited before listening: {}", server.cmd);
            if let Some(rest) = line.split("listening on ").nth(1) {
                server.addr = rest.split_whitespace().next().unwrap().to_string();
                return server;
            }
        }
    }

    /// Starts a server on loopback, on a port the kernel picks.
    pub fn start(args: &[&str]) -> Server {
        let mut all = vec!["--bind", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Server::start_in(&[], &all)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident memory (VmRSS) in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .unwrap_or_else(|e| panic!("reading the server's /proc status: {e}"));
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no VmRSS in the server's status:\n{status}"))
    }

    /// Sends `signal` and waits for the server to end (see [`Server::wait_end`]).
    pub fn signal_and_wait(self, signal: i32, limit: Duration) -> Ended {
        // SAFETY: kill(2) with the pid of our own child, which is not reaped yet.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        self.wait_end(limit)
    }

    /// Waits at most `limit` for the server to exit and returns its summary. A
    /// server still running then is killed and the test fails, printing the command
    /// and everything the server wrote: this is a hang check, not a speed check.
    pub fn wait_end(mut self, limit: Duration) -> Ended {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break Some(s);
            }
            if t0.elapsed() > limit {
                let _ = self.child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = t0.elapsed();
        let (out, err) = self.output();
        let Some(status) = status else {
            panic!(
                "the server did not exit within {limit:?}: {}\nstdout:\n{out}\nstderr:\n{err}",
                self.cmd
            );
        };
        let doc = serde_json::from_str(&out).unwrap_or_else(|e| {
            panic!(
                "server summary is not JSON ({e}): {}\nexit code: {:?}\nstdout:\n{out}\nstderr:\n{err}",
                self.cmd,
                status.code()
            )
        });
        Ended {
            doc,
            code: status.code(),
            took,
        }
    }

    /// What the exited (or killed) server wrote to stdout and, after listening,
    /// to stderr.
    fn output(&mut self) -> (String, String) {
        let _ = self.child.wait();
        let mut out = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            let _ = o.read_to_string(&mut out);
        }
        let mut err = String::new();
        let _ = self.stderr.read_to_string(&mut err);
        (out, err)
    }

    /// Stops it with SIGTERM and returns its JSON summary and exit code.
    pub fn stop(self) -> (Value, Option<i32>) {
        let e = self.signal_and_wait(libc::SIGTERM, Duration::from_secs(10));
        (e.doc, e.code)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command as it would be typed, for failure messages.
fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A finished `rtlab net ping`: everything needed to explain a failure.
pub struct PingRun {
    /// The command line.
    pub cmd: String,
    /// Its exit code.
    pub code: Option<i32>,
    /// What it printed.
    pub stdout: String,
    /// What it complained about.
    pub stderr: String,
}

impl PingRun {
    /// The command, exit code, stdout and stderr, for a failure message.
    pub fn context(&self) -> String {
        format!(
            "command: {}\nexit code: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.cmd, self.code, self.stdout, self.stderr
        )
    }

    /// Its JSON run document.
    pub fn doc(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("ping output is not JSON ({e})\n{}", self.context()))
    }

    /// Fails the test, saying everything, unless it exited with `code`.
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "\n{}", self.context());
        self
    }
}

/// Runs `rtlab net ping --json --no-save --quiet` with `args`, prefixed by
/// `prefix`.
pub fn ping_run_in(prefix: &[&str], args: &[&str]) -> PingRun {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(env!("CARGO_BIN_EXE_rtlab"));
            c
        }
        None => rtlab(),
    };
    cmd.args(["net", "ping", "--json", "--no-save", "--quiet"])
        .args(args);
    let line = command_line(&cmd);
    let out = cmd.output().expect("running rtlab net ping");
    PingRun {
        cmd: line,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `rtlab net ping --json --no-save` with `args`, prefixed by `prefix`, and
/// returns the run document and the exit code.
pub fn ping_in(prefix: &[&str], args: &[&str]) -> (Value, Option<i32>) {
    let run = ping_run_in(prefix, args);
    (run.doc(), run.code)
}

/// `ping_in` without a prefix.
pub fn ping(args: &[&str]) -> (Value, Option<i32>) {
    ping_in(&[], args)
}

/// A metric of a run.
pub fn metric(run: &Value, name: &str) -> f64 {
    run["metrics"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("metric {name} missing"))
}

/// A server counter from its JSON summary (`served`, or a reject reason).
pub fn counter(summary: &Value, name: &str) -> u64 {
    let s = &summary["summary"];
    if let Some(v) = s[name].as_u64() {
        return v;
    }
    s["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == name)
        .and_then(|p| p[1].as_u64())
        .unwrap_or_else(|| panic!("counter {name} missing in {s}"))
}

/// Checks what every complete run must satisfy: `count` messages answered, none
/// lost, one trace point per message, ordered statistics, and a whole message no
/// shorter than its legs together.
pub fn assert_sound_run(run: &Value, count: u64, legs: usize) {
    assert_eq!(run["format"], "rtlab/1");
    assert_eq!(run["kind"], "net");
    assert_eq!(run["status"], "complete", "{}", run["warnings"]);
    assert_eq!(metric(run, "messages_sent"), count as f64);
    assert_eq!(metric(run, "messages_lost"), 0.0);
    assert_eq!(metric(run, "duplicates"), 0.0);
    let total = &run["total"];
    assert_eq!(total["name"], "message");
    assert_eq!(total["counters"]["samples"], count);
    assert_eq!(total["trace"].as_array().unwrap().len() as u64, count);
    let series = run["series"].as_array().unwrap();
    let names: Vec<&str> = series.iter().map(|s| s["name"].as_str().unwrap()).collect();
    let mut want: Vec<String> = (1..=legs).map(|i| format!("leg{i}")).collect();
    want.push("server".into());
    assert_eq!(names, want);
    let mut leg_min_sum = 0;
    for s in series.iter().chain([total]) {
        let m = &s["summary"];
        let v = |k: &str| m[k].as_u64().unwrap();
        assert_eq!(m["samples"], count, "{}", s["name"]);
        assert!(v("min_ns") <= v("p50_ns"));
        assert!(v("p50_ns") <= v("p90_ns"));
        assert!(v("p90_ns") <= v("p99_ns"));
        assert!(v("p99_ns") <= v("p999_ns"));
        assert!(v("p999_ns") <= v("max_ns"));
        let mean = m["mean_ns"].as_f64().unwrap();
        assert!(mean >= v("min_ns") as f64 && mean <= v("max_ns") as f64);
        if s["name"].as_str().unwrap().starts_with("leg") {
            leg_min_sum += v("min_ns");
        }
    }
    assert!(total["summary"]["min_ns"].as_u64().unwrap() >= leg_min_sum);
    // Trace points are one per message, in schedule order.
    let offsets: Vec<u64> = total["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["offset_ns"].as_u64().unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]));
}
