//! `disable_account`: disables an account; its sessions end at once.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::account_error;
use crate::api::error::AppError;
use adamviz_model::account::Account;
#[cfg(feature = "ssr")]
use adamviz_model::account::Role;

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
