//! Why a service could not read what a page or a command asked for: the database, the object
//! store, a stored record that does not hold together, or blocking work that stopped. A server
//! function logs the detail and answers 500; the command line prints it.

use adamviz_store::{db::DatabaseError, objects::ObjectStoreError, repository::RepositoryError};

/// A failed read of stored state.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A statement failed (through the store's SQL seam).
    #[error("database error: {0}")]
    Sql(#[from] adamviz_store::sql::SqlError),
    /// The database (pool, SQLite) failed.
    #[error(transparent)]
    Database(#[from] DatabaseError),
    /// The repository refused or failed.
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    /// An object could not be read (missing, or its bytes no longer hash to its name).
    #[error(transparent)]
    Objects(#[from] ObjectStoreError),
    /// A stored dataset could not be read again (its bytes, or a reader's refusal).
    #[error(transparent)]
    Dataset(#[from] adamviz_engine::ingest::FileReadError),
    /// What is stored does not hold together (a hash that is not SHA-256, JSON that does not
    /// parse, a spec that no longer hashes to its name).
    #[error("stored data does not hold: {0}")]
    Corrupt(String),
    /// The blocking work stopped before it answered (a panic, or the runtime shutting down).
    #[error("the work stopped before it answered: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

impl ReadError {
    /// Stored data that does not hold: what, and why.
    pub fn corrupt(what: impl std::fmt::Display, why: impl std::fmt::Display) -> Self {
        ReadError::Corrupt(format!("{what}: {why}"))
    }
}

/// A use case that ran on the database: refused for its own reason, or the database failed
/// under it (no connection, the blocking thread stopped).
#[derive(Debug, thiserror::Error)]
pub enum UseCaseError<E> {
    /// The use case's own refusal or failure.
    #[error(transparent)]
    Refused(E),
    /// The database did not answer.
    #[error(transparent)]
    Database(#[from] DatabaseError),
}

impl From<UseCaseError<adamviz_store::sql::SqlError>> for ReadError {
    fn from(error: UseCaseError<adamviz_store::sql::SqlError>) -> Self {
        match error {
            UseCaseError::Refused(error) => ReadError::Sql(error),
            UseCaseError::Database(error) => ReadError::Database(error),
        }
    }
}
