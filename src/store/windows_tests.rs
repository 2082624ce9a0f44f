use super::*;

const MIN_NS: i64 = 60_000_000_000;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("x.db")).unwrap();
    (dir, store)
}

/// A scripted window of CPU `cpu` starting at `start_ns`, five minutes long,
/// whose latencies are `lat_us` (µs).
fn window(cpu: i64, start_ns: i64, lat_us: &[u64]) -> Window {
    let mut h = LatencyHistogram::new();
    for &us in lat_us {
        h.record(us * 1000);
    }
    let max = *lat_us.iter().max().unwrap() as i64 * 1000;
    let mut w = Window {
        level: Level::Window,
        session: "s".into(),
        host: "board".into(),
        kernel: "6.1-rt".into(),
        cpu,
        start_ns,
        end_ns: start_ns + 5 * MIN_NS,
        partial: false,
        windows: 1,
        samples: lat_us.len() as i64,
        overruns: 1,
        misses: 2,
        min_ns: *lat_us.iter().min().unwrap() as i64 * 1000,
        p50_ns: 0,
        p99_ns: 0,
        p999_ns: 0,
        max_ns: max,
        max_at_ns: start_ns + 7,
        hist: HistogramData::default(),
    };
    w.set_hist(&h);
    w
}

const KEEP: Retention = Retention {
    windows_ns: DAY_NS,
    hourly_ns: 30 * DAY_NS,
    daily_ns: 365 * DAY_NS,
};

fn level(s: &Store, l: Level) -> Vec<Window> {
    s.windows(&WindowFilter {
        level: Some(l),
        ..Default::default()
    })
    .unwrap()
}

fn old_windows_merge_into_hours_then_days_and_the_oldest_days_go(mut s: Store) {
    let now = 400 * DAY_NS;
    let two_days_ago = now - 2 * DAY_NS;
    // Three windows in one hour of CPU 1, one in the next hour, one of CPU 0,
    // and one recent window that stays.
    s.save_windows(&[
        window(1, two_days_ago, &[10, 20, 30]),
        window(1, two_days_ago + 5 * MIN_NS, &[15, 90]),
        window(1, two_days_ago + 10 * MIN_NS, &[12]),
        window(1, two_days_ago + HOUR_NS, &[40]),
        window(0, two_days_ago, &[5, 6]),
        window(1, now - 10 * MIN_NS, &[11]),
    ])
    .unwrap();
    let p = s.downsample(now, &KEEP, PASS_ROWS).unwrap();
    assert_eq!(
        p,
        Pruned {
            to_hourly: 5,
            to_daily: 0,
            deleted: 0
        }
    );
    assert_eq!(level(&s, Level::Window).len(), 1);
    let hours = level(&s, Level::Hour);
    assert_eq!(hours.len(), 3);
    let h = hours.iter().find(|h| h.cpu == 1 && h.windows == 3).unwrap();
    assert_eq!(h.start_ns, two_days_ago); // a whole day is a whole hour
    assert_eq!(h.end_ns, two_days_ago + HOUR_NS);
    assert_eq!((h.samples, h.overruns, h.misses), (6, 3, 6));
    assert_eq!((h.min_ns, h.max_ns), (10_000, 90_000));
    assert_eq!(h.max_at_ns, two_days_ago + 5 * MIN_NS + 7);
    let hist = LatencyHistogram::from_data(&h.hist);
    assert_eq!(hist.len(), 6);
    assert_eq!(hist.count_le(30_000), 5);

    // A later pass merges a late window of the same hour into the existing row.
    s.save_windows(&[window(1, two_days_ago + 20 * MIN_NS, &[100])])
        .unwrap();
    s.downsample(now, &KEEP, PASS_ROWS).unwrap();
    let hours = level(&s, Level::Hour);
    assert_eq!(hours.len(), 3);
    let h = hours.iter().find(|h| h.cpu == 1 && h.windows == 4).unwrap();
    assert_eq!((h.samples, h.max_ns), (7, 100_000));
    assert_eq!(LatencyHistogram::from_data(&h.hist).len(), 7);

    // 40 days later: hours into days (CPU 1's two hours of day 398 into one;
    // the recent window goes through its hour into day 399 in the same pass).
    let later = now + 40 * DAY_NS;
    let p = s.downsample(later, &KEEP, PASS_ROWS).unwrap();
    assert_eq!((p.to_hourly, p.to_daily), (1, 4));
    assert!(level(&s, Level::Hour).is_empty());
    let days = level(&s, Level::Day);
    assert_eq!(days.len(), 3);
    let d = days.iter().find(|d| d.cpu == 1 && d.windows == 5).unwrap();
    assert_eq!((d.samples, d.max_ns), (8, 100_000));
    assert_eq!(d.start_ns, 398 * DAY_NS);
    assert_eq!(LatencyHistogram::from_data(&d.hist).len(), 8);

    // A year later the days are deleted.
    let p = s
        .downsample(later + 400 * DAY_NS, &KEEP, PASS_ROWS)
        .unwrap();
    assert_eq!(p.deleted, 3);
    assert!(level(&s, Level::Day).is_empty());
}

fn a_pass_takes_at_most_its_budget(mut s: Store) {
    let ws: Vec<Window> = (0..10)
        .map(|i| window(0, i * MIN_NS, &[i as u64 + 1]))
        .collect();
    s.save_windows(&ws).unwrap();
    let p = s.downsample(2 * DAY_NS, &KEEP, 4).unwrap();
    assert_eq!(p.to_hourly, 4);
    assert_eq!(level(&s, Level::Window).len(), 6);
    s.downsample(2 * DAY_NS, &KEEP, 4).unwrap();
    s.downsample(2 * DAY_NS, &KEEP, 4).unwrap();
    let hours = level(&s, Level::Hour);
    assert_eq!(hours.len(), 1);
    assert_eq!((hours[0].windows, hours[0].samples), (10, 10));
    assert_eq!(hours[0].max_ns, 10_000);
}

/// The (host, CPU, start in hours) of each row `f` selects.
fn picked(s: &Store, f: WindowFilter) -> Vec<(String, i64, i64)> {
    let rows = s.windows(&f).unwrap();
    let mut keys: Vec<_> = rows
        .into_iter()
        .map(|w| (w.host, w.cpu, w.start_ns / HOUR_NS))
        .collect();
    keys.sort();
    keys
}

/// The names of the indexes of table `windows`, sorted.
fn window_indexes(s: &Store) -> Vec<String> {
    let sql = match s.conn.kind() {
        super::super::db::Kind::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'windows'
             AND name NOT LIKE 'sqlite%' ORDER BY name"
        }
        super::super::db::Kind::Postgres => {
            "SELECT CAST(indexname AS TEXT) FROM pg_indexes WHERE tablename = 'windows'
             AND indexname NOT LIKE '%pkey' ORDER BY 1"
        }
    };
    let rows = s.conn.query(sql, &[]).unwrap();
    rows.iter().map(|r| r.get(0).unwrap()).collect()
}

fn the_filter_selects_by_cpu_time_host_and_level(mut s: Store) {
    let on = |host: &str, w: Window| Window {
        host: host.into(),
        ..w
    };
    let mut hourly = window(1, 2 * HOUR_NS, &[4]);
    hourly.level = Level::Hour;
    s.save_windows(&[
        window(0, 0, &[1]),
        window(1, 0, &[2]),
        window(1, HOUR_NS, &[3]),
        on("other", window(1, HOUR_NS, &[3])),
        on("other", window(0, 3 * HOUR_NS, &[3])),
        hourly,
    ])
    .unwrap();
    let key = |h: &str, cpu, hour| (h.to_string(), cpu, hour);
    let f = |cpu, since_ns, host: Option<&str>, level| WindowFilter {
        cpu,
        since_ns,
        host: host.map(str::to_string),
        level,
    };
    assert_eq!(picked(&s, f(None, None, None, None)).len(), 6);
    assert_eq!(
        picked(&s, f(Some(1), None, Some("board"), None)),
        [key("board", 1, 0), key("board", 1, 1), key("board", 1, 2)]
    );
    // Since: the rows that end at or after it (a window of 5 minutes).
    assert_eq!(
        picked(&s, f(None, Some(HOUR_NS + 5 * 60_000_000_000), None, None)),
        [
            key("board", 1, 1),
            key("board", 1, 2),
            key("other", 0, 3),
            key("other", 1, 1)
        ]
    );
    assert_eq!(
        picked(&s, f(None, Some(HOUR_NS), Some("other"), None)),
        [key("other", 0, 3), key("other", 1, 1)]
    );
    assert_eq!(
        picked(
            &s,
            f(Some(1), Some(HOUR_NS), Some("board"), Some(Level::Window))
        ),
        [key("board", 1, 1)]
    );
    assert_eq!(
        picked(&s, f(None, None, None, Some(Level::Hour))),
        [key("board", 1, 2)]
    );
    assert_eq!(
        picked(&s, f(Some(0), None, None, None)),
        [key("board", 0, 0), key("other", 0, 3)]
    );
    assert!(picked(&s, f(None, None, Some("nowhere"), None)).is_empty());
    // Paged by id with the same filter.
    let host = f(None, None, Some("other"), None);
    let first = s.windows_after(&host, i64::MIN, 1).unwrap();
    assert_eq!(first.len(), 1);
    let rest = s.windows_after(&host, first[0].0, 10).unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].1.start_ns, 3 * HOUR_NS);
    assert!(window_indexes(&s).contains(&"windows_host_end".to_string()));
}

/// Writes a store as an rtlab of schema version 5 made it, with `w`.
fn write_v5_store(path: &std::path::Path, w: &Window) {
    let conn = rusqlite::Connection::open(path).unwrap();
    for m in &crate::store::schema::MIGRATIONS[..5] {
        let kind = super::super::db::Kind::Sqlite;
        conn.execute_batch(&crate::store::schema::ddl(m.ddl, kind))
            .unwrap();
        conn.execute_batch(m.fill).unwrap();
    }
    conn.pragma_update(None, "application_id", crate::store::schema::APPLICATION_ID)
        .unwrap();
    conn.pragma_update(None, "user_version", 5).unwrap();
    insert(&conn, w).unwrap();
}

#[test]
fn a_version_5_store_gains_the_host_index_and_keeps_its_windows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    let w = window(1, HOUR_NS, &[7, 9]);
    write_v5_store(&path, &w);
    let s = Store::open(&path).unwrap();
    let sqlite = s.conn.as_sqlite().unwrap();
    let version: i64 = sqlite
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, crate::store::schema::SCHEMA_VERSION);
    assert_eq!(
        window_indexes(&s),
        ["windows_end", "windows_host_end", "windows_series"]
    );
    let f = WindowFilter {
        host: Some("board".into()),
        since_ns: Some(HOUR_NS),
        ..Default::default()
    };
    assert_eq!(s.windows(&f).unwrap(), [w]);
    // One host since a time is an index range, not a scan of every row.
    let (cond, args) = filter(&f);
    let plan: Vec<String> = sqlite
        .prepare(&format!(
            "EXPLAIN QUERY PLAN SELECT id FROM windows WHERE {cond}"
        ))
        .unwrap()
        .query_map(
            rusqlite::params_from_iter(args.iter().map(|v| match v {
                Value::Int(i) => rusqlite::types::Value::Integer(*i),
                Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
                _ => rusqlite::types::Value::Null,
            })),
            |r| r.get(3),
        )
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        plan.iter().any(|p| p.contains("windows_host_end")),
        "{plan:?}"
    );
}

/// Copies into `to` from a SQLite store: a page at a time, each window
/// once, a window with impossible numbers refused.
fn copying_windows_pages_through_them_once(mut to: Store) {
    let (_d, mut from) = store();
    let mut ws: Vec<Window> = (0..1200)
        .map(|i| window(i % 2, i * MIN_NS, &[i as u64 % 50 + 1]))
        .collect();
    ws[3].end_ns = ws[3].start_ns - 1;
    from.save_windows(&ws).unwrap();
    let all = WindowFilter::default();
    let mut t = crate::store::Tally::default();
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 1
    };
    to.copy_windows(&from, &all, &mut t, stop).unwrap();
    assert_eq!((t.windows_new, t.windows_refused.len()), (499, 1));
    assert!(
        t.windows_refused[0].contains("ends before it starts"),
        "{t:?}"
    );
    let mut t = crate::store::Tally::default();
    to.copy_windows(&from, &all, &mut t, || false).unwrap();
    assert_eq!((t.windows_new, t.windows_present), (700, 499));
    let mut copied = to.windows(&all).unwrap();
    let mut expected = from.windows(&all).unwrap();
    expected.remove(3);
    copied.sort_by_key(|w| (w.start_ns, w.cpu));
    expected.sort_by_key(|w| (w.start_ns, w.cpu));
    assert_eq!(copied, expected);
}

/// A few thousand windows of several hosts pushed twice: stored once, the
/// second push finds every one there; a window twice in the source (the same
/// session, host, CPU, level and start) is stored once.
fn pushing_thousands_of_windows_twice_stores_each_once(mut to: Store) {
    let (_d, mut from) = store();
    let ws: Vec<Window> = (0..3000)
        .map(|i| Window {
            host: format!("board-{}", i % 3),
            session: format!("s{}", i % 7),
            ..window(i % 2, i * MIN_NS, &[i as u64 % 90 + 1])
        })
        .collect();
    from.save_windows(&ws).unwrap();
    from.save_windows(&ws[10..12]).unwrap();
    let all = WindowFilter::default();
    let mut t = crate::store::Tally::default();
    to.copy_windows(&from, &all, &mut t, || false).unwrap();
    assert_eq!((t.windows_new, t.windows_present), (3000, 2));
    assert!(t.windows_refused.is_empty());
    let mut t = crate::store::Tally::default();
    to.copy_windows(&from, &all, &mut t, || false).unwrap();
    assert_eq!((t.windows_new, t.windows_present), (0, 3002));
    let mut copied = to.windows(&all).unwrap();
    assert_eq!(copied.len(), 3000);
    copied.sort_by_key(|w| w.start_ns);
    assert_eq!(copied, ws);
    let host = WindowFilter {
        host: Some("board-1".into()),
        ..Default::default()
    };
    assert_eq!(to.windows(&host).unwrap().len(), 1000);
}

/// Each test on a new SQLite store, then on a PostgreSQL database.
const TESTS: [fn(Store); 5] = [
    old_windows_merge_into_hours_then_days_and_the_oldest_days_go,
    the_filter_selects_by_cpu_time_host_and_level,
    a_pass_takes_at_most_its_budget,
    copying_windows_pages_through_them_once,
    pushing_thousands_of_windows_twice_stores_each_once,
];

#[test]
fn windows_on_sqlite() {
    crate::store::tests::each_on_sqlite(&TESTS);
}

#[test]
#[cfg(feature = "postgres")]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn windows_on_postgres() {
    crate::store::tests::each_on_postgres(&TESTS);
}

#[test]
fn value_rows_number_their_placeholders_on_and_cast_the_typed_ones() {
    assert_eq!(
        value_rows(2, &["", "TEXT"]),
        "(?1, CAST(?2 AS TEXT)), (?3, CAST(?4 AS TEXT))"
    );
    assert_eq!(value_rows(1, &["", "", ""]), "(?1, ?2, ?3)");
}
