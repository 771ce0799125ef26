//! An account's owner choosing their own password: the current one again, the new one twice,
//! the same rules; every other session of the account ends.

use super::{
    account_by_id, check_password, end_sessions, hash_password, password_matches, record_event,
    store_password, Account, AccountError, AccountRuleError, Connection, DateTime, DbError,
    PasswordOrigin, SecurityEvent, Utc,
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
    /// Storage or hashing failed.
    #[error(transparent)]
    Account(#[from] AccountError),
}

impl PasswordChangeError {
    /// The form field the refusal is about.
    pub fn field(&self) -> &'static str {
        match self {
            Self::WrongCurrent | Self::Disabled => "current_password",
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
    let failure = |connection: &Connection, reason: &str| {
        record_event(
            connection,
            &SecurityEvent {
                event: "password_changed",
                account_id: Some(account.id),
                account_name: &account.name,
                actor_id: Some(account.id),
                actor_name: Some(&account.name),
                remote_addr,
                success: false,
                detail: Some(reason),
            },
            now,
        )
    };
    if !password_matches(&change.current_password, &hash) {
        failure(connection, "wrong current password")?;
        return Err(PasswordChangeError::WrongCurrent);
    }
    check_password(&change.new_password).map_err(PasswordChangeError::Weak)?;
    if change.new_password == change.current_password {
        return Err(PasswordChangeError::Unchanged);
    }
    if change.new_password != change.new_password_again {
        return Err(PasswordChangeError::Mismatch);
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
