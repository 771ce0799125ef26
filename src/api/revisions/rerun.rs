//! `rerun_on_newer_cut`: "Re-run on the new data" (authors), the draft page of the revision's
//! question on the newest later cut of its dataset.

use leptos::prelude::*;

use crate::api::error::AppError;

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
        let id = super::revision_id(&revision_id)?;
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
