//! `run_revision`: starts the governed execution of a Draft revision (authors), under the form's
//! idempotency key.

use leptos::prelude::*;

use crate::api::error::AppError;

/// Starts the governed execution of a Draft revision (authors). The idempotency key comes with
/// the form, so a double click or a retried request joins the same attempt.
#[server(prefix = "/api", endpoint = "revisions/run")]
pub async fn run_revision(
    revision_id: String,
    idempotency_key: String,
) -> Result<String, AppError> {
    use crate::api::boundary::*;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::runs::StartRunError;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = super::revision_id(&revision_id)?;
        let attempt = context
            .services
            .start_run(&id, &idempotency_key, Actor::web(&account))
            .await
            .map_err(|error| match error {
                StartRunError::NoRevision(id) => AppError::NotFound(format!("revision {id}")),
                StartRunError::NotDraft { .. } => AppError::Conflict(error.to_string()),
                StartRunError::BadKey => AppError::invalid("idempotency_key", error.to_string()),
                StartRunError::Internal(detail) => internal(detail),
            })?;
        if accepts_html() {
            leptos_axum::redirect(&format!("/revisions/{revision_id}"));
        }
        Ok(attempt.to_string())
    })
    .await
}
