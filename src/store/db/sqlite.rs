//! The SQLite backend: a rusqlite connection as a [`Conn`], and [`Sqlite`],
//! a store's connection, whose errors name its file and whose damage is
//! noted beside it.

use super::{Conn, Kind, Row, Value};
use anyhow::Result;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, Transaction, TransactionBehavior};
use std::path::PathBuf;

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Conn for Connection {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64> {
        let n = self.prepare_cached(sql)?.execute(params_from_iter(args))?;
        Ok(n as u64)
    }

    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        let mut stmt = self.prepare_cached(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(params_from_iter(args))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(Row((0..n)
                .map(|i| r.get_ref(i).map(value))
                .collect::<Result<_, _>>()?));
        }
        Ok(out)
    }

    fn batch(&self, sql: &str) -> Result<()> {
        Ok(self.execute_batch(sql)?)
    }

    fn transaction(&self, f: &mut dyn FnMut(&dyn Conn) -> Result<()>) -> Result<()> {
        // Dropped without commit (an error of `f`), it rolls back.
        let tx = Transaction::new_unchecked(self, TransactionBehavior::Immediate)?;
        f(self)?;
        tx.commit()?;
        Ok(())
    }

    fn as_sqlite(&self) -> Option<&Connection> {
        Some(self)
    }
}

/// A store's SQLite connection: every error of SQLite names the file, and
/// damage (SQLITE_CORRUPT, SQLITE_NOTADB) is noted beside it
/// ([`crate::store::damage`]) and said with what to do.
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
}

impl Sqlite {
    /// The connection `conn` to the store file `path`.
    pub fn new(conn: Connection, path: PathBuf) -> Sqlite {
        Sqlite { conn, path }
    }

    fn named(&self, e: anyhow::Error) -> anyhow::Error {
        crate::store::damage::named(&self.path, e)
    }
}

impl Conn for Sqlite {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64> {
        Conn::execute(&self.conn, sql, args).map_err(|e| self.named(e))
    }

    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        Conn::query(&self.conn, sql, args).map_err(|e| self.named(e))
    }

    fn batch(&self, sql: &str) -> Result<()> {
        Conn::batch(&self.conn, sql).map_err(|e| self.named(e))
    }

    fn transaction(&self, f: &mut dyn FnMut(&dyn Conn) -> Result<()>) -> Result<()> {
        Conn::transaction(&self.conn, f).map_err(|e| self.named(e))
    }

    fn as_sqlite(&self) -> Option<&Connection> {
        Some(&self.conn)
    }
}
