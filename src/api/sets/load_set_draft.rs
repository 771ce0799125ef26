//! `load_set_draft`: the set's draft page: every parameter's draft with the address's answers.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::SetAddress;
use crate::api::error::AppError;
use adamviz_model::figure_set::SetDraftView;

/// The set's draft page: every parameter's draft with the address's answers.
#[server(prefix = "/api", endpoint = "sets/draft")]
pub async fn load_set_draft(content_hash: String, query: String) -> Result<SetDraftView, AppError> {
    use crate::api::{boundary::*, datasets::loaded_dataset, drafts::DraftAddress};
    use adamviz_model::digest::Sha256Digest;
    use adamviz_services::figure_sets::draft_set;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        let address = SetAddress::parse(&query);
        if address.question.trim().is_empty() {
            return Err(AppError::invalid(
                "question",
                "ask a question first, e.g. \"every parameter by visit and arm\"",
            ));
        }
        let shared = address.shared_answers()?;
        let (summary, loaded) = loaded_dataset(&context, &content_hash).await?;
        let digest = Sha256Digest::try_from(summary.content_hash.clone()).map_err(internal)?;
        tokio::task::spawn_blocking(move || {
            let drafted = draft_set(
                &address.question,
                &loaded.profile,
                &loaded.table,
                digest,
                shared.as_ref(),
                &address.members,
            )
            .map_err(|e| AppError::invalid("question", e.to_string()))?;
            let change = DraftAddress {
                question: address.question.clone(),
                answers: Some(drafted.shared_answers.clone()),
                move_item: None,
                parent: None,
                opened: Vec::new(),
            };
            Ok(SetDraftView {
                change_shared_href: change.href(&summary.content_hash),
                dataset: summary,
                question: address.question,
                shared_answers: drafted.shared_answers,
                shared: drafted.shared,
                shared_errors: drafted.shared_errors,
                members: drafted.members,
                revises: address.revises,
                opened: address.opened,
            })
        })
        .await
        .map_err(internal)?
    })
    .await
}
