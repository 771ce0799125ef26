//! `login`: logs in: a new session id (no fixation), the account and the login time in the session,
//! then back to `next`.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{establish, password_check_turn, safe_next};
use crate::api::error::AppError;

/// Logs in: a new session id (no fixation), the account and the login time in the session,
/// then back to `next`. A failure says only that the name or password is wrong, that the name
/// is locked for this address, that this address has failed too often lately, or that the
/// server is too busy to check it within its deadline (429, with `Retry-After`).
#[server(prefix = "/api", endpoint = "auth/login")]
pub async fn login(name: String, password: String, next: Option<String>) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_services::accounts::LoginError;
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let remote = remote_addr().await;
        if name.trim().is_empty() {
            return Err(AppError::invalid("name", "enter your account name"));
        }
        // Its turn to have the password checked (waiting behind other logins of this address
        // and of the server, up to a deadline), or refused at once (429) when this address has
        // used its failure budget; taken before a database connection is. The ticket goes with
        // the check onto its thread, so a client that hangs up does not free its place while
        // the hash still runs.
        let ticket = password_check_turn(remote.as_deref()).await?;
        let account = context
            .services
            .login(name, password, remote, ticket)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    LoginError::Invalid | LoginError::TemporaryPasswordExpired { .. } => {
                        AppError::invalid("password", error.to_string())
                    }
                    LoginError::Locked { .. } => AppError::Locked(error.to_string()),
                    LoginError::Database(error) => internal(error),
                })
            })?;
        establish(&session, account.id).await?;
        // A password someone else set opens only the change form: go there at once (the page
        // guard would send a full page load there too, but the browser follows this redirect
        // without one).
        if account.password_change_required {
            leptos_axum::redirect("/account/password?required=1");
        } else {
            leptos_axum::redirect(&safe_next(next.as_deref()));
        }
        Ok(())
    })
    .await
}
