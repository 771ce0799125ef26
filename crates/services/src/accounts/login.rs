//! Logging in: the password checked against its hash (a decoy hash for a missing name, so
//! timing tells nothing), the lockout per name and client address, every outcome in the
//! security log.

use super::{
    check_name, decoy_hash, find_by_name, login_limits, password_matches, record_event,
    temporary_password_expired, Account, Connection, DateTime, LoginError, SecurityEvent, Sql, Utc,
};

/// Checks `name` and `password` from `remote_addr` at `now`: the account on success. The fifth
/// failure within the window locks the name for this client address (whether or not the name
/// exists, so the answer never tells) for [`LOCKOUT_WINDOW_MINUTES`]; other addresses are not
/// locked out. A success is a security event of its own; failures and lockouts are counted
/// (`login_limits::count_event`: one row per name, reason and window).
pub fn login(
    connection: &Connection,
    name: &str,
    password: &str,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Account, LoginError> {
    use super::{login_limiter::client_key, login_limits::NameGate};
    // A name no account can have is refused before anything is written (a megabyte of name
    // must not become a row); it cannot exist, so the answer reveals nothing.
    if check_name(name).is_err() {
        return Err(LoginError::Invalid);
    }
    let attempt = LoginAttempt {
        name,
        client: client_key(remote_addr),
        remote_addr,
        now,
    };
    // One login per name and address at a time in this process (the check, the hash and the
    // count are one step for them); others go on in parallel.
    let _turn = NameGate::global().enter(name, &attempt.client);
    let found = find_by_name(connection, name)?;
    let account_id = found.as_ref().map(|(account, _)| account.id);
    if let Some(until) = login_limits::locked_until(connection, name, &attempt.client, now)? {
        attempt.count(connection, account_id, "locked")?;
        return Err(LoginError::Locked { until });
    }
    // The same work whether or not the name exists.
    let hash = found
        .as_ref()
        .map_or(decoy_hash(), |(_, hash)| hash.as_str());
    let matches = password_matches(password, hash);
    match found {
        Some((account, _)) if matches && !account.disabled => {
            if let Some(at) = temporary_password_expired(&account, now) {
                attempt.count(connection, Some(account.id), "temporary password expired")?;
                return Err(LoginError::TemporaryPasswordExpired { at });
            }
            attempt.succeeded(connection, &account)?;
            Ok(account)
        }
        found => {
            let account = found.map(|(account, _)| account);
            let detail = match &account {
                Some(account) if account.disabled && matches => "disabled",
                Some(_) => "wrong password",
                None => "unknown name",
            };
            match attempt.failed(connection, account_id, detail)? {
                Some(until) => Err(LoginError::Locked { until }),
                None => Err(LoginError::Invalid),
            }
        }
    }
}

/// One login try: who, from where, when; what it writes to the security log.
struct LoginAttempt<'a> {
    name: &'a str,
    client: String,
    remote_addr: Option<&'a str>,
    now: DateTime<Utc>,
}

impl LoginAttempt<'_> {
    /// A refusal counted in the security log (in a transaction: two refusals of one name at
    /// once count in one row).
    fn count(
        &self,
        connection: &Connection,
        account_id: Option<i64>,
        detail: &str,
    ) -> Result<(), LoginError> {
        let transaction = connection.unchecked_transaction()?;
        self.count_in(&transaction, account_id, detail)?;
        transaction.commit()?;
        Ok(())
    }

    /// The refusal's row of the security log, in the caller's transaction.
    fn count_in(
        &self,
        transaction: &impl Sql,
        account_id: Option<i64>,
        detail: &str,
    ) -> Result<(), LoginError> {
        login_limits::count_event(
            transaction,
            "login",
            account_id,
            self.name,
            self.remote_addr,
            detail,
            self.now,
        )?;
        Ok(())
    }

    /// A success: the name's failures from this client cleared, the login a security event.
    fn succeeded(&self, connection: &Connection, account: &Account) -> Result<(), LoginError> {
        let transaction = connection.unchecked_transaction()?;
        login_limits::clear_failures(&transaction, self.name, &self.client)?;
        record_event(
            &transaction,
            &SecurityEvent {
                event: "login",
                account_id: Some(account.id),
                account_name: self.name,
                actor_id: None,
                actor_name: None,
                remote_addr: self.remote_addr,
                success: true,
                detail: None,
            },
            self.now,
        )?;
        transaction.commit()?;
        Ok(())
    }

    /// A failure counted, and the lockout it starts, if it does (one transaction: two failures
    /// of one name at once, from two addresses, count in one row).
    fn failed(
        &self,
        connection: &Connection,
        account_id: Option<i64>,
        detail: &str,
    ) -> Result<Option<String>, LoginError> {
        let transaction = connection.unchecked_transaction()?;
        self.count_in(&transaction, account_id, detail)?;
        let locked = login_limits::count_failure(
            &transaction,
            account_id,
            self.name,
            &self.client,
            self.remote_addr,
            self.now,
        )?;
        transaction.commit()?;
        Ok(locked)
    }
}
