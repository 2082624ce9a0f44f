//! The PostgreSQL backend: a synchronous `postgres` client as a [`Conn`].
//! Statements are prepared once per connection; `?N` placeholders become
//! `$N`. Connection failures say what is wrong with the URL (exit 2); a
//! connection lost mid-way is the system's refusal (exit 3).

use super::url::{PgUrl, SslMode};
use super::{Conn, Kind, Row, Value};
use crate::error::{SystemError, UsageError};
use anyhow::{bail, Result};
use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, NoTls, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::time::Duration;

type BoxError = Box<dyn StdError + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => f.to_sql(ty, out),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// A connection to a PostgreSQL database.
pub struct PgConn {
    client: RefCell<Client>,
    prepared: RefCell<HashMap<String, Statement>>,
    shown: String,
}

/// `sql` with `?N` placeholders as `$N` (outside quoted text).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => quoted = !quoted,
            '?' if !quoted => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Connects to the database `url` names. Every failure is one line naming the
/// URL (without its password) and what to do.
pub fn connect(url: &PgUrl) -> Result<PgConn> {
    let shown = &url.shown;
    let mut config = postgres::Config::from_str(&url.conn).map_err(|e| {
        UsageError(format!(
            "{shown} is not a PostgreSQL URL rtlab can read ({e}); write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        ))
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_password().is_none() {
        if let Some(pw) = password_elsewhere(&config) {
            config.password(pw);
        }
    }
    let client = match url.ssl {
        SslMode::Disable => {
            config.ssl_mode(postgres::config::SslMode::Disable);
            config.connect(NoTls)
        }
        mode => {
            config.ssl_mode(postgres::config::SslMode::Require);
            config.connect(super::tls::connector(mode, url.root_cert.as_deref())?)
        }
    }
    .map_err(|e| connect_error(shown, &config, &e))?;
    Ok(PgConn {
        client: RefCell::new(client),
        prepared: RefCell::new(HashMap::new()),
        shown: shown.clone(),
    })
}

/// The password of a URL without one, where libpq finds it: PGPASSWORD, or
/// the password file's line for this host, port, database and user.
fn password_elsewhere(config: &postgres::Config) -> Option<String> {
    use postgres::config::Host;
    let login = std::env::var("USER").unwrap_or_default();
    let user = config.get_user().unwrap_or(&login);
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // libpq's name for the default socket directory.
        Some(Host::Unix(p)) if p == std::path::Path::new("/var/run/postgresql") => {
            "localhost".into()
        }
        Some(Host::Unix(p)) => p.to_string_lossy().into_owned(),
        None => "localhost".into(),
    };
    super::pgpass::lookup(&super::pgpass::Target {
        host: &host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        database: config.get_dbname().unwrap_or(user),
        user,
    })
}

/// The causes of `e`, innermost last, as one line.
fn causes(e: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut next = e.source();
    while let Some(c) = next {
        parts.push(c.to_string());
        next = c.source();
    }
    parts.join(": ").replace('\n', " ")
}

fn connect_error(shown: &str, config: &postgres::Config, e: &postgres::Error) -> anyhow::Error {
    let user = config.get_user().unwrap_or("(your login name)");
    let db = config.get_dbname().unwrap_or(user);
    let fix = match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD => {
            format!("the password of role {user} was refused: give the right one in the URL, in PGPASSWORD or in a password file of mode 0600 (~/.pgpass, or PGPASSFILE)")
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            format!(
                "database {db} does not exist: create it (createdb -O {user} {db}) or name another"
            )
        }
        Some(c) if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            format!("role {user} may not connect: check the role and the server's pg_hba.conf")
        }
        _ if e.to_string().contains("TLS") => {
            "check sslmode (the server may not offer TLS: sslmode=disable) and, for verify-ca and verify-full, sslrootcert=FILE naming the authority that signed the server's certificate".into()
        }
        _ if e.as_db_error().is_none() => {
            "check that the server runs and listens at that host and port, and the URL's host name"
                .into()
        }
        _ => "check the URL, the role and the server's pg_hba.conf".into(),
    };
    UsageError(format!(
        "cannot open the PostgreSQL store {shown}: {}; {fix}; nothing was written",
        causes(e)
    ))
    .into()
}

impl PgConn {
    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.prepared.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = self
            .client
            .borrow_mut()
            .prepare(&numbered(sql))
            .map_err(|e| self.error(e))?;
        self.prepared
            .borrow_mut()
            .insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// A server's error as it is; a lost connection as the system's refusal.
    fn error(&self, e: postgres::Error) -> anyhow::Error {
        let lost = e.is_closed()
            || e.as_db_error().is_none() && e.source().is_some_and(|s| s.is::<std::io::Error>())
            || e.code()
                .is_some_and(|c| c.code().starts_with("57P") || c.code().starts_with("08"));
        if lost {
            return SystemError(format!(
                "lost the connection to {} ({}); what was committed stays, run the command again when the server is back",
                self.shown,
                causes(&e)
            ))
            .into();
        }
        anyhow::anyhow!("{}: {}", self.shown, causes(&e))
    }
}

fn params(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

/// Column `i` of `row` as a [`Value`].
fn value(row: &postgres::Row, i: usize) -> Result<Value> {
    fn get<'a, T: postgres::types::FromSql<'a>>(
        row: &'a postgres::Row,
        i: usize,
    ) -> Result<Option<T>> {
        Ok(row.try_get::<_, Option<T>>(i)?)
    }
    let ty = row.columns()[i].type_();
    Ok(match *ty {
        Type::INT8 => get::<i64>(row, i)?.map_or(Value::Null, Value::Int),
        Type::INT4 => get::<i32>(row, i)?.map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT2 => get::<i16>(row, i)?.map_or(Value::Null, |v| Value::Int(v.into())),
        Type::BOOL => get::<bool>(row, i)?.map_or(Value::Null, |v| Value::Int(v.into())),
        Type::FLOAT8 => get::<f64>(row, i)?.map_or(Value::Null, Value::Real),
        Type::FLOAT4 => get::<f32>(row, i)?.map_or(Value::Null, |v| Value::Real(v.into())),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            get::<String>(row, i)?.map_or(Value::Null, Value::Text)
        }
        Type::BYTEA => get::<Vec<u8>>(row, i)?.map_or(Value::Null, Value::Blob),
        _ => bail!("column {i} has the PostgreSQL type {ty}, which the store does not read"),
    })
}

impl Conn for PgConn {
    fn kind(&self) -> Kind {
        Kind::Postgres
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64> {
        let stmt = self.statement(sql)?;
        let n = self.client.borrow_mut().execute(&stmt, &params(args));
        n.map_err(|e| self.error(e))
    }

    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let rows = self.client.borrow_mut().query(&stmt, &params(args));
        let rows = rows.map_err(|e| self.error(e))?;
        rows.iter()
            .map(|r| {
                Ok(Row((0..r.len())
                    .map(|i| value(r, i))
                    .collect::<Result<_>>()?))
            })
            .collect()
    }

    fn batch(&self, sql: &str) -> Result<()> {
        let done = self.client.borrow_mut().batch_execute(sql);
        done.map_err(|e| self.error(e))
    }

    fn transaction(&self, f: &mut dyn FnMut(&dyn Conn) -> Result<()>) -> Result<()> {
        self.batch("BEGIN")?;
        match f(self).and_then(|()| self.batch("COMMIT")) {
            Ok(()) => Ok(()),
            Err(e) => {
                // A lost connection has nothing to roll back: the server did.
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered("SELECT '?1', a FROM t WHERE b = ?1 AND c = ?12"),
            "SELECT '?1', a FROM t WHERE b = $1 AND c = $12"
        );
    }
}
