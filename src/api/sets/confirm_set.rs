//! `confirm_set`: confirms the set (authors): one revision per ticked parameter, then the set.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{set_id, SetAddress};
use crate::api::error::AppError;
use adamviz_model::figure_set::MemberAnswerMap;
use adamviz_model::figure_set::SetConfirmOutcome;

/// Confirms the set (authors): one revision per ticked parameter, then the set. A refusal names
/// each problem by parameter; a plain form post (no wasm) goes back to the set's draft page.
#[server(prefix = "/api", endpoint = "sets/confirm")]
pub async fn confirm_set(
    content_hash: String,
    question: String,
    shared: String,
    #[server(default)] members: MemberAnswerMap,
    #[server(default)] revises: Option<String>,
) -> Result<SetConfirmOutcome, AppError> {
    use crate::api::{boundary::*, datasets::loaded_dataset};
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::{
        accounts::{now, timestamp},
        confirm::ConfirmError,
        figure_sets::{confirm_set, SetConfirmed, SetRequest},
    };
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let revises = revises.filter(|r| !r.trim().is_empty());
        let revised_set = revises.as_deref().map(set_id).transpose()?;
        let address = SetAddress {
            question: question.clone(),
            answers: None,
            shared: Some(shared),
            members,
            revises,
            opened: Vec::new(),
        };
        let request = SetRequest {
            question,
            shared: address.shared_answers()?,
            members: address.members.clone(),
            revises: revised_set,
        };
        let (summary, loaded) = loaded_dataset(&context, &content_hash).await?;
        let outcome = confirm_set(
            context.services.execution(),
            &summary,
            loaded,
            request,
            &Actor::web(&account),
            timestamp(now()),
        )
        .await;
        match outcome {
            Ok(SetConfirmed::Created(set)) => {
                leptos_axum::redirect(&format!("/sets/{}", set.id));
                Ok(SetConfirmOutcome::Created {
                    set_id: set.id.to_string(),
                })
            }
            Ok(SetConfirmed::Refused(errors)) => {
                if accepts_html() {
                    leptos_axum::redirect(&address.href(&content_hash));
                }
                Ok(SetConfirmOutcome::Refused { errors })
            }
            Err(ConfirmError::Question(error)) => {
                Err(AppError::invalid("question", error.to_string()))
            }
            Err(error) => Err(internal(error)),
        }
    })
    .await
}
