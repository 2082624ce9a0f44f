//! A throw-away PostgreSQL server for one test: `initdb` in the test's own
//! temporary directory, `pg_ctl start` on a free port (TCP on 127.0.0.1, its
//! Unix socket inside the directory), stopped and removed when dropped (also
//! when the test panics). The server runs as a non-root user: `nobody` when
//! the tests run as root (as CI does). Used by the store's unit tests too.

use std::path::PathBuf;
use std::process::Command;

/// Why the PostgreSQL tests are ignored by default.
pub const NEEDS: &str =
    "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin (apt-get install postgresql)";

/// The superuser's password (scram-sha-256 over TCP).
pub const PASSWORD: &str = "s3cret-pw";

/// A running server.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    running: bool,
}

/// The newest PostgreSQL's binaries.
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.filter_map(|e| Some(e.ok()?.path().join("bin"))).collect())
        .unwrap_or_default();
    found.retain(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file());
    found.sort();
    found.pop().unwrap_or_else(|| panic!("{NEEDS}"))
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Cluster {
    /// Creates and starts a server.
    pub fn start() -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("rtlab-pg")
            .tempdir()
            .unwrap();
        let mut c = Cluster {
            bin: bin_dir(),
            port: free_port(),
            dir,
            running: false,
        };
        let root = c.dir.path();
        std::fs::write(root.join("pw"), PASSWORD).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(root)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown of the cluster's directory");
        }
        let data = root.join("data");
        c.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--pwfile",
                root.join("pw").to_str().unwrap(),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        c.start_again();
        c
    }

    /// Starts the server (again, after [`Cluster::stop`]) on the same port.
    pub fn start_again(&mut self) {
        let root = self.dir.path();
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB",
            self.port,
            root.display()
        );
        let (data, log) = (root.join("data"), root.join("log"));
        let (data, log) = (data.to_str().unwrap(), log.to_str().unwrap());
        self.run(
            "pg_ctl",
            &["-D", data, "-l", log, "-o", &opts, "-w", "start"],
        );
        self.running = true;
    }

    /// One of the server's programs, run as its user.
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// Runs `program`; panics with its output and the server's log when it fails.
    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}\n{log}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL of database `db` as the superuser, with its password.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    /// A connection to database `db` as the superuser.
    fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).unwrap()
    }

    /// Runs `sql` in database `db` as the superuser.
    pub fn sql(&self, db: &str, sql: &str) {
        self.client(db)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }

    /// A new empty database `name`; its URL.
    pub fn create_db(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    /// The number of rows of `table` in `db`.
    pub fn count(&self, db: &str, table: &str) -> i64 {
        self.client(db)
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .unwrap()
            .get(0)
    }

    /// The tables of `db`'s public schema, sorted.
    pub fn tables(&self, db: &str) -> Vec<String> {
        self.client(db)
            .query(
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
             WHERE table_schema = 'public' ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// Turns TLS on: a test authority (made with the `openssl` command) signs
    /// a certificate for `localhost`; returns the authority's PEM file.
    pub fn enable_tls(&self) -> PathBuf {
        let root = self.dir.path();
        let data = root.join("data");
        let (ca, ca_key) = (root.join("ca.pem"), root.join("ca.key"));
        let (crt, key, csr) = (
            data.join("server.crt"),
            data.join("server.key"),
            root.join("srv.csr"),
        );
        let ext = root.join("ext");
        std::fs::write(&ext, "subjectAltName=DNS:localhost\n").unwrap();
        let p = |p: &PathBuf| p.to_string_lossy().into_owned();
        for args in [
            vec![
                "req",
                "-new",
                "-x509",
                "-days",
                "2",
                "-nodes",
                "-subj",
                "/CN=rtlab test CA",
                "-keyout",
                &p(&ca_key),
                "-out",
                &p(&ca),
            ],
            vec![
                "req",
                "-new",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                &p(&key),
                "-out",
                &p(&csr),
            ],
            vec![
                "x509",
                "-req",
                "-in",
                &p(&csr),
                "-CA",
                &p(&ca),
                "-CAkey",
                &p(&ca_key),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &p(&ext),
                "-out",
                &p(&crt),
            ],
        ] {
            let out = Command::new("openssl")
                .args(&args)
                .output()
                .expect("openssl is installed");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        }
        if is_root() {
            for f in [&crt, &key] {
                assert!(Command::new("chown")
                    .arg("nobody:nogroup")
                    .arg(f)
                    .status()
                    .unwrap()
                    .success());
            }
        }
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o600);
        std::fs::set_permissions(&key, mode).unwrap();
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap();
        text.push_str("\nssl = on\n");
        std::fs::write(&conf, text).unwrap();
        self.run("pg_ctl", &["-D", &p(&data), "-w", "reload"]);
        // The reload is asynchronous: wait until TLS is offered (60 s at
        // most: a bound for a server that never does, not a speed).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self
            .client("postgres")
            .query_one("SHOW ssl", &[])
            .unwrap()
            .get::<_, String>(0)
            != "on"
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not turn TLS on within 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        ca
    }

    /// Stops the server at once (as a crash or a lost network would).
    pub fn stop(&mut self) {
        if std::mem::take(&mut self.running) {
            let out = self
                .command("pg_ctl")
                .args(self.stop_args())
                .output()
                .unwrap();
            assert!(out.status.success(), "pg_ctl stop: {out:?}");
        }
    }

    fn stop_args(&self) -> Vec<String> {
        let data = self.dir.path().join("data");
        let data = data.to_string_lossy().into_owned();
        ["-D", &data, "-m", "immediate", "-w", "stop"]
            .map(String::from)
            .to_vec()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::mem::take(&mut self.running) {
            let _ = self.command("pg_ctl").args(self.stop_args()).output();
        }
    }
}
