//! What the tests of `rtlab serve` share: a store with imported runs, a live
//! run, a campaign and scripted monitor windows; a server on a free loopback
//! port; raw HTTP requests; clients that send nothing or trickle.

pub use crate::common::BOUND;
use crate::common::{expect, read_until_closed, rtlab};
use crate::golden::imported_store;
use assert_cmd::cargo::cargo_bin;
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A scripted window: (host, kernel, cpu, start s, samples, overruns,
/// misses, p50, p99, p99.9, max ns).
pub type Scripted = (
    &'static str,
    &'static str,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
);

/// The scripted windows. Each series' later row is its latest.
pub const WINDOWS: &[Scripted] = &[
    (
        "board-a", "6.1-rt", 0, 0, 60000, 1, 2, 9000, 21000, 33000, 80000,
    ),
    (
        "board-a", "6.1-rt", 0, 60, 60000, 3, 4, 9100, 22000, 34000, 1_250_000,
    ),
    (
        "board-a", "6.1-rt", 1, 60, 59999, 0, 0, 8000, 19000, 25000, 41_500,
    ),
    (
        "board-b", "6.6", 2, 60, 1000, 7, 0, 50000, 90000, 120_000, 2_000_123,
    ),
];

/// A store in `dir/golden.db`: the golden imports (runs 1 to 10), then
/// `extra` imports of the cyclictest histogram (for paging), a SCHED_OTHER
/// latency run, a one-step campaign that passes its requirement, and the
/// scripted windows. Windows end at their start + 60 s, counted back from
/// now so that they are within the last day.
pub fn store(extra: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = imported_store();
    let db = dir.path().join("golden.db");
    if extra > 0 {
        let files = vec!["cyclictest-histogram.txt"; extra];
        expect(
            rtlab()
                .current_dir(dir.path())
                .args(["--db", "golden.db", "results", "import"])
                .args(&files),
            &[0],
        );
    }
    expect(
        rtlab().arg("--db").arg(&db).args([
            "latency", "-a", "0", "--policy", "other", "-i", "1ms", "-D", "200ms", "-q", "--label",
            "live", "--tag", "served",
        ]),
        &[0],
    );
    let scn = dir.path().join("one.toml");
    std::fs::write(
        &scn,
        "name = \"one step\"\n[defaults]\nduration = \"200ms\"\ninterval = \"1ms\"\npriority = 0\ncpus = \"0\"\n\
         [[step]]\nname = \"only\"\nprobe = \"latency\"\n[requirements]\nloose = \"10s\"\n",
    )
    .unwrap();
    expect(
        rtlab().arg("--db").arg(&db).arg("run").arg(&scn).arg("-q"),
        &[0],
    );
    insert_windows(&db);
    (dir, db)
}

/// The start of scripted time: an hour ago, on a whole second.
fn t0_ns() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    (now - 3600) * 1_000_000_000
}

/// The start of scripted time in the store `db`: its first window's start.
pub fn t0_of(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT MIN(start_ns) FROM windows", [], |r| r.get(0))
        .unwrap()
}

fn insert_windows(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let t0 = t0_ns();
    for &(host, kernel, cpu, start, samples, overruns, misses, p50, p99, p999, max) in WINDOWS {
        let start = t0 + start * 1_000_000_000;
        conn.execute(
            "INSERT INTO windows (level, session, host, kernel, cpu, start_ns, end_ns, partial,
                windows, samples, overruns, misses, min_ns, p50_ns, p99_ns, p999_ns, max_ns,
                max_at_ns, hist)
             VALUES ('window', 's', ?1, ?2, ?3, ?4, ?5, 0, 1, ?6, ?7, ?8, 1000, ?9, ?10, ?11, ?12, ?4, '{}')",
            rusqlite::params![host, kernel, cpu, start, start + 60_000_000_000, samples, overruns, misses, p50, p99, p999, max],
        )
        .unwrap();
    }
}

/// A running `rtlab serve`; stopped (SIGKILL) when dropped if still running.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub log: PathBuf,
}

impl Server {
    /// `rtlab --db DB serve --listen 127.0.0.1:0 ARGS`, once it listens; its
    /// stderr beside the store file.
    pub fn start(db: &Path, args: &[&str]) -> Server {
        let log = db.with_extension(format!("serve{}.log", std::process::id() ^ rand_suffix()));
        Server::start_logged(db, args, log)
    }

    /// [`Server::start`] with its stderr in `log` (a store named by a URL).
    pub fn start_logged(db: &Path, args: &[&str], log: PathBuf) -> Server {
        let child = Command::new(cargo_bin("rtlab"))
            .env_remove("RTLAB_DB")
            .arg("--db")
            .arg(db)
            .arg("serve")
            .args(args)
            .args(if args.contains(&"--listen") {
                &[][..]
            } else {
                &["--listen", "127.0.0.1:0"][..]
            })
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut server = Server {
            child,
            addr: String::new(),
            log,
        };
        let t = Instant::now();
        loop {
            let text = std::fs::read_to_string(&server.log).unwrap_or_default();
            // The line may be read while it is being written (in pieces): only
            // a whole line, with its end, gives the address.
            if let Some(addr) = text
                .split("http://")
                .nth(1)
                .and_then(|r| r.split_once('\n'))
                .and_then(|(line, _)| line.split('/').next())
                .filter(|a| a.parse::<std::net::SocketAddr>().is_ok())
            {
                server.addr = addr.to_string();
                return server;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "serve did not start: {text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `GET target` with `headers` (lines without CRLF).
    pub fn get_with(&self, target: &str, headers: &[&str]) -> Reply {
        let mut req = format!("GET {target} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for h in headers {
            req.push_str(&format!("{h}\r\n"));
        }
        req.push_str("\r\n");
        self.raw(req.as_bytes())
    }

    pub fn get(&self, target: &str) -> Reply {
        self.get_with(target, &[])
    }

    /// Sends `bytes` and reads the whole answer.
    pub fn raw(&self, bytes: &[u8]) -> Reply {
        self.raw_within(bytes, BOUND)
    }

    /// Sends `bytes` and reads the whole answer, which must come (and the
    /// connection close) within `bound`.
    pub fn raw_within(&self, bytes: &[u8], bound: Duration) -> Reply {
        let mut s = self.connect();
        // The server may answer (and close) before reading everything.
        let _ = s.write_all(bytes);
        Reply::parse(until_closed(&mut s, bound).as_bytes())
    }

    /// A connection that has sent nothing yet.
    pub fn connect(&self) -> TcpStream {
        TcpStream::connect(&self.addr).unwrap()
    }

    /// What the server wrote on stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    /// SIGTERM, then the exit status and what it wrote on stderr.
    pub fn stop(mut self) -> (ExitStatus, String) {
        // SAFETY: kill(2) on the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        (status, std::fs::read_to_string(&self.log).unwrap())
    }
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the server sends on `s` until it closes it, as text (see
/// [`read_until_closed`]).
pub fn until_closed(s: &mut TcpStream, bound: Duration) -> String {
    String::from_utf8_lossy(&read_until_closed(s, bound)).into_owned()
}

/// Clients that each send a request head a byte every 100 ms and never end
/// it (`GET / HTTP/1.1`, then a header that goes on), from a thread of their
/// own, until dropped or for 60 s at most.
pub struct Trickle {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Trickle {
    /// Trickles on `streams` (connections made, nothing sent yet).
    pub fn start(mut streams: Vec<TcpStream>) -> Trickle {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
            for round in 0..600 {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let byte = head.get(round).copied().unwrap_or(b'a');
                for s in &mut streams {
                    // A connection the server closed fails; the others go on.
                    let _ = s.write_all(&[byte]);
                }
                // Pacing, the slowness itself: nothing waits on it.
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Trickle {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Trickle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    fn parse(bytes: &[u8]) -> Reply {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {text:?}"));
        Reply {
            status,
            head: head.to_string(),
            body: body.to_string(),
        }
    }
}
