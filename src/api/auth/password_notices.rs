//! `password_notices`: the changes of the logged-in account's password since its previous
//! login, when someone else made one of them.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::account::PasswordChangeNotice;

/// The changes of the logged-in account's password since its previous login, oldest first,
/// when an administrator (or the command line) made one of them; empty otherwise. Whoever was
/// given a reset they did not ask for learns of it here, at their next login.
#[server(prefix = "/api", endpoint = "auth/password-notices")]
pub async fn password_notices() -> Result<Vec<PasswordChangeNotice>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        let account = signed_in(&session().await?, &context).await?;
        context
            .services
            .password_change_notices(account.id)
            .await
            .map_err(internal)
    })
    .await
}
