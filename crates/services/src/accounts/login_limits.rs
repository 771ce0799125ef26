//! Limits on logins, so that a flood of wrong ones can neither stop the right login of someone
//! else, nor lock an account for ever, nor grow the security log without bound.
//!
//! Three layers, outside in:
//!
//! 1. [`LoginLimiter`] (in memory, per server): each client address (an IPv6 address counts by
//!    its /64) may have a few logins in progress and a small budget of failures that refills
//!    slowly (a right password costs nothing); the whole server checks at most a few passwords
//!    at once, so Argon2 cannot eat the machine. What exceeds a limit is refused at once (429)
//!    rather than queued: a queue of two hundred hashes would make the next right login wait
//!    for all of them.
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
    collections::{HashMap, HashSet},
    net::IpAddr,
    sync::{Arc, Condvar, Mutex},
    time::{Duration as StdDuration, Instant},
};

use adamviz_store::{db::DbError, login_failures};
use chrono::{DateTime, Duration, Utc};

use super::{record_event, timestamp, SecurityEvent, LOCKOUT_WINDOW_MINUTES, MAX_FAILED_LOGINS};

/// The `account_name` of the security log's rows that count failures for names that have no
/// account (no account name can contain a space or parentheses).
pub const UNKNOWN_NAMES: &str = "(names without an account)";

/// The length of the fixed windows in which the security log counts repeated failures.
pub const LOG_WINDOW_MINUTES: i64 = 15;

/// How many logins, and how fast, the server lets through.
#[derive(Debug, Clone, Copy)]
pub struct LoginLimits {
    /// Failures one client address may make in a burst.
    pub burst: u32,
    /// Then one more failure per this long.
    pub refill: StdDuration,
    /// Logins of one client address in progress at once.
    pub per_client_in_flight: usize,
    /// Passwords the whole server checks at once.
    pub hashing: usize,
}

impl Default for LoginLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            burst: 10,
            refill: StdDuration::from_secs(6),
            per_client_in_flight: 2,
            // More than one client's share, so that a single flooding address always leaves
            // room for others.
            hashing: (2 * cores).max(4),
        }
    }
}

/// Why a login was refused before its password was looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginRefused {
    /// The client address has used its failure budget.
    #[error("too many failed logins from your address: try again in {retry_after_seconds} s")]
    TooManyFailures {
        /// When the next attempt is allowed.
        retry_after_seconds: u64,
    },
    /// The client address has logins in progress already.
    #[error("a login from your address is already being checked: try again in a moment")]
    ClientBusy,
    /// The server is checking as many passwords as it may.
    #[error("the server is checking other logins: try again in a moment")]
    ServerBusy,
}

impl LoginRefused {
    /// The `Retry-After` of the refusal, in seconds.
    pub fn retry_after_seconds(&self) -> u64 {
        match self {
            LoginRefused::TooManyFailures {
                retry_after_seconds,
            } => *retry_after_seconds,
            LoginRefused::ClientBusy | LoginRefused::ServerBusy => 1,
        }
    }
}

#[derive(Debug)]
struct Client {
    tokens: f64,
    refilled: Instant,
    in_flight: usize,
}

#[derive(Debug, Default)]
struct State {
    clients: HashMap<String, Client>,
    hashing: usize,
}

/// The server's login limits in memory ([`LoginLimits`]): one per router.
#[derive(Debug)]
pub struct LoginLimiter {
    limits: LoginLimits,
    state: Mutex<State>,
}

/// Clients kept before idle ones (no login in progress, budget full) are forgotten.
const CLIENTS_KEPT: usize = 4096;

impl LoginLimiter {
    /// A limiter with `limits`.
    pub fn new(limits: LoginLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Lets a login of `client` ([`client_key`]) go ahead at `now`, or refuses it at once. The
    /// ticket holds its place until dropped (after the password check, wherever it runs).
    pub fn admit(
        self: &Arc<Self>,
        client: &str,
        now: Instant,
    ) -> Result<LoginTicket, LoginRefused> {
        let limits = self.limits;
        let mut state = self.state();
        if state.clients.len() > CLIENTS_KEPT {
            let burst = f64::from(limits.burst);
            let refill = limits.refill.as_secs_f64();
            state.clients.retain(|_, c| {
                c.in_flight > 0
                    || c.tokens + now.duration_since(c.refilled).as_secs_f64() / refill < burst
            });
        }
        let busy = state.hashing >= limits.hashing;
        let entry = state.clients.entry(client.to_owned()).or_insert(Client {
            tokens: f64::from(limits.burst),
            refilled: now,
            in_flight: 0,
        });
        let gained = now.duration_since(entry.refilled).as_secs_f64() / limits.refill.as_secs_f64();
        entry.tokens = (entry.tokens + gained).min(f64::from(limits.burst));
        entry.refilled = now;
        if entry.tokens < 1.0 {
            let wait = (1.0 - entry.tokens) * limits.refill.as_secs_f64();
            return Err(LoginRefused::TooManyFailures {
                retry_after_seconds: wait.ceil().max(1.0) as u64,
            });
        }
        if entry.in_flight >= limits.per_client_in_flight {
            return Err(LoginRefused::ClientBusy);
        }
        if busy {
            return Err(LoginRefused::ServerBusy);
        }
        entry.tokens -= 1.0;
        entry.in_flight += 1;
        state.hashing += 1;
        Ok(LoginTicket {
            limiter: Arc::clone(self),
            client: client.to_owned(),
        })
    }
}

/// A login let through by [`LoginLimiter::admit`]; dropping it frees its place.
#[derive(Debug)]
pub struct LoginTicket {
    limiter: Arc<LoginLimiter>,
    client: String,
}

impl LoginTicket {
    /// The login succeeded: it does not count against the address's failure budget.
    pub fn succeeded(&self) {
        let burst = f64::from(self.limiter.limits.burst);
        let mut state = self.limiter.state();
        if let Some(client) = state.clients.get_mut(&self.client) {
            client.tokens = (client.tokens + 1.0).min(burst);
        }
    }
}

impl Drop for LoginTicket {
    fn drop(&mut self) {
        let mut state = self.limiter.state();
        state.hashing = state.hashing.saturating_sub(1);
        if let Some(client) = state.clients.get_mut(&self.client) {
            client.in_flight = client.in_flight.saturating_sub(1);
        }
    }
}

/// The key a client address is limited and locked out by: the address itself, an IPv6
/// address by its /64 (one machine often holds a whole /64), `""` when unknown.
pub fn client_key(remote_addr: Option<&str>) -> String {
    match remote_addr.map(|a| a.parse::<IpAddr>()) {
        Some(Ok(IpAddr::V6(v6))) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Some(Ok(IpAddr::V6(v6))) => v6
            .to_ipv4_mapped()
            .map(|v4| v4.to_string())
            .unwrap_or_default(),
        Some(Ok(IpAddr::V4(v4))) => v4.to_string(),
        // Not an address (a test's label, say): itself, bounded.
        Some(Err(_)) => remote_addr.unwrap_or_default().chars().take(64).collect(),
        None => String::new(),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter() -> Arc<LoginLimiter> {
        LoginLimiter::new(LoginLimits {
            burst: 3,
            refill: StdDuration::from_secs(10),
            per_client_in_flight: 1,
            hashing: 2,
        })
    }

    #[test]
    fn a_flooding_address_is_refused_at_once_and_leaves_room_for_others() {
        let limiter = limiter();
        let now = Instant::now();
        let first = limiter.admit("10.0.0.2", now).unwrap();
        assert_eq!(
            limiter.admit("10.0.0.2", now).unwrap_err(),
            LoginRefused::ClientBusy
        );
        let other = limiter.admit("10.0.0.3", now).unwrap();
        assert_eq!(
            limiter.admit("10.0.0.4", now).unwrap_err(),
            LoginRefused::ServerBusy
        );
        drop((first, other));
        // The failure budget: three, then one per ten seconds; a success gives its token back.
        for _ in 0..2 {
            drop(limiter.admit("10.0.0.2", now).unwrap());
        }
        let refused = limiter.admit("10.0.0.2", now).unwrap_err();
        assert_eq!(
            refused,
            LoginRefused::TooManyFailures {
                retry_after_seconds: 10
            }
        );
        let later = now + StdDuration::from_secs(10);
        let ticket = limiter.admit("10.0.0.2", later).unwrap();
        ticket.succeeded();
        drop(ticket);
        drop(limiter.admit("10.0.0.2", later).unwrap());
    }

    #[test]
    fn client_keys_are_addresses_and_ipv6_counts_by_its_64() {
        assert_eq!(client_key(Some("127.0.0.2")), "127.0.0.2");
        assert_eq!(
            client_key(Some("2001:db8:1:2:aaaa::1")),
            client_key(Some("2001:db8:1:2:bbbb::2"))
        );
        assert_eq!(client_key(Some("::ffff:10.0.0.1")), "10.0.0.1");
        assert_eq!(client_key(None), "");
    }
}
