//! An account's owner choosing their own password: the current one again, the new one twice,
//! the same rules; every other session of the account ends. The current password is guarded
//! like a login: whoever holds a stolen session cookie must not be able to guess it.

use adamviz_store::db::Transaction;

use super::{
    account_by_id, check_password, end_sessions, hash_password, login_limiter::client_key,
    login_limits, password_matches, record_event, store_password, Account, AccountError,
    AccountRuleError, Connection, DateTime, DbError, PasswordOrigin, SecurityEvent, Utc,
    LOCKOUT_WINDOW_MINUTES,
};

/// What the Change password form sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordChange {
    /// The password in force (temporary or the owner's).
    pub current_password: String,
    /// The new one.
    pub new_password: String,
    /// The new one again.
    pub new_password_again: String,
}

/// Why a password change was refused; each names the form field it is about.
#[derive(Debug, thiserror::Error)]
pub enum PasswordChangeError {
    /// The current password did not match.
    #[error("the current password is not right")]
    WrongCurrent,
    /// The new password breaks the rule.
    #[error("{0}")]
    Weak(AccountRuleError),
    /// The new password is the current one.
    #[error("the new password must differ from the current one")]
    Unchanged,
    /// The two new passwords differ.
    #[error("the two new passwords differ")]
    Mismatch,
    /// The account cannot act.
    #[error("this account is disabled")]
    Disabled,
    /// Too many wrong current passwords (with failed logins, from this address): the name is
    /// locked for it, and the session that tried ends.
    #[error("too many wrong passwords: this account is locked for your address for {LOCKOUT_WINDOW_MINUTES} minutes (until {until}); log in again after that")]
    Locked {
        /// When the lockout ends.
        until: String,
    },
    /// Storage or hashing failed.
    #[error(transparent)]
    Account(#[from] AccountError),
}

impl PasswordChangeError {
    /// The form field the refusal is about.
    pub fn field(&self) -> &'static str {
        match self {
            Self::WrongCurrent | Self::Disabled | Self::Locked { .. } => "current_password",
            Self::Weak(_) | Self::Unchanged => "new_password",
            Self::Mismatch => "new_password_again",
            Self::Account(_) => "new_password",
        }
    }
}

impl From<DbError> for PasswordChangeError {
    fn from(error: DbError) -> Self {
        Self::Account(AccountError::Database(error))
    }
}

/// The owner of account `id` chooses a new password: the current one re-entered (a temporary
/// one too, even after it expired: its holder is logged in), the new one twice under the same
/// rules. The password becomes the owner's own (no longer temporary), every other session of
/// the account ends (`keep` is the session making the change), and the security log says so.
///
/// A wrong current password counts as a failed login of the account's name from this client
/// address: the same lockout (the fifth failure locks the name for the address, and the caller
/// ends the session: [`PasswordChangeError::Locked`]). The new password's own rules are checked
/// first, so the answer to a wrong current password never depends on the new one.
pub fn change_own_password(
    connection: &mut Connection,
    id: i64,
    change: &PasswordChange,
    keep: Option<&str>,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, PasswordChangeError> {
    let (account, hash) = {
        let account = account_by_id(connection, id)?.ok_or(PasswordChangeError::Disabled)?;
        let hash = adamviz_store::accounts::password_hash(connection, id)?;
        (account, hash)
    };
    if account.disabled {
        return Err(PasswordChangeError::Disabled);
    }
    let client = client_key(remote_addr);
    // One check of this name from this address at a time (as for logins): parallel guesses
    // cannot all pass the lockout check before any failure is counted.
    let _turn = login_limits::NameGate::global().enter(&account.name, &client);
    // Counted as a failed login of the name (one row per name, reason and window: the log's
    // rules allow counted rows for login failures only), in the caller's transaction.
    let count = |transaction: &Transaction<'_>, reason: &str| {
        login_limits::count_event(
            transaction,
            "login",
            Some(account.id),
            &account.name,
            remote_addr,
            reason,
            now,
        )
    };
    if let Some(until) = login_limits::locked_until(connection, &account.name, &client, now)? {
        let transaction = connection.transaction()?;
        count(&transaction, "locked (change password)")?;
        transaction.commit()?;
        return Err(PasswordChangeError::Locked { until });
    }
    check_password(&change.new_password).map_err(PasswordChangeError::Weak)?;
    if change.new_password != change.new_password_again {
        return Err(PasswordChangeError::Mismatch);
    }
    if !password_matches(&change.current_password, &hash) {
        let transaction = connection.transaction()?;
        count(&transaction, "wrong current password (change password)")?;
        let locked = login_limits::count_failure(
            &transaction,
            Some(account.id),
            &account.name,
            &client,
            remote_addr,
            now,
        )?;
        transaction.commit()?;
        return Err(match locked {
            Some(until) => PasswordChangeError::Locked { until },
            None => PasswordChangeError::WrongCurrent,
        });
    }
    login_limits::clear_failures(connection, &account.name, &client)?;
    if change.new_password == change.current_password {
        return Err(PasswordChangeError::Unchanged);
    }
    let new_hash = hash_password(&change.new_password)?;
    let transaction = connection.transaction()?;
    store_password(
        &transaction,
        account.id,
        &new_hash,
        PasswordOrigin::ChosenByOwner,
        now,
    )?;
    let ended = end_sessions(&transaction, account.id, keep)?;
    record_event(
        &transaction,
        &SecurityEvent {
            event: "password_changed",
            account_id: Some(account.id),
            account_name: &account.name,
            actor_id: Some(account.id),
            actor_name: Some(&account.name),
            remote_addr,
            success: true,
            detail: Some(&format!(
                "chosen by its owner{}; {ended} other session(s) ended",
                if account.password_change_required {
                    " (replacing a temporary password)"
                } else {
                    ""
                }
            )),
        },
        now,
    )?;
    let account = account_by_id(&transaction, account.id)?.ok_or(PasswordChangeError::Disabled)?;
    transaction.commit()?;
    Ok(account)
}
