//! `revision_lifecycle` (schema `revision-lifecycle-v3`, reads v2 and v1 too): one change of a
//! revision's status, appended in the transaction that makes it: `created` (Draft or
//! Experimental/Draft, at version one, naming the revision it revises), `verified` (from Draft,
//! naming the attempt, the accepted bundle and the passing verification) and `approved` (from
//! Verified, naming the `approval` record that signed it).

use adamviz_model::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{REVISION_LIFECYCLE_V1, REVISION_LIFECYCLE_V2, REVISION_LIFECYCLE_V3},
};
use adamviz_model::{digest::Sha256Digest, revision::RevisionStatus};

/// The change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// Materialized.
    Created,
    /// Promoted through passing verification and an accepted bundle.
    Verified,
    /// Signed by a second person (from `revision-lifecycle-v3`).
    Approved,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevisionLifecycleRecord {
    /// Always `revision_lifecycle`.
    pub kind: String,
    /// `revision-lifecycle-v3` when written (v2 and v1 in older records).
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// The change.
    pub event: LifecycleEvent,
    /// The status before (none at creation).
    pub from_status: Option<RevisionStatus>,
    /// The status after.
    pub to_status: RevisionStatus,
    /// The revision version after.
    pub version: i64,
    /// The confirmed spec.
    pub spec_hash: Sha256Digest,
    /// The attempt that caused it.
    pub attempt_id: Option<AttemptId>,
    /// The accepted `artifact_bundle` record.
    pub bundle_hash: Option<Sha256Digest>,
    /// The passing `execution_verification` record.
    pub verification_hash: Option<Sha256Digest>,
    /// The `approval` record that signed it (`approved` only; from `revision-lifecycle-v3`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub approval_hash: Option<Option<Sha256Digest>>,
    /// The revision this one revises (`created` only; from `revision-lifecycle-v3`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub parent_revision_id: Option<Option<RevisionId>>,
    /// When it happened.
    pub at: String,
    /// Who acted (from `revision-lifecycle-v2`; absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<super::actor::Actor>,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// A field that is present (possibly null) is `Some`; an absent one stays `None` (its
/// `default`): v3 records write these fields as null, older versions lack them, and a record
/// must serialize back to the bytes it was read from.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// What a promotion rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotionBasis {
    /// The attempt.
    pub attempt_id: AttemptId,
    /// The `artifact_bundle` record.
    pub bundle_hash: Sha256Digest,
    /// The passing `execution_verification` record.
    pub verification_hash: Sha256Digest,
}

impl RevisionLifecycleRecord {
    /// The creation of `revision_id` as `status` (revising `parent`, if any), not yet sealed.
    pub fn created(
        revision_id: RevisionId,
        status: RevisionStatus,
        spec_hash: Sha256Digest,
        parent: Option<RevisionId>,
        at: String,
        actor: super::actor::Actor,
    ) -> Self {
        let mut record = Self::new(
            revision_id,
            LifecycleEvent::Created,
            None,
            status,
            1,
            spec_hash,
            None,
            at,
            actor,
        );
        record.parent_revision_id = Some(parent);
        record
    }

    /// The approval of `revision_id` (Verified) at `version`, signed by `approval_hash`, not
    /// yet sealed.
    pub fn approved(
        revision_id: RevisionId,
        version: i64,
        spec_hash: Sha256Digest,
        approval_hash: Sha256Digest,
        at: String,
        actor: super::actor::Actor,
    ) -> Self {
        let mut record = Self::new(
            revision_id,
            LifecycleEvent::Approved,
            Some(RevisionStatus::Verified),
            RevisionStatus::Approved,
            version,
            spec_hash,
            None,
            at,
            actor,
        );
        record.approval_hash = Some(Some(approval_hash));
        record
    }

    /// The promotion of `revision_id` to Verified at `version`, not yet sealed.
    pub fn verified(
        revision_id: RevisionId,
        version: i64,
        spec_hash: Sha256Digest,
        basis: PromotionBasis,
        at: String,
        actor: super::actor::Actor,
    ) -> Self {
        Self::new(
            revision_id,
            LifecycleEvent::Verified,
            Some(RevisionStatus::Draft),
            RevisionStatus::Verified,
            version,
            spec_hash,
            Some(basis),
            at,
            actor,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        revision_id: RevisionId,
        event: LifecycleEvent,
        from_status: Option<RevisionStatus>,
        to_status: RevisionStatus,
        version: i64,
        spec_hash: Sha256Digest,
        basis: Option<PromotionBasis>,
        at: String,
        actor: super::actor::Actor,
    ) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "revision-lifecycle-v3".to_owned(),
            revision_id,
            event,
            from_status,
            to_status,
            version,
            spec_hash,
            attempt_id: basis.as_ref().map(|b| b.attempt_id.clone()),
            bundle_hash: basis.as_ref().map(|b| b.bundle_hash),
            verification_hash: basis.as_ref().map(|b| b.verification_hash),
            approval_hash: Some(None),
            parent_revision_id: Some(None),
            at,
            actor: Some(actor),
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(
    RevisionLifecycleRecord,
    "revision_lifecycle",
    REVISION_LIFECYCLE_V3,
    REVISION_LIFECYCLE_V2,
    REVISION_LIFECYCLE_V1
);
