//! The two database backends of the store behind one small interface: values,
//! rows, statements and transactions. Every query of the store is written once,
//! in the SQL both understand: `?1`-style placeholders (rewritten to `$1` for
//! PostgreSQL), `INSERT ... ON CONFLICT DO NOTHING`, `RETURNING id`,
//! `string_agg`, BIGINT / DOUBLE PRECISION / TEXT columns.
//!
//! - [`sqlite`]: the embedded default, a file (rusqlite, bundled SQLite).
//! - [`pg`]: a PostgreSQL server named by a `postgres://` URL.

#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "postgres")]
mod pgpass;
mod sqlite;
pub use sqlite::Sqlite;
#[cfg(feature = "postgres")]
mod tls;
pub mod url;

use anyhow::{bail, Result};

/// Which backend a connection talks to (where the SQL differs: DDL, identity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// A value passed to or read from a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "a blob",
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(v.into())
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// The arguments of a statement: `args![id, name]`.
macro_rules! args {
    ($($x:expr),* $(,)?) => {
        &[$($crate::store::db::Value::from($x)),*][..]
    };
}
pub(crate) use args;

/// A value read from a column as a Rust type.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
    const NAME: &'static str;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    const NAME: &'static str = "an integer";
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Real(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    const NAME: &'static str = "a number";
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Option<Self> {
        i64::from_value(v).map(|i| i != 0)
    }
    const NAME: &'static str = "a boolean";
}

impl FromValue for String {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
    const NAME: &'static str = "text";
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Option<Self> {
        Some(v.clone())
    }
    const NAME: &'static str = "a value";
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
    const NAME: &'static str = T::NAME;
}

/// One row of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    /// Column `i` as a `T`; an error names the column and what it holds.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        let Some(v) = self.0.get(i) else {
            bail!("column {i} is not in the result ({} columns)", self.0.len());
        };
        match T::from_value(v) {
            Some(t) => Ok(t),
            None => bail!(
                "column {i} holds {}, not {}",
                v.type_name(),
                <T as FromValue>::NAME
            ),
        }
    }
}

/// A connection to one database. Methods take `&self` so that reading needs
/// no exclusive borrow of the store; a statement runs at once (autocommit)
/// unless inside [`Conn::transaction`].
pub trait Conn {
    /// Which backend.
    fn kind(&self) -> Kind;
    /// Runs one statement; the number of rows it changed.
    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64>;
    /// Runs one statement and returns all its rows.
    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>>;
    /// Runs several statements without arguments (DDL).
    fn batch(&self, sql: &str) -> Result<()>;
    /// Runs `f` in one transaction (SQLite: immediate, so that it never fails
    /// half-way on another writer): committed when `f` returns `Ok`, rolled
    /// back otherwise.
    fn transaction(&self, f: &mut dyn FnMut(&dyn Conn) -> Result<()>) -> Result<()>;
    /// The SQLite connection, for what only SQLite has (pragmas, tests).
    fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        None
    }
}

impl dyn Conn + '_ {
    /// The first row, if any.
    pub fn query_opt(&self, sql: &str, args: &[Value]) -> Result<Option<Row>> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// The first row, which must exist.
    pub fn query_one(&self, sql: &str, args: &[Value]) -> Result<Row> {
        match self.query_opt(sql, args)? {
            Some(r) => Ok(r),
            None => bail!("the query returned no row"),
        }
    }

    /// Runs `f` in one transaction and returns what it returned.
    pub fn in_tx<T>(&self, f: impl FnOnce(&dyn Conn) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        let mut out = None;
        self.transaction(&mut |c| {
            let f = f.take().expect("a transaction runs its body once");
            out = Some(f(c)?);
            Ok(())
        })?;
        Ok(out.expect("the body ran"))
    }
}

/// A new random UUID (version 4, RFC 9562), lower-case hex with dashes.
pub fn new_uuid() -> Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_typed_values_and_say_what_they_hold() {
        let r = Row(vec![
            Value::Int(3),
            Value::Null,
            Value::Text("x".into()),
            Value::Real(1.5),
        ]);
        assert_eq!(r.get::<i64>(0).unwrap(), 3);
        assert!(r.get::<bool>(0).unwrap());
        assert_eq!(r.get::<Option<i64>>(1).unwrap(), None);
        assert_eq!(r.get::<String>(2).unwrap(), "x");
        assert_eq!(r.get::<f64>(3).unwrap(), 1.5);
        assert_eq!(r.get::<f64>(0).unwrap(), 3.0);
        let e = r.get::<i64>(2).unwrap_err().to_string();
        assert_eq!(e, "column 2 holds text, not an integer");
        assert!(r.get::<i64>(1).is_err());
        assert!(r.get::<i64>(9).is_err());
    }

    #[test]
    fn uuids_are_version_4() {
        let (a, b) = (new_uuid().unwrap(), new_uuid().unwrap());
        assert_ne!(a, b);
        let groups: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert_eq!(&a[14..15], "4");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }
}
