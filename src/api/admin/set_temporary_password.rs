//! `set_temporary_password`: sets a temporary password for an account (a reset): its owner must
//! choose their own at the next login, it expires after the configured time, and every session of
//! the account ends.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::account_error;
use crate::api::error::AppError;
use adamviz_model::account::Account;
#[cfg(feature = "ssr")]
use adamviz_model::account::Role;

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
