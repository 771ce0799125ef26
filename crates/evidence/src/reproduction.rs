//! `reproduction` (schema `reproduction-v1`): a retained result run again from the stored
//! script and snapshot in a fresh sandboxed R process, compared with the original: the
//! analytical hash must match; with the same environment the image hash must match too; with
//! another environment the record names the parts that differ.

use serde::{Deserialize, Serialize};

use super::{actor::Actor, record::EvidenceRecord, schemas::REPRODUCTION_V1};
use adamviz_model::{digest::Sha256Digest, ids::RevisionId};

/// The inputs read back from the store, re-hashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReproductionInputs {
    /// SHA-256 of the script's bytes.
    pub script_sha256: Sha256Digest,
    /// SHA-256 of the snapshot CSV's bytes.
    pub snapshot_sha256: Sha256Digest,
}

/// The original's hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginalHashes {
    /// Canonical hash of the statistics.
    pub analytical_hash: Sha256Digest,
    /// SHA-256 of the PNG.
    pub image_hash: Sha256Digest,
    /// Canonical hash of the environment record.
    pub environment_fingerprint: Sha256Digest,
}

/// The run's hashes (absent when it produced nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReproducedHashes {
    /// Canonical hash of the statistics.
    pub analytical_hash: Option<Sha256Digest>,
    /// SHA-256 of the PNG.
    pub image_hash: Option<Sha256Digest>,
    /// Canonical hash of the environment record.
    pub environment_fingerprint: Option<Sha256Digest>,
}

/// The outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReproductionOutcome {
    /// Everything that must match matched.
    Reproduced,
    /// Something that must match did not (see `failures`).
    Failed,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReproductionRecord {
    /// Always `reproduction`.
    pub kind: String,
    /// Always `reproduction-v1`.
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// Its version at the reproduction.
    pub revision_version: i64,
    /// What was run.
    pub inputs: ReproductionInputs,
    /// The original's hashes.
    pub original: OriginalHashes,
    /// The run's.
    pub reproduced: ReproducedHashes,
    /// Whether the environment fingerprints match.
    pub same_environment: bool,
    /// The parts of the environment that differ (e.g. `r_version`, `packages.ggplot2`).
    pub environment_differences: Vec<String>,
    /// The outcome.
    pub outcome: ReproductionOutcome,
    /// Why it failed (empty when reproduced).
    pub failures: Vec<String>,
    /// When (canonical UTC).
    pub reproduced_at: String,
    /// Who asked.
    pub actor: Actor,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// What a reproduction found, before it is sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReproductionFindings {
    /// The revision.
    pub revision_id: RevisionId,
    /// Its version.
    pub revision_version: i64,
    /// The inputs.
    pub inputs: ReproductionInputs,
    /// The original.
    pub original: OriginalHashes,
    /// The run.
    pub reproduced: ReproducedHashes,
    /// The environment parts that differ.
    pub environment_differences: Vec<String>,
    /// Why it failed.
    pub failures: Vec<String>,
}

impl ReproductionRecord {
    /// `findings` at `at` by `actor`, not yet sealed; the outcome follows from the failures.
    pub fn new(findings: ReproductionFindings, at: String, actor: Actor) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "reproduction-v1".to_owned(),
            revision_id: findings.revision_id,
            revision_version: findings.revision_version,
            same_environment: findings.reproduced.environment_fingerprint
                == Some(findings.original.environment_fingerprint),
            inputs: findings.inputs,
            original: findings.original,
            reproduced: findings.reproduced,
            environment_differences: findings.environment_differences,
            outcome: if findings.failures.is_empty() {
                ReproductionOutcome::Reproduced
            } else {
                ReproductionOutcome::Failed
            },
            failures: findings.failures,
            reproduced_at: at,
            actor,
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(ReproductionRecord, "reproduction", REPRODUCTION_V1);
