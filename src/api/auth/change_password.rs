//! `change_password`: changes the logged-in account's own password: the current one, the new one
//! twice.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{password_check_turn, safe_next};
use crate::api::error::AppError;

/// Changes the logged-in account's own password: the current one, the new one twice. A
/// temporary password (set by an administrator) can only be used for this. Every other session
/// of the account ends; this one continues under a new id. Then back to `next` (home). A wrong
/// current password counts as a failed login (the address's budget, the name's lockout for the
/// address); the one that locks the name also ends this session.
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
        // The same limiter and budgets as the login form's.
        let ticket = password_check_turn(remote.as_deref()).await?;
        let changed = context
            .services
            .change_own_password(account.id, change, keep, remote, ticket)
            .await;
        if let Err(adamviz_services::error::UseCaseError::Refused(PasswordChangeError::Locked {
            ..
        })) = &changed
        {
            // Whoever guessed from this session is logged out.
            session.flush().await.map_err(internal)?;
        }
        changed.map_err(|error| {
            use_case_error(error, |error| match error {
                PasswordChangeError::Locked { .. } => AppError::Locked(error.to_string()),
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
