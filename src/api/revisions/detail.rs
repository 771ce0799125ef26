//! `get_revision`: one revision with everything its page shows.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::revision::RevisionDetail;

/// One revision with everything its page shows.
#[server(prefix = "/api", endpoint = "revisions/detail")]
pub async fn get_revision(id: String) -> Result<RevisionDetail, AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::Role;
    boundary(async move {
        let account = current_account().await?;
        let context = context()?;
        let revision = super::revision_id(&id)?;
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
