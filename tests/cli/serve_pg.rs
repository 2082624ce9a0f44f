//! `rtlab serve --db postgres://…`: the store of `serve_common` pushed into a
//! throw-away PostgreSQL server, served from there, answers `/metrics` and
//! `/runs` as the same store served from its SQLite file does.

use crate::common::expect;
use crate::pg_cluster::{Cluster, PASSWORD};
use crate::serve_common::{store, Server};
use crate::store_common::rtlab;
use std::path::Path;

#[test]
#[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
fn serve_answers_metrics_and_runs_from_a_postgres_store_as_from_sqlite() {
    let (_dir, db) = store(0);
    let server = Cluster::start();
    let url = server.create_db("fleet");
    let out = expect(rtlab(&db).args(["results", "push", "--to", &url]), &[0]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("monitor windows: 4 new"), "{said}");
    let log = db.with_extension("serve-pg.log");
    let pg = Server::start_logged(Path::new(&url), &[], log);
    let sqlite = Server::start(&db, &[]);
    for target in ["/metrics", "/runs", "/runs?host=board-a", "/runs?page=2"] {
        let (from_pg, from_sqlite) = (pg.get(target), sqlite.get(target));
        assert_eq!(from_pg.status, from_sqlite.status, "{target}");
        assert_eq!(from_pg.body, from_sqlite.body, "{target}");
        assert!(!from_pg.body.contains(PASSWORD), "{target}");
    }
    let metrics = pg.get("/metrics").body;
    assert!(
        metrics.contains(
            r#"rtlab_window_max_seconds{host="board-b",cpu="2",kernel="6.6"} 0.002000123"#
        ),
        "{metrics}"
    );
    let runs = pg.get("/runs").body;
    assert!(runs.contains("live") && runs.contains("<table"), "{runs}");
    let (status, log) = pg.stop();
    assert!(status.success(), "{log}");
    assert!(!log.contains(PASSWORD), "{log}");
    // Serving never writes: the database holds what was pushed.
    assert_eq!(server.count("fleet", "windows"), 4);
}
