//! Revisions: the list, one revision's page, starting its governed run (authors, under an
//! idempotency key), its status, signing, reproducing, the history and the comparison, one
//! server function per file. The live status streams from `events.rs` (server-sent events) and
//! the artifacts are served by `files.rs`; both are plain routes.

#[cfg(feature = "ssr")]
pub mod events;
#[cfg(feature = "ssr")]
pub mod files;

mod compare;
mod detail;
mod history;
mod list;
mod reproduce;
mod rerun;
mod run;
mod sign;
mod status;

pub use compare::{compare_revisions, CompareRevisions};
pub use detail::{get_revision, GetRevision};
pub use history::{revision_history, RevisionHistory};
pub use list::{list_revisions, ListRevisions};
pub use reproduce::{reproduce_revision, ReproduceRevision};
pub use rerun::{rerun_on_newer_cut, RerunOnNewerCut};
pub use run::{run_revision, RunRevision};
pub use sign::{sign_revision, SignOutcome, SignRevision};
pub use status::{revision_status, RevisionStatus};

/// The revision a path or form names; 404 when the text is not a revision id.
#[cfg(feature = "ssr")]
pub(crate) fn revision_id(
    id: &str,
) -> Result<adamviz_model::ids::RevisionId, crate::api::error::AppError> {
    adamviz_model::ids::RevisionId::parse(id)
        .map_err(|_| crate::api::error::AppError::NotFound(format!("revision {id}")))
}
