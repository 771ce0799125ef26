//! Confirming a draft, the one use case the web's Confirm, and the benchmarks that confirm
//! through the web's path, call: the question and the typed answers on a stored dataset become
//! a confirmed spec (or the refusals, per question), and the spec a revision
//! ([`ExecutionService::materialize_revising`]: snapshot, compiled script, creation records).
//! The command line confirms a spec file instead (`adamviz spec confirm`) and materializes it
//! through the same service.

use crate::database::on_database;
use std::sync::Arc;

use super::{
    datasets::LoadedDataset,
    drafts::answer_draft,
    error::ReadError,
    execution::{ExecutionService, Materialized, ServiceError, UploadInfo},
};
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    dataset::DatasetSummary,
    digest::Sha256Digest,
    draft::{DraftAnswers, FieldError},
    ids::RevisionId,
    matcher::MatchError,
};
use adamviz_store::repository::get_revision;

/// What to confirm.
#[derive(Debug, Clone)]
pub struct ConfirmRequest {
    /// The question in words.
    pub question: String,
    /// The answers of the confirmation form (none: the matcher's proposals as they are).
    pub answers: Option<DraftAnswers>,
    /// The revision this one revises, if any.
    pub parent: Option<RevisionId>,
}

/// The outcome of a confirmation.
#[derive(Debug)]
pub enum Confirmed {
    /// Every answer held: the revision made.
    Created(Box<Materialized>),
    /// Some answers do not hold: what is wrong, per question. Nothing was written.
    Refused {
        /// The refusals.
        errors: Vec<FieldError>,
    },
}

/// Why a confirmation could not be tried or finished.
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// The question gives no draft on this dataset.
    #[error(transparent)]
    Question(#[from] MatchError),
    /// The revision to revise does not exist.
    #[error("the revision to revise ({0}) does not exist")]
    NoParent(RevisionId),
    /// The parent could not be looked up.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The dataset row names no valid content hash.
    #[error("the dataset's content hash {0:?} is not a SHA-256")]
    DatasetHash(String),
    /// Materializing the revision failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The blocking work stopped before it answered.
    #[error("the draft's work stopped: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
    /// The figure set to revise does not exist.
    #[error("there is no figure set {0}")]
    NoSet(adamviz_model::ids::FigureSetId),
    /// The shared answers could not be written as JSON.
    #[error("the shared answers could not be written: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Confirms `request` on `dataset` (read as `loaded`) as `actor`.
pub async fn confirm(
    execution: &ExecutionService,
    dataset: &DatasetSummary,
    loaded: Arc<LoadedDataset>,
    request: ConfirmRequest,
    actor: &Actor,
) -> Result<Confirmed, ConfirmError> {
    if let Some(parent) = request.parent.clone() {
        let key = parent.clone();
        let found = on_database(execution.database(), move |connection| {
            get_revision(connection, &key)
        })
        .await?;
        if found.is_none() {
            return Err(ConfirmError::NoParent(parent));
        }
    }
    let digest = Sha256Digest::try_from(dataset.content_hash.clone())
        .map_err(|_| ConfirmError::DatasetHash(dataset.content_hash.clone()))?;
    let answered = {
        let loaded = Arc::clone(&loaded);
        let (question, answers) = (request.question.clone(), request.answers.clone());
        // Matching and applying answers read the whole table: off the async executor.
        tokio::task::spawn_blocking(move || {
            answer_draft(
                &question,
                &loaded.profile,
                &loaded.table,
                digest,
                answers.as_ref(),
            )
        })
        .await??
    };
    let Some(spec) = answered.confirmed else {
        return Ok(Confirmed::Refused {
            errors: answered.errors,
        });
    };
    let upload = UploadInfo {
        content_hash: digest,
        classification: dataset.classification.clone(),
        file_name: dataset.file_name.clone(),
        size: dataset.size,
    };
    let made = execution
        .materialize_revising(
            &spec,
            Arc::clone(&loaded.table),
            &upload,
            actor,
            request.parent,
        )
        .await?;
    Ok(Confirmed::Created(Box::new(made)))
}
