use super::*;
use rtlab_engine::stats::hist::{HistogramData, LatencyHistogram};
use std::path::Path;

const MIN_NS: i64 = 60_000_000_000;

/// A scripted window of `host`'s CPU `cpu` at `level`, starting at `start_ns`,
/// five minutes long, its maximum `max_us`.
fn window(host: &str, cpu: i64, level: Level, start_ns: i64, max_us: u64) -> Window {
    let mut h = LatencyHistogram::new();
    h.record(max_us * 1000);
    let mut w = Window {
        level,
        session: "s".into(),
        host: host.into(),
        kernel: format!("k-{host}-{start_ns}"),
        cpu,
        start_ns,
        end_ns: start_ns + 5 * MIN_NS,
        partial: false,
        windows: 1,
        samples: 1,
        overruns: 0,
        misses: 0,
        min_ns: max_us as i64 * 1000,
        p50_ns: 0,
        p99_ns: 0,
        p999_ns: 0,
        max_ns: max_us as i64 * 1000,
        max_at_ns: start_ns,
        hist: HistogramData::default(),
    };
    w.set_hist(&h);
    w
}

/// Fills the store at `path` (a file or a URL) with scripted windows.
fn fleet(path: &Path) {
    let mut s = Store::open(path).unwrap();
    let mut rows = Vec::new();
    for (i, host) in ["a", "b", "c"].iter().enumerate() {
        for cpu in 0..2 {
            for n in 0..4 {
                let max = 10 * (i as u64 + 1) + n as u64 + cpu as u64;
                rows.push(window(host, cpu, Level::Window, n * 5 * MIN_NS, max));
            }
        }
    }
    // Host d has only an hourly row left: its windows were merged.
    rows.push(window("d", 3, Level::Hour, 0, 500));
    // An older hourly row of a does not hide its newer windows.
    rows.push(window("a", 0, Level::Hour, -60 * MIN_NS, 900));
    s.save_windows(&rows).unwrap();
}

/// Runs `body` on a read-only store of [`fleet`]'s windows in a SQLite file.
fn on_sqlite(body: fn(Store)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.db");
    fleet(&path);
    body(Store::open_read_only(&path).unwrap());
}

/// Runs `body` on a read-only store of [`fleet`]'s windows in a new database
/// `name` of a throw-away PostgreSQL server.
#[cfg(feature = "postgres")]
fn on_pg(server: &super::super::pg_cluster::Cluster, name: &str, body: fn(Store)) {
    let url = server.create_db(name);
    fleet(Path::new(&url));
    body(Store::open_read_only(Path::new(&url)).unwrap());
}

fn latest_rows(s: Store) {
    let latest = s.latest_windows().unwrap();
    let keys: Vec<(String, i64, i64)> = latest
        .iter()
        .map(|w| (w.host.clone(), w.cpu, w.max_ns / 1000))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("a".into(), 0, 13),
            ("a".into(), 1, 14),
            ("b".into(), 0, 23),
            ("b".into(), 1, 24),
            ("c".into(), 0, 33),
            ("c".into(), 1, 34),
            ("d".into(), 3, 500),
        ]
    );
    assert!(latest
        .iter()
        .all(|w| w.start_ns == 15 * MIN_NS || w.host == "d"));
}

/// Only rows ending at or after the time count.
fn worst_per_host(s: Store) {
    let all = s.worst_since(i64::MIN).unwrap();
    assert_eq!(all.get("a"), Some(&900_000));
    assert_eq!(all.get("c"), Some(&34_000));
    // Only the last window of each CPU ends at or after 20 min.
    let recent = s.worst_since(20 * MIN_NS).unwrap();
    assert_eq!(recent.get("a"), Some(&14_000));
    assert_eq!(recent.get("d"), None);
}

/// Hosts take the kernel of their newest row; the series tail is bounded.
fn hosts_and_tail(s: Store) {
    let hosts = s.hosts(&s.latest_windows().unwrap()).unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(hosts[0].kernel, format!("k-a-{}", 15 * MIN_NS));
    let tail = s.series_tail("b", Level::Window, 0, 3).unwrap();
    let starts: Vec<(i64, i64)> = tail.iter().map(|w| (w.start_ns / MIN_NS, w.cpu)).collect();
    assert_eq!(starts, [(10, 1), (15, 0), (15, 1)]);
}

const DAY_NS: i64 = 86_400_000_000_000;
/// The time the evidence is judged at: 2026-11-20T00:00:00Z.
const NOW_NS: i64 = 1_795_132_800_000_000_000;

/// A latency run of `host` started `days_ago`, its maximum `max_us`, of
/// `kind`.
fn run_of(host: &str, days_ago: i64, max_us: u64, kind: &str) -> crate::record::Run {
    let mut r = crate::analysis::fixture::run_from_samples(host, &[50_000, max_us * 1000]);
    r.fingerprint.hostname = host.into();
    r.kind = kind.into();
    r.started_at = super::rfc3339(NOW_NS - days_ago * DAY_NS);
    r
}

/// Hosts with monitor rows, runs, both, runs of another kind, or nothing
/// newer than three weeks.
fn evidence_fleet(path: &Path) {
    let mut s = Store::open(path).unwrap();
    let w = |host: &str, days_ago: i64, level: Level, max_us: u64| {
        window(host, 0, level, NOW_NS - days_ago * DAY_NS, max_us)
    };
    s.save_windows(&[
        // mon: 2 of 3 rows of the week within 1 ms; a row of 2 weeks ago not counted.
        w("mon", 1, Level::Window, 100),
        w("mon", 3, Level::Window, 1_500),
        w("mon", 6, Level::Hour, 200),
        w("mon", 14, Level::Day, 5_000),
        // mixed: two rows and a run, the worst 990 us: within 1 ms by 10 us.
        w("mixed", 2, Level::Window, 200),
        w("mixed", 2, Level::Window, 300),
    ])
    .unwrap();
    for r in [
        // runs-only: stored latency runs, no monitor: all within 1 ms.
        run_of("runs-only", 1, 300, "latency"),
        run_of("runs-only", 2, 400, "latency"),
        run_of("runs-only", 5, 350, "latency"),
        run_of("runs-only", 40, 9_000, "latency"),
        run_of("mixed", 4, 990, "latency"),
        // stale: its newest evidence is 3 weeks old.
        run_of("stale", 21, 2_000, "latency"),
        run_of("stale", 25, 3_000, "latency"),
        run_of("stale", 30, 100, "latency"),
        // bench: runs of another kind are no latency evidence.
        run_of("bench", 1, 100, "bench.cpu"),
    ] {
        s.save(&r).unwrap();
    }
}

fn evidence_of_every_host(s: Store) {
    let latest = s.latest_windows().unwrap();
    let hosts = s.hosts(&latest).unwrap();
    let e = s
        .evidence(
            NOW_NS,
            &[10_000_000, 1_000_000, 10_000_000],
            "latency",
            &latest,
            &hosts,
        )
        .unwrap();
    // Within (10 ms, 1 ms, 10 ms): a budget given twice is counted once.
    let count = |n, within: &[i64], worst_us: Option<i64>| Count {
        n,
        within: vec![within[1], within[0], within[1]],
        worst_ns: worst_us.map(|u| u * 1000),
    };
    let week = (NOW_NS - 7 * DAY_NS, NOW_NS);
    let mon = &e["mon"];
    assert_eq!((mon.from_ns, mon.to_ns), week);
    assert_eq!(mon.rows, count(3, &[2, 3], Some(1_500)));
    assert_eq!(mon.runs, Count::default());
    let runs = &e["runs-only"];
    assert_eq!(runs.rows, Count::default());
    assert_eq!(
        runs.runs,
        count(3, &[3, 3], Some(400)),
        "the run of 40 days ago is out"
    );
    let mixed = &e["mixed"];
    assert_eq!(
        (mixed.rows.n, mixed.runs.n, mixed.runs.worst_ns),
        (2, 1, Some(990_000))
    );
    // Nothing in the last week: the week to its newest run.
    let stale = &e["stale"];
    assert_eq!(
        (stale.from_ns, stale.to_ns),
        (NOW_NS - 28 * DAY_NS, NOW_NS - 21 * DAY_NS)
    );
    assert_eq!(stale.runs, count(2, &[0, 2], Some(3_000)));
    assert!(!e.contains_key("bench"), "{:?}", e.keys());
}

#[test]
fn every_host_is_judged_on_its_monitor_rows_and_latency_runs_of_a_week() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evidence.db");
    evidence_fleet(&path);
    let s = Store::open_read_only(&path).unwrap();
    // The week's rows are read from the index alone, never from the rows.
    let sql = super::counts_sql(super::WEEK_ROWS, 2, 3);
    let plan: Vec<String> = s
        .conn
        .as_sqlite()
        .unwrap()
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(rusqlite::params!["window", 0, 1, 2, 3], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|p| p.contains("USING COVERING INDEX windows_end")),
        "{plan:?}"
    );
    evidence_of_every_host(s);
}

/// A read-only store refuses writes.
fn refuses_writes(mut s: Store) {
    assert!(s
        .save_windows(&[window("e", 0, Level::Window, 0, 1)])
        .is_err());
    assert!(!s.hosts(&[]).unwrap().iter().any(|h| h.host == "e"));
}

#[test]
fn the_latest_row_of_every_series_is_found_at_any_level() {
    on_sqlite(latest_rows);
}

#[test]
fn worst_per_host_counts_only_rows_ending_since() {
    on_sqlite(worst_per_host);
}

#[test]
fn hosts_take_the_kernel_of_their_newest_row_and_the_series_tail_is_bounded() {
    on_sqlite(hosts_and_tail);
}

#[test]
fn a_read_only_store_refuses_writes() {
    on_sqlite(refuses_writes);
}

/// The fleet queries and the read-only session on PostgreSQL.
#[test]
#[cfg(feature = "postgres")]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn the_fleet_queries_agree_on_postgres() {
    let server = super::super::pg_cluster::Cluster::start();
    on_pg(&server, "latest", latest_rows);
    on_pg(&server, "worst", worst_per_host);
    on_pg(&server, "hosts", hosts_and_tail);
    on_pg(&server, "readonly", refuses_writes);
    let url = server.create_db("evidence");
    evidence_fleet(Path::new(&url));
    evidence_of_every_host(Store::open_read_only(Path::new(&url)).unwrap());
}

#[test]
fn a_read_only_store_leaves_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.db");
    fleet(&path);
    let before = std::fs::read(&path).unwrap();
    let mut s = Store::open_read_only(&path).unwrap();
    assert!(s
        .save_windows(&[window("e", 0, Level::Window, 0, 1)])
        .is_err());
    drop(s);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_missing_or_foreign_file_is_refused_read_only() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Store::open_read_only(&dir.path().join("none.db")).is_err());
    assert!(!dir.path().join("none.db").exists());
    let other = dir.path().join("other.db");
    std::fs::write(&other, "not a database at all, but long enough to be read").unwrap();
    let e = Store::open_read_only(&other).err().unwrap();
    assert!(format!("{e:#}").contains("not an rtlab"), "{e:#}");
}

/// Fills `path` with `hosts` × 2 CPUs × `per` windows of 5 minutes ending
/// now, through [`Store::save_windows`], 10 000 rows per transaction.
fn fill(path: &Path, hosts: usize, per: usize) {
    let mut s = Store::open(path).unwrap();
    let now = chrono::Utc::now().timestamp_nanos_opt().unwrap();
    // One histogram per maximum, made once: making one costs more than storing it.
    let made: Vec<Window> = (0..997)
        .map(|m| window("", 0, Level::Window, 0, 20 + m))
        .collect();
    let mut batch = Vec::with_capacity(10_000);
    for n in 0..per {
        let start = now - (per - n) as i64 * 5 * MIN_NS;
        for h in 0..hosts {
            for cpu in 0..2 {
                let mut w = made[(n * 7 + h * 13 + cpu as usize) % 997].clone();
                w.host = format!("board{h:03}");
                w.kernel = format!("6.{}-rt", h % 4);
                w.cpu = cpu;
                (w.start_ns, w.end_ns, w.max_at_ns) = (start, start + 5 * MIN_NS, start);
                batch.push(w);
                if batch.len() == 10_000 {
                    s.save_windows(&batch).unwrap();
                    batch.clear();
                }
            }
        }
    }
    s.save_windows(&batch).unwrap();
}

/// The fleet queries over a store with many series and windows: the latest
/// row of each series is its last window, and the worst of each host is the
/// largest maximum it was given. `bench/serve.sh` fills its store with this
/// test: RTLAB_BENCH_DB (the file), RTLAB_BENCH_HOSTS and
/// RTLAB_BENCH_WINDOWS (per host and CPU) [default: a temporary store, 20
/// hosts, 150 windows].
#[test]
fn many_windows_keep_the_fleet_queries_right() {
    let dir = tempfile::tempdir().unwrap();
    let var = |k: &str| std::env::var(k).ok();
    let path = var("RTLAB_BENCH_DB").map_or_else(|| dir.path().join("many.db"), Into::into);
    let hosts = var("RTLAB_BENCH_HOSTS").map_or(20, |v| v.parse().unwrap());
    let per = var("RTLAB_BENCH_WINDOWS").map_or(150, |v| v.parse().unwrap());
    fill(&path, hosts, per);
    let s = Store::open_read_only(&path).unwrap();
    let latest = s.latest_windows().unwrap();
    assert_eq!(latest.len(), hosts * 2);
    let last_start = latest[0].start_ns;
    assert!(latest.iter().all(|w| w.start_ns == last_start));
    let worst = s.worst_since(i64::MIN).unwrap();
    assert_eq!(worst.len(), hosts);
    // Each host's maxima cover 20 + 0..997 µs once there are enough windows.
    let top = (20 + 996) * 1000;
    assert!(worst.values().all(|&w| w <= top));
    if per >= 997 {
        assert!(worst.values().all(|&w| w == top));
    }
    assert_eq!(s.hosts(&latest).unwrap().len(), hosts);
}
