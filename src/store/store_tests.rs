use super::*;
use crate::record::{BreakRecord, Counters, LoadRecord, Warning, MAX_STORED_TRACE_POINTS};
use proptest::prelude::*;
use rtlab_engine::stats::hist::{LatencyHistogram, UsBuckets};
use rtlab_engine::stats::windows::Windows;
use rtlab_engine::stats::Moments;
use rtlab_engine::stats::Summary;
use rtlab_engine::sysinfo::{Fingerprint, PreemptModel};
use rusqlite::{params, Connection};
use std::time::Duration;

fn series(name: &str, values: &[u64]) -> Series {
    let (mut m, mut h, mut us, mut w) = (
        Moments::default(),
        LatencyHistogram::new(),
        UsBuckets::new(100),
        Windows::new(),
    );
    for (i, &v) in values.iter().enumerate() {
        m.record(v);
        h.record(v);
        us.record(v, i as u64);
        w.record(v);
    }
    Series {
        name: name.into(),
        thread: Some(0),
        cpu: Some(1),
        tid: Some(1234),
        interval_ns: Some(200_000),
        counters: Counters {
            samples: m.count,
            overruns: 2,
            deadline_misses: 1,
            overflows: us.overflow(),
        },
        summary: Summary::new(&m, &h),
        max_at: Some(7),
        histogram: h.to_data(),
        us_histogram: Some(us.to_data()),
        windows: w.to_data(),
        trace: (0..10)
            .map(|i| TracePoint {
                first_sample: i,
                offset_ns: i * 1000,
                max_ns: values[i as usize % values.len()],
            })
            .collect(),
    }
}

/// A run with every field set.
fn sample_run(threads: usize) -> Run {
    let values: Vec<u64> = (1..500).map(|i| i * 997 % 150_000).collect();
    Run {
        format: crate::record::FORMAT.into(),
        id: None,
        kind: "latency".into(),
        label: "6.1.0-rt PREEMPT_RT".into(),
        tags: vec!["a".into(), "b".into()],
        campaign: None,
        status: Status::Interrupted,
        exit_code: 130,
        started_at: "2026-01-02T03:04:05.000001Z".into(),
        ended_at: "2026-01-02T03:04:06.000001Z".into(),
        duration_ns: 1_000_000_123,
        rtlab_version: "0.1.0".into(),
        command_line: vec!["rtlab".into(), "latency".into()],
        params: crate::record::RunParams::Recorded(
            serde_json::json!({"interval_ns": 200000, "threads": threads}),
        ),
        fingerprint: Fingerprint {
            hostname: "bbb".into(),
            kernel_release: "6.1.0-rt".into(),
            preempt: PreemptModel::Rt,
            hz: Some(1000),
            governors: vec!["performance".into()],
            cpu_count: 4,
            ..Fingerprint::default()
        },
        audit: None,
        // From JSON, so that fields added to the load record later take
        // their defaults here.
        loads: vec![serde_json::from_value::<LoadRecord>(serde_json::json!({
            "spec": "cpu:2", "kind": "cpu", "workers": 2,
            "params": {"x": 1}, "achieved": {"ops_per_s": 12.5}
        }))
        .unwrap()],
        series: (0..threads)
            .map(|t| series(&format!("cpu{t}"), &values[t..]))
            .collect(),
        total: Some(series("all", &values)),
        metrics: [("events_per_s".to_string(), 1234.5)].into(),
        breaktrace: Some(BreakRecord {
            thread: 1,
            tid: 99,
            cycle: 5,
            latency_ns: 149_000,
            trace_marker: false,
        }),
        why: Some(crate::record::why::Why {
            threshold_ns: 100_000,
            available: vec!["sched".into(), "irq".into()],
            missing: vec!["idle exit: no power:cpu_idle event".into()],
            resolution_ns: 1,
            events: 4200,
            events_lost: 0,
            spikes_total: 1,
            spikes: vec![crate::record::why::Spike {
                cpu: 1,
                thread: 1,
                cycle: 5,
                latency_ns: 149_000,
                timer_irq_delay_ns: Some(2_000),
                irqs: Vec::new(),
                softirqs: vec![crate::record::why::Softirq {
                    vector: "NET_RX".into(),
                    ns: 140_000,
                }],
                threads: Vec::new(),
                idle: None,
                nmi_ns: 0,
                unexplained_ns: 7_000,
            }],
            causes: vec![crate::record::why::Cause {
                kind: crate::record::why::CauseKind::Softirq,
                name: "NET_RX".into(),
                cpu: Some(1),
                ns: 140_000,
                share: 0.94,
                spikes: 1,
            }],
            timerlat: None,
            subject: Default::default(),
        }),
        page_faults: Some(crate::record::PageFaults { minor: 2, major: 1 }),
        sweep: None,
        // From JSON: a counted value and one the machine lacks.
        perf: Some(
            serde_json::from_value(serde_json::json!({
                "elapsed_ns": 5, "scope": "threads",
                "total": [{"event": "page-faults", "value": 3},
                          {"event": "cycles", "not": "not supported"}],
                "threads": [{"name": "cpu0", "tid": 7,
                             "counters": [{"event": "page-faults", "value": 3}]}]
            }))
            .unwrap(),
        ),
        background: Some(crate::record::Background {
            loadavg: (0.5, 1.25),
            other_cpus: 0.75,
            rt_threads: vec!["app fifo 80".into()],
        }),
        warnings: vec![Warning::new("vm", "virtual")],
    }
}

/// The SQLite connection of a store opened on a file.
fn sqlite(store: &Store) -> &Connection {
    store.conn.as_sqlite().expect("a SQLite store")
}

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("x.db")).unwrap();
    (dir, store)
}

#[test]
fn only_scheme_colon_slash_slash_is_a_url() {
    for (p, scheme) in [
        ("postgres://u:p@h/db", Some("postgres")),
        ("svn+ssh://h/x", Some("svn+ssh")),
        ("./a://b", None),
        ("1x://h", None),
        ("/var/lib/rtlab.db", None),
        ("c:/x.db", None),
    ] {
        assert_eq!(url::scheme(p), scheme, "{p}");
    }
    let e = refuse_url(Path::new("mysql://u:pw@h/db"), "--db").unwrap_err();
    assert!(e.downcast_ref::<UsageError>().is_some());
    assert!(!e.to_string().contains("pw"), "{e}");
    refuse_url(Path::new("postgresql://u:pw@h/db"), "--db").unwrap();
}

fn every_field_survives_save_and_load(mut store: Store) {
    let run = sample_run(3);
    let id = store.save(&run).unwrap();
    let back = store.load(id).unwrap();
    assert_eq!(
        back,
        Run {
            id: Some(id),
            ..run
        }
    );
    let rows = store
        .list_where(&ListFilter {
            kind: Some("latency".into()),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r.samples, Some(499));
    assert_eq!(
        r.max_ns,
        Some(back.total.as_ref().unwrap().summary.max_ns as i64)
    );
    assert_eq!(r.tags, vec!["a", "b"]);
    assert_eq!(r.metrics["events_per_s"], 1234.5);
}

#[test]
fn a_failed_write_leaves_no_half_run() {
    let (_d, mut store) = temp_store();
    let first = store.save(&sample_run(1)).unwrap();
    // Make the third series insert fail, as a crash or a full disk would.
    sqlite(&store)
        .execute_batch(
            "CREATE TRIGGER boom BEFORE INSERT ON series WHEN NEW.idx = 2
             BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
        )
        .unwrap();
    let err = store.save(&sample_run(4)).unwrap_err();
    assert!(format!("{err:#}").contains("disk full"));
    let count = |t: &str| -> i64 {
        sqlite(&store)
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count("runs"), 1);
    assert_eq!(count("series"), 2, "run {first}: one thread and the total");
    assert_eq!(count("tags"), 2);
}

/// Writes `run` as run 1 of a store laid out and filled as the first rtlab
/// did: schema version 1, no application_id.
fn write_v1_store(path: &Path, run: &Run) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&schema::ddl(schema::V1, db::Kind::Sqlite))
        .unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    let mut header = run.clone();
    header.series.clear();
    header.total = None;
    conn.execute(
        "INSERT INTO runs (kind, label, status, exit_code, campaign, started_at, ended_at,
            duration_ns, kernel_release, preempt, hostname, samples, p99_ns, max_ns, misses, record)
         VALUES ('latency', ?1, 'interrupted', 130, NULL, ?2, ?3, 1000000123, '6.1.0-rt',
            'PREEMPT_RT', 'bbb', 499, 1, 2, 3, ?4)",
        params![
            run.label,
            run.started_at,
            run.ended_at,
            serde_json::to_string(&header).unwrap()
        ],
    )
    .unwrap();
    conn.execute("INSERT INTO tags VALUES (1, 'a'), (1, 'b')", [])
        .unwrap();
    let all = run.series.iter().enumerate().map(|(i, s)| (i as i64, s));
    for (idx, s) in all.chain(run.total.as_ref().map(|t| (-1, t))) {
        let m = &s.summary;
        conn.execute(
            "INSERT INTO series VALUES (1, ?1, ?2, ?3, 0, 0, 0, ?4, ?5, ?6, 0, 0, 0, ?7, 0, 0, ?8, ?9)",
            params![
                idx,
                s.name,
                s.counters.samples as i64,
                m.min_ns as i64,
                m.mean_ns,
                m.stddev_ns,
                m.p99_ns as i64,
                m.max_ns as i64,
                serde_json::to_string(s).unwrap()
            ],
        )
        .unwrap();
    }
}

/// `PRAGMA name` of the database at `path`, read by a separate connection.
fn pragma(path: &Path, name: &str) -> i64 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, name, |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_1_database_is_migrated_with_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let run = sample_run(2);
    write_v1_store(&path, &run);
    let mut store = Store::open(&path).unwrap();
    let version: i64 = sqlite(&store)
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::SCHEMA_VERSION);
    assert_eq!(store.load(1).unwrap(), Run { id: Some(1), ..run });
    assert_eq!(
        store.list_where(&ListFilter::default()).unwrap()[0].metrics["events_per_s"],
        1234.5
    );
    // The new tables work on the migrated database.
    let c = store
        .create_campaign("old", "", &Fingerprint::default())
        .unwrap();
    store.add_campaign_run(c, &step(0, "step", 1)).unwrap();
    assert_eq!(store.load(1).unwrap().campaign, Some(c));
    // The run stored before UUIDs got one; a new run gets another.
    let old = store.run_uuid(1).unwrap();
    let new = store.save(&sample_run(1)).unwrap();
    let new = store.run_uuid(new).unwrap();
    for u in [&old, &new] {
        let groups: Vec<usize> = u.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{u}");
        assert!(
            u.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f' | '-')),
            "{u}"
        );
        assert_eq!(&u[14..15], "4", "version 4: {u}");
        assert!("89ab".contains(&u[19..20]), "RFC variant: {u}");
    }
    assert_ne!(old, new);
    drop(store);
    // Migrated stores are marked as rtlab's.
    assert_eq!(
        pragma(&path, "application_id"),
        i64::from(schema::APPLICATION_ID)
    );
}

#[test]
fn newer_and_unknown_schema_versions_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    Store::open(&path).unwrap();
    for (version, expected) in [
        (
            schema::SCHEMA_VERSION + 1,
            "made by a newer rtlab, upgrade or use another --db",
        ),
        (-1, "has schema version -1, which no rtlab writes"),
        (0, "has schema version 0, which no rtlab writes"),
    ] {
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", version)
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap();
        let msg = format!("{err:#}");
        assert!(msg.contains(expected), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert_eq!(crate::error::exit_code(&err), 2);
        assert!(
            std::fs::read(&path).unwrap() == before,
            "{msg}: file changed"
        );
        assert_eq!(pragma(&path, "user_version"), version);
    }
}

#[test]
fn another_programs_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 4] = [
        (
            "tables",
            "CREATE TABLE notes (x); INSERT INTO notes VALUES (1);",
        ),
        ("id", "PRAGMA application_id = 1234;"),
        (
            "id_and_rtlab_tables",
            &format!(
                "{}; PRAGMA user_version = 2; PRAGMA application_id = 7;",
                schema::ddl(schema::V1, db::Kind::Sqlite)
            ),
        ),
        (
            "rtlab_tables_and_more",
            &format!(
                "{}; CREATE TABLE notes (x); PRAGMA user_version = 1;",
                schema::ddl(schema::V1, db::Kind::Sqlite)
            ),
        ),
    ];
    for (name, sql) in cases {
        let path = dir.path().join(format!("{name}.db"));
        Connection::open(&path).unwrap().execute_batch(sql).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("is not an rtlab results database"),
            "{name}: {msg}"
        );
        assert_eq!(crate::error::exit_code(&err), 2, "{name}: {msg}");
        assert!(
            std::fs::read(&path).unwrap() == before,
            "{name}: file changed"
        );
    }
    // Nothing beside the files either (no journal, no WAL).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), cases.len());
}

#[test]
fn an_empty_file_becomes_a_marked_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let mut store = Store::open(&path).unwrap();
    store.save(&sample_run(1)).unwrap();
    drop(store);
    assert_eq!(
        pragma(&path, "application_id"),
        i64::from(schema::APPLICATION_ID)
    );
    assert_eq!(pragma(&path, "user_version"), schema::SCHEMA_VERSION);
}

/// Whether `err` says, with the path, that another process holds the store.
fn assert_locked(err: &anyhow::Error, path: &Path) {
    let msg = format!("{err:#}");
    assert!(msg.contains("is locked: another rtlab process"), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(!msg.contains("not an rtlab"), "{msg}");
    assert_eq!(crate::error::exit_code(err), 3, "{msg}");
}

#[test]
fn a_locked_database_is_reported_as_locked_never_as_foreign() {
    let dir = tempfile::tempdir().unwrap();
    // Opening: another connection holds the whole (new) file.
    let path = dir.path().join("held.db");
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = Store::open_waiting(&path, Duration::from_millis(20))
        .err()
        .unwrap();
    assert_locked(&err, &path);
    holder.execute_batch("ROLLBACK").unwrap();
    let mut store = Store::open(&path).unwrap();
    // Writing: another writer holds the store.
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    sqlite(&store)
        .busy_timeout(Duration::from_millis(20))
        .unwrap();
    let err = store.save(&sample_run(1)).unwrap_err();
    assert_locked(&err, &path);
    holder.execute_batch("ROLLBACK").unwrap();
    store.save(&sample_run(1)).unwrap();
}

/// Opens the store at `path` from `n` threads at once (separate connections,
/// as separate processes would), each saving one run; every result.
fn open_at_once(path: &Path, n: usize) -> Vec<Result<i64>> {
    let gate = std::sync::Barrier::new(n);
    std::thread::scope(|s| {
        let all: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    gate.wait();
                    Store::open(path)?.save(&sample_run(1))
                })
            })
            .collect();
        all.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

#[test]
fn eight_connections_creating_one_store_at_once_all_succeed() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        for r in open_at_once(&path, 8) {
            if let Err(e) = r {
                panic!("round {round}: {e:#}");
            }
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 8);
    }
}

#[test]
fn an_old_store_opened_by_many_at_once_is_migrated_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let run = sample_run(2);
    write_v1_store(&path, &run);
    for r in open_at_once(&path, 8) {
        if let Err(e) = r {
            panic!("{e:#}");
        }
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 9);
    assert_eq!(store.load(1).unwrap(), Run { id: Some(1), ..run });
    drop(store);
    assert_eq!(pragma(&path, "user_version"), schema::SCHEMA_VERSION);
}

/// Step `index` of a plan, named `name`, not repeated, saving run `run_id`.
fn step(index: i64, name: &str, run_id: i64) -> CampaignStep {
    CampaignStep {
        step_index: index,
        step_name: name.into(),
        base_name: name.into(),
        repeat: 1,
        run_id,
    }
}

fn campaigns_map_steps_to_runs(mut store: Store) {
    let fp = sample_run(1).fingerprint;
    let c = store.create_campaign("drone", "steps: []", &fp).unwrap();
    let a = store.save(&sample_run(1)).unwrap();
    let b = store
        .save(&Run {
            campaign: Some(c),
            ..sample_run(1)
        })
        .unwrap();
    store.add_campaign_run(c, &step(0, "idle", a)).unwrap();
    store.add_campaign_run(c, &step(1, "cpu load", b)).unwrap();
    assert!(store.add_campaign_run(c, &step(2, "again", a)).is_err());
    assert!(store.add_campaign_run(c + 1, &step(0, "x", a)).is_err());
    assert!(store
        .save(&Run {
            campaign: Some(c + 1),
            ..sample_run(1)
        })
        .is_err());
    store
        .set_campaign_status(c, CampaignStatus::Interrupted)
        .unwrap();
    let got = store.load_campaign(c).unwrap();
    assert_eq!(
        (got.name.as_str(), got.scenario.as_str()),
        ("drone", "steps: []")
    );
    assert_eq!(got.fingerprint, fp);
    assert_eq!(got.status, CampaignStatus::Interrupted);
    assert!(got.ended_at.is_some());
    let steps: Vec<(i64, &str, i64)> = got
        .steps
        .iter()
        .map(|s| (s.step_index, s.step_name.as_str(), s.run_id))
        .collect();
    assert_eq!(steps, vec![(0, "idle", a), (1, "cpu load", b)]);
    assert_eq!(store.load(a).unwrap().campaign, Some(c));
    // A repeat keeps its base name and round; a step an older rtlab stored
    // (without them) is read from its name.
    let d = store
        .save(&Run {
            campaign: Some(c),
            ..sample_run(1)
        })
        .unwrap();
    let repeated = CampaignStep {
        step_index: 2,
        step_name: "idle #2".into(),
        base_name: "idle".into(),
        repeat: 2,
        run_id: d,
    };
    store.add_campaign_run(c, &repeated).unwrap();
    let mut old_ids = Vec::new();
    for (i, name) in [(3i64, "cpu load #3"), (4, "x #0"), (5, "#2")] {
        let id = store.save(&sample_run(1)).unwrap();
        store
            .conn
            .execute(
                "INSERT INTO campaign_runs (campaign_id, step_index, step_name, run_id)
                 VALUES (?1, ?2, ?3, ?4)",
                args![c, i, name, id],
            )
            .unwrap();
        old_ids.push(id);
    }
    let got = store.load_campaign(c).unwrap();
    let read: Vec<(&str, u32)> = got.steps[2..]
        .iter()
        .map(|s| (s.base_name.as_str(), s.repeat))
        .collect();
    assert_eq!(read, [("idle", 2), ("cpu load", 3), ("x #0", 1), ("#2", 1)]);
    assert_eq!(got.steps[2], repeated);
    store.delete(&[d]).unwrap();
    store.delete(&old_ids).unwrap();
    let listed = store.list_campaigns().unwrap();
    assert_eq!((listed[0].id, listed[0].runs), (c, 2));
    let filter = ListFilter {
        campaign: Some(c),
        ..ListFilter::default()
    };
    assert_eq!(store.list_where(&filter).unwrap().len(), 2);
    // Deleting a run removes it from its campaign.
    store.delete(&[a]).unwrap();
    assert_eq!(store.load_campaign(c).unwrap().steps.len(), 1);
}

fn edits_are_all_or_nothing_and_visible_on_load(mut store: Store) {
    let a = store.save(&sample_run(1)).unwrap();
    let b = store.save(&sample_run(2)).unwrap();
    store.set_label(a, "vanilla").unwrap();
    store.add_tags(a, &["x".into(), "a".into()]).unwrap();
    assert_eq!(store.remove_tags(a, &["b".into(), "zz".into()]).unwrap(), 1);
    let run = store.load(a).unwrap();
    assert_eq!(run.label, "vanilla");
    assert_eq!(run.tags, vec!["a", "x"]);
    let err = store.delete(&[b, 999]).unwrap_err();
    assert!(err.to_string().contains("no run with id 999"), "{err}");
    assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 2);
    assert_eq!(store.delete(&[a, b]).unwrap(), 2);
    assert!(store.list_where(&ListFilter::default()).unwrap().is_empty());
    let count: i64 = store
        .conn
        .query_one("SELECT count(*) FROM series", &[])
        .unwrap()
        .get(0)
        .unwrap();
    assert_eq!(count, 0);
}

fn list_filters_combine(mut store: Store) {
    let mut r = sample_run(1);
    store.save(&r).unwrap();
    r.label = "4.19.127 PREEMPT".into();
    r.kind = "bench.cpu".into();
    r.started_at = "2026-03-01T00:00:00.000000Z".into();
    r.tags = vec!["kconfig-trim".into()];
    let id = store.save(&r).unwrap();
    let ids = |f: ListFilter| -> Vec<i64> {
        store.list_where(&f).unwrap().iter().map(|r| r.id).collect()
    };
    let f = |label: Option<&str>, kind: Option<&str>, since: Option<&str>, tag: Option<&str>| {
        ListFilter {
            label: label.map(Into::into),
            kind: kind.map(Into::into),
            since: since.map(Into::into),
            tag: tag.map(Into::into),
            ..ListFilter::default()
        }
    };
    assert_eq!(ids(f(Some("4.19%"), None, None, None)), vec![id]);
    assert_eq!(ids(f(None, Some("bench"), None, None)), vec![id]);
    assert_eq!(
        ids(f(None, None, Some("2026-02-01T00:00:00Z"), None)),
        vec![id]
    );
    assert_eq!(ids(f(None, None, None, Some("kconfig-trim"))), vec![id]);
    assert_eq!(
        ids(f(Some("4.19%"), Some("latency"), None, None)),
        Vec::<i64>::new()
    );
    assert_eq!(ids(f(None, None, None, None)).len(), 2);
}

/// Hosts and kernels: any one of the values (exact, or a pattern with `%`);
/// `until` excludes its own instant; `limit` keeps the newest, after `offset`.
fn list_filters_by_host_kernel_until_and_limit(mut store: Store) {
    let mut r = sample_run(1);
    let mut saved = Vec::new();
    for (host, kernel, day) in [
        ("bbb", "6.1.0-rt", 1),
        ("pi4", "6.1.0-rt", 2),
        ("pi4", "6.6.0-rt", 3),
        ("x86", "6.6.0", 4),
    ] {
        r.fingerprint.hostname = host.into();
        r.fingerprint.kernel_release = kernel.into();
        r.started_at = format!("2026-03-0{day}T00:00:00.000000Z");
        saved.push(store.save(&r).unwrap());
    }
    let ids = |f: ListFilter| -> Vec<i64> {
        store.list_where(&f).unwrap().iter().map(|r| r.id).collect()
    };
    let hosts = |h: &[&str]| ListFilter {
        hosts: h.iter().map(|s| s.to_string()).collect(),
        ..ListFilter::default()
    };
    assert_eq!(ids(hosts(&["pi4"])), [saved[2], saved[1]]);
    assert_eq!(ids(hosts(&["bbb", "x86"])), [saved[3], saved[0]]);
    assert_eq!(ids(hosts(&["p%"])), [saved[2], saved[1]]);
    assert_eq!(ids(hosts(&["P%"])), [saved[2], saved[1]]);
    assert_eq!(ids(hosts(&["nowhere"])), Vec::<i64>::new());
    let kernels = ListFilter {
        kernels: vec!["6.6%".into(), "6.1.0-rt".into()],
        hosts: vec!["pi4".into(), "x86".into()],
        ..ListFilter::default()
    };
    assert_eq!(ids(kernels), [saved[3], saved[2], saved[1]]);
    let window = ListFilter {
        since: Some("2026-03-02T00:00:00.000000Z".into()),
        until: Some("2026-03-04T00:00:00.000000Z".into()),
        ..ListFilter::default()
    };
    assert_eq!(ids(window), [saved[2], saved[1]]);
    let newest = ListFilter {
        limit: Some(3),
        ..hosts(&["%"])
    };
    assert_eq!(ids(newest), [saved[3], saved[2], saved[1]]);
    let second_page = ListFilter {
        limit: Some(2),
        offset: 2,
        ..ListFilter::default()
    };
    assert_eq!(ids(second_page), [saved[1], saved[0]]);
    let rows = store.list_where(&hosts(&["bbb"])).unwrap();
    assert_eq!(
        (rows[0].host.as_str(), rows[0].kernel.as_str()),
        ("bbb", "6.1.0-rt")
    );
}

/// The total alone, or every series of a run without one.
fn load_primary_reads_what_stands_for_the_run(mut store: Store) {
    let mut run = sample_run(3);
    let with_total = store.save(&run).unwrap();
    let total = run.total.take();
    let without = store.save(&run).unwrap();
    let back = store.load_primary(with_total).unwrap();
    assert_eq!((back.total, back.series.len()), (total, 0));
    let back = store.load_primary(without).unwrap();
    assert_eq!((back.total, back.series), (None, run.series));
}

fn long_traces_are_stored_decimated(mut store: Store) {
    let mut run = sample_run(1);
    run.series[0].trace = (0..10_000u64)
        .map(|i| TracePoint {
            first_sample: i,
            offset_ns: i,
            max_ns: if i == 7777 { 1_000_000 } else { i % 100 },
        })
        .collect();
    let id = store.save(&run).unwrap();
    let trace = &store.load(id).unwrap().series[0].trace;
    assert!(trace.len() <= MAX_STORED_TRACE_POINTS);
    assert!(trace
        .iter()
        .any(|p| p.max_ns == 1_000_000 && p.offset_ns == 7777));
}

proptest! {
    #[test]
    fn decimation_is_bounded_ordered_and_keeps_the_peak(
        values in proptest::collection::vec(0u64..1_000_000, 1..3000),
        limit in 2usize..300,
    ) {
        let points: Vec<TracePoint> = values.iter().enumerate()
            .map(|(i, &v)| TracePoint { first_sample: i as u64, offset_ns: i as u64, max_ns: v })
            .collect();
        let d = decimate(&points, limit);
        prop_assert!(d.len() <= limit.max(2));
        prop_assert!(!d.is_empty());
        prop_assert_eq!(d.iter().map(|p| p.max_ns).max(), values.iter().copied().max());
        prop_assert_eq!(d[0].first_sample, 0);
        for w in d.windows(2) { prop_assert!(w[0].first_sample < w[1].first_sample); }
        for p in &d { prop_assert_eq!(values[p.offset_ns as usize], p.max_ns); }
        if points.len() <= limit { prop_assert_eq!(d, points); }
    }
}

/// Tests `$body` (a `fn(Store)`) on a new SQLite store and on a new
/// PostgreSQL database of a throw-away server.
macro_rules! on_both {
    ($body:ident, $sqlite:ident, $pg:ident) => {
        #[test]
        fn $sqlite() {
            let (_d, store) = temp_store();
            $body(store);
        }

        #[test]
        #[cfg(feature = "postgres")]
        #[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
        fn $pg() {
            let server = pg_cluster::Cluster::start();
            $body(Store::open(Path::new(&server.create_db("rtlab"))).unwrap());
        }
    };
}

on_both!(
    every_field_survives_save_and_load,
    every_field_survives_save_and_load_sqlite,
    every_field_survives_save_and_load_pg
);
on_both!(
    edits_are_all_or_nothing_and_visible_on_load,
    edits_sqlite,
    edits_pg
);
on_both!(list_filters_combine, list_filters_sqlite, list_filters_pg);
on_both!(
    list_filters_by_host_kernel_until_and_limit,
    list_fleet_filters_sqlite,
    list_fleet_filters_pg
);
on_both!(
    load_primary_reads_what_stands_for_the_run,
    load_primary_sqlite,
    load_primary_pg
);
on_both!(campaigns_map_steps_to_runs, campaigns_sqlite, campaigns_pg);
on_both!(
    long_traces_are_stored_decimated,
    long_traces_sqlite,
    long_traces_pg
);

#[cfg(feature = "postgres")]
fn pg_store(server: &pg_cluster::Cluster, db: &str) -> Result<Store> {
    Store::open(Path::new(&server.create_db(db)))
}

#[test]
#[cfg(feature = "postgres")]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn eight_connections_creating_one_postgres_store_at_once_all_succeed() {
    let server = pg_cluster::Cluster::start();
    let url = server.create_db("fleet");
    for r in open_at_once(Path::new(&url), 8) {
        if let Err(e) = r {
            panic!("{e:#}");
        }
    }
    let store = Store::open(Path::new(&url)).unwrap();
    assert_eq!(store.list_where(&ListFilter::default()).unwrap().len(), 8);
    assert_eq!(server.count("fleet", "rtlab_meta"), 2);
}

#[test]
#[cfg(feature = "postgres")]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn a_postgres_database_of_another_application_or_a_newer_rtlab_is_refused_untouched() {
    let server = pg_cluster::Cluster::start();
    let url = server.create_db("other");
    server.sql(
        "other",
        "CREATE TABLE notes (x BIGINT); INSERT INTO notes VALUES (1);",
    );
    let err = Store::open(Path::new(&url)).err().unwrap();
    let msg = format!("{err:#}");
    assert!(msg.contains("a database of another application"), "{msg}");
    assert!(
        msg.contains("notes") && !msg.contains(pg_cluster::PASSWORD),
        "{msg}"
    );
    assert_eq!(crate::error::exit_code(&err), 2);
    assert_eq!(server.tables("other"), vec!["notes"]);

    pg_store(&server, "newer")
        .unwrap()
        .save(&sample_run(1))
        .unwrap();
    server.sql(
        "newer",
        "UPDATE rtlab_meta SET value = '99' WHERE key = 'schema_version'",
    );
    let err = Store::open(Path::new(&server.url("newer"))).err().unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("has schema version 99: made by a newer rtlab"),
        "{msg}"
    );
    assert_eq!(crate::error::exit_code(&err), 2);
    assert_eq!(server.count("newer", "runs"), 1);
}

#[test]
#[cfg(feature = "postgres")]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn a_failed_postgres_write_leaves_no_half_run_and_the_schema_matches_sqlites() {
    let server = pg_cluster::Cluster::start();
    let mut store = pg_store(&server, "rtlab").unwrap();
    store.save(&sample_run(1)).unwrap();
    server.sql(
        "rtlab",
        "CREATE FUNCTION boom() RETURNS trigger AS $$ BEGIN
           IF NEW.idx = 2 THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$
         LANGUAGE plpgsql;
         CREATE TRIGGER boom BEFORE INSERT ON series FOR EACH ROW EXECUTE FUNCTION boom();",
    );
    let err = store.save(&sample_run(4)).unwrap_err();
    assert!(format!("{err:#}").contains("disk full"), "{err:#}");
    assert_eq!(server.count("rtlab", "runs"), 1);
    assert_eq!(server.count("rtlab", "series"), 2);
    // The same tables as a SQLite store, and the marker.
    let (_d, sqlite_store) = temp_store();
    let mut tables = schema::Identity::of(&*sqlite_store.conn).unwrap().tables;
    tables.push("rtlab_meta".into());
    tables.sort();
    assert_eq!(server.tables("rtlab"), tables);
}

/// Each test on a new SQLite store.
pub(super) fn each_on_sqlite(tests: &[fn(Store)]) {
    for t in tests {
        let (_d, store) = temp_store();
        t(store);
    }
}

/// Each test on a new database of one throw-away PostgreSQL server.
#[cfg(feature = "postgres")]
pub(super) fn each_on_postgres(tests: &[fn(Store)]) {
    let server = pg_cluster::Cluster::start();
    for (i, t) in tests.iter().enumerate() {
        t(Store::open(Path::new(&server.create_db(&format!("t{i}")))).unwrap());
    }
}
