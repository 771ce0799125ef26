//! `execution_request` (schema `execution-request-v5`, reads v4, v3, v2 and v1 too): what a
//! governed execution is asked to run, by hash: the confirmed spec, the compiled script, the
//! selected records (their stored CSV object and their canonical snapshot hash), the compiler
//! and harness versions, the adamviz source they came from, the image size, and the title and
//! footnotes the report-ready figure is drawn with.

use adamviz_model::ids::RevisionId;
use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{
        EXECUTION_REQUEST_V1, EXECUTION_REQUEST_V2, EXECUTION_REQUEST_V3, EXECUTION_REQUEST_V4,
        EXECUTION_REQUEST_V5,
    },
};
use adamviz_engine::compiler::{
    boxplot_script::COMPILER_VERSION, report_text::ReportText, ImageSize,
};
use adamviz_engine::runner::HARNESS_VERSION;
use adamviz_model::digest::Sha256Digest;

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionRequest {
    /// Always `execution_request`.
    pub kind: String,
    /// `execution-request-v5` when written (v4, v3, v2 and v1 in older records).
    pub schema_version: String,
    /// The revision (`rev-` and 32 hex digits).
    pub revision_id: RevisionId,
    /// SHA-256 of the confirmed spec's canonical JSON.
    pub spec_hash: Sha256Digest,
    /// SHA-256 of the script bytes.
    pub script_hash: Sha256Digest,
    /// The stored snapshot CSV object.
    pub snapshot_id: Sha256Digest,
    /// The canonical snapshot hash.
    pub snapshot_hash: Sha256Digest,
    /// The compiler's version.
    pub compiler_version: String,
    /// The harness version.
    pub harness_version: String,
    /// The adamviz source the compiler and harness came from (from `execution-request-v4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adamviz_source: Option<adamviz_model::provenance::SourceProvenance>,
    /// PNG size.
    pub image: ImageSize,
    /// The report-ready figure's title and footnotes (from `execution-request-v5`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportText>,
    /// When it was requested (canonical UTC RFC 3339).
    pub requested_at: String,
    /// Who acted (from `execution-request-v3`; absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<super::actor::Actor>,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

impl ExecutionRequest {
    /// A request with the current compiler and harness versions, written by the build
    /// `adamviz_source` (the web crate's `provenance::this_build()`), with the report-ready
    /// figure's `report` text, not yet sealed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        revision_id: RevisionId,
        spec_hash: Sha256Digest,
        script_hash: Sha256Digest,
        snapshot_id: Sha256Digest,
        snapshot_hash: Sha256Digest,
        image: ImageSize,
        report: ReportText,
        requested_at: String,
        actor: super::actor::Actor,
        adamviz_source: adamviz_model::provenance::SourceProvenance,
    ) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "execution-request-v5".to_owned(),
            revision_id,
            spec_hash,
            script_hash,
            snapshot_id,
            snapshot_hash,
            compiler_version: COMPILER_VERSION.to_owned(),
            harness_version: HARNESS_VERSION.to_owned(),
            adamviz_source: Some(adamviz_source),
            image,
            report: Some(report),
            requested_at,
            actor: Some(actor),
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(
    ExecutionRequest,
    "execution_request",
    EXECUTION_REQUEST_V5,
    EXECUTION_REQUEST_V4,
    EXECUTION_REQUEST_V3,
    EXECUTION_REQUEST_V2,
    EXECUTION_REQUEST_V1
);
