//! `revision_context` (schema `revision-context-v6`, reads v1–v5 too): everything needed to
//! reproduce a Verified revision in one record: the question, the confirmed spec, the source dataset's metadata and
//! the profile warnings its reviewer saw, the selected records (the stored snapshot CSV by
//! hash) with their column classes and roles, the script, the execution request, the runner's
//! result with its environment record, the verification, the accepted bundle and the output
//! hashes. Appended in the completion transaction.

use adamviz_model::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{
    artifact_bundle::BundleArtifacts,
    execution_request::ExecutionRequest,
    record::EvidenceRecord,
    schemas::{
        REVISION_CONTEXT_V1, REVISION_CONTEXT_V2, REVISION_CONTEXT_V3, REVISION_CONTEXT_V4,
        REVISION_CONTEXT_V5, REVISION_CONTEXT_V6,
    },
};
use adamviz_model::{digest::Sha256Digest, profile::ProfileWarning};

/// The uploaded dataset the revision was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceMetadata {
    /// SHA-256 of the uploaded bytes.
    pub content_hash: Sha256Digest,
    /// The file name given.
    pub file_name: String,
    /// `synthetic` or `deidentified`.
    pub classification: String,
    /// Size in bytes.
    pub size: u64,
    /// `csv` or `xpt`, detected from the content.
    pub format: String,
    /// The XPT member name.
    pub dataset_name: Option<String>,
    /// The XPT member label.
    pub dataset_label: Option<String>,
    /// Records in the upload.
    pub row_count: u64,
    /// Columns in the upload.
    pub column_count: u64,
}

/// What a revision keeps from materialization until its context is recorded: the source and
/// the warnings of its profile (stored with the revision row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevisionInputs {
    /// The source dataset.
    pub source: SourceMetadata,
    /// The profile's warnings at the spec's low-N threshold.
    pub profile_warnings: Vec<ProfileWarning>,
}

/// One column of the selected records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextColumn {
    /// Name in the upload.
    pub name: String,
    /// `character` or `numeric`.
    pub class: String,
    /// Its role in the plot.
    pub role: String,
}

/// The selected records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSnapshot {
    /// The stored snapshot CSV object.
    pub snapshot_id: Sha256Digest,
    /// Their canonical hash.
    pub snapshot_hash: Sha256Digest,
    /// How many.
    pub row_count: u64,
    /// Their columns, in snapshot order.
    pub columns: Vec<ContextColumn>,
}

/// The script that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextScript {
    /// SHA-256 of its bytes (its object).
    pub sha256: Sha256Digest,
    /// Size in bytes.
    pub size: u64,
    /// The compiler that made it.
    pub compiler_version: String,
}

/// The output hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextOutputs {
    /// Canonical hash of the statistics.
    pub analytical_hash: Sha256Digest,
    /// SHA-256 of the PNG.
    pub image_hash: Sha256Digest,
    /// SHA-256 of `statistics.json` as written.
    pub statistics_sha256: Sha256Digest,
    /// SHA-256 of `environment.json` as written.
    pub environment_sha256: Sha256Digest,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevisionContextRecord {
    /// Always `revision_context`.
    pub kind: String,
    /// `revision-context-v6` when written (v5, v4, v3, v2 and v1 in older records).
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// The attempt that verified it.
    pub attempt_id: AttemptId,
    /// The user's question, verbatim.
    pub question: String,
    /// SHA-256 of the spec's canonical JSON.
    pub spec_hash: Sha256Digest,
    /// The confirmed spec.
    pub spec: serde_json::Value,
    /// The source dataset.
    pub source: SourceMetadata,
    /// The profile warnings.
    pub profile_warnings: Vec<ProfileWarning>,
    /// The selected records.
    pub snapshot: ContextSnapshot,
    /// The script.
    pub script: ContextScript,
    /// The harness version that ran it (from `revision-context-v4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_version: Option<String>,
    /// The adamviz source of the binary that ran and verified it (from `revision-context-v4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adamviz_source: Option<adamviz_model::provenance::SourceProvenance>,
    /// The execution request's record hash.
    pub request_hash: Sha256Digest,
    /// The execution request record.
    pub request: serde_json::Value,
    /// Canonical hash of the result.
    pub result_hash: Sha256Digest,
    /// The runner's result, with the environment record.
    pub result: serde_json::Value,
    /// Canonical hash of the environment record.
    pub environment_fingerprint: Sha256Digest,
    /// The passing `execution_verification` record.
    pub verification_hash: Sha256Digest,
    /// The `artifact_bundle` record.
    pub bundle_hash: Sha256Digest,
    /// The output hashes.
    pub outputs: ContextOutputs,
    /// When it was recorded.
    pub recorded_at: String,
    /// Who acted (from `revision-context-v3`; absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<super::actor::Actor>,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// What a context is made of.
#[derive(Debug, Clone)]
pub struct ContextParts<'a> {
    /// The revision.
    pub revision_id: &'a RevisionId,
    /// The attempt.
    pub attempt_id: &'a AttemptId,
    /// The confirmed spec's canonical JSON and hash.
    pub spec: (&'a serde_json::Value, Sha256Digest),
    /// Source and warnings.
    pub inputs: &'a RevisionInputs,
    /// The selected records.
    pub snapshot: ContextSnapshot,
    /// The request.
    pub request: &'a ExecutionRequest,
    /// The runner's result as JSON and its canonical hash.
    pub result: (serde_json::Value, Sha256Digest),
    /// The bundle's artifacts.
    pub artifacts: &'a BundleArtifacts,
    /// Canonical hash of the statistics.
    pub analytical_hash: Sha256Digest,
    /// Canonical hash of the environment record.
    pub environment_fingerprint: Sha256Digest,
    /// The passing verification record.
    pub verification_hash: Sha256Digest,
    /// The bundle record.
    pub bundle_hash: Sha256Digest,
    /// Who acted.
    pub actor: super::actor::Actor,
    /// The build that completes the run (the web crate's `provenance::this_build()`).
    pub adamviz_source: adamviz_model::provenance::SourceProvenance,
}

impl RevisionContextRecord {
    /// The context of `parts`, not yet sealed.
    pub fn new(parts: ContextParts<'_>, recorded_at: String) -> Result<Self, serde_json::Error> {
        let (spec, spec_hash) = parts.spec;
        Ok(Self {
            kind: Self::KIND.to_owned(),
            schema_version: "revision-context-v6".to_owned(),
            revision_id: parts.revision_id.clone(),
            attempt_id: parts.attempt_id.clone(),
            question: spec
                .get("question")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            spec_hash,
            spec: spec.clone(),
            source: parts.inputs.source.clone(),
            profile_warnings: parts.inputs.profile_warnings.clone(),
            snapshot: parts.snapshot,
            script: ContextScript {
                sha256: parts.artifacts.script.sha256,
                size: parts.artifacts.script.size,
                compiler_version: parts.request.compiler_version.clone(),
            },
            harness_version: Some(parts.request.harness_version.clone()),
            adamviz_source: Some(parts.adamviz_source),
            request_hash: parts.request.record_hash,
            request: serde_json::to_value(parts.request)?,
            result_hash: parts.result.1,
            result: parts.result.0,
            environment_fingerprint: parts.environment_fingerprint,
            verification_hash: parts.verification_hash,
            bundle_hash: parts.bundle_hash,
            outputs: ContextOutputs {
                analytical_hash: parts.analytical_hash,
                image_hash: parts.artifacts.plot.sha256,
                statistics_sha256: parts.artifacts.statistics.sha256,
                environment_sha256: parts.artifacts.environment.sha256,
            },
            recorded_at,
            actor: Some(parts.actor),
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        })
    }
}

crate::record::impl_evidence_record!(
    RevisionContextRecord,
    "revision_context",
    REVISION_CONTEXT_V6,
    REVISION_CONTEXT_V5,
    REVISION_CONTEXT_V4,
    REVISION_CONTEXT_V3,
    REVISION_CONTEXT_V2,
    REVISION_CONTEXT_V1
);
