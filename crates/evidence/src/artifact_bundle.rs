//! `artifact_bundle` (schema `artifact-bundle-v1`): the artifacts a passing attempt binds to
//! its revision, once, each by SHA-256 and size in the content-addressed store: the script
//! that ran, the PNG, the statistics, the environment record and the snapshot CSV.

use crate::domain::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{record::EvidenceRecord, schemas::ARTIFACT_BUNDLE_V1};
use crate::domain::digest::Sha256Digest;

/// One stored artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    /// Its file name in a bundle (`script.R`, `plot.png`, …).
    pub name: String,
    /// SHA-256 of its bytes: its name in the object store.
    pub sha256: Sha256Digest,
    /// Size in bytes.
    pub size: u64,
}

impl ArtifactRef {
    /// The reference of `bytes` called `name`.
    pub fn of(name: &str, bytes: &[u8]) -> Self {
        use sha2::Digest as _;
        Self {
            name: name.to_owned(),
            sha256: Sha256Digest::from_bytes(sha2::Sha256::digest(bytes).into()),
            size: bytes.len() as u64,
        }
    }
}

/// The bundle's artifacts, by role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleArtifacts {
    /// `script.R`, the bytes that ran.
    pub script: ArtifactRef,
    /// `plot.png`.
    pub plot: ArtifactRef,
    /// `statistics.json`, as R wrote it.
    pub statistics: ArtifactRef,
    /// `environment.json`, as R wrote it.
    pub environment: ArtifactRef,
    /// `snapshot.csv`, the selected records handed to R.
    pub snapshot: ArtifactRef,
}

impl BundleArtifacts {
    /// Every artifact, in a fixed order.
    pub fn all(&self) -> [&ArtifactRef; 5] {
        [
            &self.script,
            &self.plot,
            &self.statistics,
            &self.environment,
            &self.snapshot,
        ]
    }
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactBundleRecord {
    /// Always `artifact_bundle`.
    pub kind: String,
    /// Always `artifact-bundle-v1`.
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// The attempt that produced it.
    pub attempt_id: AttemptId,
    /// The passing verification it rests on.
    pub verification_hash: Sha256Digest,
    /// The artifacts.
    pub artifacts: BundleArtifacts,
    /// Canonical hash of the statistics.
    pub analytical_hash: Sha256Digest,
    /// SHA-256 of the PNG.
    pub image_hash: Sha256Digest,
    /// Canonical hash of the selected records.
    pub snapshot_hash: Sha256Digest,
    /// When it was accepted.
    pub accepted_at: String,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// What a bundle binds (the record without its bookkeeping).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleToAccept {
    /// The artifacts.
    pub artifacts: BundleArtifacts,
    /// Canonical hash of the statistics.
    pub analytical_hash: Sha256Digest,
    /// Canonical hash of the selected records.
    pub snapshot_hash: Sha256Digest,
    /// The passing `execution_verification` record.
    pub verification_hash: Sha256Digest,
}

impl ArtifactBundleRecord {
    /// The record of `bundle` for `attempt_id` of `revision_id`, not yet sealed.
    pub fn new(
        revision_id: RevisionId,
        attempt_id: AttemptId,
        bundle: &BundleToAccept,
        accepted_at: String,
    ) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "artifact-bundle-v1".to_owned(),
            revision_id,
            attempt_id,
            verification_hash: bundle.verification_hash,
            image_hash: bundle.artifacts.plot.sha256,
            artifacts: bundle.artifacts.clone(),
            analytical_hash: bundle.analytical_hash,
            snapshot_hash: bundle.snapshot_hash,
            accepted_at,
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(ArtifactBundleRecord, "artifact_bundle", ARTIFACT_BUNDLE_V1);
