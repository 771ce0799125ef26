//! `rerun_set_on_newer_cut`: "Re-run on the new data" for a set (authors): the set's draft page on
//! the newest later cut of its dataset, with the set's shared answers (a list that no longer fits
//! left open) and each figure's own; confirming it makes a set whose figures revise this set's.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{set_id, SetAddress};
use crate::api::error::AppError;
#[cfg(feature = "ssr")]
use adamviz_model::draft::DraftAnswers;

/// "Re-run on the new data" for a set (authors): the set's draft page on the newest later cut of
/// its dataset, with the set's shared answers (a list that no longer fits left open) and each
/// figure's own; confirming it makes a set whose figures revise this set's. Opens the page.
#[server(prefix = "/api", endpoint = "sets/rerun")]
pub async fn rerun_set_on_newer_cut(set_id: String) -> Result<String, AppError> {
    use crate::api::{boundary::*, datasets::loaded_dataset};
    use adamviz_model::{account::Role, figure_set::MemberAnswers};
    use adamviz_services::data_cuts::carried_answers;
    boundary(async move {
        require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::set_id(&set_id)?;
        let set = context
            .services
            .stored_set(&id)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("figure set {set_id}")))?;
        let cut = context
            .services
            .newer_cut_of(&set.dataset_hash)
            .await
            .map_err(internal)?
            .ok_or_else(|| {
                AppError::Conflict(format!(
                    "the dataset of {set_id} has no newer cut: upload the new delivery first"
                ))
            })?;
        let shared: DraftAnswers = serde_json::from_str(&set.shared_answers).map_err(internal)?;
        let (_, old) = loaded_dataset(&context, &set.dataset_hash).await?;
        let (_, new) = loaded_dataset(&context, &cut.content_hash).await?;
        let (carried, opened) = carried_answers(&shared, &old.profile, &new.profile);
        let mut members = context
            .services
            .member_answers(&set)
            .await
            .map_err(internal)?;
        // Only the earlier set's parameters are ticked; the others are listed, unticked.
        for parameter in &new.profile.parameters {
            members
                .entry(parameter.code.clone())
                .or_insert_with(|| MemberAnswers {
                    listed: Some("1".to_owned()),
                    ..MemberAnswers::default()
                });
        }
        let address = SetAddress {
            question: set.question.clone(),
            answers: None,
            shared: Some(serde_json::to_string(&carried).map_err(internal)?),
            members,
            revises: Some(set_id.clone()),
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
