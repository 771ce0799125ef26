//! `set_roles`: replaces an account's roles with those ticked.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{account_error, ticked_roles};
use crate::api::error::AppError;
use adamviz_model::account::Account;
#[cfg(feature = "ssr")]
use adamviz_model::account::Role;

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
