//! `revision_status`: where a revision's execution stands now.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::revision::RunStatus;

/// Where a revision's execution stands now.
#[server(prefix = "/api", endpoint = "revisions/status")]
pub async fn revision_status(id: String) -> Result<RunStatus, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        let revision = super::revision_id(&id)?;
        super::events::status_of(&context, &revision)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("revision {id}")))
    })
    .await
}
