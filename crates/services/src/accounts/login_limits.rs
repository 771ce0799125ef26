//! Limits on logins kept in the database, so that a flood of wrong ones can neither lock an
//! account for ever nor grow the security log without bound.
//!
//! Three layers, outside in:
//!
//! 1. [`super::login_limiter`] (in memory, per server): right passwords wait their turn, each
//!    client address has a small budget of failures.
//! 2. Lockout per name AND client address ([`locked_until`], [`count_failure`]), in the
//!    `login_failure_windows` table: five failures lock the name for that address only, so an
//!    attacker locks the name for the attacker, and its owner still logs in from their own
//!    address.
//! 3. The security log counts repeated failures ([`count_event`]): one `security_events` row per
//!    name, reason and fixed window whose `repeat_count` grows (the database lets only that
//!    column and `last_at` change, and only forwards); failures for names that have no account
//!    share one row per reason and window, under [`UNKNOWN_NAMES`]. An anonymous flood adds a
//!    bounded number of rows however long it lasts.

use adamviz_store::sql::Sql;
use std::{
    collections::HashSet,
    sync::{Condvar, Mutex},
};

use adamviz_store::{db::DbError, login_failures};
use chrono::{DateTime, Duration, Utc};

use super::{record_event, timestamp, SecurityEvent, LOCKOUT_WINDOW_MINUTES, MAX_FAILED_LOGINS};

/// The `account_name` of the security log's rows that count failures for names that have no
/// account (no account name can contain a space or parentheses).
pub const UNKNOWN_NAMES: &str = "(names without an account)";

/// The length of the fixed windows in which the security log counts repeated failures.
pub const LOG_WINDOW_MINUTES: i64 = 15;

/// One login at a time per name and client key in this process: the lockout check, the
/// password check and the failure count are one step for them (so parallel guesses cannot all
/// pass the check before any failure is counted), while logins of other names or from other
/// addresses go on in parallel.
pub struct NameGate {
    held: Mutex<HashSet<String>>,
    freed: Condvar,
}

/// Holds a name and client key of [`NameGate`] until dropped.
pub struct NameTurn<'a> {
    gate: &'a NameGate,
    key: String,
}

impl NameGate {
    /// The process's gate.
    pub fn global() -> &'static NameGate {
        static GATE: std::sync::LazyLock<NameGate> = std::sync::LazyLock::new(|| NameGate {
            held: Mutex::new(HashSet::new()),
            freed: Condvar::new(),
        });
        &GATE
    }

    /// Waits until no other login of `name` (any case) from `client` is in progress here.
    pub fn enter(&self, name: &str, client: &str) -> NameTurn<'_> {
        let key = format!("{}\n{client}", name.to_lowercase());
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while held.contains(&key) {
            held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        held.insert(key.clone());
        NameTurn { gate: self, key }
    }
}

impl Drop for NameTurn<'_> {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|p| p.into_inner());
        held.remove(&self.key);
        self.gate.freed.notify_all();
    }
}

/// The start of the fixed log window that holds `now`.
fn window_start(now: DateTime<Utc>) -> DateTime<Utc> {
    let length = LOG_WINDOW_MINUTES * 60;
    let seconds = now.timestamp();
    DateTime::from_timestamp(seconds - seconds.rem_euclid(length), 0).unwrap_or(now)
}

/// Counts one failed `event` (`login` or `lockout`) of `name` for `detail` at `now` in the
/// security log: the row of this name, reason and window grows by one, or is appended as the
/// window's first. `account_id` is `None` for a name without an account (counted under
/// [`UNKNOWN_NAMES`]).
pub fn count_event(
    connection: &impl Sql,
    event: &str,
    account_id: Option<i64>,
    name: &str,
    remote_addr: Option<&str>,
    detail: &str,
    now: DateTime<Utc>,
) -> Result<(), DbError> {
    let name = if account_id.is_some() {
        name
    } else {
        UNKNOWN_NAMES
    };
    let start = window_start(now);
    let end = start + Duration::minutes(LOG_WINDOW_MINUTES);
    let counted = login_failures::count_repeat(
        connection,
        event,
        name,
        detail,
        (&timestamp(start), &timestamp(end)),
        &timestamp(now),
    )?;
    if !counted {
        record_event(
            connection,
            &SecurityEvent {
                event,
                account_id,
                account_name: name,
                actor_id: None,
                actor_name: None,
                remote_addr,
                success: false,
                detail: Some(detail),
            },
            now,
        )?;
    }
    Ok(())
}

/// The end of the lockout of `name` for `client` in force at `now`, if any.
pub fn locked_until(
    connection: &impl Sql,
    name: &str,
    client: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbError> {
    login_failures::locked_until(connection, name, client, &timestamp(now))
}

/// Counts a failed login of `name` from `client` at `now` towards its lockout: the
/// [`MAX_FAILED_LOGINS`]th failure within [`LOCKOUT_WINDOW_MINUTES`] of the first locks the
/// name for this client for as long (counted as a `lockout` in the security log). Returns the
/// end of the lockout it started, if it did. Rows whose window and lockout are both over are
/// deleted here.
pub fn count_failure(
    connection: &impl Sql,
    account_id: Option<i64>,
    name: &str,
    client: &str,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbError> {
    let window = Duration::minutes(LOCKOUT_WINDOW_MINUTES);
    let (now_text, since) = (timestamp(now), timestamp(now - window));
    login_failures::forget_windows_over(connection, &since, &now_text)?;
    let current = login_failures::window(connection, name, client)?;
    let (start, failures) = match current {
        Some((start, failures)) if start > since => (start, failures + 1),
        _ => (now_text.clone(), 1),
    };
    if failures as usize >= MAX_FAILED_LOGINS {
        let until = timestamp(now + window);
        login_failures::lock(connection, name, client, &now_text, &until)?;
        count_event(
            connection,
            "lockout",
            account_id,
            name,
            remote_addr,
            &format!("{MAX_FAILED_LOGINS} failed logins"),
            now,
        )?;
        return Ok(Some(until));
    }
    login_failures::set_window(connection, name, client, &start, failures)?;
    Ok(None)
}

/// Forgets the failures of `name` from `client` (after a right password from there).
pub fn clear_failures(connection: &impl Sql, name: &str, client: &str) -> Result<(), DbError> {
    login_failures::clear(connection, name, client)
}
