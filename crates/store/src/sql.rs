//! One way for the store's functions to speak SQL to either database: [`Sql`] runs a statement
//! with `?1, ?2 …` parameters and returns rows of plain values, implemented by SQLite's
//! connections and transactions (rusqlite) and by PostgreSQL's ([`postgres`]). A store function
//! written against `&impl Sql` runs unchanged on both; where the two dialects differ it asks
//! [`Sql::dialect`].
//!
//! Values are the four SQLite storage classes, which every column of the schema uses on both
//! databases (BIGINT, TEXT/CITEXT, BYTEA on PostgreSQL): no type is guessed.

pub mod postgres;

/// Which database a connection speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The embedded file (`adamviz.sqlite3`).
    Sqlite,
    /// A PostgreSQL server (`--database postgres://…`).
    Postgres,
}

impl Dialect {
    /// SQL for the text at `path` (dot-separated keys) of the JSON held in `column`: SQLite's
    /// `json_extract`, PostgreSQL's `->>` (one key, the form its expression indexes use) or
    /// `#>>`. (SQLite's gives numbers as numbers: compare those with [`Dialect::json_integer`].)
    pub fn json_text(self, column: &str, path: &str) -> String {
        match self {
            Self::Sqlite => format!("json_extract({column}, '$.{path}')"),
            Self::Postgres if !path.contains('.') => {
                format!("(adamviz_json({column}) ->> '{path}')")
            }
            Self::Postgres => format!(
                "(adamviz_json({column}) #>> '{{{}}}')",
                path.replace('.', ",")
            ),
        }
    }

    /// SQL for the integer at `path` of the JSON held in `column`.
    pub fn json_integer(self, column: &str, path: &str) -> String {
        match self {
            Self::Sqlite => self.json_text(column, path),
            Self::Postgres => format!("CAST({} AS BIGINT)", self.json_text(column, path)),
        }
    }
}

/// A parameter or column value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    /// NULL.
    Null,
    /// A 64-bit integer (booleans are 0 and 1).
    Integer(i64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl From<i64> for SqlValue {
    fn from(value: i64) -> Self {
        Self::Integer(value)
    }
}
impl From<u32> for SqlValue {
    fn from(value: u32) -> Self {
        Self::Integer(i64::from(value))
    }
}
impl From<bool> for SqlValue {
    fn from(value: bool) -> Self {
        Self::Integer(i64::from(value))
    }
}
impl From<&str> for SqlValue {
    fn from(value: &str) -> Self {
        Self::Text(value.to_owned())
    }
}
impl From<String> for SqlValue {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}
impl From<&String> for SqlValue {
    fn from(value: &String) -> Self {
        Self::Text(value.clone())
    }
}
impl From<&[u8]> for SqlValue {
    fn from(value: &[u8]) -> Self {
        Self::Blob(value.to_vec())
    }
}
impl From<Vec<u8>> for SqlValue {
    fn from(value: Vec<u8>) -> Self {
        Self::Blob(value)
    }
}
impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null, Into::into)
    }
}

/// `[value, …]` as statement parameters.
#[macro_export]
macro_rules! sql_params {
    ($($value:expr),* $(,)?) => {
        &[$($crate::sql::SqlValue::from($value)),*][..]
    };
}

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// SQLite's error.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL's error (a refused rule is its message).
    #[error("{}", postgres::describe(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A query that must return a row returned none.
    #[error("the query returned no rows")]
    NoRows,
    /// A column's value is not of the type asked for.
    #[error("column {column} holds {found}, not {expected}")]
    Type {
        /// The column's index.
        column: usize,
        /// The type asked for.
        expected: &'static str,
        /// What it holds.
        found: &'static str,
    },
    /// A stored value is not what adamviz wrote (a CHECK should have refused it).
    #[error("column {column}: {detail}")]
    Unreadable {
        /// The column's index.
        column: usize,
        /// What is wrong.
        detail: String,
    },
    /// A pooled PostgreSQL connection was found closed by the server (a restart, a terminated
    /// backend) when it was checked out; the pool replaces it.
    #[error("no database connection available: the server closed this connection")]
    ConnectionClosed,
}

impl SqlError {
    /// The message of a rule the database refused the statement by (a trigger's or a
    /// constraint's), on either database.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Self::Sqlite(rusqlite::Error::SqliteFailure(_, message)) => message.clone(),
            Self::Postgres(error) => error.as_db_error().map(|db| db.message().to_owned()),
            _ => None,
        }
    }
}

/// One row of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRow(pub Vec<SqlValue>);

impl SqlRow {
    /// Column `index` as `T`.
    pub fn get<T: FromSqlValue>(&self, index: usize) -> Result<T, SqlError> {
        T::from_sql_value(self.0.get(index).unwrap_or(&SqlValue::Null), index)
    }

    /// Text column `index` through `T`'s parser: a value it refuses is an error, never a guess.
    pub fn parsed<T>(&self, index: usize) -> Result<T, SqlError>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        let text: String = self.get(index)?;
        text.parse().map_err(|error: T::Err| SqlError::Unreadable {
            column: index,
            detail: format!("{text:?}: {error}"),
        })
    }
}

/// A Rust type a column's value converts to.
pub trait FromSqlValue: Sized {
    /// The conversion; `column` names the column in the error.
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError>;
}

fn found(value: &SqlValue) -> &'static str {
    match value {
        SqlValue::Null => "NULL",
        SqlValue::Integer(_) => "an integer",
        SqlValue::Text(_) => "text",
        SqlValue::Blob(_) => "bytes",
    }
}

impl FromSqlValue for i64 {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        match value {
            SqlValue::Integer(value) => Ok(*value),
            other => Err(SqlError::Type {
                column,
                expected: "an integer",
                found: found(other),
            }),
        }
    }
}
impl FromSqlValue for u32 {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        let wide = i64::from_sql_value(value, column)?;
        u32::try_from(wide).map_err(|_| SqlError::Unreadable {
            column,
            detail: format!("{wide} is out of range"),
        })
    }
}
impl FromSqlValue for bool {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        i64::from_sql_value(value, column).map(|value| value != 0)
    }
}
impl FromSqlValue for String {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        match value {
            SqlValue::Text(value) => Ok(value.clone()),
            other => Err(SqlError::Type {
                column,
                expected: "text",
                found: found(other),
            }),
        }
    }
}
impl FromSqlValue for Vec<u8> {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        match value {
            SqlValue::Blob(value) => Ok(value.clone()),
            // SQLite keeps what it was given: a text value read as bytes is its UTF-8.
            SqlValue::Text(value) => Ok(value.clone().into_bytes()),
            other => Err(SqlError::Type {
                column,
                expected: "bytes",
                found: found(other),
            }),
        }
    }
}
impl<T: FromSqlValue> FromSqlValue for Option<T> {
    fn from_sql_value(value: &SqlValue, column: usize) -> Result<Self, SqlError> {
        match value {
            SqlValue::Null => Ok(None),
            other => T::from_sql_value(other, column).map(Some),
        }
    }
}

/// A connection (or a transaction on one) the store's functions run statements on.
pub trait Sql {
    /// Which database this is.
    fn dialect(&self) -> Dialect;

    /// Runs a statement; the number of rows it changed.
    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError>;

    /// Runs a query; every row.
    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError>;

    /// Runs a query that returns at most one row.
    fn query_opt(&self, sql: &str, params: &[SqlValue]) -> Result<Option<SqlRow>, SqlError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs a query that returns exactly one row.
    fn query_one(&self, sql: &str, params: &[SqlValue]) -> Result<SqlRow, SqlError> {
        self.query_opt(sql, params)?.ok_or(SqlError::NoRows)
    }
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Self::Null => ValueRef::Null,
            Self::Integer(value) => ValueRef::Integer(*value),
            Self::Text(value) => ValueRef::Text(value.as_bytes()),
            Self::Blob(value) => ValueRef::Blob(value),
        }))
    }
}

fn sqlite_value(value: rusqlite::types::ValueRef<'_>, column: usize) -> Result<SqlValue, SqlError> {
    use rusqlite::types::ValueRef;
    Ok(match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(value) => SqlValue::Integer(value),
        // No column of the schema holds a REAL; one would be a change made behind the store.
        ValueRef::Real(_) => {
            return Err(SqlError::Type {
                column,
                expected: "an integer, text or bytes",
                found: "a real number",
            })
        }
        ValueRef::Text(bytes) => SqlValue::Text(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => SqlValue::Blob(bytes.to_vec()),
    })
}

impl Sql for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        let mut statement = self.prepare_cached(sql)?;
        Ok(statement.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        let mut statement = self.prepare_cached(sql)?;
        let width = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut all = Vec::new();
        while let Some(row) = rows.next()? {
            let values = (0..width)
                .map(|index| sqlite_value(row.get_ref(index)?, index))
                .collect::<Result<_, SqlError>>()?;
            all.push(SqlRow(values));
        }
        Ok(all)
    }
}

impl Sql for rusqlite::Transaction<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        Sql::execute(&**self, sql, params)
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        Sql::query(&**self, sql, params)
    }
}

/// A pooled connection is its connection.
impl<M> Sql for r2d2::PooledConnection<M>
where
    M: r2d2::ManageConnection,
    M::Connection: Sql,
{
    fn dialect(&self) -> Dialect {
        (**self).dialect()
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        (**self).execute(sql, params)
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        (**self).query(sql, params)
    }
}
