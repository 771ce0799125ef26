//! `create_account`: creates an account with the roles ticked and a temporary password.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{account_error, ticked_roles};
use crate::api::error::AppError;
use adamviz_model::account::Account;
#[cfg(feature = "ssr")]
use adamviz_model::account::Role;

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
