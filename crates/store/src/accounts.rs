//! The SQL of accounts (`adamviz_services::accounts` holds the rules): account rows with
//! their roles, the role history, password columns, sessions to end, and the append-only
//! security log.

use crate::sql::{Sql, SqlError, SqlRow};
use crate::sql_params;
use adamviz_model::account::{Account, Role};

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
    /// Who acted, by name (an account, `command line: <user>`, `first-start setup`).
    pub actor_name: Option<&'a str>,
    /// The remote address of the request.
    pub remote_addr: Option<&'a str>,
    /// Success or failure.
    pub success: bool,
    /// What else a reviewer needs (never a password).
    pub detail: Option<&'a str>,
}

/// When and by whom someone other than its owner last set account `id`'s password (an
/// administrator's reset, the command line), from the security log; `None` if nobody ever did.
pub fn last_password_reset(
    connection: &impl Sql,
    id: i64,
) -> Result<Option<(String, String)>, SqlError> {
    let rows = connection.query(
        "SELECT at, COALESCE(actor_name, 'unknown') FROM security_events
         WHERE event = 'password_changed' AND outcome = 'success' AND account_id = ?1
           AND (actor_id IS NULL OR actor_id <> ?1)
         ORDER BY seq DESC LIMIT 1",
        sql_params![id],
    )?;
    rows.first()
        .map(|row| -> Result<(String, String), SqlError> { Ok((row.get(0)?, row.get(1)?)) })
        .transpose()
}

/// The successful changes of account `id`'s password after its previous login (the one before
/// its latest) or after `since`, whichever is earlier, oldest first.
pub fn password_changes_since_previous_login(
    connection: &impl Sql,
    id: i64,
    since: &str,
) -> Result<Vec<adamviz_model::account::PasswordChangeNotice>, SqlError> {
    connection
        .query(
            "SELECT at, COALESCE(actor_name, account_name), actor_id, remote_addr
             FROM security_events
             WHERE event = 'password_changed' AND outcome = 'success' AND account_id = ?1
               AND (at > ?2
                    OR at > COALESCE((SELECT at FROM security_events
                                      WHERE event = 'login' AND outcome = 'success'
                                        AND account_id = ?1
                                      ORDER BY seq DESC LIMIT 1 OFFSET 1), ''))
             ORDER BY seq",
            sql_params![id, since],
        )?
        .iter()
        .map(
            |row| -> Result<adamviz_model::account::PasswordChangeNotice, SqlError> {
                let actor: Option<i64> = row.get(2)?;
                Ok(adamviz_model::account::PasswordChangeNotice {
                    at: row.get(0)?,
                    by: row.get(1)?,
                    by_owner: actor == Some(id),
                    remote_addr: row.get(3)?,
                })
            },
        )
        .collect()
}

/// Appends `event` to the security log at `at` (canonical UTC).
pub fn record_event(
    connection: &impl Sql,
    event: &SecurityEvent<'_>,
    at: &str,
) -> Result<(), SqlError> {
    connection.execute(
        "INSERT INTO security_events
             (at, event, account_id, account_name, actor_id, remote_addr, outcome, detail,
              actor_name)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        sql_params![
            at,
            event.event,
            event.account_id,
            event.account_name,
            event.actor_id,
            event.remote_addr,
            if event.success { "success" } else { "failure" },
            event.detail,
            event.actor_name,
        ],
    )?;
    Ok(())
}

fn roles_of(connection: &impl Sql, id: i64) -> Result<Vec<Role>, SqlError> {
    let mut roles: Vec<Role> = connection
        .query(
            "SELECT role FROM account_roles WHERE account_id = ?1",
            sql_params![id],
        )?
        .iter()
        .filter_map(|row| row.get::<String>(0).ok()?.parse().ok())
        .collect();
    roles.sort();
    Ok(roles)
}

/// The columns [`account_from_row`] reads, in its order.
const ACCOUNT_COLUMNS: &str = "id, name, disabled, created_at, password_temporary, \
                               password_expires_at, password_set_by_owner_at";

/// An account's row, before its roles are read.
type AccountRow = (
    i64,
    String,
    bool,
    String,
    bool,
    Option<String>,
    Option<String>,
);

fn account_row(row: &SqlRow) -> Result<AccountRow, SqlError> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
    ))
}

fn account_from_row(connection: &impl Sql, row: AccountRow) -> Result<Account, SqlError> {
    let (id, name, disabled, created_at, temporary, expires_at, set_by_owner_at) = row;
    Ok(Account {
        roles: roles_of(connection, id)?,
        id,
        name,
        disabled,
        created_at,
        password_change_required: temporary,
        password_expires_at: expires_at,
        password_set_by_owner_at: set_by_owner_at,
    })
}

/// The account named `name` (any case), with its password hash.
pub fn find_by_name(
    connection: &impl Sql,
    name: &str,
) -> Result<Option<(Account, String)>, SqlError> {
    let row = connection
        .query_opt(
            &format!("SELECT {ACCOUNT_COLUMNS}, password_hash FROM accounts WHERE name = ?1"),
            sql_params![name],
        )?
        .map(|row| Ok::<_, SqlError>((account_row(&row)?, row.get::<String>(7)?)))
        .transpose()?;
    row.map(|(facts, hash)| Ok((account_from_row(connection, facts)?, hash)))
        .transpose()
}

/// The account with `id`, if it exists.
pub fn account_by_id(connection: &impl Sql, id: i64) -> Result<Option<Account>, SqlError> {
    let row = connection
        .query_opt(
            &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"),
            sql_params![id],
        )?
        .map(|row| account_row(&row))
        .transpose()?;
    row.map(|facts| account_from_row(connection, facts))
        .transpose()
}

/// How many accounts exist (disabled ones included).
pub fn account_count(connection: &impl Sql) -> Result<usize, SqlError> {
    Ok(connection
        .query_one("SELECT count(*) FROM accounts", &[])?
        .get::<i64>(0)? as usize)
}

/// Every account, by name.
pub fn list_accounts(connection: &impl Sql) -> Result<Vec<Account>, SqlError> {
    // Names in any case, alphabetically.
    let rows: Vec<AccountRow> = connection
        .query(
            &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY lower(name), id"),
            &[],
        )?
        .iter()
        .map(account_row)
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|row| account_from_row(connection, row))
        .collect()
}

/// Grants (`granted`) or revokes (`revoked`) `role` of account `id` in the role history, then
/// in the roles themselves (the database refuses a role change without its history row).
pub fn change_role(
    connection: &impl Sql,
    id: i64,
    role: Role,
    change: &str,
    by: (Option<i64>, &str),
    at: &str,
) -> Result<(), SqlError> {
    connection.execute(
        "INSERT INTO account_role_history (account_id, role, change, at, actor_id, actor_name)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        sql_params![id, role.as_str(), change, at, by.0, by.1],
    )?;
    if change == "granted" {
        connection.execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, ?2)",
            sql_params![id, role.as_str()],
        )?;
    } else {
        connection.execute(
            "DELETE FROM account_roles WHERE account_id = ?1 AND role = ?2",
            sql_params![id, role.as_str()],
        )?;
    }
    Ok(())
}

/// A role grant as the history keeps it: when, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleGrant {
    /// When it was granted (canonical UTC).
    pub at: String,
    /// Who granted it (an account name, `command line: <user>`, `first-start setup`, or the
    /// migration that started the history).
    pub by: String,
}

/// The grant under which account `id` held `role` at `at` (canonical UTC): the latest history
/// row for that role at or before `at`, when it is a grant.
pub fn role_grant_at(
    connection: &impl Sql,
    id: i64,
    role: Role,
    at: &str,
) -> Result<Option<RoleGrant>, SqlError> {
    let latest: Option<(String, String, String)> = connection
        .query_opt(
            "SELECT change, at, actor_name FROM account_role_history
             WHERE account_id = ?1 AND role = ?2 AND at <= ?3
             ORDER BY seq DESC LIMIT 1",
            sql_params![id, role.as_str(), at],
        )?
        .map(|row| Ok::<_, SqlError>((row.get(0)?, row.get(1)?, row.get(2)?)))
        .transpose()?;
    Ok(latest.and_then(|(change, at, by)| (change == "granted").then_some(RoleGrant { at, by })))
}

/// Deletes the sessions of account `id`, all but `keep` (a session id) when given.
pub fn end_sessions(connection: &impl Sql, id: i64, keep: Option<&str>) -> Result<usize, SqlError> {
    // Sessions hold the account id in their JSON record.
    Ok(connection.execute(
        &format!(
            "DELETE FROM sessions WHERE {} = ?1 AND id IS DISTINCT FROM ?2",
            connection.dialect().json_integer("data", "account_id")
        ),
        sql_params![id, keep],
    )? as usize)
}

/// The password columns of an account: temporary or the owner's, when it expires, when it was
/// set, and when the owner last chose one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordColumns {
    /// Set by someone else than the owner: to be replaced at the next login.
    pub temporary: bool,
    /// When a temporary password stops working.
    pub expires_at: Option<String>,
    /// When this password was set.
    pub set_at: String,
    /// When the owner chose it (none for a temporary one).
    pub set_by_owner_at: Option<String>,
}

/// Inserts account `name` with password `hash`; its id.
pub fn insert_account(
    connection: &impl Sql,
    name: &str,
    hash: &str,
    created_at: &str,
    password: &PasswordColumns,
) -> Result<i64, SqlError> {
    connection
        .query_one(
            "INSERT INTO accounts (name, password_hash, created_at, password_temporary,
                               password_expires_at, password_set_at, password_set_by_owner_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
            sql_params![
                name,
                hash,
                created_at,
                password.temporary,
                password.expires_at.as_deref(),
                password.set_at.as_str(),
                password.set_by_owner_at.as_deref()
            ],
        )?
        .get(0)
}

/// Replaces the password of account `id`. The owner's time of choice stays when someone else
/// sets a temporary password (it says when the owner last chose one).
pub fn update_password(
    connection: &impl Sql,
    id: i64,
    hash: &str,
    password: &PasswordColumns,
) -> Result<(), SqlError> {
    connection.execute(
        "UPDATE accounts SET password_hash = ?1, password_temporary = ?2,
                password_expires_at = ?3, password_set_at = ?4,
                password_set_by_owner_at = coalesce(?5, password_set_by_owner_at)
         WHERE id = ?6",
        sql_params![
            hash,
            password.temporary,
            password.expires_at.as_deref(),
            password.set_at.as_str(),
            password.set_by_owner_at.as_deref(),
            id
        ],
    )?;
    Ok(())
}

/// The stored password hash of account `id`.
pub fn password_hash(connection: &impl Sql, id: i64) -> Result<String, SqlError> {
    connection
        .query_one(
            "SELECT password_hash FROM accounts WHERE id = ?1",
            sql_params![id],
        )?
        .get(0)
}

/// Active admins other than account `id`.
pub fn other_active_admins(connection: &impl Sql, id: i64) -> Result<i64, SqlError> {
    connection
        .query_one(
            "SELECT count(*) FROM accounts a JOIN account_roles r ON r.account_id = a.id
             WHERE r.role = 'admin' AND a.disabled = 0 AND a.id != ?1",
            sql_params![id],
        )?
        .get(0)
}

/// Disables account `id`.
pub fn disable(connection: &impl Sql, id: i64) -> Result<(), SqlError> {
    connection.execute(
        "UPDATE accounts SET disabled = 1 WHERE id = ?1",
        sql_params![id],
    )?;
    Ok(())
}
