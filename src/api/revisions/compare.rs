//! `compare_revisions`: two revisions side by side.

use leptos::prelude::*;

use crate::api::error::AppError;

/// Two revisions side by side: the answers that differ, the statistics per cell and both
/// images.
#[server(prefix = "/api", endpoint = "revisions/compare")]
pub async fn compare_revisions(
    a: String,
    b: String,
) -> Result<adamviz_model::revision::Comparison, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let account = current_account().await?;
        let (a_id, b_id) = (super::revision_id(&a)?, super::revision_id(&b)?);
        context()?
            .services
            .compare(&a_id, &b_id, &account)
            .await
            .map_err(internal)?
            .map_err(|missing| AppError::NotFound(format!("revision {missing}")))
    })
    .await
}
