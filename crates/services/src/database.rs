//! Database work off the async executor: a use case's statements run on a pooled connection on
//! a blocking thread, their failures as a [`ReadError`].

use adamviz_store::db::{Database, DatabaseError};

use crate::error::ReadError;

/// Runs `work` on a pooled connection off the async executor.
pub async fn on_database<T: Send + 'static, E: Into<ReadError> + Send + 'static>(
    database: &Database,
    work: impl FnOnce(&mut adamviz_store::db::Connection) -> Result<T, E> + Send + 'static,
) -> Result<T, ReadError> {
    database
        .call(move |connection| Ok::<_, DatabaseError>(work(connection).map_err(Into::into)))
        .await?
}
