//! Figure sets: the set's draft page (the shared answers once, then each parameter's own with
//! its small preview), Confirm (one revision per parameter, linked as a set), the set's page
//! and Run all. Signing a figure of a set is `revisions/sign`, with the set's page to return to.
//!
//! The set's draft page is a function of its address (`/datasets/HASH/set?question=…&answers[…]
//! …&members[CODE][…]`), so it also works without wasm: "Update the set" sends the form to the
//! page itself (GET) and Confirm posts it.

mod confirm_set;
mod get_set;
mod load_set_draft;
mod rerun_set_on_newer_cut;
mod run_set;

pub use confirm_set::{confirm_set, ConfirmSet};
pub use get_set::{get_set, GetSet};
pub use load_set_draft::{load_set_draft, LoadSetDraft};
pub use rerun_set_on_newer_cut::{rerun_set_on_newer_cut, RerunSetOnNewerCut};
pub use run_set::{run_set, RunSet};

#[cfg(feature = "ssr")]
pub mod evidence;

use serde::{Deserialize, Serialize};

use crate::api::error::AppError;
use adamviz_model::{draft::DraftAnswers, figure_set::MemberAnswerMap};

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
