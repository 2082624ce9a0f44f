//! `rtlab serve`'s pages in a real browser, driven through the Chrome DevTools
//! protocol over `--remote-debugging-pipe` (JSON messages ended by NUL on
//! file descriptors 3 and 4): every page loads without a console message or
//! an error, its tables and plots are there, and two runs ticked in the list
//! with mouse clicks, then "Compare" clicked, give a comparison whose figures
//! are those of `rtlab compare --json`.

use crate::common::{json, rtlab};
use crate::serve_common::{store, Server};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A headless Chromium and one page of it, attached.
struct Browser {
    child: Child,
    to: File,
    from: Receiver<Value>,
    next: u64,
    session: String,
    /// Every event received so far.
    events: Vec<Value>,
}

/// Two pipes: (read end, write end).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) into a two-element array; both ends are owned below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    fn start(profile: &std::path::Path) -> Browser {
        use std::os::fd::AsRawFd;
        let (cmd_r, cmd_w) = pipe();
        let (ev_r, ev_w) = pipe();
        let (r, w) = (cmd_r.as_raw_fd(), ev_w.as_raw_fd());
        let mut c = Command::new("chromium");
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(profile.with_extension("log")).unwrap())
        .process_group(0);
        // SAFETY: only fcntl(2) and dup2(2), async-signal-safe, between fork
        // and exec. Both ends are first moved above 4, so that neither is
        // overwritten nor left close-on-exec where it already was 3 or 4.
        unsafe {
            c.pre_exec(move || {
                let (r, w) = (
                    libc::fcntl(r, libc::F_DUPFD, 10),
                    libc::fcntl(w, libc::F_DUPFD, 10),
                );
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().expect("cannot start chromium");
        drop((cmd_r, ev_w));
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(File::from(ev_r));
            let mut msg = Vec::new();
            while reader.read_until(0, &mut msg).is_ok_and(|n| n > 0) {
                msg.pop();
                if let Ok(v) = serde_json::from_slice::<Value>(&msg) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                msg.clear();
            }
        });
        let mut b = Browser {
            child,
            to: File::from(cmd_w),
            from,
            next: 0,
            session: String::new(),
            events: Vec::new(),
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 3000, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    /// Sends a command (to the page once attached) and waits for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        let t = Instant::now();
        loop {
            let left = TIMEOUT.saturating_sub(t.elapsed());
            let v = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if v["id"] == json!(self.next) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    /// Waits for the next `Page.loadEventFired` after event `from`.
    fn wait_load(&mut self, from: usize) {
        let t = Instant::now();
        while !self.events[from..]
            .iter()
            .any(|e| e["method"] == "Page.loadEventFired")
        {
            let left = TIMEOUT.saturating_sub(t.elapsed());
            let v = self.from.recv_timeout(left).expect("the page did not load");
            self.events.push(v);
        }
    }

    fn open(&mut self, url: &str) {
        let from = self.events.len();
        self.call("Page.navigate", json!({"url": url}));
        self.wait_load(from);
    }

    fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{js}: {r}");
        r["result"]["value"].clone()
    }

    /// A left click in the middle of the element `selector` finds.
    fn click(&mut self, selector: &str) {
        let at = self.eval(&format!(
            "(() => {{ const r = document.querySelector({}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            json!(selector)
        ));
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": at[0], "y": at[1], "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Console messages, uncaught exceptions and log entries (failed loads,
    /// refused content) so far.
    fn complaints(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                matches!(
                    e["method"].as_str(),
                    Some("Runtime.consoleAPICalled" | "Runtime.exceptionThrown" | "Log.entryAdded")
                )
            })
            .map(Value::to_string)
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// The summary table of a report page: each row's cells, the value of each
/// cell without its ratio.
const SUMMARY: &str = "(() => { const h = [...document.querySelectorAll('h2')].find(h => h.textContent === 'Summary'); \
    return [...h.nextElementSibling.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(td => td.firstChild ? td.firstChild.textContent : '')); })()";

#[test]
#[ignore = "needs chromium: apt-get install chromium"]
fn pages_load_clean_and_a_comparison_ticked_in_the_page_matches_rtlab_compare() {
    let (dir, db) = store(0);
    let s = Server::start(&db, &[]);
    let mut b = Browser::start(&dir.path().join("chromium-profile"));
    let base = format!("http://{}", s.addr);
    // Every page: tables, and plots where there are some.
    for (path, tables, svgs) in [
        ("/", 1, 0),
        ("/runs", 1, 0),
        ("/run/11", 2, 2),
        ("/compare?run=1&run=2", 2, 2),
        ("/host/board-a", 1, 1),
    ] {
        b.open(&format!("{base}{path}"));
        let found = b.eval(
            "[document.querySelectorAll('table').length, document.querySelectorAll('svg').length]",
        );
        assert!(
            found[0].as_u64().unwrap() >= tables && found[1].as_u64().unwrap() >= svgs,
            "{path}: {found}"
        );
    }
    // Tick the live run (11) and the first import (1), then Compare.
    b.open(&format!("{base}/runs"));
    b.click("input[name=run][value='11']");
    b.click("input[name=run][value='1']");
    let ticked =
        b.eval("[...document.querySelectorAll('input[name=run]:checked')].map(x => x.value)");
    assert_eq!(ticked, json!(["11", "1"]));
    let from = b.events.len();
    b.click("#compare");
    b.wait_load(from);
    let href = b.eval("location.pathname + location.search");
    assert_eq!(href, json!("/compare?run=11&run=1"));
    let page = b.eval(SUMMARY);
    let complaints = b.complaints();
    assert!(complaints.is_empty(), "console: {complaints:#?}");

    let cmp = json(
        rtlab()
            .arg("--db")
            .arg(&db)
            .args(["compare", "11", "1", "--json"]),
        &[0],
    );
    let rows = cmp["comparisons"][0]["comparison"]["rows"]
        .as_array()
        .unwrap();
    assert!(rows.len() >= 5);
    let mut checked = 0;
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let quantity = row["quantity"].as_str().unwrap();
        let label = if quantity == "time" {
            format!("{name} (us)")
        } else {
            name.to_string()
        };
        let cells = page
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r[0] == json!(label))
            .unwrap_or_else(|| panic!("no row {label} in {page}"));
        for (i, cell) in row["cells"].as_array().unwrap().iter().enumerate() {
            // The value leads the cell: its interval and change follow.
            let text = cells[i + 1].as_str().unwrap().trim();
            let shown = text.split_whitespace().next().unwrap_or("");
            match (cell["value"].as_f64(), quantity) {
                (None, _) => assert_eq!(shown, "–", "{label}"),
                (Some(ns), "time") => {
                    let us: f64 = shown.parse().unwrap_or_else(|_| panic!("{label}: {shown}"));
                    assert!(
                        (us * 1000.0 - ns).abs() <= 50.0,
                        "{label}: page {us} us, compare {ns} ns"
                    );
                    checked += 1;
                }
                (Some(n), "count") => {
                    assert_eq!(shown, format!("{n:.0}"), "{label}");
                    checked += 1;
                }
                _ => {}
            }
        }
    }
    assert!(checked >= 8, "{checked} figures compared");
    // The check of the console can fail: a message is seen.
    b.eval("console.error('seen')");
    assert_eq!(b.complaints().len(), 1, "{:#?}", b.complaints());
}
