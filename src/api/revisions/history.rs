//! `revision_history`: a page of the revision history, filtered.

use leptos::prelude::*;

use crate::api::error::AppError;

/// A page of the revision history, filtered.
#[server(prefix = "/api", endpoint = "revisions/history")]
pub async fn revision_history(
    #[server(default)] query: adamviz_model::revision::HistoryQuery,
) -> Result<adamviz_model::revision::HistoryPage, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        context()?.services.history(query).await.map_err(internal)
    })
    .await
}
