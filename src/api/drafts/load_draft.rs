//! `load_draft`: the draft page: the question's draft with the answers of its address applied.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{apply_move, parent_of, summary_digest, DraftAddress};
use crate::api::error::AppError;
use adamviz_model::draft::DraftView;

/// The draft page: the question's draft with the answers of its address applied.
#[server(prefix = "/api", endpoint = "drafts/load")]
pub async fn load_draft(content_hash: String, query: String) -> Result<DraftView, AppError> {
    use crate::api::boundary::*;
    use crate::api::datasets::loaded_dataset;
    use adamviz_services::drafts;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        let address = DraftAddress::parse(&query);
        if address.question.trim().is_empty() {
            return Err(AppError::invalid(
                "question",
                "ask a question first, e.g. \"ALT over time by arm\"",
            ));
        }
        let mut answers = address.answers.clone();
        if let (Some(answers), Some(instruction)) = (answers.as_mut(), &address.move_item) {
            apply_move(answers, instruction);
        }
        let parent = parent_of(address.parent.as_deref())?.map(|id| id.to_string());
        let (summary, loaded) = loaded_dataset(&context, &content_hash).await?;
        let digest = summary_digest(&summary)?;
        tokio::task::spawn_blocking(move || {
            let answered = drafts::answer_draft(
                &address.question,
                &loaded.profile,
                &loaded.table,
                digest,
                answers.as_ref(),
            )
            .map_err(|e| AppError::invalid("question", e.to_string()))?;
            let preview = answered
                .confirmed
                .as_ref()
                .map(|spec| drafts::preview(spec, &loaded.table))
                .transpose()
                .map_err(internal)?;
            Ok(DraftView {
                filter_columns: drafts::filter_columns(&answered.questions, &loaded.profile),
                dataset: summary,
                question: address.question,
                matches: answered.matches,
                questions: answered.questions,
                answers: answered.answers,
                errors: answered.errors,
                preview,
                parent,
                opened: address.opened,
            })
        })
        .await
        .map_err(internal)?
    })
    .await
}
