//! `logout`: logs out: the session is deleted on the server (not only the cookie), then the login
//! page.

use leptos::prelude::*;

use crate::api::error::AppError;

/// Logs out: the session is deleted on the server (not only the cookie), then the login page.
#[server(prefix = "/api", endpoint = "auth/logout")]
pub async fn logout() -> Result<(), AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let account = signed_in_allowing_password_change(&session, &context).await?;
        let remote = remote_addr().await;
        session.flush().await.map_err(internal)?;
        context
            .services
            .record_logout(account, remote)
            .await
            .map_err(internal)?;
        leptos_axum::redirect("/login");
        Ok(())
    })
    .await
}
