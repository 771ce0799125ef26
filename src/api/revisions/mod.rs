//! Revisions: the list, one revision's page, starting its governed run (authors, under an
//! idempotency key) and its status. The live status streams from `events.rs` (server-sent
//! events) and the artifacts are served by `files.rs`; both are plain routes.

#[cfg(feature = "ssr")]
pub mod events;
#[cfg(feature = "ssr")]
pub mod files;

use leptos::prelude::*;

use crate::{
    api::error::AppError,
    domain::revision::{RevisionDetail, RevisionSummary, RunStatus},
};

/// Every revision, newest first.
#[server(prefix = "/api", endpoint = "revisions/list")]
pub async fn list_revisions() -> Result<Vec<RevisionSummary>, AppError> {
    use crate::{api::boundary::*, service::revisions};
    boundary(async move {
        current_account().await?;
        let context = context()?;
        with_database(&context, |connection| {
            revisions::list_revisions(connection).map_err(internal)
        })
        .await
    })
    .await
}

#[cfg(feature = "ssr")]
fn revision_id(id: &str) -> Result<crate::domain::ids::RevisionId, AppError> {
    crate::domain::ids::RevisionId::parse(id)
        .map_err(|_| AppError::NotFound(format!("revision {id}")))
}

/// The sources the revision page reads.
#[cfg(feature = "ssr")]
pub fn sources(
    context: &crate::api::boundary::ApiContext,
) -> crate::service::revisions::RevisionSources {
    crate::service::revisions::RevisionSources {
        database: context.database.clone(),
        objects: context.objects.clone(),
        board: context.runs.clone(),
        datasets: context.datasets.clone(),
    }
}

/// One revision with everything its page shows.
#[server(prefix = "/api", endpoint = "revisions/detail")]
pub async fn get_revision(id: String) -> Result<RevisionDetail, AppError> {
    use crate::{api::boundary::*, domain::account::Role, service::revisions};
    boundary(async move {
        let account = current_account().await?;
        let context = context()?;
        let revision = revision_id(&id)?;
        revisions::revision_detail(&sources(&context), &revision, account.has(Role::Author))
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("revision {id}")))
    })
    .await
}

/// Starts the governed execution of a Draft revision (authors). The idempotency key comes with
/// the form, so a double click or a retried request joins the same attempt.
#[server(prefix = "/api", endpoint = "revisions/run")]
pub async fn run_revision(
    revision_id: String,
    idempotency_key: String,
) -> Result<String, AppError> {
    use crate::{
        api::boundary::*,
        domain::account::Role,
        evidence::actor::Actor,
        service::runs::{start_run, RunContext, StartRunError},
    };
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::revision_id(&revision_id)?;
        let run = RunContext {
            execution: context.execution.clone(),
            board: context.runs.clone(),
            datasets: context.datasets.clone(),
        };
        let attempt = start_run(&run, &id, &idempotency_key, Actor::web(&account))
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

/// Where a revision's execution stands now.
#[server(prefix = "/api", endpoint = "revisions/status")]
pub async fn revision_status(id: String) -> Result<RunStatus, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        let revision = revision_id(&id)?;
        events::status_of(&context, &revision)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("revision {id}")))
    })
    .await
}
