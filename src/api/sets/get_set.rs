//! `get_set`: a figure set's page: each figure's status and review, the counts.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::{dataset_name, set_id};
use crate::api::error::AppError;
use adamviz_model::figure_set::SetView;

/// A figure set's page: each figure's status and review, the counts.
#[server(prefix = "/api", endpoint = "sets/detail")]
pub async fn get_set(id: String) -> Result<SetView, AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::Role;
    use adamviz_services::figure_sets::{any_to_run, summary_of};
    boundary(async move {
        let account = current_account().await?;
        let context = context()?;
        let set_id = set_id(&id)?;
        let set = context
            .services
            .stored_set(&set_id)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("figure set {id}")))?;
        let members = context
            .services
            .set_members(&set, &account)
            .await
            .map_err(internal)?;
        let dataset_name = dataset_name(&context, &set.dataset_hash).await?;
        Ok(SetView {
            id: set.id.to_string(),
            dataset_hash: set.dataset_hash.clone(),
            dataset_name,
            question: set.question.clone(),
            created_by: set.created_by_name.clone(),
            created_at: set.created_at.clone(),
            summary: summary_of(&members),
            can_run_all: account.has(Role::Author) && any_to_run(&members),
            run_key: format!("{:032x}", rand::random::<u128>()),
            signing_needs_user_name: !signing_session_open(&session().await?).await?,
            revises: set.revises.as_ref().map(|r| r.to_string()),
            can_rerun: account.has(Role::Author),
            newer_cut: context
                .services
                .newer_cut_of(&set.dataset_hash)
                .await
                .map_err(internal)?,
            members,
        })
    })
    .await
}
