//! Revisions: the list, one revision's page, starting its governed run (authors, under an
//! idempotency key) and its status. The live status streams from `events.rs` (server-sent
//! events) and the artifacts are served by `files.rs`; both are plain routes.

// One argument per field of the signing form (a server function's arguments are its form,
// and the browser build's generated client function does not carry an item's own `allow`).
#![allow(clippy::too_many_arguments)]

#[cfg(feature = "ssr")]
pub mod events;
#[cfg(feature = "ssr")]
pub mod files;

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::revision::{RevisionDetail, RevisionSummary, RunStatus};

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

#[cfg(feature = "ssr")]
fn revision_id(id: &str) -> Result<adamviz_model::ids::RevisionId, AppError> {
    adamviz_model::ids::RevisionId::parse(id)
        .map_err(|_| AppError::NotFound(format!("revision {id}")))
}

/// One revision with everything its page shows.
#[server(prefix = "/api", endpoint = "revisions/detail")]
pub async fn get_revision(id: String) -> Result<RevisionDetail, AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::Role;
    boundary(async move {
        let account = current_account().await?;
        let context = context()?;
        let revision = revision_id(&id)?;
        let mut detail = context
            .services
            .revision_detail(&revision, &account)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("revision {id}")))?;
        if account.has(Role::Author) {
            let address = crate::api::drafts::DraftAddress {
                question: detail.summary.question.clone(),
                answers: Some(detail.answers.clone()),
                move_item: None,
                parent: Some(detail.summary.id.clone()),
                opened: Vec::new(),
            };
            detail.revise_href = Some(address.href(&detail.dataset_hash));
        }
        detail.review.first_signature_of_session = !signing_session_open(&session().await?).await?;
        Ok(detail)
    })
    .await
}

/// "Re-run on the new data" (authors): the draft page of the revision's question on the newest
/// later cut of its dataset, with the revision's answers (a list that no longer fits the new data
/// left open) and the revision as the parent; the page is opened (a redirect).
#[server(prefix = "/api", endpoint = "revisions/rerun")]
pub async fn rerun_on_newer_cut(revision_id: String) -> Result<String, AppError> {
    use crate::api::{boundary::*, datasets::loaded_dataset, drafts::DraftAddress};
    use adamviz_model::account::Role;
    use adamviz_services::data_cuts;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::revision_id(&revision_id)?;
        let detail = context
            .services
            .revision_detail(&id, &account)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("revision {id}")))?;
        let cut = detail.newer_cut.clone().ok_or_else(|| {
            AppError::Conflict(format!(
                "the dataset of {id} has no newer cut: upload the new delivery first"
            ))
        })?;
        let (_, old) = loaded_dataset(&context, &detail.dataset_hash).await?;
        let (_, new) = loaded_dataset(&context, &cut.content_hash).await?;
        let (answers, opened) =
            data_cuts::carried_answers(&detail.answers, &old.profile, &new.profile);
        let address = DraftAddress {
            question: detail.summary.question.clone(),
            answers: Some(answers),
            move_item: None,
            parent: Some(id.to_string()),
            opened: opened
                .into_iter()
                .map(|(q, why)| format!("{q}: {why}"))
                .collect(),
        };
        let href = address.href(&cut.content_hash);
        leptos_axum::redirect(&href);
        Ok(href)
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
    use crate::api::boundary::*;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::runs::StartRunError;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::revision_id(&revision_id)?;
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

/// What signing did: the revision's status and version after it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignOutcome {
    /// Approved, or still Verified after changes were requested.
    pub status: adamviz_model::revision::RevisionStatus,
    /// The version after.
    pub version: i64,
}

/// Signs a Verified revision (reviewers other than its author): `decision` `approved` (with
/// `meaning` `reviewed`, `approved` or `responsible`) or `changes_requested` (with a comment);
/// the password is checked again, whatever the session.
#[server(prefix = "/api", endpoint = "revisions/sign")]
pub async fn sign_revision(
    revision_id: String,
    decision: String,
    #[server(default)] meaning: Option<String>,
    #[server(default)] comment: Option<String>,
    password: String,
    evidence_head: String,
    #[server(default)] user_name: Option<String>,
    #[server(default)] return_to: Option<String>,
) -> Result<SignOutcome, AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::Role;
    use adamviz_services::approvals::{require_user_name, SignRequest};
    boundary(async move {
        let account = require(&[Role::Reviewer]).await?;
        let context = context()?;
        let id = self::revision_id(&revision_id)?;
        let (decision, meaning) = signing::decision_of(&decision, meaning.as_deref())?;
        let session = session().await?;
        let first = !signing_session_open(&session).await?;
        require_user_name(first, user_name.as_deref())
            .map_err(|error| signing::refusal(error, &id))?;
        let user_name = user_name.filter(|name| !name.trim().is_empty());
        let request = SignRequest {
            revision_id: id.clone(),
            decision,
            meaning,
            comment,
            password,
            evidence_head_seen: Some(evidence_head),
            user_name,
        };
        let remote = remote_addr().await;
        let signed = context
            .services
            .sign(account, request, remote)
            .await
            .map_err(|error| use_case_error(error, |error| signing::refusal(error, &id)))?;
        open_signing_session(&session).await?;
        if accepts_html() {
            // Back to the page the form was on: the revision's, or its figure set's.
            let back = return_to
                .filter(|to| {
                    to.strip_prefix("/sets/")
                        .is_some_and(|id| adamviz_model::ids::FigureSetId::parse(id).is_ok())
                })
                .unwrap_or_else(|| format!("/revisions/{revision_id}"));
            leptos_axum::redirect(&back);
        }
        Ok(SignOutcome {
            status: signed.revision.status,
            version: signed.revision.version,
        })
    })
    .await
}

/// The signing form's words and the service's refusals, as the server function reads and
/// answers them.
#[cfg(feature = "ssr")]
mod signing {
    use crate::api::{boundary::internal, error::AppError};
    use adamviz_evidence::approval::{Decision, SignatureMeaning};
    use adamviz_model::ids::RevisionId;
    use adamviz_services::approvals::SignError;

    /// The form's `decision` and `meaning` (empty: none).
    pub(super) fn decision_of(
        decision: &str,
        meaning: Option<&str>,
    ) -> Result<(Decision, Option<SignatureMeaning>), AppError> {
        let decision = match decision {
            "approved" => Decision::Approved,
            "changes_requested" => Decision::ChangesRequested,
            other => {
                return Err(AppError::invalid(
                    "decision",
                    format!("{other:?} is not a decision (approved or changes_requested)"),
                ))
            }
        };
        let meaning = match meaning.filter(|m| !m.is_empty()) {
            None => None,
            Some(text) => Some(SignatureMeaning::parse(text).ok_or_else(|| {
                AppError::invalid("meaning", format!("{text:?} is not a meaning"))
            })?),
        };
        Ok((decision, meaning))
    }

    /// What the page is told when signing revision `id` is refused.
    pub(super) fn refusal(error: SignError, id: &RevisionId) -> AppError {
        let message = error.to_string();
        match error {
            SignError::NotReviewer | SignError::OwnRevision => AppError::Forbidden {
                needed: "reviewer (not the revision's author)".to_owned(),
            },
            SignError::AdminCannotSign => AppError::Forbidden {
                needed: "reviewer (without admin: separation of duties)".to_owned(),
            },
            SignError::PasswordNotOwn => AppError::PasswordChangeRequired,
            SignError::NoRevision(_) => AppError::NotFound(format!("revision {id}")),
            SignError::NotVerified(_) | SignError::HeadMoved | SignError::ReproductionFailed => {
                AppError::Conflict(message)
            }
            SignError::MeaningMissing => AppError::invalid("meaning", message),
            SignError::CommentMissing | SignError::CommentTooLong => {
                AppError::invalid("comment", message)
            }
            SignError::WrongPassword { .. } => AppError::invalid("password", message),
            SignError::UserNameMissing | SignError::WrongUserName => {
                AppError::invalid("user_name", message)
            }
            SignError::Locked { .. } => AppError::Locked(message),
            SignError::Database(_)
            | SignError::Repository(_)
            | SignError::Ledger(_)
            | SignError::Approve(_)
            | SignError::NoEvidence(_)
            | SignError::SpecHash { .. } => internal(message),
        }
    }
}

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
        let id = self::revision_id(&revision_id)?;
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
        let (a_id, b_id) = (revision_id(&a)?, revision_id(&b)?);
        context()?
            .services
            .compare(&a_id, &b_id, &account)
            .await
            .map_err(internal)?
            .map_err(|missing| AppError::NotFound(format!("revision {missing}")))
    })
    .await
}
