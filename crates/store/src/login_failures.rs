//! The SQL of login throttling (`adamviz_services::accounts::login_limits` holds the
//! rules): the failure windows per name and client, and the counted rows of the security log
//! (one row per name, reason and window, its `repeat_count` growing).

use crate::sql::{Dialect, Sql, SqlError};
use crate::sql_params;

/// Adds one to the latest failure row of `event` for `name` and `detail` inside the window
/// `[start, end)`, as seen at `now`; whether there was such a row.
pub fn count_repeat(
    connection: &impl Sql,
    event: &str,
    name: &str,
    detail: &str,
    (start, end): (&str, &str),
    now: &str,
) -> Result<bool, SqlError> {
    // (The names compare without case: SQLite's NOCASE, PostgreSQL's CITEXT column.)
    let sql = match connection.dialect() {
        Dialect::Sqlite => {
            "UPDATE security_events
             SET repeat_count = repeat_count + 1, last_at = max(coalesce(last_at, at), ?6)
             WHERE seq = (SELECT seq FROM security_events
                          WHERE account_name = ?1 COLLATE NOCASE AND at >= ?4 AND at < ?5
                            AND event = ?2 AND outcome = 'failure' AND detail IS ?3
                          ORDER BY seq DESC LIMIT 1)"
        }
        Dialect::Postgres => {
            "UPDATE security_events
             SET repeat_count = repeat_count + 1,
                 last_at = greatest(coalesce(last_at, at), CAST(?6 AS TEXT))
             WHERE seq = (SELECT seq FROM security_events
                          WHERE account_name = ?1 AND at >= ?4 AND at < ?5
                            AND event = ?2 AND outcome = 'failure'
                            AND detail IS NOT DISTINCT FROM CAST(?3 AS TEXT)
                          ORDER BY seq DESC LIMIT 1)"
        }
    };
    let counted = connection.execute(sql, sql_params![name, event, detail, start, end, now])?;
    Ok(counted > 0)
}

/// The end of the lockout of `name` for `client` later than `now`, if any.
pub fn locked_until(
    connection: &impl Sql,
    name: &str,
    client: &str,
    now: &str,
) -> Result<Option<String>, SqlError> {
    connection
        .query_opt(
            "SELECT locked_until FROM login_failure_windows
             WHERE account_name = ?1 AND client = ?2 AND locked_until > ?3",
            sql_params![name, client, now],
        )?
        .map(|row| row.get(0))
        .transpose()
}

/// Deletes the windows that started at or before `since` and whose lockout is over at `now`.
pub fn forget_windows_over(connection: &impl Sql, since: &str, now: &str) -> Result<(), SqlError> {
    connection.execute(
        "DELETE FROM login_failure_windows
         WHERE window_start <= ?1 AND coalesce(locked_until, '') <= ?2",
        sql_params![since, now],
    )?;
    Ok(())
}

/// The window of `name` and `client`: when it started and its failures.
pub fn window(
    connection: &impl Sql,
    name: &str,
    client: &str,
) -> Result<Option<(String, i64)>, SqlError> {
    connection
        .query_opt(
            "SELECT window_start, failures FROM login_failure_windows
             WHERE account_name = ?1 AND client = ?2",
            sql_params![name, client],
        )?
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .transpose()
}

/// Locks `name` for `client` from `now` until `until` (the failures start again from zero).
pub fn lock(
    connection: &impl Sql,
    name: &str,
    client: &str,
    now: &str,
    until: &str,
) -> Result<(), SqlError> {
    connection.execute(
        "INSERT INTO login_failure_windows (account_name, client, window_start, failures, locked_until)
         VALUES (?1, ?2, ?3, 0, ?4)
         ON CONFLICT (account_name, client) DO UPDATE
         SET window_start = excluded.window_start, failures = 0,
             locked_until = excluded.locked_until",
        sql_params![name, client, now, until],
    )?;
    Ok(())
}

/// Sets the window of `name` and `client`: started at `start`, `failures` so far.
pub fn set_window(
    connection: &impl Sql,
    name: &str,
    client: &str,
    start: &str,
    failures: i64,
) -> Result<(), SqlError> {
    connection.execute(
        "INSERT INTO login_failure_windows (account_name, client, window_start, failures)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (account_name, client) DO UPDATE
         SET window_start = excluded.window_start, failures = excluded.failures",
        sql_params![name, client, start, failures],
    )?;
    Ok(())
}

/// Forgets the failures of `name` from `client`.
pub fn clear(connection: &impl Sql, name: &str, client: &str) -> Result<(), SqlError> {
    connection.execute(
        "DELETE FROM login_failure_windows WHERE account_name = ?1 AND client = ?2",
        sql_params![name, client],
    )?;
    Ok(())
}
