//! `change_password`: changes the logged-in account's own password: the current one, the new one
//! twice.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::safe_next;
use crate::api::error::AppError;

/// Changes the logged-in account's own password: the current one, the new one twice. A
/// temporary password (set by an administrator) can only be used for this. Every other session
/// of the account ends; this one continues under a new id. Then back to `next` (home).
#[server(prefix = "/api", endpoint = "auth/change-password")]
pub async fn change_password(
    current_password: String,
    new_password: String,
    new_password_again: String,
    next: Option<String>,
) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_services::accounts::{self, PasswordChange, PasswordChangeError};
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let account = signed_in_allowing_password_change(&session, &context).await?;
        let remote = remote_addr().await;
        // The session that changes the password is the only one of the account that stays
        // (under a new id, given below once the change is stored).
        let keep = session.id().map(|id| id.to_string());
        let change = PasswordChange {
            current_password,
            new_password,
            new_password_again,
        };
        context
            .services
            .change_own_password(account.id, change, keep, remote)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    PasswordChangeError::Account(accounts::AccountError::Database(error)) => {
                        internal(error)
                    }
                    PasswordChangeError::Account(accounts::AccountError::Hash(error)) => {
                        internal(error)
                    }
                    other => AppError::invalid(other.field(), other.to_string()),
                })
            })?;
        session.cycle_id().await.map_err(internal)?;
        leptos_axum::redirect(&safe_next(next.as_deref()));
        Ok(())
    })
    .await
}
