//! `list_revisions`: every revision, newest first.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::revision::RevisionSummary;

/// Every revision, newest first.
#[server(prefix = "/api", endpoint = "revisions/list")]
pub async fn list_revisions() -> Result<Vec<RevisionSummary>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        context()?.services.list_revisions().await.map_err(internal)
    })
    .await
}
