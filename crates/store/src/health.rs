//! The health check's question to the database: does it answer a trivial statement.

use crate::sql::{Sql, SqlError};

/// Asks the database `SELECT 1`.
pub fn ping(connection: &impl Sql) -> Result<(), SqlError> {
    connection.query_one("SELECT 1", &[]).map(|_| ())
}
