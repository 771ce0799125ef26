//! The database: by default the SQLite file under the data directory (`adamviz.sqlite3`),
//! through an r2d2 pool of rusqlite connections, each in WAL mode with foreign keys on and a
//! busy timeout; or a PostgreSQL server (`--database postgres://…`, see [`crate::sql::postgres`])
//! shared by several nodes. Schema migrations (compiled in: `store/migrations/*.sql` for SQLite,
//! `store/postgres/*.sql` for PostgreSQL) are applied at open in one transaction and recorded
//! with their SHA-256; a migration that fails, or one already applied whose text has since
//! changed, stops the open with an error naming it.
//!
//! Database work never runs on the async executor: [`Database::call`] moves it to a blocking
//! thread.

use std::path::{Path, PathBuf};

mod connection;

pub use connection::{Connection, Transaction};

/// The error of a statement, on either database.
pub use crate::sql::SqlError as DbError;

use crate::sql::postgres::{self, Driver, PgConnection, PgManager};
use r2d2_sqlite::SqliteConnectionManager;
use sha2::{Digest, Sha256};

/// The migrations, in order: (version, name, SQL).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "evidence_ledger",
        include_str!("migrations/0001_evidence_ledger.sql"),
    ),
    (
        2,
        "revisions",
        include_str!("migrations/0002_revisions.sql"),
    ),
    (
        3,
        "evidence_links",
        include_str!("migrations/0003_evidence_links.sql"),
    ),
    (
        4,
        "row_rules",
        include_str!("migrations/0004_row_rules.sql"),
    ),
    (5, "accounts", include_str!("migrations/0005_accounts.sql")),
    (6, "datasets", include_str!("migrations/0006_datasets.sql")),
    (
        7,
        "approval_history",
        include_str!("migrations/0007_approval_history.sql"),
    ),
    (
        8,
        "account_duties",
        include_str!("migrations/0008_account_duties.sql"),
    ),
    (
        9,
        "login_failure_windows",
        include_str!("migrations/0009_login_failure_windows.sql"),
    ),
    (
        10,
        "run_queue",
        include_str!("migrations/0010_run_queue.sql"),
    ),
    (
        11,
        "dataset_json_format",
        include_str!("migrations/0011_dataset_json_format.sql"),
    ),
    (
        12,
        "figure_sets",
        include_str!("migrations/0012_figure_sets.sql"),
    ),
];

/// Opens the database file at `path` for reading only: no migration, no change of journal mode
/// or any other setting of the file, and every write refused (`adamviz ledger verify`).
///
/// A database closed cleanly has no write-ahead log beside it: it is opened `immutable`, so
/// that SQLite creates no `-shm` or `-wal` file either. With a log (a server running, or one
/// that crashed) it is opened read-only as it is, so that the log's transactions are seen.
pub fn open_read_only(path: &Path) -> Result<rusqlite::Connection, DatabaseError> {
    use rusqlite::OpenFlags;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = if Path::new(&wal).exists() {
        rusqlite::Connection::open_with_flags(path, flags)?
    } else {
        let uri = format!("file:{}?immutable=1", uri_path(path));
        rusqlite::Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)?
    };
    connection.busy_timeout(std::time::Duration::from_secs(5))?;
    connection.pragma_update(None, "query_only", "ON")?;
    Ok(connection)
}

/// `path` as the path of a `file:` URI: every byte but unreserved ones and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut encoded = String::new();
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// How a migration a database records disagrees with this build's list.
pub(crate) enum AppliedMismatch {
    /// A version this build does not know.
    Unknown(i64),
    /// A version whose recorded SHA-256 is not that of this build's text.
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
}

/// The SHA-256 a migration's text is recorded with.
pub(crate) fn migration_hash(sql: &str) -> String {
    hex::encode(Sha256::digest(sql.as_bytes()))
}

/// Checks the (version, SHA-256) pairs a database records against this build's `migrations`
/// (the same rule on SQLite and PostgreSQL).
pub(crate) fn check_applied(
    migrations: &[(i64, &'static str, &str)],
    applied: &[(i64, String)],
) -> Result<(), AppliedMismatch> {
    for (version, recorded) in applied {
        let Some((_, name, sql)) = migrations.iter().find(|(v, _, _)| v == version) else {
            return Err(AppliedMismatch::Unknown(*version));
        };
        let built = migration_hash(sql);
        if &built != recorded {
            return Err(AppliedMismatch::Changed {
                version: *version,
                name,
                applied: recorded.clone(),
                built,
            });
        }
    }
    Ok(())
}

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "adamviz.sqlite3";

/// Why the database could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// The database file could not be created (private, 0600) before SQLite opened it.
    #[error("cannot create the database file {path}: {source}")]
    CreateFile {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A statement failed (through the SQL seam, on either database).
    #[error("database error: {0}")]
    Sql(#[from] crate::sql::SqlError),
    /// No connection could be taken from the pool.
    #[error("no database connection available ({database}): {source}")]
    Pool {
        /// Which database.
        database: String,
        /// What the pool said.
        #[source]
        source: r2d2::Error,
    },
    /// A migration failed; the database is left at the previous version.
    #[error("migration {version} ({name}) failed: {source}")]
    Migration {
        /// Its version.
        version: i64,
        /// Its name.
        name: &'static str,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// An applied migration's text differs from the one compiled in.
    #[error("migration {version} ({name}) was applied with SHA-256 {applied} but this build's text hashes to {built}; refusing to open a database of another schema")]
    MigrationChanged {
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
    #[error(
        "the database has migration {version}, which this build does not know; use a newer adamviz"
    )]
    UnknownMigration {
        /// The unknown version.
        version: i64,
    },
    /// PostgreSQL's schema could not be applied or is not this build's.
    #[error(transparent)]
    PostgresSchema(#[from] postgres::MigrationError),
    /// `--database` is not a database adamviz can use.
    #[error("--database {given:?}: {problem}")]
    Location {
        /// The value given.
        given: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A command that joins an installation found none.
    #[error("{directory} holds no adamviz installation (no {file}): start the server on it first")]
    NoInstallation {
        /// The data directory.
        directory: String,
        /// The database file looked for.
        file: String,
    },
    /// The blocking task failed (panicked, or the runtime shut down).
    #[error("database task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// Where the database is: what `--database` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseLocation {
    /// The SQLite file (the data directory's `adamviz.sqlite3` by default).
    File(PathBuf),
    /// A PostgreSQL server: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?…]`.
    Postgres(String),
}

impl DatabaseLocation {
    /// The database `--database` names, or the data directory's SQLite file without it.
    pub fn choose(data_dir: &Path, database: Option<&str>) -> Result<Self, DatabaseError> {
        match database {
            None => Ok(Self::File(data_dir.join(DATABASE_FILE))),
            Some(given) => Self::parse(given),
        }
    }

    /// A `--database` value: a `postgres://` or `postgresql://` URL naming a host and a database.
    pub fn parse(given: &str) -> Result<Self, DatabaseError> {
        let refuse = |problem: &str| DatabaseError::Location {
            given: redacted(given),
            problem: problem.to_owned(),
        };
        let url =
            url::Url::parse(given).map_err(|error| refuse(&format!("not a URL ({error})")))?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(refuse(&format!(
                "the scheme is {:?}; adamviz keeps its database in PostgreSQL (postgres://USER@HOST:PORT/DATABASE) or, without --database, in the data directory's SQLite file",
                url.scheme()
            )));
        }
        if url.host_str().is_none_or(str::is_empty)
            && !url.query_pairs().any(|(key, _)| key == "host")
        {
            return Err(refuse("no host: write postgres://USER@HOST:PORT/DATABASE"));
        }
        if url.path().trim_start_matches('/').is_empty() {
            return Err(refuse(
                "no database name: write postgres://USER@HOST:PORT/DATABASE",
            ));
        }
        Ok(Self::Postgres(given.to_owned()))
    }

    /// The error of a pool that could not give a connection to this database.
    fn pool_error(&self) -> impl Fn(r2d2::Error) -> DatabaseError + '_ {
        |source| DatabaseError::Pool {
            database: self.describe(),
            source,
        }
    }

    /// How it is named in messages and logs: a password is never shown.
    pub fn describe(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::Postgres(url) => redacted(url),
        }
    }
}

/// `url` with its password (if any) replaced by `***`.
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => "(not a URL)".to_owned(),
    }
}

#[derive(Clone)]
enum Pool {
    Sqlite(r2d2::Pool<SqliteConnectionManager>),
    Postgres(r2d2::Pool<PgManager>),
}

/// The database: a pool of connections to one SQLite file or one PostgreSQL database.
#[derive(Clone)]
pub struct Database {
    pool: Pool,
    location: DatabaseLocation,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("location", &self.location.describe())
            .finish()
    }
}

impl Database {
    /// Opens (creating if needed) `<data_dir>/adamviz.sqlite3` and applies the migrations.
    pub fn open_in(data_dir: &Path) -> Result<Self, DatabaseError> {
        Self::open(&data_dir.join(DATABASE_FILE))
    }

    /// Opens the database `--database` names (the data directory's SQLite file without it),
    /// applying the migrations it lacks.
    pub fn open_at(data_dir: &Path, database: Option<&str>) -> Result<Self, DatabaseError> {
        Self::open_location(DatabaseLocation::choose(data_dir, database)?)
    }

    /// Opens the database at `location`, applying the migrations it lacks.
    pub fn open_location(location: DatabaseLocation) -> Result<Self, DatabaseError> {
        match location {
            DatabaseLocation::File(path) => Self::open(&path),
            DatabaseLocation::Postgres(url) => Self::open_postgres(&url),
        }
    }

    /// Opens the database of an existing installation at `location`: refused, creating
    /// nothing, when the file does not exist or the PostgreSQL database has no adamviz schema
    /// yet (a worker joins an installation; a typo must not start an empty one).
    pub fn open_existing(location: DatabaseLocation) -> Result<Self, DatabaseError> {
        match &location {
            DatabaseLocation::File(path) if !path.is_file() => {
                return Err(DatabaseError::NoInstallation {
                    directory: path.parent().unwrap_or(path).display().to_string(),
                    file: path
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                })
            }
            DatabaseLocation::File(_) => {}
            DatabaseLocation::Postgres(url) => {
                let connection = PgConnection::connect(url, Driver::new())?;
                postgres::check_schema(&connection)?;
            }
        }
        Self::open_location(location)
    }

    /// Connects to the PostgreSQL database at `url` and applies the schema it lacks.
    pub fn open_postgres(url: &str) -> Result<Self, DatabaseError> {
        let location = DatabaseLocation::parse(url)?;
        let manager = PgManager::new(url, Driver::new());
        let pool = r2d2::Pool::builder()
            .max_size(8)
            .min_idle(Some(1))
            .connection_timeout(std::time::Duration::from_secs(10))
            .build(manager)
            .map_err(location.pool_error())?;
        let database = Self {
            pool: Pool::Postgres(pool),
            location,
        };
        let connection = database.connection()?;
        let Connection::Postgres(connection) = &connection else {
            unreachable!("a PostgreSQL pool gives PostgreSQL connections")
        };
        postgres::migrate(connection)?;
        Ok(database)
    }

    /// Opens (creating if needed) the database file at `path` and applies the migrations.
    pub fn open(path: &Path) -> Result<Self, DatabaseError> {
        // Created here, 0600, rather than by SQLite with the process's umask: it holds sessions
        // and password hashes, and SQLite gives its WAL and shared-memory files the same mode.
        crate::private_files::create_private_file_if_missing(path).map_err(|source| {
            DatabaseError::CreateFile {
                path: path.display().to_string(),
                source,
            }
        })?;
        let manager = SqliteConnectionManager::file(path).with_init(|connection| {
            connection.busy_timeout(std::time::Duration::from_secs(5))?;
            connection.pragma_update(None, "foreign_keys", "ON")?;
            connection.pragma_update(None, "synchronous", "FULL")?;
            // Every transaction takes the write lock when it begins (waiting up to the busy
            // timeout): a deferred one that reads and then writes fails at once with "database
            // is locked" when another writer committed in between.
            connection.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
            Ok(())
        });
        let location = DatabaseLocation::File(path.to_path_buf());
        // Connections are opened on demand: one opening in the background while another holds
        // the write lock would only log a lock error.
        let pool = r2d2::Pool::builder()
            .max_size(8)
            .min_idle(Some(1))
            .build(manager)
            .map_err(location.pool_error())?;
        let database = Self {
            pool: Pool::Sqlite(pool),
            location,
        };
        database.migrate()?;
        Ok(database)
    }

    /// Where the database is.
    pub fn location(&self) -> &DatabaseLocation {
        &self.location
    }

    /// Which database this is.
    pub fn dialect(&self) -> crate::sql::Dialect {
        match self.pool {
            Pool::Sqlite(_) => crate::sql::Dialect::Sqlite,
            Pool::Postgres(_) => crate::sql::Dialect::Postgres,
        }
    }

    /// A connection from the pool (blocking code only).
    pub fn connection(&self) -> Result<Connection, DatabaseError> {
        let failed = self.location.pool_error();
        Ok(match &self.pool {
            Pool::Sqlite(pool) => Connection::Sqlite(pool.get().map_err(failed)?),
            Pool::Postgres(pool) => Connection::Postgres(pool.get().map_err(failed)?),
        })
    }

    /// A connection to SQLite itself, for code that speaks to the file rather than through the
    /// store (the benchmarks' history filler, tests that play an insider editing the file);
    /// refused on PostgreSQL.
    pub fn sqlite(&self) -> Result<r2d2::PooledConnection<SqliteConnectionManager>, DatabaseError> {
        match &self.pool {
            Pool::Sqlite(pool) => pool.get().map_err(self.location.pool_error()),
            Pool::Postgres(_) => Err(DatabaseError::Location {
                given: self.location.describe(),
                problem: "this is PostgreSQL, not the SQLite file this step works on".to_owned(),
            }),
        }
    }

    /// Runs `work` with a connection on a blocking thread.
    pub async fn call<T: Send + 'static, E: From<DatabaseError> + Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E> {
        let database = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut connection = database.connection()?;
            work(&mut connection)
        })
        .await
        .map_err(DatabaseError::Task)?
    }

    fn sqlite_pool(&self) -> &r2d2::Pool<SqliteConnectionManager> {
        match &self.pool {
            Pool::Sqlite(pool) => pool,
            Pool::Postgres(_) => unreachable!("SQLite's migrations run on SQLite only"),
        }
    }

    fn migrate(&self) -> Result<(), DatabaseError> {
        let mut connection = self
            .sqlite_pool()
            .get()
            .map_err(self.location.pool_error())?;
        // WAL is a property of the file: set once, it holds for every later connection.
        connection.pragma_update(None, "journal_mode", "WAL")?;
        // One IMMEDIATE transaction takes the write lock before the applied list is read, so
        // that several processes opening one fresh directory at once apply each migration
        // exactly once (the others wait, then find it applied).
        let mut transaction =
            connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        transaction.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT NOT NULL,
                sha256     TEXT NOT NULL,
                applied_at TEXT NOT NULL
            );",
        )?;
        let applied: Vec<(i64, String)> = {
            let mut statement = transaction
                .prepare("SELECT version, sha256 FROM schema_migrations ORDER BY version")?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        check_applied(MIGRATIONS, &applied).map_err(|mismatch| match mismatch {
            AppliedMismatch::Unknown(version) => DatabaseError::UnknownMigration { version },
            AppliedMismatch::Changed {
                version,
                name,
                applied,
                built,
            } => DatabaseError::MigrationChanged {
                version,
                name,
                applied,
                built,
            },
        })?;
        for (version, name, sql) in MIGRATIONS {
            if applied.iter().any(|(v, _)| v == version) {
                continue;
            }
            let failed = |source| DatabaseError::Migration {
                version: *version,
                name,
                source,
            };
            // A savepoint per migration: a failed one leaves none of its statements behind.
            let savepoint = transaction.savepoint().map_err(failed)?;
            savepoint.execute_batch(sql).map_err(failed)?;
            savepoint
                .execute(
                    "INSERT INTO schema_migrations (version, name, sha256, applied_at)
                     VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![version, name, migration_hash(sql), crate::ledger::utc_now()],
                )
                .map_err(failed)?;
            savepoint.commit().map_err(failed)?;
        }
        transaction.commit()?;
        Ok(())
    }
}

/// Opens the PostgreSQL database at `url` for reading only: one connection whose every
/// transaction is read-only, the schema checked and never applied (`adamviz ledger verify`).
pub fn open_postgres_read_only(url: &str) -> Result<PgConnection, DatabaseError> {
    DatabaseLocation::parse(url)?;
    let connection = PgConnection::connect(url, Driver::new())?;
    connection.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
    postgres::check_schema(&connection)?;
    Ok(connection)
}
