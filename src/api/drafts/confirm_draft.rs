//! `confirm_draft`: confirms the answers and creates the revision (authors).

use leptos::prelude::*;

use super::ConfirmOutcome;
#[cfg(feature = "ssr")]
use super::{parent_of, DraftAddress};
use crate::api::error::AppError;
use adamviz_model::draft::DraftAnswers;

/// Confirms the answers and creates the revision (authors). A refusal names each problem beside
/// its control; a plain form post (no wasm) is sent back to the draft page with its answers.
#[server(prefix = "/api", endpoint = "drafts/confirm")]
pub async fn confirm_draft(
    content_hash: String,
    question: String,
    answers: DraftAnswers,
    #[server(default)] parent: Option<String>,
) -> Result<ConfirmOutcome, AppError> {
    use crate::api::boundary::*;
    use crate::api::datasets::loaded_dataset;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::confirm::{confirm, ConfirmError, ConfirmRequest, Confirmed};
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let parent_id = parent_of(parent.as_deref())?;
        let (summary, loaded) = loaded_dataset(&context, &content_hash).await?;
        let request = ConfirmRequest {
            question: question.clone(),
            answers: Some(answers.clone()),
            parent: parent_id,
        };
        let made = match confirm(
            context.services.execution(),
            &summary,
            loaded,
            request,
            &Actor::web(&account),
        )
        .await
        {
            Ok(Confirmed::Created(made)) => made,
            Ok(Confirmed::Refused { errors }) => {
                if accepts_html() {
                    let back = DraftAddress {
                        question,
                        answers: Some(answers),
                        move_item: None,
                        parent,
                        opened: Vec::new(),
                    };
                    leptos_axum::redirect(&back.href(&content_hash));
                }
                return Ok(ConfirmOutcome::Refused { errors });
            }
            Err(ConfirmError::Question(error)) => {
                return Err(AppError::invalid("question", error.to_string()))
            }
            Err(error @ ConfirmError::NoParent(_)) => {
                return Err(AppError::invalid("parent", error.to_string()))
            }
            Err(error) => return Err(internal(error)),
        };
        let revision_id = made.revision.id.to_string();
        leptos_axum::redirect(&format!("/revisions/{revision_id}"));
        Ok(ConfirmOutcome::Created { revision_id })
    })
    .await
}
