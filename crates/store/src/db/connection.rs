//! A connection to whichever database the installation uses, and a transaction on one: what
//! the use cases hold while they call the store's functions (all written against
//! [`Sql`](crate::sql::Sql)), so that no code outside the store names the database engine.

use r2d2::PooledConnection;
use r2d2_sqlite::SqliteConnectionManager;

use crate::sql::{
    postgres::{PgManager, PgTransaction},
    Dialect, Sql, SqlError, SqlRow, SqlValue,
};

/// A pooled connection to SQLite or PostgreSQL.
pub enum Connection {
    /// To the data directory's SQLite file.
    Sqlite(PooledConnection<SqliteConnectionManager>),
    /// To a PostgreSQL server.
    Postgres(PooledConnection<PgManager>),
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connection({:?})", self.dialect())
    }
}

impl Connection {
    /// Begins a transaction. Every transaction writes alone, on both databases: SQLite's take
    /// the write lock when they begin (IMMEDIATE), PostgreSQL's one advisory lock, so that a
    /// read-then-write step means the same on both.
    pub fn transaction(&mut self) -> Result<Transaction<'_>, SqlError> {
        self.unchecked_transaction()
    }

    /// Begins a transaction from a shared reference (the caller begins no other on this
    /// connection meanwhile).
    pub fn unchecked_transaction(&self) -> Result<Transaction<'_>, SqlError> {
        Ok(match self {
            Self::Sqlite(connection) => Transaction::Sqlite(connection.unchecked_transaction()?),
            Self::Postgres(connection) => Transaction::Postgres(connection.transaction()?),
        })
    }

    /// SQLite's own connection, for code that speaks to the file itself (the benchmarks'
    /// history filler, tests that play an insider editing the file); `None` on PostgreSQL.
    pub fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Self::Sqlite(connection) => Some(connection),
            Self::Postgres(_) => None,
        }
    }

    /// SQLite's own connection, mutably (see [`Connection::as_sqlite`]).
    pub fn as_sqlite_mut(&mut self) -> Option<&mut rusqlite::Connection> {
        match self {
            Self::Sqlite(connection) => Some(connection),
            Self::Postgres(_) => None,
        }
    }
}

impl Sql for Connection {
    fn dialect(&self) -> Dialect {
        match self {
            Self::Sqlite(_) => Dialect::Sqlite,
            Self::Postgres(_) => Dialect::Postgres,
        }
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        match self {
            Self::Sqlite(connection) => Sql::execute(&**connection, sql, params),
            Self::Postgres(connection) => Sql::execute(&**connection, sql, params),
        }
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        match self {
            Self::Sqlite(connection) => Sql::query(&**connection, sql, params),
            Self::Postgres(connection) => Sql::query(&**connection, sql, params),
        }
    }
}

/// A transaction: committed by [`Transaction::commit`], rolled back when dropped without.
pub enum Transaction<'a> {
    /// On SQLite.
    Sqlite(rusqlite::Transaction<'a>),
    /// On PostgreSQL.
    Postgres(PgTransaction<'a>),
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transaction({:?})", self.dialect())
    }
}

impl Transaction<'_> {
    /// SQLite's own connection under this transaction (see [`Connection::as_sqlite`]).
    pub fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Self::Sqlite(transaction) => Some(transaction),
            Self::Postgres(_) => None,
        }
    }

    /// Commits.
    pub fn commit(self) -> Result<(), SqlError> {
        match self {
            Self::Sqlite(transaction) => Ok(transaction.commit()?),
            Self::Postgres(transaction) => transaction.commit(),
        }
    }
}

impl Sql for Transaction<'_> {
    fn dialect(&self) -> Dialect {
        match self {
            Self::Sqlite(_) => Dialect::Sqlite,
            Self::Postgres(_) => Dialect::Postgres,
        }
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        match self {
            Self::Sqlite(transaction) => Sql::execute(transaction, sql, params),
            Self::Postgres(transaction) => Sql::execute(transaction, sql, params),
        }
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        match self {
            Self::Sqlite(transaction) => Sql::query(transaction, sql, params),
            Self::Postgres(transaction) => Sql::query(transaction, sql, params),
        }
    }
}
