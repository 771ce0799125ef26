//! Figure sets: the set's draft page (the shared answers once, then each parameter's own with
//! its small preview), Confirm (one revision per parameter, linked as a set), the set's page
//! and Run all. Signing a figure of a set is `revisions/sign`, with the set's page to return to.
//!
//! The set's draft page is a function of its address (`/datasets/HASH/set?question=…&answers[…]
//! …&members[CODE][…]`), so it also works without wasm: "Update the set" sends the form to the
//! page itself (GET) and Confirm posts it.

#[cfg(feature = "ssr")]
pub mod evidence;

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::api::error::AppError;
use adamviz_model::{
    draft::DraftAnswers,
    figure_set::{MemberAnswerMap, SetConfirmOutcome, SetDraftView, SetView},
};

/// The set draft page's address, parsed: the question, the shared answers (absent: the
/// proposals) and the per-parameter answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetAddress {
    /// The question, verbatim.
    #[serde(default)]
    pub question: String,
    /// The shared answers (the single-figure form's).
    #[serde(default)]
    pub answers: Option<DraftAnswers>,
    /// The shared answers as JSON (the set form carries them in one field).
    #[serde(default)]
    pub shared: Option<String>,
    /// Per parameter code.
    #[serde(default)]
    pub members: MemberAnswerMap,
    /// The set this draft re-runs on a newer data cut (`set-…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revises: Option<String>,
    /// The shared questions the re-run left open, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opened: Vec<String>,
}

impl SetAddress {
    /// Parses the query part of the address (without `?`); an unreadable one is empty.
    #[cfg(feature = "ssr")]
    pub fn parse(query: &str) -> Self {
        serde_qs::Config::new(5, false)
            .deserialize_str(query)
            .unwrap_or_default()
    }

    /// The shared answers, from `shared` (JSON) or `answers`.
    pub fn shared_answers(&self) -> Result<Option<DraftAnswers>, AppError> {
        match self.shared.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(json) => serde_json::from_str(json).map(Some).map_err(|e| {
                AppError::invalid("shared", format!("the shared answers do not read: {e}"))
            }),
            None => Ok(self.answers.clone()),
        }
    }

    /// The address of the set draft page of `content_hash` with these answers.
    #[cfg(feature = "ssr")]
    pub fn href(&self, content_hash: &str) -> String {
        let query = serde_qs::to_string(self).unwrap_or_default();
        format!("/datasets/{content_hash}/set?{query}")
    }
}

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

/// Queues every figure of the set that is Draft and not running (authors); how many.
#[server(prefix = "/api", endpoint = "sets/run")]
pub async fn run_set(set_id: String, idempotency_key: String) -> Result<usize, AppError> {
    use crate::api::boundary::*;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::runs::StartRunError;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::set_id(&set_id)?;
        let set = context
            .services
            .stored_set(&id)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("figure set {set_id}")))?;
        let queued = context
            .services
            .run_set(&set, &idempotency_key, &Actor::web(&account))
            .await
            .map_err(|error| match error {
                StartRunError::BadKey => AppError::invalid("idempotency_key", error.to_string()),
                other => internal(other),
            })?;
        if accepts_html() {
            leptos_axum::redirect(&format!("/sets/{set_id}"));
        }
        Ok(queued)
    })
    .await
}

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

#[cfg(feature = "ssr")]
fn set_id(text: &str) -> Result<adamviz_model::ids::FigureSetId, AppError> {
    adamviz_model::ids::FigureSetId::parse(text)
        .map_err(|_| AppError::NotFound(format!("figure set {text}")))
}

#[cfg(feature = "ssr")]
async fn dataset_name(
    api: &crate::api::boundary::ApiContext,
    hash: &str,
) -> Result<String, AppError> {
    use crate::api::boundary::internal;
    let summary = api
        .services
        .dataset(hash.to_owned())
        .await
        .map_err(internal)?;
    Ok(summary
        .map(|s| s.file_name)
        .unwrap_or_else(|| hash.to_owned()))
}
