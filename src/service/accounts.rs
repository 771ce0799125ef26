//! Accounts, passwords and logins as plain functions over a SQLite connection: creating,
//! listing, disabling and changing accounts, Argon2id password hashes, login with lockout, and
//! the append-only security log. The CLI, the server functions and the tests call these; none
//! of them knows HTTP. Time is a parameter, so lockout can be tested with a clock of the test's.

use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use crate::domain::account::{check_name, check_password, Account, Role};

/// Failed logins for one name within [`LOCKOUT_WINDOW_MINUTES`] that lock it.
pub const MAX_FAILED_LOGINS: usize = 5;
/// The window in which failed logins are counted, and how long a lockout lasts.
pub const LOCKOUT_WINDOW_MINUTES: i64 = 15;

/// The current time.
pub fn now() -> DateTime<Utc> {
    DateTime::<Utc>::from(std::time::SystemTime::now())
}

/// Canonical UTC text of `time` (as the ledger writes times: sortable as text).
pub fn timestamp(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Why an account operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The name breaks the naming rule.
    #[error("name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule.
        reason: String,
    },
    /// The password breaks the password rule.
    #[error("password: {0}")]
    WeakPassword(String),
    /// Another account has this name.
    #[error("there is already an account named {0:?}")]
    NameTaken(String),
    /// No account has this name.
    #[error("there is no account named {0:?}")]
    NoSuchAccount(String),
    /// An account needs at least one role.
    #[error("an account needs at least one role: author, reviewer or admin")]
    NoRole,
    /// The change would leave no active admin.
    #[error("{0:?} is the last active admin: make another account admin first")]
    LastAdmin(String),
    /// Hashing failed.
    #[error("the password could not be hashed: {0}")]
    Hash(String),
    /// The database refused.
    #[error(transparent)]
    Database(#[from] rusqlite::Error),
}

/// Why a login was refused. The messages never say whether the name exists.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Wrong name or password (or a disabled account).
    #[error("the name or the password is wrong")]
    Invalid,
    /// Too many failed logins for this name.
    #[error("too many failed logins for this name: it is locked for {LOCKOUT_WINDOW_MINUTES} minutes (until {until})")]
    Locked {
        /// Until when (canonical UTC).
        until: String,
    },
    /// The database refused.
    #[error(transparent)]
    Database(#[from] rusqlite::Error),
}

/// Argon2id passes. The crate's recommended parameters (19 MiB, 2 passes, 1 lane) take about
/// 21 ms per login on this project's 2-core machines (`adamviz-bench auth`); six passes over the
/// same memory bring that to the 50–250 ms aimed at (strong, and not a denial-of-service lever:
/// memory per login stays at 19 MiB).
pub const ARGON2_PASSES: u32 = 6;

/// The hasher: Argon2id, version 0x13, 19 MiB, [`ARGON2_PASSES`] passes, one lane.
fn hasher() -> Argon2<'static> {
    let params = argon2::Params::new(
        argon2::Params::DEFAULT_M_COST,
        ARGON2_PASSES,
        argon2::Params::DEFAULT_P_COST,
        None,
    )
    .expect("fixed Argon2 parameters are valid");
    Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
}

/// An Argon2id PHC string for `password`, with a random 16-byte salt of its own.
pub fn hash_password(password: &str) -> Result<String, AccountError> {
    hasher()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|err| AccountError::Hash(err.to_string()))
}

/// Whether `password` matches the PHC string `hash` (with the parameters the hash names).
pub fn password_matches(password: &str, hash: &str) -> bool {
    hasher().verify_password(password.as_bytes(), hash).is_ok()
}

/// A hash no password of a user matches, checked when a name has no account so that a login
/// takes as long whether the name exists or not.
fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| {
        hash_password(&format!("decoy-{:032x}", rand::random::<u128>()))
            .expect("hashing a fixed-length text succeeds")
    })
}

/// One security event.
pub struct SecurityEvent<'a> {
    /// `login`, `logout`, `lockout`, `account_created`, `roles_changed`, `password_changed`,
    /// `account_disabled`, `session_refused`.
    pub event: &'a str,
    /// The account concerned, when it exists.
    pub account_id: Option<i64>,
    /// Its name, as given.
    pub account_name: &'a str,
    /// Who acted, when not the account itself.
    pub actor_id: Option<i64>,
    /// The remote address of the request.
    pub remote_addr: Option<&'a str>,
    /// Success or failure.
    pub success: bool,
    /// What else a reviewer needs (never a password).
    pub detail: Option<&'a str>,
}

/// Appends `event` to the security log at `now`.
pub fn record_event(
    connection: &Connection,
    event: &SecurityEvent<'_>,
    now: DateTime<Utc>,
) -> Result<(), rusqlite::Error> {
    connection.execute(
        "INSERT INTO security_events
             (at, event, account_id, account_name, actor_id, remote_addr, outcome, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            timestamp(now),
            event.event,
            event.account_id,
            event.account_name,
            event.actor_id,
            event.remote_addr,
            if event.success { "success" } else { "failure" },
            event.detail,
        ],
    )?;
    Ok(())
}

fn roles_of(connection: &Connection, id: i64) -> Result<Vec<Role>, rusqlite::Error> {
    let mut statement =
        connection.prepare_cached("SELECT role FROM account_roles WHERE account_id = ?1")?;
    let mut roles: Vec<Role> = statement
        .query_map([id], |row| row.get::<_, String>(0))?
        .filter_map(|role| role.ok()?.parse().ok())
        .collect();
    roles.sort();
    Ok(roles)
}

fn account_from_row(
    connection: &Connection,
    row: (i64, String, bool, String),
) -> Result<Account, rusqlite::Error> {
    let (id, name, disabled, created_at) = row;
    Ok(Account {
        roles: roles_of(connection, id)?,
        id,
        name,
        disabled,
        created_at,
    })
}

/// The account named `name` (any case), with its password hash.
fn find_by_name(
    connection: &Connection,
    name: &str,
) -> Result<Option<(Account, String)>, rusqlite::Error> {
    let row = connection
        .query_row(
            "SELECT id, name, disabled, created_at, password_hash FROM accounts WHERE name = ?1",
            [name],
            |row| {
                Ok((
                    (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?),
                    row.get::<_, String>(4)?,
                ))
            },
        )
        .optional()?;
    row.map(|(facts, hash)| Ok((account_from_row(connection, facts)?, hash)))
        .transpose()
}

/// The account with `id`, if it exists.
pub fn account_by_id(connection: &Connection, id: i64) -> Result<Option<Account>, rusqlite::Error> {
    let row = connection
        .query_row(
            "SELECT id, name, disabled, created_at FROM accounts WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()?;
    row.map(|facts| account_from_row(connection, facts))
        .transpose()
}

/// How many accounts exist (disabled ones included).
pub fn account_count(connection: &Connection) -> Result<usize, rusqlite::Error> {
    connection.query_row("SELECT count(*) FROM accounts", [], |row| {
        row.get::<_, i64>(0).map(|n| n as usize)
    })
}

/// Every account, by name.
pub fn list_accounts(connection: &Connection) -> Result<Vec<Account>, rusqlite::Error> {
    let mut statement = connection.prepare(
        "SELECT id, name, disabled, created_at FROM accounts ORDER BY name COLLATE NOCASE",
    )?;
    let rows: Vec<(i64, String, bool, String)> = statement
        .query_map([], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|row| account_from_row(connection, row))
        .collect()
}

fn sorted_roles(roles: &[Role]) -> Result<Vec<Role>, AccountError> {
    let mut roles = roles.to_vec();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        return Err(AccountError::NoRole);
    }
    Ok(roles)
}

/// Creates an account (in one transaction with its security event). `actor` is the admin who
/// created it (`None` for the CLI and the first-start setup).
pub fn create_account(
    connection: &mut Connection,
    name: &str,
    password: &str,
    roles: &[Role],
    actor: Option<i64>,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    check_name(name).map_err(|reason| AccountError::InvalidName {
        name: name.to_owned(),
        reason,
    })?;
    check_password(password).map_err(AccountError::WeakPassword)?;
    let roles = sorted_roles(roles)?;
    let hash = hash_password(password)?;
    let transaction = connection.transaction()?;
    if find_by_name(&transaction, name)?.is_some() {
        return Err(AccountError::NameTaken(name.to_owned()));
    }
    transaction.execute(
        "INSERT INTO accounts (name, password_hash, created_at) VALUES (?1, ?2, ?3)",
        params![name, hash, timestamp(now)],
    )?;
    let id = transaction.last_insert_rowid();
    for role in &roles {
        transaction.execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, ?2)",
            params![id, role.as_str()],
        )?;
    }
    let detail = roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(",");
    record_event(
        &transaction,
        &SecurityEvent {
            event: "account_created",
            account_id: Some(id),
            account_name: name,
            actor_id: actor,
            remote_addr,
            success: true,
            detail: Some(&format!("roles {detail}")),
        },
        now,
    )?;
    let account = account_by_id(&transaction, id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
    transaction.commit()?;
    Ok(account)
}

/// Refuses to disable or demote `account` when it is the only active admin.
fn refuse_losing_the_last_admin(
    connection: &Connection,
    account: &Account,
) -> Result<(), AccountError> {
    if !account.has(Role::Admin) || account.disabled {
        return Ok(());
    }
    let others: i64 = connection.query_row(
        "SELECT count(*) FROM accounts a JOIN account_roles r ON r.account_id = a.id
         WHERE r.role = 'admin' AND a.disabled = 0 AND a.id != ?1",
        [account.id],
        |row| row.get(0),
    )?;
    if others == 0 {
        return Err(AccountError::LastAdmin(account.name.clone()));
    }
    Ok(())
}

fn existing(connection: &Connection, name: &str) -> Result<Account, AccountError> {
    find_by_name(connection, name)?
        .map(|(account, _)| account)
        .ok_or_else(|| AccountError::NoSuchAccount(name.to_owned()))
}

/// Disables an account: it cannot log in, and its sessions are refused at their next request
/// (and deleted here).
pub fn disable_account(
    connection: &mut Connection,
    name: &str,
    actor: Option<i64>,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    refuse_losing_the_last_admin(&transaction, &account)?;
    if !account.disabled {
        transaction.execute(
            "UPDATE accounts SET disabled = 1 WHERE id = ?1",
            [account.id],
        )?;
    }
    // Sessions hold the account id in their JSON record.
    transaction.execute(
        "DELETE FROM sessions WHERE json_extract(data, '$.account_id') = ?1",
        [account.id],
    )?;
    record_event(
        &transaction,
        &SecurityEvent {
            event: "account_disabled",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: actor,
            remote_addr,
            success: true,
            detail: None,
        },
        now,
    )?;
    let account = existing(&transaction, name)?;
    transaction.commit()?;
    Ok(account)
}

/// Replaces an account's roles.
pub fn set_roles(
    connection: &mut Connection,
    name: &str,
    roles: &[Role],
    actor: Option<i64>,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let roles = sorted_roles(roles)?;
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    if !roles.contains(&Role::Admin) {
        refuse_losing_the_last_admin(&transaction, &account)?;
    }
    transaction.execute(
        "DELETE FROM account_roles WHERE account_id = ?1",
        [account.id],
    )?;
    for role in &roles {
        transaction.execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, ?2)",
            params![account.id, role.as_str()],
        )?;
    }
    let text = |roles: &[Role]| {
        roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    record_event(
        &transaction,
        &SecurityEvent {
            event: "roles_changed",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: actor,
            remote_addr,
            success: true,
            detail: Some(&format!("{} -> {}", text(&account.roles), text(&roles))),
        },
        now,
    )?;
    let account = existing(&transaction, name)?;
    transaction.commit()?;
    Ok(account)
}

/// Sets a new password.
pub fn set_password(
    connection: &mut Connection,
    name: &str,
    password: &str,
    actor: Option<i64>,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    check_password(password).map_err(AccountError::WeakPassword)?;
    let hash = hash_password(password)?;
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    transaction.execute(
        "UPDATE accounts SET password_hash = ?1 WHERE id = ?2",
        params![hash, account.id],
    )?;
    record_event(
        &transaction,
        &SecurityEvent {
            event: "password_changed",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: actor,
            remote_addr,
            success: true,
            detail: None,
        },
        now,
    )?;
    transaction.commit()?;
    Ok(account)
}

/// The end of the lockout of `name` in force at `now`, if any.
fn locked_until(
    connection: &Connection,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, rusqlite::Error> {
    let since = timestamp(now - Duration::minutes(LOCKOUT_WINDOW_MINUTES));
    let last: Option<String> = connection.query_row(
        "SELECT max(at) FROM security_events
         WHERE event = 'lockout' AND account_name = ?1 COLLATE NOCASE AND at > ?2",
        params![name, since],
        |row| row.get(0),
    )?;
    Ok(last.and_then(|at| {
        let at = DateTime::parse_from_rfc3339(&at).ok()?.with_timezone(&Utc);
        Some(timestamp(at + Duration::minutes(LOCKOUT_WINDOW_MINUTES)))
    }))
}

/// Failed logins of `name` counted towards a lockout: within the window, after its last
/// success or lockout.
fn counted_failures(
    connection: &Connection,
    name: &str,
    now: DateTime<Utc>,
) -> Result<usize, rusqlite::Error> {
    let since = timestamp(now - Duration::minutes(LOCKOUT_WINDOW_MINUTES));
    connection.query_row(
        "SELECT count(*) FROM security_events
         WHERE event = 'login' AND outcome = 'failure' AND detail IS NOT 'locked'
           AND account_name = ?1 COLLATE NOCASE AND at > ?2
           AND at > coalesce((SELECT max(at) FROM security_events
                              WHERE account_name = ?1 COLLATE NOCASE
                                AND (event = 'lockout'
                                     OR (event = 'login' AND outcome = 'success'))), '')",
        params![name, since],
        |row| row.get::<_, i64>(0).map(|n| n as usize),
    )
}

/// Checks `name` and `password` at `now`: the account on success. Every attempt is a security
/// event; the fifth failure within the window locks the name (whether or not it exists, so the
/// answer never tells) for [`LOCKOUT_WINDOW_MINUTES`].
pub fn login(
    connection: &Connection,
    name: &str,
    password: &str,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, LoginError> {
    let event = |account: Option<&Account>, event: &str, success: bool, detail: Option<&str>| {
        record_event(
            connection,
            &SecurityEvent {
                event,
                account_id: account.map(|a| a.id),
                account_name: name,
                actor_id: None,
                remote_addr,
                success,
                detail,
            },
            now,
        )
    };
    // A name no account can have is refused before anything is written (a megabyte of name
    // must not become a row); it cannot exist, so the answer reveals nothing.
    if check_name(name).is_err() {
        return Err(LoginError::Invalid);
    }
    // One login at a time in this process: the lockout check, the hash and the failure record
    // are one step, so parallel guesses cannot pass the check before any failure is counted,
    // and logins never hold more than one database connection.
    static GATE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _gate = GATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(until) = locked_until(connection, name, now)? {
        event(None, "login", false, Some("locked"))?;
        return Err(LoginError::Locked { until });
    }
    let found = find_by_name(connection, name)?;
    // The same work whether or not the name exists.
    let hash = found
        .as_ref()
        .map_or(decoy_hash(), |(_, hash)| hash.as_str());
    let matches = password_matches(password, hash);
    match found {
        Some((account, _)) if matches && !account.disabled => {
            event(Some(&account), "login", true, None)?;
            Ok(account)
        }
        found => {
            let account = found.map(|(account, _)| account);
            let detail = match &account {
                Some(account) if account.disabled && matches => "disabled",
                Some(_) => "wrong password",
                None => "unknown name",
            };
            event(account.as_ref(), "login", false, Some(detail))?;
            if counted_failures(connection, name, now)? >= MAX_FAILED_LOGINS {
                event(account.as_ref(), "lockout", false, Some("5 failed logins"))?;
                let until = timestamp(now + Duration::minutes(LOCKOUT_WINDOW_MINUTES));
                return Err(LoginError::Locked { until });
            }
            Err(LoginError::Invalid)
        }
    }
}

/// The account a session names, if it may still act: it exists and is not disabled.
pub fn active_account(
    connection: &Connection,
    id: i64,
) -> Result<Option<Account>, rusqlite::Error> {
    Ok(account_by_id(connection, id)?.filter(|account| !account.disabled))
}
