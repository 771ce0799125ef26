//! PostgreSQL behind [`Sql`](super::Sql): tokio-postgres connections, driven on a small runtime
//! of the store's own so that the store's synchronous functions (run on blocking threads and in
//! command-line code) call them the same way they call SQLite, pooled with r2d2 as SQLite's
//! are. The schema (`postgres/*.sql`) is applied at open and recorded with its SHA-256, as on
//! SQLite.
//!
//! Write transactions are serialized, as on SQLite (whose transactions all take the write lock
//! when they begin): each transaction takes one advisory lock first, so that the store's
//! read-then-write steps (claim the oldest queued run, promote a revision that is still Draft)
//! keep the meaning they have on SQLite. The hash chain's own lock is taken by the ledger's
//! trigger as well, so a fork cannot be written even by SQL that bypasses the store.

use std::{
    collections::HashMap,
    future::Future,
    sync::{mpsc, Arc, Mutex},
};

use bytes::BytesMut;
use tokio_postgres::{
    types::{FromSql, IsNull, ToSql, Type},
    Client, NoTls, Statement,
};

use super::{Dialect, Sql, SqlError, SqlRow, SqlValue};
use crate::db::{check_applied, migration_hash, AppliedMismatch};

/// The schema migrations, in order: (version, name, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "schema", include_str!("../postgres/0001_schema.sql")),
    (
        2,
        "dataset_json_format",
        include_str!("../postgres/0002_dataset_json_format.sql"),
    ),
    (
        3,
        "figure_sets",
        include_str!("../postgres/0003_figure_sets.sql"),
    ),
];

/// The advisory lock every transaction takes first (see the module documentation).
const WRITER_LOCK: i64 = 0x6164_616d_7669_7a01; // "adamviz" and 1
/// The advisory lock migrations are applied under.
const MIGRATION_LOCK: i64 = 0x6164_616d_7669_7a02;

/// What a PostgreSQL error says: the server's message (a refused rule's text) and detail.
pub fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_owned(),
        },
        None => error.to_string(),
    }
}

/// The runtime PostgreSQL connections run on, shared by a pool's connections.
pub struct Driver {
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Driver")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its tasks end, which panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Driver {
    /// A driver with its own two-thread runtime.
    pub fn new() -> Arc<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("adamviz-postgres")
            .enable_all()
            .build()
            .expect("a runtime for the PostgreSQL connections");
        Arc::new(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `future` on the driver's runtime and waits for it, from any thread.
    fn wait<T: Send + 'static>(&self, future: impl Future<Output = T> + Send + 'static) -> T {
        let (answer, answered) = mpsc::sync_channel(1);
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the driver")
            .spawn(async move {
                let _ = answer.send(future.await);
            });
        answered
            .recv()
            .expect("the PostgreSQL driver answers every request it was given")
    }
}

/// One connection to the server.
pub struct PgConnection {
    client: Arc<Client>,
    driver: Arc<Driver>,
    statements: Mutex<HashMap<String, Statement>>,
}

impl std::fmt::Debug for PgConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConnection")
            .field("closed", &self.client.is_closed())
            .finish()
    }
}

impl PgConnection {
    /// Connects to `url` (`postgres://user@host:port/database`).
    pub fn connect(url: &str, driver: Arc<Driver>) -> Result<Self, SqlError> {
        let url = url.to_owned();
        let client = driver.wait(async move {
            let (client, connection) = tokio_postgres::connect(&url, NoTls).await?;
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(%error, "a PostgreSQL connection ended");
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        })?;
        Ok(Self {
            client: Arc::new(client),
            driver,
            statements: Mutex::new(HashMap::new()),
        })
    }

    /// Whether the server closed the connection (the pool then opens another).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Runs several statements separated by `;` (no parameters).
    pub fn batch_execute(&self, sql: &str) -> Result<(), SqlError> {
        let (client, sql) = (Arc::clone(&self.client), sql.to_owned());
        Ok(self
            .driver
            .wait(async move { client.batch_execute(&sql).await })?)
    }

    /// Begins a transaction, serialized with every other (see the module documentation).
    pub fn transaction(&self) -> Result<PgTransaction<'_>, SqlError> {
        self.batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITER_LOCK})"
        ))?;
        Ok(PgTransaction {
            connection: self,
            open: true,
        })
    }

    fn statement(&self, sql: &str) -> Result<Statement, SqlError> {
        if let Some(found) = self.statements.lock().expect("statement cache").get(sql) {
            return Ok(found.clone());
        }
        let (client, text) = (Arc::clone(&self.client), numbered_placeholders(sql));
        let prepared = self
            .driver
            .wait(async move { client.prepare(&text).await })?;
        self.statements
            .lock()
            .expect("statement cache")
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }
}

fn as_params(params: &[SqlValue]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Sql for PgConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        let statement = self.statement(sql)?;
        let (client, params) = (Arc::clone(&self.client), params.to_vec());
        Ok(self
            .driver
            .wait(async move { client.execute(&statement, &as_params(&params)).await })?)
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        let statement = self.statement(sql)?;
        let (client, params) = (Arc::clone(&self.client), params.to_vec());
        let rows = self
            .driver
            .wait(async move { client.query(&statement, &as_params(&params)).await })?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|index| Ok(row.try_get::<_, AnyValue>(index)?.0))
                    .collect::<Result<Vec<_>, SqlError>>()
                    .map(SqlRow)
            })
            .collect()
    }
}

/// A transaction on a [`PgConnection`]: committed by [`PgTransaction::commit`], rolled back
/// when dropped without.
pub struct PgTransaction<'a> {
    connection: &'a PgConnection,
    open: bool,
}

impl PgTransaction<'_> {
    /// Commits.
    pub fn commit(mut self) -> Result<(), SqlError> {
        self.open = false;
        self.connection.batch_execute("COMMIT")
    }
}

impl Drop for PgTransaction<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.connection.batch_execute("ROLLBACK");
        }
    }
}

impl Sql for PgTransaction<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.connection.execute(sql, params)
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlRow>, SqlError> {
        self.connection.query(sql, params)
    }
}

/// SQLite's `?1` placeholders as PostgreSQL's `$1`, outside quoted text and comments.
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    out.push(c);
                }
                '-' if chars.peek() == Some(&'-') => {
                    // A comment runs to the end of its line.
                    out.push(c);
                    for rest in chars.by_ref() {
                        out.push(rest);
                        if rest == '\n' {
                            break;
                        }
                    }
                }
                '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
                _ => out.push(c),
            },
        }
    }
    out
}

impl ToSql for SqlValue {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Self::Null => Ok(IsNull::Yes),
            Self::Integer(value) => match *ty {
                Type::INT8 => value.to_sql(ty, out),
                Type::INT4 => i32::try_from(*value)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*value)?.to_sql(ty, out),
                Type::BOOL => (*value != 0).to_sql(ty, out),
                _ => Err(format!("an integer given for a parameter of type {ty}").into()),
            },
            Self::Text(value) => match *ty {
                Type::BYTEA | Type::INT8 | Type::INT4 | Type::INT2 | Type::BOOL => {
                    Err(format!("text given for a parameter of type {ty}").into())
                }
                Type::JSONB => {
                    // JSONB's binary form: a version byte, then the text.
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(value.as_bytes());
                    Ok(IsNull::No)
                }
                // TEXT, VARCHAR, CITEXT (an extension's type, sent as its text): the UTF-8.
                _ => {
                    out.extend_from_slice(value.as_bytes());
                    Ok(IsNull::No)
                }
            },
            Self::Blob(value) => match *ty {
                Type::BYTEA => {
                    out.extend_from_slice(value);
                    Ok(IsNull::No)
                }
                _ => Err(format!("bytes given for a parameter of type {ty}").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A column of any type the schema uses, as a [`SqlValue`].
struct AnyValue(SqlValue);

impl<'a> FromSql<'a> for AnyValue {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Self(match *ty {
            Type::INT8 => SqlValue::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => SqlValue::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => SqlValue::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::BOOL => SqlValue::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::BYTEA => SqlValue::Blob(raw.to_vec()),
            Type::JSONB => {
                SqlValue::Text(std::str::from_utf8(raw.get(1..).unwrap_or_default())?.to_owned())
            }
            Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC => {
                return Err(format!(
                    "a column of type {ty}: the store reads integers, text and bytes only"
                )
                .into())
            }
            // TEXT, VARCHAR, NAME, CITEXT and the like: their UTF-8.
            _ => SqlValue::Text(std::str::from_utf8(raw)?.to_owned()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Self(SqlValue::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Why the schema could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// A statement failed.
    #[error("PostgreSQL schema migration {version} ({name}) failed: {source}")]
    Failed {
        /// Its version.
        version: i64,
        /// Its name.
        name: &'static str,
        /// What the server said.
        #[source]
        source: SqlError,
    },
    /// An applied migration's text differs from the one compiled in.
    #[error("PostgreSQL schema migration {version} ({name}) was applied with SHA-256 {applied} but this build's text hashes to {built}; refusing to use a database of another schema")]
    Changed {
        /// Its version.
        version: i64,
        /// Its name.
        name: &'static str,
        /// The recorded hash.
        applied: String,
        /// This build's hash.
        built: String,
    },
    /// The database is newer than this build.
    #[error("the PostgreSQL database has schema migration {version}, which this build does not know; use a newer adamviz")]
    Unknown {
        /// The unknown version.
        version: i64,
    },
    /// A reader found the schema not yet applied.
    #[error("the PostgreSQL database lacks schema migration {version} ({name}): it is not (yet) an adamviz database; `adamviz serve --database …` or `adamviz migrate` creates the schema")]
    Missing {
        /// The first missing version.
        version: i64,
        /// Its name.
        name: &'static str,
    },
    /// Reading or recording the applied migrations failed.
    #[error(transparent)]
    Sql(#[from] SqlError),
}

/// Checks, changing nothing, that this database has exactly this build's schema (a reader
/// that must not migrate: `adamviz ledger verify`).
pub fn check_schema(connection: &PgConnection) -> Result<(), MigrationError> {
    let recorded = connection.query_opt(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'",
        &[],
    )?;
    let applied: Vec<(i64, String)> = match recorded {
        None => Vec::new(),
        Some(_) => connection
            .query(
                "SELECT version, sha256 FROM schema_migrations ORDER BY version",
                &[],
            )?
            .iter()
            .map(|row| Ok((row.get(0)?, row.get(1)?)))
            .collect::<Result<_, SqlError>>()?,
    };
    check_applied(MIGRATIONS, &applied).map_err(mismatch_error)?;
    match MIGRATIONS
        .iter()
        .find(|(version, _, _)| !applied.iter().any(|(v, _)| v == version))
    {
        Some((version, name, _)) => Err(MigrationError::Missing {
            version: *version,
            name,
        }),
        None => Ok(()),
    }
}

fn mismatch_error(mismatch: AppliedMismatch) -> MigrationError {
    match mismatch {
        AppliedMismatch::Unknown(version) => MigrationError::Unknown { version },
        AppliedMismatch::Changed {
            version,
            name,
            applied,
            built,
        } => MigrationError::Changed {
            version,
            name,
            applied,
            built,
        },
    }
}

/// Applies the migrations this database lacks, in one transaction under the migration lock (so
/// that nodes starting at once apply each exactly once), after checking those applied.
pub fn migrate(connection: &PgConnection) -> Result<(), MigrationError> {
    connection.batch_execute(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock({MIGRATION_LOCK});
         CREATE TABLE IF NOT EXISTS schema_migrations (
             version    BIGINT PRIMARY KEY,
             name       TEXT NOT NULL,
             sha256     TEXT NOT NULL,
             applied_at TEXT NOT NULL
         );"
    ))?;
    let transaction = PgTransaction {
        connection,
        open: true,
    };
    let applied: Vec<(i64, String)> = transaction
        .query(
            "SELECT version, sha256 FROM schema_migrations ORDER BY version",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .collect::<Result<_, SqlError>>()?;
    check_applied(MIGRATIONS, &applied).map_err(mismatch_error)?;
    for (version, name, sql) in MIGRATIONS {
        if applied.iter().any(|(v, _)| v == version) {
            continue;
        }
        let failed = |source| MigrationError::Failed {
            version: *version,
            name,
            source,
        };
        transaction.connection.batch_execute(sql).map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO schema_migrations (version, name, sha256, applied_at)
                 VALUES (?1, ?2, ?3, ?4)",
                crate::sql_params![
                    *version,
                    *name,
                    migration_hash(sql),
                    crate::ledger::utc_now()
                ],
            )
            .map_err(failed)?;
    }
    transaction.commit()?;
    Ok(())
}

/// Opens PostgreSQL connections for an r2d2 pool.
#[derive(Debug)]
pub struct PgManager {
    url: String,
    driver: Arc<Driver>,
}

impl PgManager {
    /// Connections to `url`, driven by `driver`.
    pub fn new(url: &str, driver: Arc<Driver>) -> Self {
        Self {
            url: url.to_owned(),
            driver,
        }
    }
}

impl r2d2::ManageConnection for PgManager {
    type Connection = PgConnection;
    type Error = SqlError;

    fn connect(&self) -> Result<PgConnection, SqlError> {
        PgConnection::connect(&self.url, Arc::clone(&self.driver))
    }

    /// Checked at every checkout without a round trip: a connection the server closed (a
    /// restart, a terminated backend) is known closed as soon as its socket is, and is replaced;
    /// a query each time would cost every request a round trip per database call.
    fn is_valid(&self, connection: &mut PgConnection) -> Result<(), SqlError> {
        if connection.is_closed() {
            Err(SqlError::ConnectionClosed)
        } else {
            Ok(())
        }
    }

    fn has_broken(&self, connection: &mut PgConnection) -> bool {
        connection.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes_and_comments() {
        assert_eq!(
            numbered_placeholders(
                "SELECT '?1', \"a?2\" FROM t -- ?3\nWHERE a = ?1 AND b = ?12 AND c LIKE '%?'"
            ),
            "SELECT '?1', \"a?2\" FROM t -- ?3\nWHERE a = $1 AND b = $12 AND c LIKE '%?'"
        );
    }
}
