//! `sign_revision`: a reviewer signs a Verified revision (approved, or changes requested), the
//! password checked again; the signing form's words and the service's refusals as the page is told
//! them.

// One argument per field of the signing form (a server function's arguments are its form,
// and the browser build's generated client function does not carry an item's own `allow`).
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use crate::api::error::AppError;

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
        let id = super::revision_id(&revision_id)?;
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
