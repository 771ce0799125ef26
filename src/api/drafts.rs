//! Drafts: a question over a dataset becomes a draft with its explanations and confirmation
//! questions; the form's answers come back as the questions, the errors beside each control
//! and the live preview; confirming creates the revision (the execution service's
//! `materialize`) and opens its page.
//!
//! The draft page is a function of its address (`/datasets/HASH/draft?question=…&answers[…]…`),
//! so the form also works without wasm: "Update preview" and the move buttons re-render it from
//! the answers they send, and a refused confirmation returns to it with the errors.

mod confirm_draft;
mod load_draft;
mod preview_draft;

pub use confirm_draft::{confirm_draft, ConfirmDraft};
pub use load_draft::{load_draft, LoadDraft};
pub use preview_draft::{preview_draft, PreviewDraft};

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use crate::api::error::AppError;
#[cfg(feature = "ssr")]
use adamviz_model::draft::PreviewOutcome;
use adamviz_model::draft::{DraftAnswers, FieldError};

/// The draft page's address, parsed: the question, the answers (absent on the first visit:
/// the proposals stand) and a move-up/down button pressed without wasm.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DraftAddress {
    /// The question, verbatim.
    #[serde(default)]
    pub question: String,
    /// The form's answers.
    #[serde(default)]
    pub answers: Option<DraftAnswers>,
    /// `treatment_levels:up:VALUE` or `visits:down:VALUE`.
    #[serde(default, rename = "move")]
    pub move_item: Option<String>,
    /// The revision being revised (`rev-…`), when the draft was started with "Revise".
    #[serde(default)]
    pub parent: Option<String>,
    /// The questions a re-run on a newer data cut left open, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opened: Vec<String>,
}

impl DraftAddress {
    /// Parses the query part of a draft page's address (without `?`); an unreadable address is
    /// the question alone, or nothing.
    #[cfg(feature = "ssr")]
    pub fn parse(query: &str) -> Self {
        serde_qs::Config::new(5, false)
            .deserialize_str(query)
            .unwrap_or_else(|_| {
                let question = query
                    .split('&')
                    .find_map(|p| p.strip_prefix("question="))
                    .map(|q| q.replace('+', " "))
                    .unwrap_or_default();
                Self {
                    question: percent_decode(&question),
                    ..Self::default()
                }
            })
    }

    /// The address of the draft page of `content_hash` with these answers.
    #[cfg(feature = "ssr")]
    pub fn href(&self, content_hash: &str) -> String {
        let query = serde_qs::to_string(self).unwrap_or_default();
        format!("/datasets/{content_hash}/draft?{query}")
    }
}

/// `%XX` sequences decoded; invalid UTF-8 replaced, an incomplete sequence kept as it is.
#[cfg(feature = "ssr")]
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Moves `value` of list `id` one place up or down (`id:up:VALUE`), as a move button pressed
/// without wasm asks.
pub fn apply_move(answers: &mut DraftAnswers, instruction: &str) {
    let mut parts = instruction.splitn(3, ':');
    let (Some(id), Some(direction), Some(value)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let list = match id {
        "treatment_levels" => &mut answers.treatment_levels,
        "visits" => &mut answers.visits,
        _ => return,
    };
    move_in(list, value, direction == "up");
}

/// Moves `value` in `list` one place towards the front (`up`) or the back.
pub fn move_in(list: &mut [String], value: &str, up: bool) {
    if let Some(at) = list.iter().position(|item| item == value) {
        move_at(list, at, up);
    }
}

/// Moves the item at `at` one place towards the front (`up`) or the back; at an end, nothing.
pub fn move_at<T>(list: &mut [T], at: usize, up: bool) {
    if up && at > 0 {
        list.swap(at, at - 1);
    } else if !up && at + 1 < list.len() {
        list.swap(at, at + 1);
    }
}

/// What confirming did: the new revision, or the errors beside the controls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConfirmOutcome {
    /// The revision made (its page is opened).
    Created {
        /// `rev-…`.
        revision_id: String,
    },
    /// Refused; nothing was made.
    Refused {
        /// Per question.
        errors: Vec<FieldError>,
    },
}

/// The revision a draft revises, from its address or form: a revision id, or nothing.
#[cfg(feature = "ssr")]
fn parent_of(text: Option<&str>) -> Result<Option<adamviz_model::ids::RevisionId>, AppError> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => adamviz_model::ids::RevisionId::parse(text)
            .map(Some)
            .map_err(|_| AppError::invalid("parent", format!("{text:?} is not a revision id"))),
    }
}

#[cfg(feature = "ssr")]
fn summary_digest(
    summary: &adamviz_model::dataset::DatasetSummary,
) -> Result<adamviz_model::digest::Sha256Digest, AppError> {
    adamviz_model::digest::Sha256Digest::try_from(summary.content_hash.clone())
        .map_err(crate::api::boundary::internal)
}

/// [`preview_draft`] as a plain function (the benchmark calls it).
#[cfg(feature = "ssr")]
pub fn preview_outcome(
    question: &str,
    profile: &adamviz_model::profile::DatasetProfile,
    table: &adamviz_engine::ingest::table::Table,
    digest: adamviz_model::digest::Sha256Digest,
    answers: &DraftAnswers,
) -> Result<PreviewOutcome, AppError> {
    use crate::api::boundary::internal;
    use adamviz_services::drafts;
    let answered = drafts::answer_draft(question, profile, table, digest, Some(answers))
        .map_err(|e| AppError::invalid("question", e.to_string()))?;
    let preview = answered
        .confirmed
        .as_ref()
        .map(|spec| drafts::preview(spec, table))
        .transpose()
        .map_err(internal)?;
    Ok(PreviewOutcome {
        questions: answered.questions,
        answers: answered.answers,
        errors: answered.errors,
        preview,
    })
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::DraftAddress;

    /// The hand-written decoder this replaced sliced the text two bytes after a `%`, which
    /// panicked when those bytes split a multi-byte character.
    #[test]
    fn percent_decode_of_a_multibyte_character_after_percent_does_not_panic() {
        // Not a query serde_qs reads (`[` opens a nesting it never closes): the fallback reads
        // the question alone.
        let address = DraftAddress::parse("question=%a\u{e9}t\u{e9}+ALT&x[=");
        assert!(
            address.question.ends_with("t\u{e9} ALT"),
            "{:?}",
            address.question
        );
        let address = DraftAddress::parse("question=ALT%20by%20arm&x[=");
        assert_eq!(address.question, "ALT by arm");
    }
}
