//! `artifact_bundle` (schema `artifact-bundle-v2`, reads v1 too): the artifacts a passing
//! attempt binds to its revision, once, each by SHA-256 and size in the content-addressed
//! store: the script that ran, the PNG, the statistics, the environment record, the snapshot
//! CSV and (from v2) the report-ready PDF and SVG and the statistics as CSV.

use adamviz_model::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{ARTIFACT_BUNDLE_V1, ARTIFACT_BUNDLE_V2},
};
use adamviz_model::digest::Sha256Digest;

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
    /// `plot.pdf`, the report-ready figure (from `artifact-bundle-v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdf: Option<ArtifactRef>,
    /// `plot.svg`, the report-ready figure (from `artifact-bundle-v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub svg: Option<ArtifactRef>,
    /// `statistics.csv`, the statistics as a table (from `artifact-bundle-v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics_csv: Option<ArtifactRef>,
}

/// The roles of a bundle's artifacts as the record names them, in a fixed order; the last
/// three are absent from `artifact-bundle-v1` records.
pub const ARTIFACT_ROLES: [&str; 8] = [
    "script",
    "snapshot",
    "statistics",
    "plot",
    "environment",
    "pdf",
    "svg",
    "statistics_csv",
];

/// The roles of the report-ready outputs (from `artifact-bundle-v2`).
pub const REPORT_ROLES: [&str; 3] = ["pdf", "svg", "statistics_csv"];

impl BundleArtifacts {
    /// Every artifact the bundle holds, in a fixed order.
    pub fn all(&self) -> Vec<&ArtifactRef> {
        let mut all = vec![
            &self.script,
            &self.plot,
            &self.statistics,
            &self.environment,
            &self.snapshot,
        ];
        all.extend(
            [&self.pdf, &self.svg, &self.statistics_csv]
                .into_iter()
                .flatten(),
        );
        all
    }
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactBundleRecord {
    /// Always `artifact_bundle`.
    pub kind: String,
    /// `artifact-bundle-v2` when written (v1 in older records).
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
            schema_version: "artifact-bundle-v2".to_owned(),
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

crate::record::impl_evidence_record!(
    ArtifactBundleRecord,
    "artifact_bundle",
    ARTIFACT_BUNDLE_V2,
    ARTIFACT_BUNDLE_V1
);
