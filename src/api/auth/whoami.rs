//! `whoami`: the logged-in account, or `None`.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::account::Account;

/// The logged-in account, or `None`. It answers while the account must still replace a
/// temporary password (saying so), so that the page can lead there.
#[server(prefix = "/api", endpoint = "auth/whoami")]
pub async fn whoami() -> Result<Option<Account>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        match signed_in_allowing_password_change(&session().await?, &context).await {
            Ok(account) => Ok(Some(account)),
            Err(AppError::NotLoggedIn) => Ok(None),
            Err(error) => Err(error),
        }
    })
    .await
}
