//! `preview_draft`: the questions, errors and preview for changed answers (the page calls it as
//! they change).

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{preview_outcome, summary_digest};
use crate::api::error::AppError;
use adamviz_model::draft::DraftAnswers;
use adamviz_model::draft::PreviewOutcome;

/// The questions, errors and preview for changed answers (the page calls it as they change).
#[server(prefix = "/api", endpoint = "drafts/preview")]
pub async fn preview_draft(
    content_hash: String,
    question: String,
    answers: DraftAnswers,
) -> Result<PreviewOutcome, AppError> {
    use crate::api::boundary::*;
    use crate::api::datasets::loaded_dataset;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        let (summary, loaded) = loaded_dataset(&context, &content_hash).await?;
        let digest = summary_digest(&summary)?;
        tokio::task::spawn_blocking(move || {
            preview_outcome(&question, &loaded.profile, &loaded.table, digest, &answers)
        })
        .await
        .map_err(internal)?
    })
    .await
}
