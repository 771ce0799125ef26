//! Account administration (admin only): list, create, change roles, disable.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::account::{Account, Role};

/// The roles ticked in a form: each checkbox sends a value when ticked and nothing otherwise.
pub fn ticked_roles(
    author: Option<String>,
    reviewer: Option<String>,
    admin: Option<String>,
) -> Vec<Role> {
    [
        (author, Role::Author),
        (reviewer, Role::Reviewer),
        (admin, Role::Admin),
    ]
    .into_iter()
    .filter_map(|(ticked, role)| ticked.map(|_| role))
    .collect()
}

#[cfg(feature = "ssr")]
fn account_error(error: adamviz_services::accounts::AccountError) -> AppError {
    use adamviz_services::accounts::AccountError;
    match error {
        AccountError::InvalidName { .. } => AppError::invalid("name", error.to_string()),
        AccountError::NameTaken(_) => AppError::Conflict(error.to_string()),
        AccountError::WeakPassword(rule) => AppError::invalid("password", rule.to_string()),
        AccountError::NoRole | AccountError::Duties(_) => {
            AppError::invalid("roles", error.to_string())
        }
        AccountError::LastAdmin(_) => AppError::Conflict(error.to_string()),
        AccountError::NoSuchAccount(name) => AppError::NotFound(format!("account {name:?}")),
        AccountError::Hash(error) => crate::api::boundary::internal(error),
        AccountError::Database(error) => crate::api::boundary::internal(error),
    }
}

/// Every account.
#[server(prefix = "/api", endpoint = "admin/accounts")]
pub async fn list_accounts() -> Result<Vec<Account>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        require(&[Role::Admin]).await?;
        context()?.services.list_accounts().await.map_err(internal)
    })
    .await
}

/// Sets a temporary password for an account (a reset): its owner must choose their own at the
/// next login, it expires after the configured time, and every session of the account ends.
#[server(prefix = "/api", endpoint = "admin/set-password")]
pub async fn set_temporary_password(name: String, password: String) -> Result<Account, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let actor = require(&[Role::Admin]).await?;
        let context = context()?;
        let remote = remote_addr().await;
        context
            .services
            .set_temporary_password(actor, name, password, remote)
            .await
            .map_err(|error| use_case_error(error, account_error))
    })
    .await
}

/// Creates an account with the roles ticked and a temporary password.
#[server(prefix = "/api", endpoint = "admin/create-account")]
pub async fn create_account(
    name: String,
    password: String,
    author: Option<String>,
    reviewer: Option<String>,
    admin: Option<String>,
) -> Result<Account, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let actor = require(&[Role::Admin]).await?;
        let context = context()?;
        let remote = remote_addr().await;
        let roles = ticked_roles(author, reviewer, admin);
        context
            .services
            .create_account(actor, name, password, roles, remote)
            .await
            .map_err(|error| use_case_error(error, account_error))
    })
    .await
}

/// Replaces an account's roles with those ticked.
#[server(prefix = "/api", endpoint = "admin/set-roles")]
pub async fn set_roles(
    name: String,
    author: Option<String>,
    reviewer: Option<String>,
    admin: Option<String>,
) -> Result<Account, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let actor = require(&[Role::Admin]).await?;
        let context = context()?;
        let remote = remote_addr().await;
        let roles = ticked_roles(author, reviewer, admin);
        context
            .services
            .set_roles(actor, name, roles, remote)
            .await
            .map_err(|error| use_case_error(error, account_error))
    })
    .await
}

/// Disables an account; its sessions end at once.
#[server(prefix = "/api", endpoint = "admin/disable-account")]
pub async fn disable_account(name: String) -> Result<Account, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let actor = require(&[Role::Admin]).await?;
        if actor.name.eq_ignore_ascii_case(name.trim()) {
            return Err(AppError::invalid(
                "name",
                "you cannot disable your own account",
            ));
        }
        let context = context()?;
        let remote = remote_addr().await;
        context
            .services
            .disable_account(actor, name, remote)
            .await
            .map_err(|error| use_case_error(error, account_error))
    })
    .await
}
