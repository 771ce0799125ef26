//! The rows of the `sessions` table (SQLite or PostgreSQL): each session's data as opaque bytes
//! and its expiry as Unix seconds. The store knows rows, not cookies: the session layer over
//! them is the server's (`adamviz-server`'s `sessions`).

use crate::sql::{Dialect, Sql, SqlError};
use crate::sql_params;

/// Stores a new session unless its id is taken; whether it was stored.
pub fn insert_session(
    connection: &impl Sql,
    id: &str,
    data: Vec<u8>,
    expiry_unix: i64,
) -> Result<bool, SqlError> {
    Ok(connection.execute(
        "INSERT INTO sessions (id, data, expiry_unix) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        sql_params![id, data, expiry_unix],
    )? == 1)
}

/// Updates a stored session (one deleted meanwhile stays deleted).
pub fn update_session(
    connection: &impl Sql,
    id: &str,
    data: Vec<u8>,
    expiry_unix: i64,
) -> Result<(), SqlError> {
    connection.execute(
        "UPDATE sessions SET data = ?2, expiry_unix = ?3 WHERE id = ?1",
        sql_params![id, data, expiry_unix],
    )?;
    Ok(())
}

/// A session's data and expiry, unless it expired by `now_unix`.
pub fn load_session(
    connection: &impl Sql,
    id: &str,
    now_unix: i64,
) -> Result<Option<(Vec<u8>, i64)>, SqlError> {
    connection
        .query_opt(
            "SELECT data, expiry_unix FROM sessions WHERE id = ?1 AND expiry_unix > ?2",
            sql_params![id, now_unix],
        )?
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .transpose()
}

/// Deletes a session.
pub fn delete_session(connection: &impl Sql, id: &str) -> Result<(), SqlError> {
    connection.execute("DELETE FROM sessions WHERE id = ?1", sql_params![id])?;
    Ok(())
}

/// Deletes the sessions expired by `now_unix`.
pub fn delete_expired_sessions(connection: &impl Sql, now_unix: i64) -> Result<(), SqlError> {
    connection.execute(
        "DELETE FROM sessions WHERE expiry_unix <= ?1",
        sql_params![now_unix],
    )?;
    Ok(())
}

/// Whether session `id` is stored and unexpired (a logout or a disabled account deletes it).
pub fn session_is_stored(connection: &impl Sql, id: &str) -> Result<bool, SqlError> {
    let now = match connection.dialect() {
        Dialect::Sqlite => "unixepoch()",
        Dialect::Postgres => "CAST(extract(epoch FROM now()) AS BIGINT)",
    };
    connection
        .query_one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND expiry_unix > {now})"
            ),
            sql_params![id],
        )?
        .get(0)
}
