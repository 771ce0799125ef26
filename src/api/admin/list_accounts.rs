//! `list_accounts`: every account.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::account::Account;
#[cfg(feature = "ssr")]
use adamviz_model::account::Role;

/// Every account.
#[server(prefix = "/api", endpoint = "admin/accounts")]
pub async fn list_accounts() -> Result<Vec<Account>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        require(&[Role::Admin]).await?;
        context()?.services.list_accounts().await.map_err(internal)
    })
    .await
}
