//! Logging in: the password checked against its hash (a decoy hash for a missing name, so
//! timing tells nothing), the lockout per name and client address, every outcome in the
//! security log.

use super::*;

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
    use login_limits::{clear_failures, client_key, count_event, count_failure, NameGate};
    // A name no account can have is refused before anything is written (a megabyte of name
    // must not become a row); it cannot exist, so the answer reveals nothing.
    if check_name(name).is_err() {
        return Err(LoginError::Invalid);
    }
    let client = client_key(remote_addr);
    // One login per name and address at a time in this process (the check, the hash and the
    // count are one step for them); others go on in parallel.
    let _turn = NameGate::global().enter(name, &client);
    let found = find_by_name(connection, name)?;
    let account_id = found.as_ref().map(|(account, _)| account.id);
    if let Some(until) = login_limits::locked_until(connection, name, &client, now)? {
        // A transaction: two refusals of one name at once count in one row.
        let transaction = connection.unchecked_transaction()?;
        count_event(
            &transaction,
            "login",
            account_id,
            name,
            remote_addr,
            "locked",
            now,
        )?;
        transaction.commit()?;
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
                let transaction = connection.unchecked_transaction()?;
                count_event(
                    &transaction,
                    "login",
                    Some(account.id),
                    name,
                    remote_addr,
                    "temporary password expired",
                    now,
                )?;
                transaction.commit()?;
                return Err(LoginError::TemporaryPasswordExpired { at });
            }
            let transaction = connection.unchecked_transaction()?;
            clear_failures(&transaction, name, &client)?;
            record_event(
                &transaction,
                &SecurityEvent {
                    event: "login",
                    account_id: Some(account.id),
                    account_name: name,
                    actor_id: None,
                    actor_name: None,
                    remote_addr,
                    success: true,
                    detail: None,
                },
                now,
            )?;
            transaction.commit()?;
            Ok(account)
        }
        found => {
            let account = found.map(|(account, _)| account);
            let detail = match &account {
                Some(account) if account.disabled && matches => "disabled",
                Some(_) => "wrong password",
                None => "unknown name",
            };
            // One transaction: two failures of one name at once (from two addresses) count
            // in one row.
            let transaction = connection.unchecked_transaction()?;
            count_event(
                &transaction,
                "login",
                account_id,
                name,
                remote_addr,
                detail,
                now,
            )?;
            let locked = count_failure(&transaction, account_id, name, &client, remote_addr, now)?;
            transaction.commit()?;
            match locked {
                Some(until) => Err(LoginError::Locked { until }),
                None => Err(LoginError::Invalid),
            }
        }
    }
}
