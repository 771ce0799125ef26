//! Account administration (admin only): list, create, change roles, disable.

mod create_account;
mod disable_account;
mod list_accounts;
mod set_roles;
mod set_temporary_password;

pub use create_account::{create_account, CreateAccount};
pub use disable_account::{disable_account, DisableAccount};
pub use list_accounts::{list_accounts, ListAccounts};
pub use set_roles::{set_roles, SetRoles};
pub use set_temporary_password::{set_temporary_password, SetTemporaryPassword};

#[cfg(feature = "ssr")]
use crate::api::error::AppError;
use adamviz_model::account::Role;

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
        AccountError::LastAdmin(_) | AccountError::SetupDone => {
            AppError::Conflict(error.to_string())
        }
        AccountError::NoSuchAccount(name) => AppError::NotFound(format!("account {name:?}")),
        AccountError::Hash(error) => crate::api::boundary::internal(error),
        AccountError::Database(error) => crate::api::boundary::internal(error),
    }
}
