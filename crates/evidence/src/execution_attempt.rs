//! `execution_attempt` (schema `execution-attempt-v2`, reads v1 too): one event of a governed execution
//! attempt. `started` records the captured revision version and the fingerprint of the request
//! and the inputs actually supplied; exactly one terminal event follows, `succeeded` (naming
//! the passing verification) or `failed` (with the reason, and the verification when there
//! was one). Each is appended in the transaction that changes the attempt row.

use adamviz_model::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{EXECUTION_ATTEMPT_V1, EXECUTION_ATTEMPT_V2},
};
use adamviz_model::digest::Sha256Digest;

/// What happened to the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptEvent {
    /// It started (active).
    Started,
    /// It ended with an accepted bundle and a promotion.
    Succeeded,
    /// It ended without one.
    Failed,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionAttemptRecord {
    /// Always `execution_attempt`.
    pub kind: String,
    /// `execution-attempt-v2` when written (`execution-attempt-v1` in older records).
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// The attempt (`att-` and 32 hex digits).
    pub attempt_id: AttemptId,
    /// What happened.
    pub event: AttemptEvent,
    /// The execution request the attempt runs.
    pub request_hash: Sha256Digest,
    /// The fingerprint of the request and the inputs supplied.
    pub fingerprint: Sha256Digest,
    /// The revision version captured at start.
    pub captured_version: i64,
    /// The verification the terminal event rests on (none at start, or when none was made).
    pub verification_hash: Option<Sha256Digest>,
    /// Why it failed.
    pub reason: Option<String>,
    /// When it happened.
    pub at: String,
    /// Who acted (from `execution-attempt-v2`; absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<super::actor::Actor>,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// The facts every event of one attempt repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptFacts {
    /// The revision.
    pub revision_id: RevisionId,
    /// The attempt.
    pub attempt_id: AttemptId,
    /// The request.
    pub request_hash: Sha256Digest,
    /// The fingerprint.
    pub fingerprint: Sha256Digest,
    /// The captured version.
    pub captured_version: i64,
    /// Who acted.
    pub actor: super::actor::Actor,
}

impl ExecutionAttemptRecord {
    /// The record of `event`, not yet sealed.
    pub fn new(
        facts: AttemptFacts,
        event: AttemptEvent,
        verification_hash: Option<Sha256Digest>,
        reason: Option<String>,
        at: String,
    ) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "execution-attempt-v2".to_owned(),
            revision_id: facts.revision_id,
            attempt_id: facts.attempt_id,
            event,
            request_hash: facts.request_hash,
            fingerprint: facts.fingerprint,
            captured_version: facts.captured_version,
            verification_hash,
            reason,
            at,
            actor: Some(facts.actor),
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(
    ExecutionAttemptRecord,
    "execution_attempt",
    EXECUTION_ATTEMPT_V2,
    EXECUTION_ATTEMPT_V1
);
