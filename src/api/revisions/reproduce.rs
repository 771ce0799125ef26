//! `reproduce_revision`: runs a retained result again in a fresh sandboxed R process and records
//! the outcome.

use leptos::prelude::*;

use crate::api::error::AppError;

/// Runs a Verified or Approved revision's retained result again in a fresh sandboxed R process
/// and records the outcome (authors and reviewers). A reproduction that differs is recorded
/// and answered as such, not as an error.
#[server(prefix = "/api", endpoint = "revisions/reproduce")]
pub async fn reproduce_revision(
    revision_id: String,
) -> Result<adamviz_model::revision::ReproductionView, AppError> {
    use crate::api::boundary::*;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::reproduction::ReproduceError;
    boundary(async move {
        let account = require(&[Role::Author, Role::Reviewer]).await?;
        let context = context()?;
        let id = super::revision_id(&revision_id)?;
        let done = context
            .services
            .reproduce(&id, &Actor::web(&account))
            .await
            .map_err(|error| match error {
                ReproduceError::NoRevision(_) => AppError::NotFound(format!("revision {id}")),
                ReproduceError::NotRetained { .. } => AppError::Conflict(error.to_string()),
                ReproduceError::NotRun(_) => AppError::Conflict(error.to_string()),
                ReproduceError::Stored(detail) => internal(detail),
            })?;
        if accepts_html() {
            leptos_axum::redirect(&format!("/revisions/{revision_id}"));
        }
        Ok(adamviz_model::revision::ReproductionView {
            reproduced_at: String::new(),
            by: account.name.clone(),
            outcome: match done.outcome {
                adamviz_evidence::reproduction::ReproductionOutcome::Reproduced => "reproduced",
                adamviz_evidence::reproduction::ReproductionOutcome::Failed => "failed",
            }
            .to_owned(),
            same_environment: done.same_environment,
            environment_differences: done.environment_differences,
            failures: done.failures,
            record_hash: done.record_hash.to_hex(),
        })
    })
    .await
}
