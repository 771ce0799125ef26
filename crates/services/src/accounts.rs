//! Accounts, passwords and logins as plain functions over a SQLite connection: creating,
//! listing, disabling and changing accounts, Argon2id password hashes, login with lockout, and
//! the append-only security log. The CLI, the server functions and the tests call these; none
//! of them knows HTTP. Time is a parameter, so lockout can be tested with a clock of the test's.

use adamviz_store::sql::Sql;
use adamviz_store::{
    accounts::PasswordColumns,
    db::{Connection, DbError},
};
use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Duration, Utc};

use adamviz_model::account::{
    check_duties, check_name, check_password, Account, AccountRuleError, Role,
};

/// How long a password set by an administrator works before its owner replaces it, unless the
/// server or the command line is told otherwise.
pub const DEFAULT_TEMPORARY_PASSWORD_HOURS: i64 = 72;

/// Who set a password: its owner (the first-start setup, the Change password page), or someone
/// else, which makes it temporary: it must be replaced by the owner's own at the next login, and
/// stops working at `expires_at`. An administrator therefore never knows a password that signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordOrigin {
    /// The account's owner chose it.
    ChosenByOwner,
    /// Someone else set it; it works until `expires_at`, and only to choose a new one.
    Temporary {
        /// When it stops working.
        expires_at: DateTime<Utc>,
    },
}

impl PasswordOrigin {
    /// A temporary password set at `now` that works for `hours`.
    pub fn temporary_for(now: DateTime<Utc>, hours: i64) -> Self {
        Self::Temporary {
            expires_at: now + Duration::hours(hours),
        }
    }
}

/// Who changed an account, as the security log names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator {
    /// The acting account, for changes made through the web.
    pub id: Option<i64>,
    /// Its name, `command line: <operating-system user>` or `first-start setup`.
    pub name: String,
}

impl Operator {
    /// A logged-in account (an administrator, or the owner).
    pub fn account(account: &Account) -> Self {
        Self {
            id: Some(account.id),
            name: account.name.clone(),
        }
    }

    /// The operating-system user running this command line (from the real uid).
    pub fn command_line() -> Self {
        Self {
            id: None,
            name: format!(
                "command line: {}",
                adamviz_evidence::actor::real_user_name()
            ),
        }
    }

    /// The first-start setup (the one-time link).
    pub fn setup() -> Self {
        Self {
            id: None,
            name: "first-start setup".to_owned(),
        }
    }
}

/// Failed logins for one name from one client address within [`LOCKOUT_WINDOW_MINUTES`] that
/// lock it for that address.
pub const MAX_FAILED_LOGINS: usize = 5;
/// The window in which failed logins are counted, and how long a lockout lasts.
pub const LOCKOUT_WINDOW_MINUTES: i64 = 15;

/// The clock the account rules use (re-exported for the commands and the tests).
pub use crate::clock::{now, timestamp};

/// Why an account operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The name breaks the naming rule.
    #[error("name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule.
        reason: AccountRuleError,
    },
    /// The password breaks the password rule.
    #[error("password: {0}")]
    WeakPassword(AccountRuleError),
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
    /// Separation of duties: admin with author or reviewer.
    #[error("{0}")]
    Duties(AccountRuleError),
    /// The setup link creates the first account only, and one exists.
    #[error("the setup is done: an account exists already")]
    SetupDone,
    /// Hashing failed.
    #[error("the password could not be hashed: {0}")]
    Hash(#[source] argon2::password_hash::Error),
    /// The database refused.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// Why a login was refused. The messages never say whether the name exists.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Wrong name or password (or a disabled account).
    #[error("the name or the password is wrong")]
    Invalid,
    /// The right temporary password, too late: an administrator must set a new one.
    #[error("your temporary password expired at {at}: ask an administrator to set a new one")]
    TemporaryPasswordExpired {
        /// When it expired (canonical UTC).
        at: String,
    },
    /// Too many failed logins for this name.
    #[error("too many failed logins for this name: it is locked for {LOCKOUT_WINDOW_MINUTES} minutes (until {until})")]
    Locked {
        /// Until when (canonical UTC).
        until: String,
    },
    /// The database refused.
    #[error(transparent)]
    Database(#[from] DbError),
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
        .map_err(AccountError::Hash)
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

pub use adamviz_store::accounts::{
    account_by_id, account_count, list_accounts, role_grant_at, RoleGrant, SecurityEvent,
};
use adamviz_store::accounts::{end_sessions, find_by_name};
/// Whether session `id` is still stored and unexpired (the event stream re-checks it: a logout
/// or a disabled account deletes it).
pub async fn session_still_stored(
    database: &adamviz_store::db::Database,
    id: String,
) -> Result<bool, super::error::ReadError> {
    crate::database::on_database(database, move |connection| {
        adamviz_store::sessions::session_is_stored(connection, &id)
    })
    .await
}

/// Appends `event` to the security log at `now`.
pub fn record_event(
    connection: &impl Sql,
    event: &SecurityEvent<'_>,
    now: DateTime<Utc>,
) -> Result<(), DbError> {
    adamviz_store::accounts::record_event(connection, event, &timestamp(now))
}

fn sorted_roles(roles: &[Role]) -> Result<Vec<Role>, AccountError> {
    let mut roles = roles.to_vec();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        return Err(AccountError::NoRole);
    }
    check_duties(&roles).map_err(AccountError::Duties)?;
    Ok(roles)
}

/// The password columns for a password set at `now` with `origin`: temporary, expiry, set at,
/// set by the owner at.
fn password_columns(
    origin: PasswordOrigin,
    now: DateTime<Utc>,
) -> (bool, Option<String>, String, Option<String>) {
    match origin {
        PasswordOrigin::ChosenByOwner => (false, None, timestamp(now), Some(timestamp(now))),
        PasswordOrigin::Temporary { expires_at } => {
            (true, Some(timestamp(expires_at)), timestamp(now), None)
        }
    }
}

/// Grants (`granted`) or revokes (`revoked`) `role` of account `id` by `by` at `now` (the role
/// history row first: the database refuses a role change without it).
fn change_role(
    connection: &impl Sql,
    id: i64,
    role: Role,
    change: &str,
    by: &Operator,
    now: DateTime<Utc>,
) -> Result<(), DbError> {
    adamviz_store::accounts::change_role(
        connection,
        id,
        role,
        change,
        (by.id, &by.name),
        &timestamp(now),
    )
}

/// Creates an account (in one transaction with its role grants and its security event). A
/// password set by someone else than the owner is [`PasswordOrigin::Temporary`].
#[allow(clippy::too_many_arguments)]
pub fn create_account(
    connection: &mut Connection,
    name: &str,
    password: &str,
    roles: &[Role],
    origin: PasswordOrigin,
    by: &Operator,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let account = NewAccount {
        name,
        password,
        roles,
        origin,
    };
    insert_account(connection, &account, by, remote_addr, now, false)
}

/// Creates the first administrator through the setup link: refused with
/// [`AccountError::SetupDone`] once any account exists, checked in the transaction that creates
/// it (so an account made meanwhile by `adamviz users add` closes the link too).
pub fn create_first_admin(
    connection: &mut Connection,
    name: &str,
    password: &str,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let account = NewAccount {
        name,
        password,
        roles: &[Role::Admin],
        origin: PasswordOrigin::ChosenByOwner,
    };
    insert_account(
        connection,
        &account,
        &Operator::setup(),
        remote_addr,
        now,
        true,
    )
}

/// What a new account is given.
struct NewAccount<'a> {
    name: &'a str,
    password: &'a str,
    roles: &'a [Role],
    origin: PasswordOrigin,
}

/// [`create_account`], and when `only_first` only while no account exists.
fn insert_account(
    connection: &mut Connection,
    new: &NewAccount<'_>,
    by: &Operator,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
    only_first: bool,
) -> Result<Account, AccountError> {
    let NewAccount {
        name,
        password,
        roles,
        origin,
    } = *new;
    check_name(name).map_err(|reason| AccountError::InvalidName {
        name: name.to_owned(),
        reason,
    })?;
    check_password(password).map_err(AccountError::WeakPassword)?;
    let roles = sorted_roles(roles)?;
    let hash = hash_password(password)?;
    let transaction = connection.transaction()?;
    // The setup link's first admin: only while there is no account, checked in the
    // transaction that creates it (an account made meanwhile by `adamviz users add` wins).
    if only_first && account_count(&transaction)? > 0 {
        return Err(AccountError::SetupDone);
    }
    if find_by_name(&transaction, name)?.is_some() {
        return Err(AccountError::NameTaken(name.to_owned()));
    }
    let (temporary, expires_at, set_at, set_by_owner_at) = password_columns(origin, now);
    let id = adamviz_store::accounts::insert_account(
        &transaction,
        name,
        &hash,
        &timestamp(now),
        &PasswordColumns {
            temporary,
            expires_at,
            set_at,
            set_by_owner_at,
        },
    )?;
    for role in &roles {
        change_role(&transaction, id, *role, "granted", by, now)?;
    }
    let detail = format!(
        "roles {}; password {}",
        roles_text(&roles),
        password_text(origin)
    );
    record_event(
        &transaction,
        &SecurityEvent {
            event: "account_created",
            account_id: Some(id),
            account_name: name,
            actor_id: by.id,
            actor_name: Some(&by.name),
            remote_addr,
            success: true,
            detail: Some(&detail),
        },
        now,
    )?;
    let account = account_by_id(&transaction, id)?.ok_or(DbError::NoRows)?;
    transaction.commit()?;
    Ok(account)
}

fn roles_text(roles: &[Role]) -> String {
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn password_text(origin: PasswordOrigin) -> String {
    match origin {
        PasswordOrigin::ChosenByOwner => "chosen by its owner".to_owned(),
        PasswordOrigin::Temporary { expires_at } => {
            format!("temporary until {}", timestamp(expires_at))
        }
    }
}

/// Refuses to disable or demote `account` when it is the only active admin.
fn refuse_losing_the_last_admin(
    connection: &impl Sql,
    account: &Account,
) -> Result<(), AccountError> {
    if !account.has(Role::Admin) || account.disabled {
        return Ok(());
    }
    let others = adamviz_store::accounts::other_active_admins(connection, account.id)?;
    if others == 0 {
        return Err(AccountError::LastAdmin(account.name.clone()));
    }
    Ok(())
}

fn existing(connection: &impl Sql, name: &str) -> Result<Account, AccountError> {
    find_by_name(connection, name)?
        .map(|(account, _)| account)
        .ok_or_else(|| AccountError::NoSuchAccount(name.to_owned()))
}

/// Disables an account: it cannot log in, and its sessions are refused at their next request
/// (and deleted here).
pub fn disable_account(
    connection: &mut Connection,
    name: &str,
    by: &Operator,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    refuse_losing_the_last_admin(&transaction, &account)?;
    if !account.disabled {
        adamviz_store::accounts::disable(&transaction, account.id)?;
    }
    end_sessions(&transaction, account.id, None)?;
    record_event(
        &transaction,
        &SecurityEvent {
            event: "account_disabled",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: by.id,
            actor_name: Some(&by.name),
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

/// Replaces an account's roles: each role given up and each role granted is a row of the role
/// history naming `by`. Admin is never held with author or reviewer.
pub fn set_roles(
    connection: &mut Connection,
    name: &str,
    roles: &[Role],
    by: &Operator,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    let roles = sorted_roles(roles)?;
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    if !roles.contains(&Role::Admin) {
        refuse_losing_the_last_admin(&transaction, &account)?;
    }
    // Revocations first, so that a move between admin and the other roles never holds both.
    for role in account.roles.iter().filter(|r| !roles.contains(r)) {
        change_role(&transaction, account.id, *role, "revoked", by, now)?;
    }
    for role in roles.iter().filter(|r| !account.roles.contains(r)) {
        change_role(&transaction, account.id, *role, "granted", by, now)?;
    }
    record_event(
        &transaction,
        &SecurityEvent {
            event: "roles_changed",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: by.id,
            actor_name: Some(&by.name),
            remote_addr,
            success: true,
            detail: Some(&format!(
                "{} -> {}",
                roles_text(&account.roles),
                roles_text(&roles)
            )),
        },
        now,
    )?;
    let account = existing(&transaction, name)?;
    transaction.commit()?;
    Ok(account)
}

/// Sets a password for someone (an administrator's reset, or the command line): with
/// [`PasswordOrigin::Temporary`] the owner must replace it at the next login. Every session of
/// the account ends.
#[allow(clippy::too_many_arguments)]
pub fn set_password(
    connection: &mut Connection,
    name: &str,
    password: &str,
    origin: PasswordOrigin,
    by: &Operator,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, AccountError> {
    check_password(password).map_err(AccountError::WeakPassword)?;
    let hash = hash_password(password)?;
    let transaction = connection.transaction()?;
    let account = existing(&transaction, name)?;
    store_password(&transaction, account.id, &hash, origin, now)?;
    let ended = end_sessions(&transaction, account.id, None)?;
    record_event(
        &transaction,
        &SecurityEvent {
            event: "password_changed",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: by.id,
            actor_name: Some(&by.name),
            remote_addr,
            success: true,
            detail: Some(&format!(
                "set by {}; password {}; {ended} session(s) ended",
                by.name,
                password_text(origin)
            )),
        },
        now,
    )?;
    let account = existing(&transaction, name)?;
    transaction.commit()?;
    Ok(account)
}

fn store_password(
    connection: &impl Sql,
    id: i64,
    hash: &str,
    origin: PasswordOrigin,
    now: DateTime<Utc>,
) -> Result<(), DbError> {
    let (temporary, expires_at, set_at, set_by_owner_at) = password_columns(origin, now);
    adamviz_store::accounts::update_password(
        connection,
        id,
        hash,
        &PasswordColumns {
            temporary,
            expires_at,
            set_at,
            set_by_owner_at,
        },
    )
}

mod login;
pub mod login_limiter;
pub mod login_limits;
mod password_change;

pub use login::*;
pub use password_change::*;

/// How far back the owner is told of password changes even when logins came between: whoever
/// took the account over after a reset logged in as its owner, so "since the previous login"
/// alone would hide the reset.
pub const PASSWORD_NOTICE_DAYS: i64 = 30;

/// The changes of account `id`'s password since its owner's previous login or in the last
/// [`PASSWORD_NOTICE_DAYS`] (whichever reaches further back), oldest first, when any of them
/// was made by someone else (an administrator, the command line): what the owner is told at
/// the next login. Empty when the owner alone changed it.
pub fn password_change_notices(
    connection: &impl Sql,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<adamviz_model::account::PasswordChangeNotice>, DbError> {
    let since = timestamp(now - Duration::days(PASSWORD_NOTICE_DAYS));
    let changes =
        adamviz_store::accounts::password_changes_since_previous_login(connection, id, &since)?;
    if changes.iter().all(|change| change.by_owner) {
        return Ok(Vec::new());
    }
    Ok(changes)
}

/// When `account`'s temporary password expired, if it is temporary and expired at `now`.
pub fn temporary_password_expired(account: &Account, now: DateTime<Utc>) -> Option<String> {
    let expires_at = account.password_expires_at.as_deref()?;
    let expiry = DateTime::parse_from_rfc3339(expires_at)
        .ok()?
        .with_timezone(&Utc);
    (account.password_change_required && expiry <= now).then(|| expires_at.to_owned())
}

/// The account a session names, if it may still act: it exists and is not disabled.
pub fn active_account(connection: &impl Sql, id: i64) -> Result<Option<Account>, DbError> {
    Ok(account_by_id(connection, id)?.filter(|account| !account.disabled))
}
