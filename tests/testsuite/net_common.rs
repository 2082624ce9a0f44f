//! Helpers shared by the `net_*` tests: a server child process that is always
//! stopped, and client runs parsed from their JSON.
#![allow(dead_code)] // each test file uses a different part

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command, Stdio};

/// The binary under test.
pub fn rtlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rtlab"))
}

/// A running `rtlab net serve`, killed when dropped.
pub struct Server {
    child: Child,
    stderr: BufReader<ChildStderr>,
    /// The address it listens on, as it printed it.
    pub addr: String,
}

impl Server {
    /// Starts `rtlab net serve --json` with `args` (give `--bind`), prefixed by
    /// `prefix` (e.g. `ip netns exec NS`), and waits until it listens.
    pub fn start_in(prefix: &[&str], args: &[&str]) -> Server {
        let mut cmd = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(env!("CARGO_BIN_EXE_rtlab"));
                c
            }
            None => rtlab(),
        };
        let mut child = cmd
            .args(["net", "serve", "--json", "--duration", "60s"])
            .args(args)
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
            addr: String::new(),
        };
        let mut line = String::new();
        loop {
            line.clear();
            let n = server.stderr.read_line(&mut line).unwrap();
            assert!(n > 0, "the server exited before listening");
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

    /// Stops it with SIGTERM and returns its JSON summary and exit code.
    pub fn stop(mut self) -> (Value, Option<i32>) {
        // SAFETY: kill(2) with the pid of our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let mut err = String::new();
        let _ = self.stderr.read_to_string(&mut err);
        let status = self.child.wait().unwrap();
        let doc = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("server summary is not JSON ({e}): {out}\n{err}"));
        (doc, status.code())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `rtlab net ping --json --no-save` with `args`, prefixed by `prefix`, and
/// returns the run document and the exit code.
pub fn ping_in(prefix: &[&str], args: &[&str]) -> (Value, Option<i32>) {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(env!("CARGO_BIN_EXE_rtlab"));
            c
        }
        None => rtlab(),
    };
    let out = cmd
        .args(["net", "ping", "--json", "--no-save", "--quiet"])
        .args(args)
        .output()
        .expect("running rtlab net ping");
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "ping output is not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code())
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
