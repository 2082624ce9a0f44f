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

fn the_filter_selects_by_cpu_time_and_host(mut s: Store) {
    s.save_windows(&[
        window(0, 0, &[1]),
        window(1, 0, &[2]),
        window(1, HOUR_NS, &[3]),
    ])
    .unwrap();
    let f = |cpu, since_ns| WindowFilter {
        cpu,
        since_ns,
        ..Default::default()
    };
    assert_eq!(s.windows(&f(None, None)).unwrap().len(), 3);
    assert_eq!(s.windows(&f(Some(1), None)).unwrap().len(), 2);
    assert_eq!(s.windows(&f(Some(1), Some(HOUR_NS))).unwrap().len(), 1);
    let other = WindowFilter {
        host: Some("other".into()),
        ..Default::default()
    };
    assert!(s.windows(&other).unwrap().is_empty());
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

/// Each test on a new SQLite store, then on a PostgreSQL database.
const TESTS: [fn(Store); 4] = [
    old_windows_merge_into_hours_then_days_and_the_oldest_days_go,
    the_filter_selects_by_cpu_time_and_host,
    a_pass_takes_at_most_its_budget,
    copying_windows_pages_through_them_once,
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
